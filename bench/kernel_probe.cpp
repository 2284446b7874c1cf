// bench/kernel_probe.cpp — not a benchmark: launches one bench kernel (bench/kernels.hpp) at one
// shape, so a profiler (ncu, nsys) or TILE_DUMP_DIR sees just that kernel. Runs on the best
// backend present (TILE_BACKEND picks another, e.g. null with TILE_TARGET=sm_90a to get the PTX
// without a GPU). With no arguments it launches softmax once at N = 1024 (run-all runs every
// bench executable: this one then only shows that it works).
//   kernel_probe [softmax|layer_norm|add] [N] [num_warps (0: default)] [launches]
// softmax: 4096 × N f32, BLOCK = next_pow2(N); layer_norm: 4096 × N f16, BLOCK = next_pow2(N);
// add: N f32 elements, BLOCK 1024. num_warps defaults to the benches' choice for the shape.
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include <tile/runtime/testing.hpp>

#include "kernels.hpp"

// layer_norm_variants: the bench's layer norm against rewrites of it, each timed with do_bench in
// one run, to find what its time at small N goes to (which rewrite closes the gap to Triton).
namespace {
enum ln_variant { ln_no_stats, ln_stats_last, ln_fma, ln_mul_mean, ln_one_load };
auto make_ln_variant(ln_variant v) {
  return tile::kernel("layer_norm_v", [v](tl::ptr<tile::half> X, tl::ptr<tile::half> Y, tl::ptr<tile::half> W,
                                          tl::ptr<tile::half> B, tl::ptr<float> Mean, tl::ptr<float> Rstd, tl::i32 stride,
                                          tl::i32 N, tl::f32 eps, tl::constexpr_<"BLOCK"> BLOCK) {
    auto row = tl::program_id(0);
    auto x_row = X + row * stride;
    auto y_row = Y + row * stride;
    auto sum = tl::zeros<float>({BLOCK});
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      sum += tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f));
    });
    auto mean = v == ln_mul_mean ? tl::sum(sum, 0) * (1.0f / tl::cast<float>(N)) : tl::sum(sum, 0) / N;
    auto sq = tl::zeros<float>({BLOCK});
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      auto d = tl::where(cols < N, tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f)) - mean, 0.0f);
      sq += d * d;
    });
    auto rstd = v == ln_mul_mean ? tl::rsqrt(tl::sum(sq, 0) * (1.0f / tl::cast<float>(N)) + eps)
                                 : 1.0f / tl::sqrt(tl::sum(sq, 0) / N + eps);
    if (v != ln_no_stats && v != ln_stats_last) {
      tl::store(Mean + row, mean);
      tl::store(Rstd + row, rstd);
    }
    tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      auto mask = cols < N;
      auto w = tl::cast<float>(tl::load(W + cols, mask));
      auto b = tl::cast<float>(tl::load(B + cols, mask));
      auto x = tl::cast<float>(tl::load(x_row + cols, mask, 0.0f));
      auto y = v == ln_fma ? tl::fma((x - mean) * rstd, w, b) : (x - mean) * rstd * w + b;
      tl::store(y_row + cols, tl::cast<tl::f16>(y), mask);
    });
    if (v == ln_stats_last) {
      tl::store(Mean + row, mean);
      tl::store(Rstd + row, rstd);
    }
  });
}
}  // namespace

using namespace tile::literals;

static std::int64_t next_pow2(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int main(int argc, char** argv) {
  try {
    const std::string what = argc > 1 ? argv[1] : "softmax";
    const std::int64_t n = argc > 2 ? std::stoll(argv[2]) : 1024;
    const int launches = argc > 4 ? std::stoi(argv[4]) : 1;
    const std::int64_t block = next_pow2(n), M = 4096;
    auto dev = tile::device::best();
    int warps = 4;
    if (what == "softmax") warps = block >= 4096 ? 16 : block >= 2048 ? 8 : 4;
    if (what == "layer_norm") warps = static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(block / 256, 1), 8));
    if (argc > 3 && std::stoi(argv[3]) > 0) warps = std::stoi(argv[3]);  // 0: the default
    if (what == "softmax") {
      auto k = bench::make_softmax();
      auto x = dev.alloc<float>(std::size_t(M * n)), y = dev.alloc<float>(std::size_t(M * n));
      for (int i = 0; i < launches; ++i)
        k[{std::uint32_t(M)}](y, x, std::int32_t(n), std::int32_t(n), "BLOCK"_c = block, "num_warps"_c = warps);
    } else if (what == "layer_norm") {
      auto k = bench::make_layer_norm();
      auto x = dev.alloc<tile::half>(std::size_t(M * n)), y = dev.alloc<tile::half>(std::size_t(M * n));
      auto w = dev.alloc<tile::half>(std::size_t(n)), b = dev.alloc<tile::half>(std::size_t(n));
      auto mean = dev.alloc<float>(std::size_t(M)), rstd = dev.alloc<float>(std::size_t(M));
      for (int i = 0; i < launches; ++i)
        k[{std::uint32_t(M)}](x, y, w, b, mean, rstd, std::int32_t(n), std::int32_t(n), 1e-5f, "BLOCK"_c = block,
                              "num_warps"_c = warps);
    } else if (what == "layer_norm_variants") {
      auto x = dev.alloc<tile::half>(std::size_t(M * n)), y = dev.alloc<tile::half>(std::size_t(M * n));
      auto w = dev.alloc<tile::half>(std::size_t(n)), b = dev.alloc<tile::half>(std::size_t(n));
      auto mean = dev.alloc<float>(std::size_t(M)), rstd = dev.alloc<float>(std::size_t(M));
      auto timer = tile::testing::make_timer(dev);
      auto base = bench::make_layer_norm();
      const char* names[] = {"baseline", "no stats stores", "stats stored last", "fma epilogue", "mul mean, rsqrt"};
      for (int rep = 0; rep < 2; ++rep)
        for (int i = 0; i < 5; ++i) {
          std::function<void()> run;
          std::optional<decltype(make_ln_variant(ln_fma))> kv;
          if (i == 0) {
            run = [&] { base[{std::uint32_t(M)}](x, y, w, b, mean, rstd, std::int32_t(n), std::int32_t(n), 1e-5f,
                                                 "BLOCK"_c = block, "num_warps"_c = warps); };
          } else {
            kv.emplace(make_ln_variant(i == 1 ? ln_no_stats : i == 2 ? ln_stats_last : i == 3 ? ln_fma : ln_mul_mean));
            run = [&] { (*kv)[{std::uint32_t(M)}](x, y, w, b, mean, rstd, std::int32_t(n), std::int32_t(n), 1e-5f,
                                                  "BLOCK"_c = block, "num_warps"_c = warps); };
          }
          auto r = tile::testing::do_bench(run, 25, 100, {}, timer.get());
          const double gbps = (2.0 * double(M) * double(n) + 2.0 * double(n)) * 2 / (r.median_ms * 1e-3) / 1e9;
          std::printf("layer_norm N=%lld %-20s %8.4f ms %8.1f GB/s\n", static_cast<long long>(n), names[i], r.median_ms, gbps);
        }
    } else if (what == "add") {
      auto k = bench::make_add();
      auto x = dev.alloc<float>(std::size_t(n)), y = dev.alloc<float>(std::size_t(n)), z = dev.alloc<float>(std::size_t(n));
      for (int i = 0; i < launches; ++i)
        k[{std::uint32_t((n + 1023) / 1024)}](x, y, z, std::int32_t(n), "BLOCK"_c = 1024, "num_warps"_c = warps);
    } else {
      std::fprintf(stderr, "kernel_probe: unknown kernel '%s' (softmax, layer_norm, add)\n", what.c_str());
      return 2;
    }
    dev.synchronize();
    std::printf("kernel_probe: %s N=%lld num_warps=%d, %d launch(es) on %s\n", what.c_str(), static_cast<long long>(n),
                warps, launches, dev.name().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_probe: %s\n", e.what());
    return 1;
  }
  return 0;
}

// bench/kernel_probe.cpp — not a benchmark: launches one bench kernel (bench/kernels.hpp) at one
// shape, so a profiler (ncu, nsys) or TILE_DUMP_DIR sees just that kernel. Runs on the best
// backend present (TILE_BACKEND picks another, e.g. null with TILE_TARGET=sm_90a to get the PTX
// without a GPU). With no arguments it launches softmax once at N = 1024 (run-all runs every
// bench executable: this one then only shows that it works).
//   kernel_probe [softmax|softmax_fast|softmax_variants|layer_norm|layer_norm_row|add] [N] [num_warps (0: default)] [launches]
// softmax: 4096 × N f32, BLOCK = next_pow2(N) (softmax_fast: with Triton's numerics);
// layer_norm: 4096 × N f16, BLOCK = next_pow2(N) (layer_norm_row: the row loaded once);
// add: N f32 elements, BLOCK 1024. num_warps defaults to the benches' choice for the shape.
// With TILE_TRITON_KERNELS (bench/triton/_export_kernels.py) on the cuda backend, softmax and
// layer_norm then launch Triton's compiled twin as often: `ncu -k regex:softmax` profiles both.
// Their inputs are spread values, not zeros (zeros take division's slow path).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include <tile/runtime/testing.hpp>

#include "kernels.hpp"
#include "triton_kernels.hpp"

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

// matmul_prefetch: the matmul program with the next K step's A and B tiles loaded (masked past
// the end) before the current step's dot — software pipelining by one stage in registers,
// written by hand — against bench::make_matmul, to measure what a pipelining pass would buy.
namespace {
auto make_matmul_prefetch() {
  return tile::kernel("matmul_prefetch", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c,
                                            tl::i32 M, tl::i32 N, tl::i32 K, tl::constexpr_<"BLOCK_M"> BM,
                                            tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                                            tl::constexpr_<"GROUP_M"> GROUP_M) {
    using tl::_;
    using tl::newaxis;
    const auto block = bench::grouped_block(M, N, BM, BN, GROUP_M);
    const tl::tensor &pid_m = block.first, &pid_n = block.second;
    auto offs_am = (pid_m * BM + tl::arange(0, BM)) % M;
    auto offs_bn = (pid_n * BN + tl::arange(0, BN)) % N;
    auto offs_k = tl::arange(0, BK);
    auto a_ptrs = a + (offs_am(_, newaxis) * K + offs_k(newaxis, _));
    auto b_ptrs = b + (offs_k(_, newaxis) * N + offs_bn(newaxis, _));
    auto acc = tl::zeros<float>({BM, BN});
    auto av = tl::load(a_ptrs, offs_k(newaxis, _) < K, 0.0f);
    auto bv = tl::load(b_ptrs, offs_k(_, newaxis) < K, 0.0f);
    tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) {
      a_ptrs += BK;
      b_ptrs += BK * N;
      auto an = tl::load(a_ptrs, offs_k(newaxis, _) < K - (k + 1) * BK, 0.0f);
      auto bn = tl::load(b_ptrs, offs_k(_, newaxis) < K - (k + 1) * BK, 0.0f);
      acc = tl::dot(av, bv, acc);
      av = an;
      bv = bn;
    });
    bench::store_block<tile::half>(c, acc, M, N, N, 1, pid_m, pid_n, BM, BN);
  });
}
}  // namespace

using tk = bench::gpu::triton_kernel;

/// n values spread over [lo, hi): never zeros, which take other paths (a zero sum sends IEEE
/// division to its slow path: ncu's instruction counts of such a probe would mislead).
template <class T>
std::vector<T> values(std::size_t n, float lo, float hi) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(lo + (hi - lo) * static_cast<float>((i * 2654435761u) % 65521u) / 65521.f);
  return v;
}

/// Triton's kernel `name` (TILE_TRITON_KERNELS, bench/triton_kernels.hpp) on the cuda backend:
/// softmax and layer_norm launch it after tile's, as often, so that ncu sees both in one process.
std::optional<tk> triton_twin(const tile::device& dev, const std::string& name) {
  if (dev.name().rfind("cuda", 0) != 0) return std::nullopt;
  return tk::find(dev, name);
}

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
    if (what.rfind("softmax", 0) == 0) warps = block >= 4096 ? 16 : block >= 2048 ? 8 : 4;
    if (what.rfind("layer_norm", 0) == 0) warps = static_cast<int>(std::min<std::int64_t>(std::max<std::int64_t>(block / 256, 1), 8));
    if (argc > 3 && std::stoi(argv[3]) > 0) warps = std::stoi(argv[3]);  // 0: the default
    if (what == "softmax" || what == "softmax_fast") {
      auto k = bench::make_softmax_numerics(what == "softmax_fast");
      auto x = dev.upload(values<float>(std::size_t(M * n), -4, 4)), y = dev.alloc<float>(std::size_t(M * n));
      for (int i = 0; i < launches; ++i)
        k[{std::uint32_t(M)}](y, x, std::int32_t(n), std::int32_t(n), "BLOCK"_c = block, "num_warps"_c = warps);
      if (auto t = triton_twin(dev, "softmax-" + std::to_string(n)))  // after tile's: for ncu side by side
        for (int i = 0; i < launches; ++i)
          t->launch(std::uint32_t(M), {tk::arg(y), tk::arg(x), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n))});
    } else if (what == "layer_norm" || what == "layer_norm_row") {
      auto x = dev.upload(values<tile::half>(std::size_t(M * n), -2, 2)), y = dev.alloc<tile::half>(std::size_t(M * n));
      auto w = dev.upload(values<tile::half>(std::size_t(n), -1, 1)), b = dev.upload(values<tile::half>(std::size_t(n), -1, 1));
      auto mean = dev.alloc<float>(std::size_t(M)), rstd = dev.alloc<float>(std::size_t(M));
      auto launch = [&](auto k) {
        for (int i = 0; i < launches; ++i)
          k[{std::uint32_t(M)}](x, y, w, b, mean, rstd, std::int32_t(n), std::int32_t(n), 1e-5f, "BLOCK"_c = block,
                                "num_warps"_c = warps);
      };
      if (what == "layer_norm")
        launch(bench::make_layer_norm());
      else
        launch(bench::make_layer_norm_row());
      if (auto t = triton_twin(dev, what + "-" + std::to_string(n)))
        for (int i = 0; i < launches; ++i)
          t->launch(std::uint32_t(M), {tk::arg(x), tk::arg(y), tk::arg(w), tk::arg(b), tk::arg(mean), tk::arg(rstd),
                                       tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(1e-5f)});
    } else if (what == "softmax_variants") {
      auto x = dev.upload(values<float>(std::size_t(M * n), -4, 4)), y = dev.alloc<float>(std::size_t(M * n));
      auto timer = tile::testing::make_timer(dev);
      const char* names[] = {"exact (tile)", "fast_exp", "fast_div", "fast_exp + fast_div", "x * (1 / den)", "no exp", "Triton"};
      auto twin = triton_twin(dev, "softmax-" + std::to_string(n));
      std::vector<std::function<void()>> runs;
      // the bench's softmax with its exp and division swapped one at a time (bench::softmax_math)
      std::vector<decltype(bench::make_softmax_math(bench::softmax_math::exact, ""))> ks;
      for (int i = 0; i < 6; ++i) ks.push_back(bench::make_softmax_math(static_cast<bench::softmax_math>(i), "softmax_v"));
      for (int i = 0; i < 6; ++i)
        runs.push_back([&, i] { ks[std::size_t(i)][{std::uint32_t(M)}](y, x, std::int32_t(n), std::int32_t(n), "BLOCK"_c = block, "num_warps"_c = warps); });
      if (twin)
        runs.push_back([&] { twin->launch(std::uint32_t(M), {tk::arg(y), tk::arg(x), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n))}); });
      const int rounds = launches > 1 ? launches : 9;
      std::vector<std::vector<double>> ratio(runs.size());
      for (auto& r : runs) r();  // compile
      for (int rep = 0; rep < rounds; ++rep) {
        std::vector<double> ms;
        for (auto& r : runs) ms.push_back(tile::testing::do_bench(r, 25, 100, {}, timer.get()).median_ms);
        for (std::size_t i = 0; i < runs.size(); ++i) ratio[i].push_back(twin ? ms.back() / ms[i] : ms[0] / ms[i]);
      }
      for (std::size_t i = 0; i < runs.size(); ++i) {
        std::sort(ratio[i].begin(), ratio[i].end());
        std::printf("softmax N=%lld w%d %-22s speed / %s: median %.3f (%.3f ... %.3f) over %d rounds\n", static_cast<long long>(n), warps,
                    names[i], twin ? "Triton" : "exact", ratio[i][ratio[i].size() / 2], ratio[i].front(), ratio[i].back(), rounds);
      }
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
    } else if (what == "matmul_prefetch") {  // n = M = N = K
      auto timer = tile::testing::make_timer(dev);
      const std::size_t nn = std::size_t(n * n);
      auto a = dev.upload(std::vector<tile::half>(nn, tile::half(0.5f))), bb = dev.upload(std::vector<tile::half>(nn, tile::half(0.25f)));
      auto c = dev.alloc<tile::half>(nn);
      auto plain = bench::make_matmul();
      auto pre = make_matmul_prefetch();
      const int cfgs[][4] = {{128, 64, 32, 4}, {128, 128, 32, 4}, {128, 128, 32, 8}, {128, 256, 32, 8}, {64, 128, 32, 4}, {128, 256, 64, 8}};
      for (const auto& cf : cfgs) {
        const std::uint32_t grid = std::uint32_t(tile::cdiv(n, cf[0]) * tile::cdiv(n, cf[1]));
        auto run_plain = [&] {
          plain[{grid}](a, bb, c, std::int32_t(n), std::int32_t(n), std::int32_t(n), std::int32_t(n), 1, std::int32_t(n), 1,
                        std::int32_t(n), 1, "BLOCK_M"_c = cf[0], "BLOCK_N"_c = cf[1], "BLOCK_K"_c = cf[2], "GROUP_M"_c = 8,
                        "num_warps"_c = cf[3]);
        };
        auto run_pre = [&] {
          pre[{grid}](a, bb, c, std::int32_t(n), std::int32_t(n), std::int32_t(n), "BLOCK_M"_c = cf[0], "BLOCK_N"_c = cf[1],
                      "BLOCK_K"_c = cf[2], "GROUP_M"_c = 8, "num_warps"_c = cf[3]);
        };
        const double tf = 2.0 * double(n) * double(n) * double(n) * 1e-12;
        const double p_ms = tile::testing::do_bench(run_plain, 10, 50, {}, timer.get()).median_ms;
        const double q_ms = tile::testing::do_bench(run_pre, 10, 50, {}, timer.get()).median_ms;
        const float got = float(c.to_host()[12345]);
        std::printf("matmul %lld^3 %dx%dx%d w%d: plain %.1f TFLOP/s, prefetched %.1f TFLOP/s (c = %g, want %g)\n",
                    static_cast<long long>(n), cf[0], cf[1], cf[2], cf[3], tf / (p_ms * 1e-3), tf / (q_ms * 1e-3),
                    double(got), 0.125 * double(n));
      }
    } else if (what == "matmul_desc_bf16_one") {  // matmul_desc_one in bf16
      const std::size_t nn = std::size_t(n * n);
      auto a = dev.upload(std::vector<tile::bfloat16>(nn, tile::bfloat16(0.5f))), bb = dev.upload(std::vector<tile::bfloat16>(nn, tile::bfloat16(0.25f)));
      auto c = dev.alloc<tile::bfloat16>(nn);
      const std::uint32_t grid = std::uint32_t(tile::cdiv(n, 128) * tile::cdiv(n, 256));
      const auto N = std::int32_t(n);
      auto desc = bench::make_matmul_desc_t<tile::bfloat16>();
      for (int i = 0; i < launches; ++i)
        desc[{grid}](a, bb, c, N, N, N, N, 1, N, 1, N, 1, "BLOCK_M"_c = 128, "BLOCK_N"_c = 256, "BLOCK_K"_c = 64,
                     "GROUP_M"_c = 8, "num_warps"_c = 8, "num_stages"_c = 3, "ACTIVATION"_c = false);
    } else if (what == "matmul_one" || what == "matmul_desc_one") {  // n = M = N = K; 128 x 256 x 64, 8 warps, 3 stages, `launches` times
      const std::size_t nn = std::size_t(n * n);
      auto a = dev.upload(std::vector<tile::half>(nn, tile::half(0.5f))), bb = dev.upload(std::vector<tile::half>(nn, tile::half(0.25f)));
      auto c = dev.alloc<tile::half>(nn);
      // matmul_desc_one: the same program through tensor descriptors (TMA on sm_90a)
      const std::uint32_t grid = std::uint32_t(tile::cdiv(n, 128) * tile::cdiv(n, 256));
      const auto N = std::int32_t(n);
      if (what == "matmul_one") {
        auto plain = bench::make_matmul();
        for (int i = 0; i < launches; ++i)
          plain[{grid}](a, bb, c, N, N, N, N, 1, N, 1, N, 1, "BLOCK_M"_c = 128, "BLOCK_N"_c = 256, "BLOCK_K"_c = 64,
                        "GROUP_M"_c = 8, "num_warps"_c = 8, "num_stages"_c = 3);
      } else {
        auto desc = bench::make_matmul_desc_t<tile::half>();
        for (int i = 0; i < launches; ++i)
          desc[{grid}](a, bb, c, N, N, N, N, 1, N, 1, N, 1, "BLOCK_M"_c = 128, "BLOCK_N"_c = 256, "BLOCK_K"_c = 64,
                       "GROUP_M"_c = 8, "num_warps"_c = 8, "num_stages"_c = 3, "ACTIVATION"_c = false);
      }
    } else if (what == "add") {
      auto k = bench::make_add();
      auto x = dev.alloc<float>(std::size_t(n)), y = dev.alloc<float>(std::size_t(n)), z = dev.alloc<float>(std::size_t(n));
      for (int i = 0; i < launches; ++i)
        k[{std::uint32_t((n + 1023) / 1024)}](x, y, z, std::int32_t(n), "BLOCK"_c = 1024, "num_warps"_c = warps);
    } else {
      std::fprintf(stderr, "kernel_probe: unknown kernel '%s' (softmax, softmax_fast, layer_norm, add)\n",
                   what.c_str());
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

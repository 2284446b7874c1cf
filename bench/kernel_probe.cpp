// bench/kernel_probe.cpp — not a benchmark: launches one bench kernel (bench/kernels.hpp) at one
// shape, so a profiler (ncu, nsys) or TILE_DUMP_DIR sees just that kernel. Runs on the best
// backend present (TILE_BACKEND picks another, e.g. null with TILE_TARGET=sm_90a to get the PTX
// without a GPU). With no arguments it launches softmax once at N = 1024 (run-all runs every
// bench executable: this one then only shows that it works).
//   kernel_probe [softmax|layer_norm|add] [N] [num_warps (0: default)] [launches]
// softmax: 4096 × N f32, BLOCK = next_pow2(N); layer_norm: 4096 × N f16, BLOCK = next_pow2(N);
// add: N f32 elements, BLOCK 1024. num_warps defaults to the benches' choice for the shape.
#include <cstdio>
#include <string>

#include "kernels.hpp"

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

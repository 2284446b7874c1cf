// bench/cpu_matmul.cpp — C = A @ B in f32 (M = N = K = 128 … 1024, row-major) on the cpu
// backend, sample 03's kernel (grouped program order, K loop, tl::dot) with f32 in and out, the
// leaky ReLU off (ACTIVATION = false) and tl::dot at precision::ieee — tf32, the default for f32,
// would round the inputs and compute something else than the reference — against a plain C++
// i-k-j loop (-O3 -march=native; the inner loop over j vectorizes) on one thread and on every
// core (bench::pool, rows of C split in contiguous chunks).
//
// Metric: TFLOP/s = 2·M·N·K / median time. Tile blocks: BLOCK_M = BLOCK_N = 64, BLOCK_K = 32,
// GROUP_M = 8 (the sample's). Ratio columns: tile over each reference.
#include <algorithm>
#include <cstdio>

#include "bench.hpp"
#include "kernels.hpp"

using namespace tile::literals;

auto matmul = bench::make_matmul_f32_ieee();  // Triton's tutorial kernel, f32 at IEEE precision

// The plain C++ reference, rows [i0, i1) of C = A @ B (A: M×K, B: K×N), -O3 -march=native.
static void matmul_rows(const float* A, const float* B, float* C, std::size_t N, std::size_t K, std::size_t i0,
                        std::size_t i1) {
  for (std::size_t i = i0; i < i1; ++i) {
    float* c = C + i * N;
    std::fill(c, c + N, 0.0f);
    for (std::size_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (std::size_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

int main() {
  auto dev = bench::cpu_device();
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const int BM = 64, BN = 64, BK = 32;

  auto b = bench::sweep("cpu-matmul-f32", "M=N=K", {128, 256, 512, 1024}, {"tile", "c++ -O3 1T", "c++ -O3 NT"},
                        {"tile", "c++ -O3 NT", "c++ -O3 1T"}, "TFLOP/s", true);
  int n = 0;
  bench::floats ha, hb, want, got;
  tile::buffer<float> a, bb, c;
  auto tflops = [&](double ms) { return 2.0 * n * n * n / (ms * 1e-3) / 1e12; };

  tile::testing::run(b, [&](double xv, const std::string& provider) {
    auto run_tile = [&] {
      matmul[{tile::cdiv(n, BM) * tile::cdiv(n, BN)}](a, bb, c, n, n, n, n, 1, n, 1, n, 1, "BLOCK_M"_c = BM,
                                                      "BLOCK_N"_c = BN, "BLOCK_K"_c = BK, "GROUP_M"_c = 8,
                                                      "ACTIVATION"_c = false);
    };
    auto rows = [&](std::size_t i0, std::size_t i1) { matmul_rows(ha.data(), hb.data(), got.data(), n, n, i0, i1); };
    if (int(xv) != n) {  // a new size: set up, and check tile and the NT run against the reference
      n = int(xv);
      const std::size_t size = std::size_t(n) * n;
      ha = bench::random_floats(size, 3), hb = bench::random_floats(size, 4);
      a = bench::upload(*dev, ha), bb = bench::upload(*dev, hb), c = dev->alloc<float>(size);
      want.assign(size, 0.f), got.assign(size, 0.f);
      matmul_rows(ha.data(), hb.data(), want.data(), n, n, 0, n);
      run_tile();
      // f32 sums of K products in another order: ~1e-5 apart; tf32 inputs would be ~1e-3 off.
      bench::check("tile matmul " + std::to_string(n), bench::max_abs_error(bench::download(c), want), 1e-6 * n);
      threads.parallel_for(n, rows);
      bench::check("c++ NT matmul", bench::max_abs_error(got, want), 0.0);
    }
    if (provider == "tile") return tflops(bench::median_ms(run_tile, timer.get()));
    if (provider == "c++ -O3 1T") return tflops(bench::median_ms([&] { rows(0, n); }));
    return tflops(bench::median_ms([&] { threads.parallel_for(n, rows); }));
  });
  std::printf("tile blocks %dx%dx%d, GROUP_M 8, precision ieee; %s\n", BM, BN, BK,
              bench::threads_note(threads).c_str());
  return 0;
}

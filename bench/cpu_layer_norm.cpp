// bench/cpu_layer_norm.cpp — layer norm forward of an M×N f32 matrix (M = 4096, N = 512 … 4096)
// on the cpu backend, sample 05's kernel in f32 (one row per program, the row walked in BLOCKs
// three times: mean, variance, normalize; also writes each row's mean and 1/std), against plain
// C++ doing the same math per row on one thread and on every core (bench::pool).
//
// Metric: GB/s = 2·M·N·4 bytes (x read, y written; w, b and the statistics are negligible) /
// median time, as Triton's tutorial counts it. BLOCK = min(N, 1024). The reference is -O3
// -march=native without -ffast-math (its sums stay sequential). Ratio columns: tile over each.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench.hpp"

using namespace tile::literals;

auto layer_norm = tile::kernel("layer_norm", [](tl::ptr<float> X, tl::ptr<float> Y, tl::ptr<float> W, tl::ptr<float> B,
                                                tl::ptr<float> Mean, tl::ptr<float> Rstd, tl::i32 stride, tl::i32 N,
                                                tl::f32 eps, tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto x_row = X + row * stride;
  auto y_row = Y + row * stride;

  auto sum = tl::zeros<float>({BLOCK});
  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    sum += tl::load(x_row + cols, cols < N, 0.0f);
  });
  auto mean = tl::sum(sum, 0) / N;

  auto sq = tl::zeros<float>({BLOCK});
  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    auto x = tl::load(x_row + cols, cols < N, 0.0f);
    auto d = tl::where(cols < N, x - mean, 0.0f);
    sq += d * d;
  });
  auto rstd = 1.0f / tl::sqrt(tl::sum(sq, 0) / N + eps);
  tl::store(Mean + row, mean);
  tl::store(Rstd + row, rstd);

  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    auto mask = cols < N;
    auto x = tl::load(x_row + cols, mask, 0.0f);
    tl::store(y_row + cols, (x - mean) * rstd * tl::load(W + cols, mask) + tl::load(B + cols, mask), mask);
  });
});

// The plain C++ reference for rows [r0, r1), compiled with -O3 -march=native.
static void layer_norm_rows(const float* x, float* y, const float* w, const float* b, float* mean, float* rstd,
                            std::size_t n, float eps, std::size_t r0, std::size_t r1) {
  for (std::size_t r = r0; r < r1; ++r) {
    const float* in = x + r * n;
    float* out = y + r * n;
    float s = 0, q = 0;
    for (std::size_t c = 0; c < n; ++c) s += in[c];
    const float m = s / float(n);
    for (std::size_t c = 0; c < n; ++c) q += (in[c] - m) * (in[c] - m);
    const float rs = 1.0f / std::sqrt(q / float(n) + eps);
    for (std::size_t c = 0; c < n; ++c) out[c] = (in[c] - m) * rs * w[c] + b[c];
    mean[r] = m, rstd[r] = rs;
  }
}

int main() {
  auto dev = bench::cpu_device();
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const int M = 4096;
  const float eps = 1e-5f;

  auto b = bench::sweep("cpu-layer-norm", "N", {512, 1024, 2048, 4096}, {"tile", "c++ -O3 1T", "c++ -O3 NT"},
                        {"tile", "c++ -O3 NT", "c++ -O3 1T"}, "GB/s", true);
  int n = 0;
  bench::floats hx, hw, hb, want, got, mean(M), rstd(M), want_rstd(M);
  tile::buffer<float> x, y, w, bias, dmean = dev->alloc<float>(M), drstd = dev->alloc<float>(M);
  auto gbps = [&](double ms) { return 2.0 * M * n * sizeof(float) / (ms * 1e-3) / 1e9; };

  tile::testing::run(b, [&](double xv, const std::string& provider) {
    const int block = std::min(int(xv), 1024);
    auto run_tile = [&] { layer_norm[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block); };
    auto rows = [&](std::size_t r0, std::size_t r1) {
      layer_norm_rows(hx.data(), got.data(), hw.data(), hb.data(), mean.data(), rstd.data(), n, eps, r0, r1);
    };
    if (int(xv) != n) {  // a new N: set up, and check tile and the NT run against the reference
      n = int(xv);
      const std::size_t size = std::size_t(M) * n;
      hx = bench::random_floats(size, 11, -2.f, 2.f), hw = bench::random_floats(n, 12), hb = bench::random_floats(n, 13);
      x = bench::upload(*dev, hx), w = bench::upload(*dev, hw), bias = bench::upload(*dev, hb);
      y = dev->alloc<float>(size);
      want.assign(size, 0.f), got.assign(size, 0.f);
      layer_norm_rows(hx.data(), want.data(), hw.data(), hb.data(), mean.data(), want_rstd.data(), n, eps, 0, M);
      run_tile();
      const std::string what = "tile layer_norm N=" + std::to_string(n);
      bench::check(what, bench::max_abs_error(bench::download(y), want), 1e-4);
      bench::check(what + " (mean)", bench::max_abs_error(bench::download(dmean), mean), 1e-5);
      bench::check(what + " (rstd)", bench::max_abs_error(bench::download(drstd), want_rstd), 1e-4);
      threads.parallel_for(M, rows);
      bench::check("c++ NT layer_norm", bench::max_abs_error(got, want), 0.0);
    }
    if (provider == "tile") return gbps(bench::median_ms(run_tile, timer.get()));
    if (provider == "c++ -O3 1T") return gbps(bench::median_ms([&] { rows(0, M); }));
    return gbps(bench::median_ms([&] { threads.parallel_for(M, rows); }));
  });
  std::printf("M = %d rows, BLOCK = min(N, 1024); %s\n", M, bench::threads_note(threads).c_str());
  return 0;
}

// bench/cpu_softmax.cpp — row softmax of an M×N f32 matrix (M = 4096, N = 256 … 4096; N = 1024
// is the 4096×1024 point) on the cpu backend, sample 02's kernel (one row per program,
// BLOCK = the next power of two ≥ N), against plain C++ doing the same math per row (max,
// exp(x - max) and its sum, divide) on one thread and on every core (bench::pool, rows split in
// contiguous chunks).
//
// Metric: GB/s = 2·M·N·4 bytes (the row read once, written once) / median time. The reference
// is plain -O3 -march=native without -ffast-math, so its exp is libm's scalar expf and its max
// and sum are not vectorized: what "write the loop yourself" gets. Ratio columns: tile over each.
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bench.hpp"
#include "kernels.hpp"

using namespace tile::literals;

auto softmax = bench::make_softmax();

int main() {
  auto dev = bench::cpu_device();
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const int M = 4096;

  auto b = bench::sweep("cpu-softmax", "N", {256, 512, 1024, 2048, 4096}, {"tile", "c++ -O3 1T", "c++ -O3 NT"},
                        {"tile", "c++ -O3 NT", "c++ -O3 1T"}, "GB/s", true);
  int n = 0;
  bench::floats hx, want, got;
  tile::buffer<float> x, y;
  auto gbps = [&](double ms) { return 2.0 * M * n * sizeof(float) / (ms * 1e-3) / 1e9; };

  auto r = tile::testing::run(b, [&](double xv, const std::string& provider) {
    const std::int64_t block = std::bit_ceil(static_cast<unsigned>(xv));
    auto run_tile = [&] { softmax[{M}](y, x, n, n, "BLOCK"_c = block); };
    auto run_nt = [&] {
      threads.parallel_for(M, [&](std::size_t r0, std::size_t r1) { bench::softmax_rows(hx.data(), got.data(), n, r0, r1); });
    };
    if (int(xv) != n) {  // a new N: set up, and check tile and the NT run against the reference
      n = int(xv);
      const std::size_t size = std::size_t(M) * n;
      hx = bench::random_floats(size, 7, -4.f, 4.f);
      x = bench::upload(*dev, hx), y = dev->alloc<float>(size);
      want.assign(size, 0.f), got.assign(size, 0.f);
      bench::softmax_rows(hx.data(), want.data(), n, 0, M);
      run_tile();
      bench::check("tile softmax N=" + std::to_string(n), bench::max_abs_error(bench::download(y), want), 1e-6);
      run_nt();
      bench::check("c++ NT softmax", bench::max_abs_error(got, want), 0.0);
    }
    if (provider == "tile") return gbps(bench::median_ms(run_tile, timer.get()));
    if (provider == "c++ -O3 1T")
      return gbps(bench::median_ms([&] { bench::softmax_rows(hx.data(), got.data(), n, 0, M); }));
    return gbps(bench::median_ms(run_nt));
  });
  std::printf("M = %d rows; %s\n", M, bench::threads_note(threads).c_str());
  std::printf("the issue's 4096x1024 point: tile %.2f GB/s, %.2fx c++ -O3 1T, %.2fx c++ -O3 NT\n", r.at(2, "tile"),
              r.at(2, "tile") / r.at(2, "c++ -O3 1T"), r.at(2, "tile") / r.at(2, "c++ -O3 NT"));
  return 0;
}

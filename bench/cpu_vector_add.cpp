// bench/cpu_vector_add.cpp — out = x + y (f32) on the cpu backend, sample 01's kernel, against
// the same loop in plain C++ (-O3 -march=native) on one thread and on every core (a persistent
// pool, bench::pool, one contiguous chunk per thread, like the backend's own pool).
//
// Metric: GB/s = 3·N·4 bytes (two reads, one write) / median time. "tile" is the better of
// BLOCK=1024 and BLOCK=4096 at each N (both columns are shown, so the winner can be read off).
// Up to ~2^18 the data sits in cache and the launch overhead dominates; at 2^24 (192 MB) all
// three are bound by memory bandwidth. Ratio columns: tile over each C++ reference (1 = par).
#include <bit>
#include <cstdio>
#include <map>

#include "bench.hpp"
#include "kernels.hpp"

using namespace tile::literals;

auto add = bench::make_add();

// The plain C++ reference, compiled here with -O3 -march=native (bench/meson.build).
static void add_loop(const float* x, const float* y, float* out, std::size_t lo, std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i) out[i] = x[i] + y[i];
}

int main() {
  auto dev = bench::cpu_device();
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;

  std::vector<double> sizes;
  for (int p = 12; p <= 24; ++p) sizes.push_back(double(1 << p));
  auto b = bench::sweep("cpu-vector-add", "N", sizes,
                        {"tile BLOCK=1024", "tile BLOCK=4096", "tile", "c++ -O3 1T", "c++ -O3 NT"},
                        {"tile", "c++ -O3 NT", "c++ -O3 1T"}, "GB/s", true);

  // The problem of the current N, set up (and checked) when its first provider runs.
  int n = 0;
  bench::floats hx, hy, want, got;
  tile::buffer<float> x, y, out;
  std::map<int, double> tile_gbps;  // BLOCK -> GB/s at the current N
  std::string best;                 // "2^12:4096 2^13:1024 …", the BLOCK "tile" took per N
  auto gbps = [&](double ms) { return 3.0 * n * sizeof(float) / (ms * 1e-3) / 1e9; };
  auto loop_1t = [&] { add_loop(hx.data(), hy.data(), got.data(), 0, n); };
  auto loop_nt = [&] {
    threads.parallel_for(n, [&](std::size_t lo, std::size_t hi) { add_loop(hx.data(), hy.data(), got.data(), lo, hi); });
  };

  auto r = tile::testing::run(b, [&](double xv, const std::string& provider) {
    if (int(xv) != n) {
      n = int(xv);
      hx = bench::random_floats(n, 1), hy = bench::random_floats(n, 2);
      x = bench::upload(*dev, hx), y = bench::upload(*dev, hy), out = dev->alloc<float>(n);
      want.assign(n, 0.f), got.assign(n, 0.f);
      add_loop(hx.data(), hy.data(), want.data(), 0, n);  // the reference checks tile first
      for (int block : {1024, 4096}) {
        out.fill_zero();
        add[{tile::cdiv(n, block)}](x, y, out, n, "BLOCK"_c = block);
        bench::check("tile add BLOCK=" + std::to_string(block) + " N=" + std::to_string(n),
                     bench::max_abs_error(bench::download(out), want), 0.0);
      }
      loop_nt();
      bench::check("c++ NT add", bench::max_abs_error(got, want), 0.0);
    }
    if (provider.starts_with("tile BLOCK=")) {
      const int block = std::stoi(provider.substr(11));
      const double ms = bench::median_ms([&] { add[{tile::cdiv(n, block)}](x, y, out, n, "BLOCK"_c = block); },
                                         timer.get());
      return tile_gbps[block] = gbps(ms);
    }
    if (provider == "tile") {
      const int block = tile_gbps[4096] > tile_gbps[1024] ? 4096 : 1024;
      best += " 2^" + std::to_string(std::countr_zero(unsigned(n))) + ":" + std::to_string(block);
      return tile_gbps[block];
    }
    if (provider == "c++ -O3 1T") return gbps(bench::median_ms(loop_1t));
    return gbps(bench::median_ms(loop_nt));
  });
  std::printf("tile's BLOCK per N:%s\n", best.c_str());
  std::printf("%s\n", bench::threads_note(threads).c_str());
  const double ratio = r.at(sizes.size() - 1, "tile") / r.at(sizes.size() - 1, "c++ -O3 1T");
  std::printf("target (issue): tile >= 0.8x the plain -O3 loop (1T) at N = 2^24: %.2fx, %s\n", ratio,
              ratio >= 0.8 ? "met" : "MISSED");
  return 0;
}

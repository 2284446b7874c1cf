// bench/gpu_vector_add.cpp — out = x + y (f32) on the cuda backend, sample 01's kernel at
// Triton's tutorial setting (BLOCK = 1024, num_warps = 4), against the device's copy bandwidth
// measured in the same run: cuMemcpyDtoDAsync of 1.5·N·4 bytes, which moves (reads plus writes)
// the 3·N·4 bytes the kernel moves.
//
// Metric: GB/s = bytes moved / median time, for both columns:
//   tile      3·N·4 bytes (x and y read, out written)
//   D2D copy  2·(1.5·N·4) bytes (a copy of 1.5·N·4 bytes reads and writes each byte once)
// N = 2^12 … 2^28 (powers of 4). Times: do_bench with CUDA events and a 256 MB L2 flush before
// each repetition (tile::testing::make_timer). Small N measure launch latency; from ~2^24 both
// are bound by DRAM bandwidth. The target: tile >= 0.97x the D2D copy from N = 2^24 up.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <vector>

#include "gpu.hpp"
#include "kernels.hpp"

using namespace tile::literals;

auto add = bench::make_add();

int main() {
  auto dev = bench::gpu::cuda_device("gpu_vector_add");
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  constexpr int block = 1024, warps = 4;

  std::vector<double> sizes;
  for (int p = 12; p <= 28; p += 2) sizes.push_back(double(std::int64_t{1} << p));
  auto b = bench::sweep("gpu-vector-add", "N", sizes, {"tile", "D2D copy"}, {"tile", "D2D copy"}, "GB/s", true);

  std::int64_t n = 0;
  tile::buffer<float> x, y, out;
  std::optional<bench::gpu::d2d_copy> copy;
  auto run_tile = [&] { add[{tile::cdiv(n, block)}](x, y, out, n, "BLOCK"_c = block, "num_warps"_c = warps); };
  auto bytes = [&] { return 3.0 * double(n) * sizeof(float); };

  auto r = tile::testing::run(b, [&](double xv, const std::string& provider) {
    if (std::int64_t(xv) != n) {  // a new N: free the last one's memory, set up, check tile
      n = std::int64_t(xv);
      x = y = out = {};
      copy.reset();
      const auto hx = bench::gpu::hash_floats(threads, n, 1), hy = bench::gpu::hash_floats(threads, n, 2);
      x = bench::upload(*dev, hx), y = bench::upload(*dev, hy), out = dev->alloc<float>(n);
      run_tile();
      const auto got = bench::download(out);
      double err = 0;
      for (std::int64_t i = 0; i < n; ++i) err = std::max(err, double(std::abs(got[i] - (hx[i] + hy[i]))));
      bench::check("tile add N=" + std::to_string(n), err, 0.0);
      copy.emplace(*dev, std::size_t(n) * sizeof(float) * 3 / 2);
    }
    if (provider == "tile") return bench::gpu::gbps(bytes(), bench::median_ms(run_tile, timer.get()));
    return bench::gpu::gbps(2.0 * double(copy->bytes()), bench::median_ms([&] { (*copy)(); }, timer.get()));
  });
  std::printf("GB/s: tile 3·N·4 bytes (2 reads, 1 write); D2D copy: cuMemcpyDtoDAsync of 1.5·N·4 bytes, counted "
              "2x (read + write); BLOCK = %d, num_warps = %d\n", block, warps);
  // where both are bound by DRAM bandwidth: N = 2^24, 2^26, 2^28 (rows 6, 7, 8)
  for (const std::size_t at : {std::size_t{6}, std::size_t{7}, std::size_t{8}}) {
    const double ratio = r.at(at, "tile") / r.at(at, "D2D copy");
    std::printf("target: tile >= 0.97x the D2D copy bandwidth at N = 2^%d: %.1f / %.1f GB/s = %.3fx, %s\n",
                12 + 2 * static_cast<int>(at), r.at(at, "tile"), r.at(at, "D2D copy"), ratio,
                ratio >= 0.97 ? "met" : "MISSED");
  }

  // do_bench's repeatability: the same kernel timed twice in this run, at a size where the
  // memory dominates (2^26) and at one where the launch does (2^16)
  for (const int p : {26, 16}) {
    n = std::int64_t{1} << p;
    x = y = out = {};
    x = dev->alloc<float>(std::size_t(n)), y = dev->alloc<float>(std::size_t(n)), out = dev->alloc<float>(std::size_t(n));
    const auto r1 = tile::testing::do_bench(run_tile, bench::warmup_ms, bench::rep_ms, {}, timer.get());
    const auto r2 = tile::testing::do_bench(run_tile, bench::warmup_ms, bench::rep_ms, {}, timer.get());
    const double t1 = r1.median_ms, t2 = r2.median_ms;
    const double diff = std::abs(t1 - t2) / std::min(t1, t2);
    std::printf("do_bench repeatability, vector add N = 2^%d timed twice: %.4f ms and %.4f ms, %.2f%% apart (target "
                "<= 3%%): %s\n", p, t1, t2, 100.0 * diff, diff <= 0.03 ? "met" : "MISSED");
    // what the two medians stand on: the means, and how the repetitions' times spread (the
    // event clock's steps show as few distinct values)
    for (const auto* res : {&r1, &r2}) {
      std::map<double, int> counts;
      for (double v : res->samples_ms) ++counts[v];
      std::vector<std::pair<int, double>> common;
      for (const auto& [v, c] : counts) common.push_back({c, v});
      std::sort(common.rbegin(), common.rend());
      std::printf("  mean %.5f ms, median %.5f ms, %zu repetitions, %zu distinct times; most common (ms x count):",
                  res->mean_ms, res->median_ms, res->samples_ms.size(), counts.size());
      for (std::size_t i = 0; i < std::min<std::size_t>(6, common.size()); ++i)
        std::printf(" %.6f x %d", common[i].second, common[i].first);
      std::printf("\n");
    }
  }
  return 0;
}

// bench/gpu_softmax.cpp — fused row softmax of an M×N f32 matrix on the cuda backend (M = 4096,
// N = 256 … 16384, powers of two), sample 02's kernel: one program per row, BLOCK = the next power
// of two >= N, num_warps by BLOCK as in Triton's tutorial (4; 8 from 2048; 16 from 4096), against
// the device's copy bandwidth measured in the same run (cuMemcpyDtoDAsync of the M·N·4 bytes).
//
// Metric: GB/s = bytes moved / median time, for both columns:
//   tile      2·M·N·4 bytes (each row read once, written once)
//   D2D copy  2·(M·N·4) bytes (a copy reads and writes each byte once)
// Times: do_bench with CUDA events and a 256 MB L2 flush before each repetition. tile's result is
// checked against the same math in C++ (max; exp(x - max) and its sum; divide) first.
// "tile Triton numerics": the same kernel with exp and `/` as Triton computes them (tl::fast_exp,
// tl::fast_div: ex2.approx.f32 of x·log2 e, div.full.f32) where tile's exp puts the product's
// rounding back and its `/` is IEEE, timed in the same rounds.
// "Triton (this process)": Triton's own cubin of the tutorial kernel (bench/triton/_export_kernels.py,
// found through TILE_TRITON_KERNELS; NaN without it) launched from this process, timed with "tile"
// in alternating rounds (bench/triton_kernels.hpp): the comparison the target is judged by.
// "tile tuned warps" / "Triton tuned warps": the same two kernels with num_warps chosen per N among
// 2, 4, 8, 16 (the tutorial's rule is a heuristic): tile's by tile::autotune, Triton's as
// triton.autotune would, the fastest of its kernels compiled at each (_export_kernels.py writes
// softmax-N-wW), timed in the same rounds. Below the table, per N: each pair's per-round speedup,
// median and range. `--rounds R` times R alternating rounds an N (default 5).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>

#include "gpu.hpp"
#include "kernels.hpp"
#include "triton_kernels.hpp"

using namespace tile::literals;

auto softmax = bench::make_softmax();
auto softmax_fast = bench::make_softmax_numerics(true);

/// Triton's tutorial: num_warps 4, 8 from BLOCK 2048, 16 from 4096.
static int warps_for(std::int64_t block) { return block >= 4096 ? 16 : block >= 2048 ? 8 : 4; }

int main(int argc, char** argv) {
  // --rounds R: the alternating rounds of each N (default 5; their per-round ratios' median is reported)
  int rounds = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  auto dev = bench::gpu::cuda_device("gpu_softmax");
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const std::int64_t M = 4096;

  std::vector<double> sizes;
  for (int c = 256; c <= 16384; c *= 2) sizes.push_back(c);
  auto b = bench::sweep("gpu-softmax", "N", sizes,
                        {"tile", "tile Triton numerics", "Triton (this process)", "tile tuned warps", "Triton tuned warps",
                         "D2D copy"},
                        {"tile", "Triton (this process)", "D2D copy"}, "GB/s", true);

  std::int64_t n = 0, block = 0;
  int warps = 4;
  tile::buffer<float> x, y;
  std::optional<bench::gpu::d2d_copy> copy;
  std::optional<bench::gpu::triton_kernel> triton;
  std::optional<std::pair<bench::gpu::triton_kernel, int>> triton_tuned;  // and its num_warps
  std::map<std::string, double> gbps_of;  // per column, timed in the rounds of "tile"
  std::vector<std::string> speedups;
  auto run_tile = [&] { softmax[{M}](y, x, n, n, "BLOCK"_c = block, "num_warps"_c = warps); };
  auto run_fast = [&] { softmax_fast[{M}](y, x, n, n, "BLOCK"_c = block, "num_warps"_c = warps); };
  // sample 02's kernel with num_warps tuned per N (BLOCK given at the launch)
  auto tuned = tile::autotune(softmax, {.configs = {tile::config({}, 2), tile::config({}, 4), tile::config({}, 8),
                                                    tile::config({}, 16)},
                                        .key = {"n_cols"},
                                        .arg_names = {"out", "in", "stride", "n_cols"},
                                        .disk_cache = false});
  auto run_tuned = [&] { tuned[{M}](y, x, n, n, "BLOCK"_c = block); };
  using tk = bench::gpu::triton_kernel;
  auto launch_triton = [&](const tk& k) {  // softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols)
    k.launch(M, {tk::arg(y), tk::arg(x), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n))});
  };
  auto run_triton = [&] { launch_triton(*triton); };
  auto run_triton_tuned = [&] { launch_triton(triton_tuned->first); };
  auto bytes = [&] { return 2.0 * double(M * n) * sizeof(float); };

  tile::testing::run(b, [&](double xv, const std::string& provider) {
    if (std::int64_t(xv) != n) {  // a new N: set up, and check tile against the reference
      n = std::int64_t(xv), block = bench::gpu::next_pow2(n), warps = warps_for(block);
      x = y = {};
      copy.reset();
      const std::size_t size = std::size_t(M * n);
      const auto hx = bench::gpu::hash_floats(threads, size, 7, -4.f, 4.f);
      x = bench::upload(*dev, hx), y = dev->alloc<float>(size);
      bench::floats want(size);
      threads.parallel_for(M, [&](std::size_t r0, std::size_t r1) { bench::softmax_rows(hx.data(), want.data(), n, r0, r1); });
      run_tuned();  // tunes (untimed)
      const int tile_w = tuned.last_config()->num_warps;
      triton = bench::gpu::triton_kernel::find(*dev, "softmax-" + std::to_string(n));
      triton_tuned = bench::gpu::fastest_triton(*dev, "softmax-" + std::to_string(n), {2, 4, 8, 16}, launch_triton, timer.get());
      std::vector<std::pair<std::string, std::function<void()>>> kernels = {
          {"tile softmax", run_tile}, {"tile softmax_fast", run_fast}, {"tile softmax tuned", run_tuned}};
      if (triton) kernels.push_back({"Triton softmax", run_triton});  // Triton's kernels checked like tile's
      if (triton_tuned) kernels.push_back({"Triton softmax tuned", run_triton_tuned});
      for (const auto& [name, run] : kernels) {
        y.fill_zero();  // each kernel must write every output itself
        run();
        bench::check(name + " N=" + std::to_string(n), bench::max_abs_error(bench::download(y), want), 1e-5);
      }
      std::printf("  N = %lld: tuned num_warps tile %d, Triton %d\n", static_cast<long long>(n), tile_w,
                  triton_tuned ? triton_tuned->second : 0);
      copy.emplace(*dev, size * sizeof(float));
    }
    if (provider == "tile") {  // every kernel, in alternating rounds
      std::vector<std::pair<std::string, std::function<void()>>> cols = {
          {"tile", run_tile}, {"tile Triton numerics", run_fast}, {"tile tuned warps", run_tuned}};
      if (triton) cols.push_back({"Triton (this process)", run_triton});
      if (triton_tuned) cols.push_back({"Triton tuned warps", run_triton_tuned});
      auto timed = bench::gpu::interleaved_gbps(cols, bytes(), timer.get(), rounds);
      const auto& r = timed.r;
      gbps_of = std::move(timed.gbps);
      if (triton && triton_tuned) {
        const int regs = bench::gpu::registers(tile::detail::compiled_module(
            softmax, {y, x, n, n}, {tile::named("BLOCK", block), tile::named("num_warps", warps)}));
        speedups.push_back(bench::gpu::rounds_line(
            n, r, {{0, 3, "tile / Triton"}, {1, 3, "tile Triton numerics / Triton"}, {2, 4, "tuned: tile / Triton"}},
            "tile " + std::to_string(regs) + ", Triton " + std::to_string(triton->num_regs())));
      }
      return gbps_of["tile"];
    }
    if (provider != "D2D copy") return gbps_of.count(provider) ? gbps_of[provider] : NAN;
    return bench::gpu::gbps(2.0 * double(copy->bytes()), bench::median_ms([&] { (*copy)(); }, timer.get()));
  });
  for (const auto& line : speedups) std::printf("%s\n", line.c_str());
  std::printf("M = %lld rows, one program per row, BLOCK = next_pow2(N), num_warps 4 / 8 (BLOCK >= 2048) / 16 (>= "
              "4096), the tuned columns' 2, 4, 8 or 16 per N; GB/s: 2·M·N·4 bytes; D2D copy: M·N·4 bytes copied, counted 2x\n", static_cast<long long>(M));
  return 0;
}

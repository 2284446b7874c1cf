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
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpu.hpp"
#include "kernels.hpp"
#include "triton_kernels.hpp"

using namespace tile::literals;

auto softmax = bench::make_softmax();
auto softmax_fast = bench::make_softmax_numerics(true);

/// Triton's tutorial: num_warps 4, 8 from BLOCK 2048, 16 from 4096.
static int warps_for(std::int64_t block) { return block >= 4096 ? 16 : block >= 2048 ? 8 : 4; }

int main() {
  auto dev = bench::gpu::cuda_device("gpu_softmax");
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const std::int64_t M = 4096;

  std::vector<double> sizes;
  for (int c = 256; c <= 16384; c *= 2) sizes.push_back(c);
  auto b = bench::sweep("gpu-softmax", "N", sizes, {"tile", "tile Triton numerics", "Triton (this process)", "D2D copy"},
                        {"tile", "Triton (this process)", "D2D copy"}, "GB/s", true);

  std::int64_t n = 0, block = 0;
  int warps = 4;
  tile::buffer<float> x, y;
  std::optional<bench::gpu::d2d_copy> copy;
  std::optional<bench::gpu::triton_kernel> triton;
  double triton_gbps = NAN, fast_gbps = NAN;  // measured with "tile", in alternating rounds
  std::vector<std::string> speedups;
  auto run_tile = [&] { softmax[{M}](y, x, n, n, "BLOCK"_c = block, "num_warps"_c = warps); };
  auto run_fast = [&] { softmax_fast[{M}](y, x, n, n, "BLOCK"_c = block, "num_warps"_c = warps); };
  using tk = bench::gpu::triton_kernel;
  auto run_triton = [&] {  // softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols)
    triton->launch(M, {tk::arg(y), tk::arg(x), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n))});
  };
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
      run_tile();
      bench::check("tile softmax N=" + std::to_string(n), bench::max_abs_error(bench::download(y), want), 1e-5);
      y.fill_zero();
      run_fast();
      bench::check("tile softmax_fast N=" + std::to_string(n), bench::max_abs_error(bench::download(y), want), 1e-5);
      copy.emplace(*dev, size * sizeof(float));
      triton = bench::gpu::triton_kernel::find(*dev, "softmax-" + std::to_string(n));
      if (triton) {  // Triton's kernel checked like tile's
        y.fill_zero();
        run_triton();
        bench::check("Triton softmax N=" + std::to_string(n), bench::max_abs_error(bench::download(y), want), 1e-5);
      }
    }
    if (provider == "tile") {
      if (!triton) {
        fast_gbps = bench::gpu::gbps(bytes(), bench::median_ms(run_fast, timer.get()));
        return bench::gpu::gbps(bytes(), bench::median_ms(run_tile, timer.get()));
      }
      const auto r = bench::gpu::interleaved({run_tile, run_fast, run_triton}, timer.get());
      triton_gbps = bench::gpu::gbps(bytes(), r.ms[2]);
      fast_gbps = bench::gpu::gbps(bytes(), r.ms[1]);
      speedups.push_back(bench::gpu::rounds_line(
          n, r, {"tile", "tile Triton numerics", "Triton"},
          bench::gpu::registers(tile::detail::compiled_module(
              softmax, {y, x, n, n}, {tile::named("BLOCK", block), tile::named("num_warps", warps)})),
          triton->num_regs()));
      return bench::gpu::gbps(bytes(), r.ms[0]);
    }
    if (provider == "tile Triton numerics") return fast_gbps;
    if (provider == "Triton (this process)") return triton ? triton_gbps : NAN;
    return bench::gpu::gbps(2.0 * double(copy->bytes()), bench::median_ms([&] { (*copy)(); }, timer.get()));
  });
  for (const auto& line : speedups) std::printf("%s\n", line.c_str());
  std::printf("M = %lld rows, one program per row, BLOCK = next_pow2(N), num_warps 4 / 8 (BLOCK >= 2048) / 16 (>= "
              "4096); GB/s: 2·M·N·4 bytes; D2D copy: M·N·4 bytes copied, counted 2x\n", static_cast<long long>(M));
  return 0;
}

// bench/gpu_layer_norm.cpp — layer norm forward on the cuda backend as in Triton's tutorial 05:
// x, y, weight and bias in f16, statistics in f32 (each row's mean and 1/std are written too),
// M = 4096 rows, N = 1024 … 8192; sample 05's kernel: one program per row, the row walked in
// BLOCKs three times (mean, variance, normalize). BLOCK and num_warps as the tutorial picks them:
// BLOCK = min(65536 / 2, next_pow2(N)) (so one BLOCK holds the row here), num_warps =
// min(max(BLOCK / 256, 1), 8). Against the device's copy bandwidth measured in the same run.
// Three more columns: the same kernel with Triton's statistics numerics (tl::fast_div/fast_sqrt),
// "row in registers" (bench::make_layer_norm_row: the row loaded once, N <= BLOCK), and the
// tutorial's kernel with num_warps autotuned over 1, 2, 4, 8 (the tutorial's rule is a
// heuristic); bench/triton/layer_norm.py times Triton's twins of the last two as well.
//
// Metric: GB/s = bytes moved / median time, for both columns:
//   tile      (2·M·N + 2·N)·2 bytes: x read and y written (the tutorial's count), plus w and b
//             read once (1/M more); the 2·M·4 bytes of statistics are not counted
//   D2D copy  2·((M·N + N)·2) bytes: a copy of half those bytes reads and writes each byte once
// Times: do_bench with CUDA events and a 256 MB L2 flush before each repetition. tile's result
// is checked against the same math in C++ (f32 statistics over the f16 inputs) first.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpu.hpp"
#include "kernels.hpp"
#include "triton_kernels.hpp"

using namespace tile::literals;
using tile::half;

auto layer_norm = bench::make_layer_norm();
auto layer_norm_fast = bench::make_layer_norm_fast();
auto layer_norm_row = bench::make_layer_norm_row();

using halfs = std::vector<half>;

static halfs to_half(const bench::floats& v) { return halfs(v.begin(), v.end()); }

// The C++ reference for rows [r0, r1) (the check only: it is not timed).
static void layer_norm_rows(const halfs& x, float* y, const halfs& w, const halfs& b, float* mean, float* rstd,
                            std::size_t n, float eps, std::size_t r0, std::size_t r1) {
  for (std::size_t r = r0; r < r1; ++r) {
    const half* in = x.data() + r * n;
    double s = 0, q = 0;
    for (std::size_t c = 0; c < n; ++c) s += float(in[c]);
    const double m = s / double(n);
    for (std::size_t c = 0; c < n; ++c) q += (float(in[c]) - m) * (float(in[c]) - m);
    const double rs = 1.0 / std::sqrt(q / double(n) + eps);
    for (std::size_t c = 0; c < n; ++c) y[r * n + c] = float((float(in[c]) - m) * rs * float(w[c]) + float(b[c]));
    mean[r] = float(m), rstd[r] = float(rs);
  }
}

int main() {
  auto dev = bench::gpu::cuda_device("gpu_layer_norm");
  if (!dev) return 0;
  auto timer = tile::testing::make_timer(*dev);
  bench::pool threads;
  const std::int64_t M = 4096;
  const float eps = 1e-5f;

  auto b = bench::sweep("gpu-layer-norm", "N", {1024, 2048, 4096, 8192}, {"tile", "Triton (this process)", "tile fast div/sqrt", "tile row in registers", "tile tuned warps", "D2D copy"},
                        {"tile", "Triton (this process)", "D2D copy"},
                        "GB/s", true);
  std::int64_t n = 0, block = 0;
  int warps = 4;
  tile::buffer<half> x, y, w, bias;
  auto dmean = dev->alloc<float>(M), drstd = dev->alloc<float>(M);
  std::optional<bench::gpu::d2d_copy> copy;
  std::optional<bench::gpu::triton_kernel> triton;
  double triton_gbps = NAN, fast_gbps = NAN;  // measured with "tile", in alternating rounds
  std::vector<std::string> speedups;
  auto run_tile = [&] {
    layer_norm[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  auto run_fast = [&] {
    layer_norm_fast[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  using tk = bench::gpu::triton_kernel;
  auto run_triton = [&] {  // layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps)
    triton->launch(M, {tk::arg(x), tk::arg(y), tk::arg(w), tk::arg(bias), tk::arg(dmean), tk::arg(drstd),
                       tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(eps)});
  };
  auto run_row = [&] {
    layer_norm_row[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  // the tutorial's kernel with num_warps chosen by tile::autotune over 1, 2, 4, 8 (key N; BLOCK
  // given at the launch); bench/triton/layer_norm.py tunes Triton's the same way
  auto tuned = tile::autotune(layer_norm, {.configs = {tile::config({}, 1), tile::config({}, 2), tile::config({}, 4),
                                                       tile::config({}, 8)},
                                           .key = {"N"},
                                           .arg_names = {"X", "Y", "W", "B", "Mean", "Rstd", "stride", "N", "eps"},
                                           .disk_cache = false});
  auto run_tuned = [&] { tuned[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block); };
  auto bytes = [&] { return double(2 * M * n + 2 * n) * sizeof(half); };

  tile::testing::run(b, [&](double xv, const std::string& provider) {
    if (std::int64_t(xv) != n) {  // a new N: set up, and check tile against the reference
      n = std::int64_t(xv);
      block = std::min<std::int64_t>(65536 / sizeof(half), bench::gpu::next_pow2(n));
      warps = int(std::min<std::int64_t>(std::max<std::int64_t>(block / 256, 1), 8));
      x = y = w = bias = {};
      copy.reset();
      const std::size_t size = std::size_t(M * n);
      const auto hx = to_half(bench::gpu::hash_floats(threads, size, 11, -2.f, 2.f));
      const auto hw = to_half(bench::gpu::hash_floats(threads, n, 12)), hb = to_half(bench::gpu::hash_floats(threads, n, 13));
      x = dev->upload(hx), w = dev->upload(hw), bias = dev->upload(hb), y = dev->alloc<half>(size);
      bench::floats want(size), mean(M), rstd(M);
      threads.parallel_for(M, [&](std::size_t r0, std::size_t r1) {
        layer_norm_rows(hx, want.data(), hw, hb, mean.data(), rstd.data(), n, eps, r0, r1);
      });
      triton = bench::gpu::triton_kernel::find(*dev, "layer_norm-" + std::to_string(n));
      std::vector<std::pair<std::string, std::function<void()>>> kernels = {
          {"tile layer_norm", run_tile}, {"tile layer_norm_fast", run_fast}, {"tile layer_norm_row", run_row}};
      if (triton) kernels.push_back({"Triton layer_norm", run_triton});  // checked like tile's
      for (const auto& [name, run] : kernels) {
        y.fill_zero();  // each variant must write every output itself
        run();
        const auto got = y.to_host();
        double err = 0;
        for (std::size_t i = 0; i < size; ++i) err = std::max(err, double(std::abs(float(got[i]) - want[i])));
        const std::string what = name + " N=" + std::to_string(n);
        bench::check(what, err, 1.0 / 64);  // f16 output of values up to ~4: an ulp is 2^-8
        bench::check(what + " (mean)", bench::max_abs_error(bench::download(dmean), mean), 1e-4);
        bench::check(what + " (rstd)", bench::max_abs_error(bench::download(drstd), rstd), 1e-3);
      }
      copy.emplace(*dev, std::size_t(M * n + n) * sizeof(half));
    }
    if (provider == "tile") {
      if (!triton) return bench::gpu::gbps(bytes(), bench::median_ms(run_tile, timer.get()));
      const auto r = bench::gpu::interleaved({run_tile, run_fast, run_triton}, timer.get());
      triton_gbps = bench::gpu::gbps(bytes(), r.ms[2]);
      fast_gbps = bench::gpu::gbps(bytes(), r.ms[1]);
      speedups.push_back(bench::gpu::rounds_line(
          n, r, {"tile", "tile fast div/sqrt", "Triton"},
          bench::gpu::registers(tile::detail::compiled_module(layer_norm, {x, y, w, bias, dmean, drstd, n, n, eps},
                                                              {tile::named("BLOCK", block), tile::named("num_warps", warps)})),
          triton->num_regs()));
      return bench::gpu::gbps(bytes(), r.ms[0]);
    }
    if (provider == "Triton (this process)") return triton ? triton_gbps : NAN;
    if (provider == "tile tuned warps") {
      run_tuned();  // tunes (untimed)
      const double gbps = bench::gpu::gbps(bytes(), bench::median_ms(run_tuned, timer.get()));
      std::printf("  N = %lld: tuned num_warps = %d\n", static_cast<long long>(n), tuned.last_config()->num_warps);
      return gbps;
    }
    if (provider == "tile row in registers") return bench::gpu::gbps(bytes(), bench::median_ms(run_row, timer.get()));
    if (provider == "tile fast div/sqrt")
      return triton ? fast_gbps : bench::gpu::gbps(bytes(), bench::median_ms(run_fast, timer.get()));
    return bench::gpu::gbps(2.0 * double(copy->bytes()), bench::median_ms([&] { (*copy)(); }, timer.get()));
  });
  for (const auto& line : speedups) std::printf("%s\n", line.c_str());
  std::printf("M = %lld rows, f16 data, f32 statistics, BLOCK = next_pow2(N), num_warps = min(max(BLOCK/256, 1), 8); "
              "GB/s: (2·M·N + 2·N)·2 bytes; D2D copy: (M·N + N)·2 bytes copied, counted 2x\n",
              static_cast<long long>(M));
  return 0;
}

// bench/gpu_layer_norm.cpp — layer norm forward on the cuda backend as in Triton's tutorial 05:
// x, y, weight and bias in f16, statistics in f32 (each row's mean and 1/std are written too),
// M = 4096 rows, N = 1024 … 8192; sample 05's kernel: one program per row, the row walked in
// BLOCKs three times (mean, variance, normalize). Here BLOCK holds the row, so tile's compiler
// reads it once (the three loops' one-step version, transforms/version_single_trip_loops.cpp;
// TILE_VERSION_LOOPS=0 times the kernel as written); Triton's loads it three times. BLOCK and num_warps as the tutorial picks them:
// BLOCK = min(65536 / 2, next_pow2(N)) (so one BLOCK holds the row here), num_warps =
// min(max(BLOCK / 256, 1), 8). Against the device's copy bandwidth measured in the same run.
// Three more columns: the same kernel with Triton's statistics numerics (tl::fast_div/fast_sqrt),
// "row in registers" (bench::make_layer_norm_row: the row loaded once, N <= BLOCK), and the
// tutorial's kernel with num_warps autotuned over 1, 2, 4, 8 (the tutorial's rule is a
// heuristic). Triton's twins of the last two, "Triton row in registers" and "Triton tuned warps"
// (the fastest of its tutorial kernel compiled at 1, 2, 4, 8 warps, as triton.autotune would
// pick; _export_kernels.py writes layer_norm_row-N and layer_norm-N-wW), run in the same
// alternating rounds as every tile column. Below the table, per N: each pair's per-round
// speedup, median and range.
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
#include <map>

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

  auto b = bench::sweep("gpu-layer-norm", "N", {1024, 2048, 4096, 8192},
                        {"tile", "Triton (this process)", "tile fast div/sqrt", "tile row in registers",
                         "Triton row in registers", "tile tuned warps", "Triton tuned warps", "D2D copy"},
                        {"tile", "Triton (this process)", "D2D copy"}, "GB/s", true);
  std::int64_t n = 0, block = 0;
  int warps = 4;
  tile::buffer<half> x, y, w, bias;
  auto dmean = dev->alloc<float>(M), drstd = dev->alloc<float>(M);
  std::optional<bench::gpu::d2d_copy> copy;
  std::optional<bench::gpu::triton_kernel> triton, triton_row;
  std::optional<std::pair<bench::gpu::triton_kernel, int>> triton_tuned;  // and its num_warps
  std::map<std::string, double> gbps_of;  // per column, timed in the rounds of "tile"
  std::vector<std::string> speedups;
  auto run_tile = [&] {
    layer_norm[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  auto run_fast = [&] {
    layer_norm_fast[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  using tk = bench::gpu::triton_kernel;
  auto launch_triton = [&](const tk& k) {  // layer_norm_fwd(X, Y, W, B, Mean, Rstd, stride, N, eps), and its twins
    k.launch(M, {tk::arg(x), tk::arg(y), tk::arg(w), tk::arg(bias), tk::arg(dmean), tk::arg(drstd),
                 tk::arg(std::int32_t(n)), tk::arg(std::int32_t(n)), tk::arg(eps)});
  };
  auto run_triton = [&] { launch_triton(*triton); };
  auto run_triton_row = [&] { launch_triton(*triton_row); };
  auto run_triton_tuned = [&] { launch_triton(triton_tuned->first); };
  auto run_row = [&] {
    layer_norm_row[{M}](x, y, w, bias, dmean, drstd, n, n, eps, "BLOCK"_c = block, "num_warps"_c = warps);
  };
  // the tutorial's kernel with num_warps chosen by tile::autotune over 1, 2, 4, 8 (key N; BLOCK
  // given at the launch); Triton's twin: the fastest of its kernel compiled at each (fastest_triton)
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
      run_tuned();  // tunes (untimed)
      const int tile_w = tuned.last_config()->num_warps;
      const std::string ns = std::to_string(n);
      triton = bench::gpu::triton_kernel::find(*dev, "layer_norm-" + ns);
      triton_row = bench::gpu::triton_kernel::find(*dev, "layer_norm_row-" + ns);
      triton_tuned = bench::gpu::fastest_triton(*dev, "layer_norm-" + ns, {1, 2, 4, 8}, launch_triton, timer.get());
      std::vector<std::pair<std::string, std::function<void()>>> kernels = {
          {"tile layer_norm", run_tile}, {"tile layer_norm_fast", run_fast}, {"tile layer_norm_row", run_row},
          {"tile layer_norm tuned", run_tuned}};
      if (triton) kernels.push_back({"Triton layer_norm", run_triton});  // checked like tile's
      if (triton_row) kernels.push_back({"Triton layer_norm_row", run_triton_row});
      if (triton_tuned) kernels.push_back({"Triton layer_norm tuned", run_triton_tuned});
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
      std::printf("  N = %lld: tuned num_warps tile %d, Triton %d\n", static_cast<long long>(n), tile_w,
                  triton_tuned ? triton_tuned->second : 0);
      copy.emplace(*dev, std::size_t(M * n + n) * sizeof(half));
    }
    if (provider == "tile") {  // every kernel, in alternating rounds
      std::vector<std::pair<std::string, std::function<void()>>> cols = {
          {"tile", run_tile}, {"tile fast div/sqrt", run_fast}, {"tile row in registers", run_row},
          {"tile tuned warps", run_tuned}};
      if (triton) cols.push_back({"Triton (this process)", run_triton});
      if (triton_row) cols.push_back({"Triton row in registers", run_triton_row});
      if (triton_tuned) cols.push_back({"Triton tuned warps", run_triton_tuned});
      auto timed = bench::gpu::interleaved_gbps(cols, bytes(), timer.get());
      const auto& r = timed.r;
      gbps_of = std::move(timed.gbps);
      if (triton && triton_row && triton_tuned) {  // the pairs' indices: cols as listed above
        const int regs = bench::gpu::registers(tile::detail::compiled_module(
            layer_norm, {x, y, w, bias, dmean, drstd, n, n, eps},
            {tile::named("BLOCK", block), tile::named("num_warps", warps)}));
        speedups.push_back(bench::gpu::rounds_line(
            n, r,
            {{0, 4, "tile / Triton"}, {1, 4, "tile fast div/sqrt / Triton"}, {2, 5, "row in registers: tile / Triton"},
             {3, 6, "tuned: tile / Triton"}},
            "tile " + std::to_string(regs) + ", Triton " + std::to_string(triton->num_regs())));
      }
      return gbps_of["tile"];
    }
    if (provider != "D2D copy") return gbps_of.count(provider) ? gbps_of[provider] : NAN;
    return bench::gpu::gbps(2.0 * double(copy->bytes()), bench::median_ms([&] { (*copy)(); }, timer.get()));
  });
  for (const auto& line : speedups) std::printf("%s\n", line.c_str());
  std::printf("M = %lld rows, f16 data, f32 statistics, BLOCK = next_pow2(N), num_warps = min(max(BLOCK/256, 1), 8); "
              "GB/s: (2·M·N + 2·N)·2 bytes; D2D copy: (M·N + N)·2 bytes copied, counted 2x\n",
              static_cast<long long>(M));
  return 0;
}

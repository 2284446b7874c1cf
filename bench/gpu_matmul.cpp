// bench/gpu_matmul.cpp — matrix multiplication on the cuda backend: Triton's matmul
// tutorial kernel (bench::make_matmul_t: grouped program order, f32 accumulation; A, B and C in
// f16, or all three in bf16), autotuned over the tutorial's 8 CUDA configs, against cuBLAS
// (cublasGemmEx, compute type 32F, default algorithm; opened with dlopen from the CUDA libraries
// on the machine: bench/cublas.hpp) on the same stream. Row-major, contiguous A (M×K), B (K×N),
// C (M×N). Shapes: square M = N = K = 512 … 8192, and the LLM projections M = 8192 tokens,
// N = K ∈ {4096, 11008, 14336}; `--quick`: 1024, 4096, 8192 and N = K = 11008 only; `--targets`:
// the target shapes, M = N = K = 4096 and 8192, only (`--rounds R` for more rounds).
// Second pair of tables: the f16 kernel with leaky ReLU fused into its epilogue (ACTIVATION =
// true: applied to the f32 accumulator before the f16 store) against cuBLAS followed by a
// separate tile kernel applying leaky ReLU in place (bench::make_leaky_relu: f16 in and out, f32
// math, BLOCK 1024), both in one timed function. bench/triton/matmul.py times Triton 3.6's
// tutorial kernel and torch.mm (cuBLAS through PyTorch) on the same shapes, configs and budgets.
// Where run-all exported Triton's compiled tutorial kernel (bench/triton/_export_kernels.py, in the
// 128 x 256 x 64, 8 warps, 3 stages config its autotuner picks for the large shapes;
// TILE_TRITON_KERNELS), the "Triton (this process)" columns time it here too, checked like tile's.
//
// Metric: TFLOP/s = 2·M·N·K / median time (the activation's M·N operations not counted).
// Times: do_bench (25 ms warm-up, 100 ms of repetitions) with CUDA events and a 256 MB L2 flush
// before each repetition, for tile, Triton and cuBLAS alike, in 5 alternating rounds (`--rounds`;
// tile, Triton, cuBLAS, then cuBLAS, Triton, tile, …: bench::gpu::interleaved): each column the
// median of its rounds, and per shape the per-round ratios' median and range — a sustained
// tensor-core load drifts the clocks by several percent, which timing one after the other would
// put on one side only. The per-round ratios compare times taken back to back; their medians for
// the TMA form are listed again after the tables. Autotuning: tile::autotune, key (M, N, K)
// plus the launch's ACTIVATION, 10 ms warm-up and 40 ms of repetitions per config (so the whole
// bench fits in a few minutes), disk cache off: every run tunes afresh, as Triton's autotuner
// does, so a choice stored by an older compiler never stands in for the current one's. The tuning
// time, the chosen config and its module (registers, spills, shared memory) are printed per shape.
//
// Checks, before anything is timed, for every shape, type and epilogue:
//   cuBLAS   against a double-precision host product at 260 elements (4 corners + 256 spread):
//            catches a wrong call (operand order, leading dimensions);
//   tile     its C first filled with NaN (0xFFFF), so an element it never writes shows; then
//            every element against cuBLAS's: |tile − cuBLAS| ≤ rtol·|cuBLAS| + 1e-3·max|C|, rtol
//            1e-2 for f16 and 2e-2 for bf16 (one bf16 ulp is up to 2^-7 relative) — and against
//            the host product at the same 260 elements (the only check when cuBLAS is missing).
// A mismatch prints the shape, the config and the worst element, leaves tile's value out (NaN) and
// makes the bench exit 1 after its tables; so does an error (a compile or CUDA failure: each
// names the shape and the step).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cublas.hpp"
#include "triton_kernels.hpp"
#include "gpu.hpp"
#include "kernels.hpp"

using namespace tile::literals;
using tile::bfloat16;
using tile::half;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr int kLlmTokens = 8192;            // M of the LLM shapes
constexpr double kAtolOfMax = 1e-3;         // the absolute tolerance, relative to max |C|
constexpr double kTuneWarmupMs = 10, kTuneRepMs = 40;
constexpr int kActBlock = 1024;             // the separate leaky ReLU kernel's BLOCK (num_warps 4)

struct shape {
  int M, N, K;
  bool llm;  // M = 8192, N = K (the second table of each kind); else M = N = K
};

std::string str(const shape& s) {
  return "M=" + std::to_string(s.M) + " N=" + std::to_string(s.N) + " K=" + std::to_string(s.K);
}
double tflops(const shape& s, double ms) { return 2.0 * s.M * double(s.N) * s.K / (ms * 1e-3) / 1e12; }
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

enum class shape_set { all, quick, targets };

std::vector<shape> shapes(shape_set set) {
  std::vector<shape> out;
  const std::vector<int> square = set == shape_set::all     ? std::vector<int>{512, 1024, 2048, 4096, 8192}
                                  : set == shape_set::quick ? std::vector<int>{1024, 4096, 8192}
                                                            : std::vector<int>{4096, 8192};
  for (int n : square) out.push_back({n, n, n, false});
  if (set == shape_set::targets) return out;
  for (int n : set == shape_set::quick ? std::vector<int>{11008} : std::vector<int>{4096, 11008, 14336})
    out.push_back({kLlmTokens, n, n, true});
  return out;
}

/// The 8 configs Triton's matmul tutorial lists for CUDA with f16/bf16 inputs
/// (get_cuda_autotune_config, without the 8 for fp8); bench/triton/matmul.py tunes over the same.
std::vector<tile::config> tutorial_configs() {
  auto c = [](int bm, int bn, int bk, int warps, int stages) {
    return tile::config({{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 8}}, warps, stages);
  };
  return {c(128, 256, 64, 8, 3), c(64, 256, 32, 4, 4), c(128, 128, 32, 4, 4), c(128, 64, 32, 4, 4),
          c(64, 128, 32, 4, 4),  c(128, 32, 32, 4, 4), c(64, 32, 32, 2, 5),  c(32, 64, 32, 2, 5)};
}

template <class T>
struct elem;
template <>
struct elem<half> {
  static constexpr const char* name = "f16";
  static constexpr double rtol = 1e-2;
};
template <>
struct elem<bfloat16> {
  static constexpr const char* name = "bf16";
  static constexpr double rtol = 2e-2;
};

/// One autotuner per element type and kernel form (pointer tiles, or tensor descriptors: TMA on
/// sm_90a); the kernel objects live as long as the program.
template <class T, bool Desc = false>
const auto& tuned_matmul() {
  static const auto kernel = [] {
    if constexpr (Desc) return bench::make_matmul_desc_t<T>();
    else return bench::make_matmul_t<T>();
  }();
  static const auto tuned = tile::autotune(
      kernel, {.configs = tutorial_configs(),
               .key = {"M", "N", "K"},
               .arg_names = {"a", "b", "c", "M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn"},
               .warmup_ms = kTuneWarmupMs,
               .rep_ms = kTuneRepMs,
               .disk_cache = false});
  return tuned;
}
template <class T>
const auto& leaky_relu_kernel() {
  static const auto k = bench::make_leaky_relu<T>();
  return k;
}

template <class T>
std::vector<T> convert(bench::pool& threads, const bench::floats& f) {
  std::vector<T> v(f.size());
  threads.parallel_for(f.size(), [&](std::size_t a, std::size_t b) {
    for (std::size_t i = a; i < b; ++i) v[i] = T(f[i]);
  });
  return v;
}

double leaky(double x) { return x >= 0 ? x : 0.01 * x; }

/// What a comparison found: elements outside |got − want| ≤ rtol·|want| + atol (NaN counts),
/// the worst of them (largest excess over its bound), and the largest difference.
struct mismatch {
  std::size_t checked = 0, bad = 0, worst = 0;
  double worst_excess = 0, worst_got = 0, worst_want = 0;
  double max_diff = 0, max_want = 0, atol = 0;
  void merge(const mismatch& o) {
    checked += o.checked, bad += o.bad;
    max_diff = std::max(max_diff, o.max_diff), max_want = std::max(max_want, o.max_want);
    if (o.bad && (bad == o.bad || o.worst_excess > worst_excess))
      worst = o.worst, worst_excess = o.worst_excess, worst_got = o.worst_got, worst_want = o.worst_want;
  }
  void add(std::size_t index, double got, double want, double rtol) {
    ++checked;
    const double d = std::abs(got - want);
    max_diff = std::max(max_diff, std::isnan(d) ? HUGE_VAL : d);
    if (d <= rtol * std::abs(want) + atol) return;
    ++bad;
    const double excess = std::isnan(d) ? HUGE_VAL : d / (rtol * std::abs(want) + atol);
    if (bad == 1 || excess > worst_excess) worst = index, worst_excess = excess, worst_got = got, worst_want = want;
  }
};

/// Every element of `got` against `want` (cuBLAS's), on all cores.
template <class T>
mismatch compare_all(bench::pool& threads, const std::vector<T>& got, const std::vector<T>& want, double rtol) {
  std::mutex mu;
  double max_want = 0;
  threads.parallel_for(want.size(), [&](std::size_t lo, std::size_t hi) {
    double m = 0;
    for (std::size_t i = lo; i < hi; ++i)
      if (const double w = std::abs(double(float(want[i]))); std::isfinite(w)) m = std::max(m, w);
    std::lock_guard l(mu);
    max_want = std::max(max_want, m);
  });
  mismatch total;
  total.max_want = max_want;
  total.atol = kAtolOfMax * max_want;
  threads.parallel_for(want.size(), [&](std::size_t lo, std::size_t hi) {
    mismatch part;
    part.atol = total.atol;
    for (std::size_t i = lo; i < hi; ++i) part.add(i, float(got[i]), float(want[i]), rtol);
    std::lock_guard l(mu);
    total.merge(part);
  });
  return total;
}

/// The elements the host reference computes: the four corners and 256 spread by a hash.
std::vector<std::size_t> sample_points(const shape& s) {
  const auto M = std::size_t(s.M), N = std::size_t(s.N);
  std::vector<std::size_t> out = {0, N - 1, (M - 1) * N, M * N - 1};
  std::uint64_t z = 0x243F6A8885A308D3ull ^ (M * 31 + N);
  for (int i = 0; i < 256; ++i) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(std::size_t(z >> 17) % (M * N));
  }
  return out;
}

/// `got` (all of C) at sample_points against a double-precision product of the same inputs.
template <class T>
mismatch spot_check(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& got, const shape& s,
                    bool activation, double rtol) {
  const auto N = std::size_t(s.N), K = std::size_t(s.K);
  std::vector<std::pair<std::size_t, double>> ref;
  double max_want = 0;
  for (std::size_t p : sample_points(s)) {
    const std::size_t i = p / N, j = p % N;
    double acc = 0;
    for (std::size_t k = 0; k < K; ++k) acc += double(float(a[i * K + k])) * double(float(b[k * N + j]));
    if (activation) acc = leaky(acc);
    ref.emplace_back(p, acc);
    max_want = std::max(max_want, std::abs(acc));
  }
  mismatch m;
  m.max_want = max_want;
  m.atol = kAtolOfMax * max_want;
  for (const auto& [p, want] : ref) m.add(p, float(got[p]), want, rtol);
  return m;
}

/// "1234 of 16777216 elements off; worst C[17, 200]: 1.5 vs 4.7 (allowed ±0.39) …".
std::string describe(const mismatch& m, const shape& s, double rtol, const char* against) {
  char buf[512];
  const std::size_t i = m.worst / std::size_t(s.N), j = m.worst % std::size_t(s.N);
  std::snprintf(buf, sizeof buf,
                "%zu of %zu elements checked are off; worst C[%zu, %zu] = %.6g, %s %.6g (allowed ±%.3g: %.0e·|want| + "
                "%.0e·max|C|, max|C| = %.4g); max |diff| = %.4g",
                m.bad, m.checked, i, j, m.worst_got, against, m.worst_want, rtol * std::abs(m.worst_want) + m.atol, rtol,
                kAtolOfMax, m.max_want, m.max_diff);
  return buf;
}

/// The numbers the tables show: value[table][x][provider] (TFLOP/s).
using results = std::map<std::string, std::map<double, std::map<std::string, double>>>;

/// The state every measurement uses.
struct bench_ctx {
  tile::device dev;
  std::unique_ptr<tile::testing::timer> timer;
  bench::pool threads;
  std::unique_ptr<bench::cublas::library> blas;  // null: no usable cuBLAS
  results values;
  std::vector<std::string> failures;
  int rounds = 5;                   // alternating timing rounds of tile, Triton and cuBLAS
  std::vector<std::string> paired;  // the TMA form's per-round ratio medians, one line per shape
  /// Triton's compiled tutorial kernels by name (matmul-f16, matmul-bf16, matmul-f16-leaky_relu),
  /// loaded on first use; nullopt: not exported (TILE_TRITON_KERNELS unset, or no such file)
  std::map<std::string, std::optional<bench::gpu::triton_kernel>> triton;
  const bench::gpu::triton_kernel* triton_kernel(const std::string& name) {
    auto it = triton.find(name);
    if (it == triton.end()) it = triton.emplace(name, bench::gpu::triton_kernel::find(dev, name)).first;
    return it->second ? &*it->second : nullptr;
  }
};

/// Triton's kernel's arguments by the names its .meta lists (the tutorial kernel's parameters).
template <class T>
std::optional<std::vector<tile::drivers::kernel_arg>> triton_args(const bench::gpu::triton_kernel& k, const tile::buffer<T>& a,
                                                                  const tile::buffer<T>& b, const tile::buffer<T>& c, const shape& s) {
  using tk = bench::gpu::triton_kernel;
  std::vector<tile::drivers::kernel_arg> out;
  for (const auto& n : k.args()) {
    if (n == "a_ptr") out.push_back(tk::arg(a));
    else if (n == "b_ptr") out.push_back(tk::arg(b));
    else if (n == "c_ptr") out.push_back(tk::arg(c));
    else if (n == "M") out.push_back(tk::arg(std::int32_t(s.M)));
    else if (n == "N" || n == "stride_bk" || n == "stride_cm") out.push_back(tk::arg(std::int32_t(s.N)));
    else if (n == "K" || n == "stride_am") out.push_back(tk::arg(std::int32_t(s.K)));
    else if (n == "stride_ak" || n == "stride_bn" || n == "stride_cn") out.push_back(tk::arg(std::int32_t(1)));
    else return std::nullopt;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

/// What the tuned kernel's last launch ran: "168 regs, 0 B local/spill, 98304 B smem".
template <class Tuned, class T>
std::string module_info(const Tuned& tuned, const tile::buffer<T>& a, const tile::buffer<T>& b, const tile::buffer<T>& c,
                        const shape& s, bool activation) {
  const auto cfg = tuned.last_config();
  if (!cfg) return "no config";
  std::vector<tile::named> metas = cfg->metas;
  metas.emplace_back("num_warps", cfg->num_warps);
  metas.emplace_back("num_stages", cfg->num_stages);
  metas.emplace_back("ACTIVATION", activation);
  const auto mod = tile::detail::compiled_module(tuned.kernel(), {a, b, c, s.M, s.N, s.K, s.K, 1, s.N, 1, s.N, 1}, metas);
  const auto* cu = dynamic_cast<const tile::drivers::cuda_module*>(mod.get());
  if (!cu) return "module not a cuda module";
  return std::to_string(cu->num_regs) + " regs, " + std::to_string(cu->local_bytes) + " B local/spill, " +
         std::to_string(cu->shared_bytes + std::uint32_t(cu->static_shared_bytes)) + " B smem";
}

/// Tables: the square shapes' x is M = N = K, the LLM shapes' x is N = K (M = 8192).
std::string table_name(const std::string& stem, const shape& s) { return stem + (s.llm ? "-llm" : ""); }

/// Measures one shape in type T: tile (autotuned) and cuBLAS, and for f16 the leaky ReLU pair;
/// `Desc`: tile's descriptor form ("tile TMA" columns; cuBLAS measured again, same call).
template <class T, bool Desc = false>
void measure(bench_ctx& ctx, const shape& s, const bench::floats& fa, const bench::floats& fb, bool epilogue) {
  const std::string what = std::string(elem<T>::name) + " " + str(s) + (Desc ? " (descriptors)" : "");
  const std::string tile_col = Desc ? "tile TMA" : "tile", fused_col = Desc ? "tile TMA fused" : "tile fused";
  const double rtol = elem<T>::rtol, x = s.N;
  const std::string plain = table_name(std::string("gpu-matmul-") + elem<T>::name, s);
  const std::string fused = table_name(std::string("gpu-matmul-leaky-relu-") + elem<T>::name, s);
  // (the references' columns keep the other form's measurement: each shows the better of the two)
  ctx.values[plain][x][tile_col] = nan_v;
  ctx.values[plain][x].try_emplace("cuBLAS", nan_v);
  ctx.values[plain][x].try_emplace("Triton (this process)", nan_v);
  if (epilogue) {
    ctx.values[fused][x][fused_col] = nan_v;
    ctx.values[fused][x].try_emplace("cuBLAS + leaky_relu", nan_v);
    ctx.values[fused][x].try_emplace("Triton fused (this process)", nan_v);
  }
  std::string step = "uploading the inputs";
  auto fail = [&](const std::string& msg) {
    ctx.failures.push_back(what + ": " + msg);
    std::printf("  FAILED %s: %s\n", what.c_str(), msg.c_str());
    std::fflush(stdout);
  };
  try {
    const auto t0 = clock_type::now();
    auto& dev = ctx.dev;
    const auto ha = convert<T>(ctx.threads, fa), hb = convert<T>(ctx.threads, fb);
    const auto a = dev.upload(ha), b = dev.upload(hb);
    const std::size_t n_c = std::size_t(s.M) * std::size_t(s.N);
    const auto c = dev.alloc<T>(n_c), ref = dev.alloc<T>(n_c);
    std::optional<tile::buffer<T>> tc;  // Triton's C
    auto& tuned = tuned_matmul<T, Desc>();
    const int M = s.M, N = s.N, K = s.K;
    auto grid = [M, N](const tile::meta& m) {
      return tile::grid3{tile::cdiv(M, m["BLOCK_M"]) * tile::cdiv(N, m["BLOCK_N"])};
    };
    auto run_tile = [&](bool act) { tuned[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, "ACTIVATION"_c = act); };
    auto run_cublas = [&] { ctx.blas->template gemm_row_major<T>(a.address(), b.address(), ref.address(), M, N, K); };
    const int n_act = M * N;  // < 2^31 for every shape here
    auto run_cublas_act = [&] {
      run_cublas();
      leaky_relu_kernel<T>()[{tile::cdiv(n_act, kActBlock)}](ref, n_act, "BLOCK"_c = kActBlock);
    };

    for (const bool act : epilogue ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      const std::string tag = act ? " (leaky ReLU)" : "";
      // cuBLAS's result (with the separate activation), checked at sample points against the host
      std::vector<T> want;
      if (ctx.blas) {
        step = act ? "cuBLAS + the leaky_relu kernel" : "cuBLAS gemm";
        if (act) run_cublas_act();
        else run_cublas();
        dev.synchronize();
        want = ref.to_host();
        if (const auto m = spot_check(ha, hb, want, s, act, rtol); m.bad) {
          fail("cuBLAS" + tag + " disagrees with the host product (the bench's call is wrong?): " +
               describe(m, s, rtol, "host"));
          want.clear();  // tile is then checked against the host alone
        }
      }
      // tile: the first launch tunes; then one launch into a NaN-filled C, checked
      step = std::string("autotuning tile") + tag;
      const auto t_tune = clock_type::now();
      run_tile(act);
      dev.synchronize();
      const double tune_ms = ms_since(t_tune);
      const auto cfg = tuned.last_config();
      const std::string cfg_str = cfg ? cfg->str() : "?";
      step = "tile" + tag + " with {" + cfg_str + "}";
      tile::detail::driver_of(dev).fill(c.address(), 0xFF, c.bytes());  // on the stream, before the launch
      run_tile(act);
      dev.synchronize();
      const auto got = c.to_host();
      // `shown`: the widest check that ran (every element against cuBLAS, else the sample points)
      mismatch shown = spot_check(ha, hb, got, s, act, rtol);
      const char* against = "host";
      bool ok = shown.bad == 0;
      if (!ok) fail("tile" + tag + " {" + cfg_str + "} against the host product: " + describe(shown, s, rtol, "host"));
      if (ok && !want.empty()) {
        shown = compare_all(ctx.threads, got, want, rtol);
        against = "cuBLAS";
        ok = shown.bad == 0;
        if (!ok) fail("tile" + tag + " {" + cfg_str + "} against cuBLAS: " + describe(shown, s, rtol, "cuBLAS"));
      }
      const std::string info = module_info(tuned, a, b, c, s, act);
      // Triton's kernel in this process (bench/triton/_export_kernels.py), checked like tile's
      const std::string tri_name = std::string("matmul-") + elem<T>::name + (act ? "-leaky_relu" : "");
      const bench::gpu::triton_kernel* tri = ctx.triton_kernel(tri_name);
      std::optional<std::vector<tile::drivers::kernel_arg>> tri_args;
      const auto tri_grid = std::uint32_t(tile::cdiv(M, 128) * tile::cdiv(N, 256));  // its config's BLOCK_M x BLOCK_N
      if (tri) {
        step = "Triton's " + tri_name;
        if (!tc) tc = dev.alloc<T>(n_c);
        tri_args = triton_args(*tri, a, b, *tc, s);
        if (!tri_args) {
          fail("Triton's " + tri_name + ": its .meta names arguments this bench does not know");
        } else {
          tile::detail::driver_of(dev).fill(tc->address(), 0xFF, tc->bytes());
          tri->launch(tri_grid, *tri_args);
          dev.synchronize();
          const auto tgot = tc->to_host();
          const mismatch m = want.empty() ? spot_check(ha, hb, tgot, s, act, rtol) : compare_all(ctx.threads, tgot, want, rtol);
          if (m.bad) {
            fail("Triton's " + tri_name + ": " + describe(m, s, rtol, want.empty() ? "host" : "cuBLAS"));
            tri_args.reset();
          }
        }
      }
      // time them in alternating rounds (clocks and power drift during a run: all see the same);
      // cuBLAS last, the reference of the per-round ratios
      step = "timing" + tag;
      double tile_tf = nan_v, ref_tf = nan_v, tri_tf = nan_v;
      std::string rounds;
      std::vector<std::function<void()>> fns;
      int k_tile = -1, k_tri = -1, k_ref = -1;
      if (ok) k_tile = int(fns.size()), fns.push_back([&] { run_tile(act); });
      if (tri_args) {
        k_tri = int(fns.size());
        fns.push_back([&] { tri->launch(tri_grid, *tri_args); });
      }
      if (ctx.blas) k_ref = int(fns.size()), fns.push_back(act ? std::function<void()>(run_cublas_act) : std::function<void()>(run_cublas));
      if (!fns.empty()) {
        const auto r = bench::gpu::interleaved(fns, ctx.timer.get(), ctx.rounds);
        std::string paired;
        auto range = [&](int p, int q, const char* label) {
          if (p < 0 || q < 0) return;
          const auto [lo, hi] = r.speedup_range(std::size_t(p), std::size_t(q));
          const double med = r.paired_speedup(std::size_t(p), std::size_t(q));
          char buf[128];
          std::snprintf(buf, sizeof buf, "; %s per round %.3f (%.3f ... %.3f)", label, med, lo, hi);
          rounds += buf;
          std::snprintf(buf, sizeof buf, "%s %.3f", label, med);
          paired += (paired.empty() ? "" : ", ") + std::string(buf);
        };
        if (k_tile >= 0) tile_tf = tflops(s, r.ms[std::size_t(k_tile)]);
        if (k_tri >= 0) tri_tf = tflops(s, r.ms[std::size_t(k_tri)]);
        if (k_ref >= 0) ref_tf = tflops(s, r.ms[std::size_t(k_ref)]);
        range(k_tile, k_ref, "tile / cuBLAS");
        range(k_tile, k_tri, "tile / Triton");
        if (Desc)
          ctx.paired.push_back(std::string(elem<T>::name) + " " + str(s) + (act ? " leaky ReLU" : "") + ": " + paired);
      }
      auto& row = ctx.values[act ? fused : plain][x];
      row[act ? fused_col : tile_col] = tile_tf;
      // cuBLAS and Triton: the better of their two measurements in this run (one per tile form)
      double& r = row[act ? "cuBLAS + leaky_relu" : "cuBLAS"];
      if (std::isnan(r) || ref_tf > r) r = ref_tf;
      double& tr = row[act ? "Triton fused (this process)" : "Triton (this process)"];
      if (std::isnan(tr) || tri_tf > tr) tr = tri_tf;
      std::printf("  %-5s %-26s%-13s %s %7.1f  %s %7.1f TFLOP/s  (%.2fx)  max|tile-%s| %.3g (max|C| %.4g)\n"
                  "        {%s}: %s; tuned in %.0f ms%s\n",
                  elem<T>::name, str(s).c_str(), act ? " leaky ReLU" : "", tile_col.c_str(), tile_tf, act ? "cuBLAS+act" : "cuBLAS", ref_tf,
                  tile_tf / ref_tf, against, shown.max_diff, shown.max_want, cfg_str.c_str(),
                  info.c_str(), tune_ms, rounds.c_str());
      std::fflush(stdout);
    }
    std::printf("        (%s: %.1f s with set-up and checks)\n", what.c_str(), ms_since(t0) / 1e3);
  } catch (const tile::error& e) {
    fail(step + " failed: " + e.message());
  }
}

/// The tables, from the values measured: one per (kind, type) and shape family.
void print_tables(const bench_ctx& ctx, const std::vector<shape>& all) {
  struct table {
    std::string name, x_name;
    bool llm;
    std::vector<std::string> providers;
  };
  std::vector<table> tables;
  for (const char* t : {"f16", "bf16"})
    for (bool llm : {false, true})
      tables.push_back({table_name(std::string("gpu-matmul-") + t, {0, 0, 0, llm}), llm ? "N=K (M=8192)" : "M=N=K", llm,
                        {"tile", "tile TMA", "Triton (this process)", "cuBLAS"}});
  for (bool llm : {false, true})
    tables.push_back({table_name("gpu-matmul-leaky-relu-f16", {0, 0, 0, llm}), llm ? "N=K (M=8192)" : "M=N=K", llm,
                      {"tile fused", "tile TMA fused", "Triton fused (this process)", "cuBLAS + leaky_relu"}});
  for (const auto& t : tables) {
    std::vector<double> xs;
    for (const auto& s : all)
      if (s.llm == t.llm) xs.push_back(s.N);
    // ratios of the TMA form (the one the targets are about) to each other column
    std::vector<std::string> ratio_of{t.providers[1], t.providers[0], t.providers[2], t.providers[3]};
    auto b = bench::sweep(t.name, t.x_name, xs, t.providers, ratio_of, "TFLOP/s", !t.llm);
    tile::testing::run(b, [&](double xv, const std::string& provider) {
      const auto table = ctx.values.find(t.name);
      if (table == ctx.values.end()) return nan_v;
      const auto row = table->second.find(xv);
      if (row == table->second.end()) return nan_v;
      const auto v = row->second.find(provider);
      return v == row->second.end() ? nan_v : v->second;
    });
  }
}

void usage(std::FILE* out, const char* argv0) {
  std::fprintf(out,
               "usage: %s [--quick | --targets] [--rounds R]\n"
               "  --quick     M=N=K 1024, 4096, 8192 and M=8192 N=K=11008 only\n"
               "  --targets   M=N=K 4096 and 8192 only (the target shapes)\n"
               "              (default: M=N=K 512 … 8192, and M=8192 N=K 4096, 11008, 14336)\n"
               "  --rounds R  alternating timing rounds per shape (default 5)\n"
               "  TILE_CUBLAS=/path/libcublas.so.N picks the cuBLAS; TILE_AUTOTUNE_VERBOSE=1 prints each config's time\n",
               argv0);
}

}  // namespace

int main(int argc, char** argv) {
  shape_set set = shape_set::all;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") set = shape_set::quick;
    else if (arg == "--targets") set = shape_set::targets;
    else if (arg == "--rounds" && i + 1 < argc && std::atoi(argv[i + 1]) > 0) rounds = std::atoi(argv[++i]);
    else if (arg == "--help" || arg == "-h") return usage(stdout, argv[0]), 0;
    else {
      std::fprintf(stderr, "gpu_matmul: unknown argument '%s'\n", argv[i]);
      usage(stderr, argv[0]);
      return 2;
    }
  }
  auto dev = bench::gpu::cuda_device("gpu_matmul");
  if (!dev) return 0;
  const auto t0 = clock_type::now();
  bench_ctx ctx{*dev, tile::testing::make_timer(*dev), {}, nullptr, {}, {}, rounds, {}, {}};
  std::string why;
  ctx.blas = bench::cublas::library::open(*dev, why);
  if (ctx.blas) {
    ctx.blas->set_stream(bench::gpu::driver(*dev).stream());  // tile's stream: the timer's events are there
    std::printf("cuBLAS %d from %s\n", ctx.blas->version(), ctx.blas->path().c_str());
  } else {
    std::printf("cuBLAS: unavailable, its columns are empty and tile is checked against the host product at "
                "sample points only (%s)\n", why.c_str());
  }
  const auto all = shapes(set);
  std::printf("%zu shapes%s; autotuning over %zu configs per shape, type and epilogue; %d timing rounds\n", all.size(),
              set == shape_set::quick ? " (--quick)" : set == shape_set::targets ? " (--targets)" : "",
              tutorial_configs().size(), rounds);
  std::fflush(stdout);
  for (const auto& s : all) {
    // the same values for both types: uniform in [-1, 1), rounded to each type
    const auto fa = bench::gpu::hash_floats(ctx.threads, std::size_t(s.M) * std::size_t(s.K), 101);
    const auto fb = bench::gpu::hash_floats(ctx.threads, std::size_t(s.K) * std::size_t(s.N), 202);
    measure<half>(ctx, s, fa, fb, true);
    measure<half, true>(ctx, s, fa, fb, true);
    measure<bfloat16>(ctx, s, fa, fb, false);
    measure<bfloat16, true>(ctx, s, fa, fb, false);
  }
  std::printf("\n");
  print_tables(ctx, all);
  std::printf("\ntile TMA, the median of the per-round speedups (each round's kernels timed back to back):\n");
  for (const auto& line : ctx.paired) std::printf("  %s\n", line.c_str());
  std::printf("A, B, C row-major; f32 accumulation; cuBLAS: cublasGemmEx, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT; "
              "TFLOP/s = 2·M·N·K / median time;\ntile autotuned over Triton's 8 tutorial configs (key M, N, K, "
              "ACTIVATION), afresh in every run\n");
  std::printf("gpu_matmul: %.0f s in all\n", ms_since(t0) / 1e3);
  if (!ctx.failures.empty()) {
    std::fprintf(stderr, "gpu_matmul: %zu failure(s):\n", ctx.failures.size());
    for (const auto& f : ctx.failures) std::fprintf(stderr, "  %s\n", f.c_str());
    return 1;
  }
  return 0;
}

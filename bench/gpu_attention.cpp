// bench/gpu_attention.cpp — fused attention forward and backward on the cuda backend, as Triton's
// tutorial 06 benchmarks it: B = 4, H = 32, f16, N = 1024 … 16384, D = 64 and 128, causal and not.
// tile's kernels are samples 08 and 09's (samples/attention_kernels.hpp); Triton's are its own cubins
// of bench/triton/attention.py's kernels (attn_fwd; _attn_bwd_preprocess and _attn_bwd), written
// by bench/triton/_export_kernels.py and found through TILE_TRITON_KERNELS (NaN without them),
// launched from this process on tile's stream (bench/triton_kernels.hpp).
//
// Metric: TFLOP/s = 4·B·H·N²·D / median time for the forward (halved for causal), 2.5 × that for
// the backward (its five matmuls against the forward's two, as the tutorial counts).
//   forward   tile: the best of sample 08's --bench configurations (BLOCK_M / BLOCK_N / num_warps
//             128/64/8, 128/128/8, 64/64/4, 128/32/8; and the tensor-descriptor form's 128/64/8,
//             128/128/8, 64/64/4), each timed once by do_bench; Triton: the
//             fastest of the configurations exported (attn_fwd-D<D>-causal<c>-<BM>-<BN>-<W>;
//             _export_kernels.py writes 128/64/8 and 128/128/8, attention.py's best on the
//             H200, per D and causal), num_stages 3.
//   backward  the preprocess (Delta = rowsum(O·dO)) and the dK/dV + dQ kernel, one timed function;
//             tile: the faster of sample 09's two forms (pointers; Q, K, V, dO through tensor
//             descriptors), in sample 09's configuration (BLOCK_M1 32, BLOCK_N1 64, BLOCK_M2 64, BLOCK_N2 32,
//             BLK_SLICE_FACTOR 2, 4 warps; preprocess BLOCK_M 64); Triton: the tutorial's (32, 128,
//             128, 32, factor 2, 4 warps, 5 stages; preprocess BLOCK_M 128). Both read tile's
//             forward's O and M and K pre-scaled by sm_scale / ln 2 (the tutorial's host code).
// Times: do_bench with CUDA events and a 256 MB L2 flush before each repetition; tile and Triton in
// 5 alternating rounds (`--rounds R`; bench::gpu::interleaved): each column the median of its
// rounds, and after the tables, per point, the per-round tile / Triton speedup's median and range
// (the figure to read: each round times the two back to back) and the registers.
// Checks, before timing, of every kernel timed (outputs first filled with NaN): O and M at 32 rows
// of two heads against a float64 reference, dQ at those rows and dK, dV at those keys against a
// float64 backward from the same O and M; |got − want| ≤ 2·10⁻² · max|want| (M: 10⁻³ absolute). A
// mismatch or an error leaves the value out (NaN) and makes the bench exit 1 after its tables.
// `--quick`: N = 1024, 4096, 16384 only. With TILE_BACKEND=null (and TILE_TARGET=sm_90a) it
// compiles tile's kernels at every configuration it would time, and runs nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../samples/attention_kernels.hpp"
#include "gpu.hpp"
#include "triton_kernels.hpp"

using namespace tile::literals;
using tile::half;

namespace {

constexpr int Z = 4, H = 32;
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double kTol = 2e-2, kTolM = 1e-3;

struct fwd_config {
  int bm, bn, warps;
  bool desc = false;  // tile: make_attn_fwd_desc's kernel (K and V through tensor descriptors: the TMA)
  std::string str() const {
    return std::to_string(bm) + "/" + std::to_string(bn) + "/" + std::to_string(warps) + (desc ? " descriptors" : "");
  }
};
/// sample 08's --bench configurations, in the pointer form and the tensor-descriptor form (tile
/// takes the best at each point)
const std::vector<fwd_config> kTileFwd = {{128, 64, 8},       {128, 128, 8},       {64, 64, 4},      {128, 32, 8},
                                          {128, 64, 8, true}, {128, 128, 8, true}, {64, 64, 4, true}};
/// the Triton forward kernels looked for (the fastest of those exported is taken)
const std::vector<fwd_config> kTritonFwd = {{128, 64, 8}, {128, 128, 8}};  // (what _export_kernels.py writes)
constexpr int kPre = 64;
/// tile's backward configuration: sample 09's (BLOCK_M1 32, BLOCK_N1 64, BLOCK_M2 64, BLOCK_N2
/// 32, 4 warps), or `--bwd M1 N1 M2 N2 warps`
struct bwd_config {
  int m1 = 32, n1 = 64, m2 = 64, n2 = 32, warps = 4;
};
bwd_config kBwd;
constexpr int kTritonPre = 128, kTritonN1 = 128;                   // the tutorial's (BLOCK_M1 32, BLOCK_N2 32)
const std::string kTritonBwd = "32-128-128-32-4";

auto attn_fwd = make_attn_fwd<half>("attn_fwd_f16");
auto attn_fwd_desc = make_attn_fwd_desc<half>("attn_fwd_desc_f16");
auto bwd_preprocess = make_bwd_preprocess<half>("attn_bwd_preprocess_f16");
auto attn_bwd = make_attn_bwd<half>("attn_bwd_f16");
auto attn_bwd_desc = make_attn_bwd_desc<half>("attn_bwd_desc_f16");

double fwd_flops(int N, int D, bool causal) { return 4.0 * Z * H * double(N) * N * D * (causal ? 0.5 : 1.0); }
double tflops(double flops, double ms) { return flops / (ms * 1e-3) / 1e12; }

/// One point's device buffers: the inputs (K also pre-scaled for the backward), tile's outputs
/// and Triton's.
struct buffers {
  tile::buffer<half> q, k, ks, v, d_o, o, dq, dk, dv, t_o, t_dq, t_dk, t_dv;
  tile::buffer<float> m, delta, t_m, t_delta;
  buffers(const tile::device& dev, std::size_t n, std::size_t rows) {
    for (auto* b : {&q, &k, &ks, &v, &d_o, &o, &dq, &dk, &dv, &t_o, &t_dq, &t_dk, &t_dv}) *b = dev.alloc<half>(n);
    for (auto* b : {&m, &delta, &t_m, &t_delta}) *b = dev.alloc<float>(rows);
  }
};

void launch_fwd(buffers& b, const tile::buffer<half>& o, const tile::buffer<float>& m, int N, int D, bool causal,
                const fwd_config& c) {
  const int sz = H * N * D, sh = N * D;
  if (c.desc) {
    attn_fwd_desc[{tile::cdiv(N, c.bm), Z * H}](1.0f / std::sqrt(float(D)), m, Z, H, b.q, b.k, b.v, o, N, "HEAD_DIM"_c = D,
                                                "BLOCK_M"_c = c.bm, "BLOCK_N"_c = c.bn, "STAGE"_c = causal ? 3 : 1,
                                                "num_warps"_c = c.warps);
    return;
  }
  attn_fwd[{tile::cdiv(N, c.bm), Z * H}](b.q, b.k, b.v, 1.0f / std::sqrt(float(D)), m, o, sz, sh, D, sz, sh, D, sz, sh,
                                         D, sz, sh, D, H, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = c.bm, "BLOCK_N"_c = c.bn,
                                         "STAGE"_c = causal ? 3 : 1, "num_warps"_c = c.warps);
}
/// tile's backward; `desc`: make_attn_bwd_desc's kernel (Q, K, V, dO through tensor descriptors)
void launch_bwd(buffers& b, int N, int D, bool causal, bool desc = false) {
  bwd_preprocess[{tile::cdiv(N, kPre), Z * H}](b.o, b.d_o, b.delta, N, "BLOCK_M"_c = kPre, "HEAD_DIM"_c = D);
  if (desc) {
    attn_bwd_desc[{tile::cdiv(N, kBwd.n1), 1, Z * H}](
        b.q, b.ks, b.v, 1.0f / std::sqrt(float(D)), b.d_o, b.dq, b.dk, b.dv, b.m, b.delta, Z, H, N, "BLOCK_M1"_c = kBwd.m1,
        "BLOCK_N1"_c = kBwd.n1, "BLOCK_M2"_c = kBwd.m2, "BLOCK_N2"_c = kBwd.n2, "num_warps"_c = kBwd.warps,
        "BLK_SLICE_FACTOR"_c = 2, "HEAD_DIM"_c = D, "CAUSAL"_c = causal);
    return;
  }
  attn_bwd[{tile::cdiv(N, kBwd.n1), 1, Z * H}](b.q, b.ks, b.v, 1.0f / std::sqrt(float(D)), b.d_o, b.dq, b.dk, b.dv, b.m,
                                           b.delta, H * N * D, N * D, D, H, N, "BLOCK_M1"_c = kBwd.m1, "BLOCK_N1"_c = kBwd.n1,
                                           "BLOCK_M2"_c = kBwd.m2, "BLOCK_N2"_c = kBwd.n2, "num_warps"_c = kBwd.warps, "BLK_SLICE_FACTOR"_c = 2,
                                           "HEAD_DIM"_c = D, "CAUSAL"_c = causal);
}

/// The compile-only path (TILE_BACKEND=null): every tile kernel and configuration this bench
/// times, launched once at N = 1024 so that each compiles.
int compile_only() {
  auto dev = tile::device::best();
  const int N = 1024;
  buffers b(dev, std::size_t(Z) * H * N * 128, std::size_t(Z) * H * N);
  int kernels = 0;
  for (int D : {64, 128})
    for (bool causal : {false, true}) {
      for (const auto& c : kTileFwd) launch_fwd(b, b.o, b.m, N, D, causal, c), ++kernels;
      launch_bwd(b, N, D, causal), kernels += 2;
      launch_bwd(b, N, D, causal, true), kernels += 2;
    }
  std::printf("gpu_attention: compiled %d tile kernel launches for %s, not run (a compile-only backend)\n", kernels,
              dev.name().c_str());
  return 0;
}

/// The sampled heads' rows (and keys) the checks compute: the ends, block edges, and a spread.
std::vector<int> sample_rows(int N) {
  std::vector<int> r = {0, 1, 31, 32, 63, 64, 127, 128, N / 2 + 5, N - 129, N - 65, N - 2, N - 1};
  std::uint64_t z = 0x9E3779B97F4A7C15ull ^ std::uint64_t(N);
  while (r.size() < 16) z = z * 6364136223846793005ull + 1442695040888963407ull, r.push_back(int((z >> 33) % std::uint64_t(N)));
  return r;
}
const int kHeads[2] = {0, Z * H - 1};

/// n elements of `b` from element `at` (one head's slice), after the stream's work.
template <class T>
std::vector<T> download(const tile::device& dev, const tile::buffer<T>& b, std::size_t at, std::size_t n) {
  std::vector<T> out(n);
  dev.synchronize();
  tile::detail::driver_of(dev).copy_to_host(out.data(), b.address() + at * sizeof(T), n * sizeof(T));
  return out;
}
template <class T>
void fill_nan(const tile::device& dev, const tile::buffer<T>& b) {
  tile::detail::driver_of(dev).fill(b.address(), 0xFF, b.bytes());  // f16 and f32 NaN
}

/// The largest |got − want| against tol · max|want| (tol_abs: an absolute bound instead), as a
/// message naming `what` when over, else empty.
std::string compare(const std::string& what, const std::vector<double>& got, const std::vector<double>& want, double tol,
                    double tol_abs = 0) {
  double diff = 0, mx = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    diff = std::isnan(d) ? HUGE_VAL : std::max(diff, d);
    mx = std::max(mx, std::abs(want[i]));
  }
  const double bound = tol_abs > 0 ? tol_abs : tol * mx;
  if (diff <= bound) return {};
  char buf[192];
  std::snprintf(buf, sizeof buf, "%s: max |diff| %.4g over %.3g (max |want| %.4g)", what.c_str(), diff, bound, mx);
  return buf;
}

/// One point's host data: the inputs, as f16 and as doubles for the sampled heads.
struct host_inputs {
  std::vector<half> q, k, ks, v, d_o;
};

/// The forward's O (and M, base 2) at the sampled rows of the sampled heads, in float64; then the
/// given outputs' O and M there against it.
std::string check_fwd(const tile::device& dev, bench::pool& threads, const host_inputs& in, const tile::buffer<half>& o,
                      const tile::buffer<float>& m, int N, int D, bool causal, const std::string& who) {
  const auto rows = sample_rows(N);
  const double scale = 1.0 / std::sqrt(double(D)), log2e = 1.0 / std::log(2.0);
  std::vector<double> want_o(2 * rows.size() * D), got_o(want_o.size()), want_m(2 * rows.size()), got_m(want_m.size());
  for (int h = 0; h < 2; ++h) {
    const std::size_t base = std::size_t(kHeads[h]) * N * D;
    const auto go = download(dev, o, base, std::size_t(N) * D);
    const auto gm = download(dev, m, std::size_t(kHeads[h]) * N, std::size_t(N));
    threads.parallel_for(rows.size(), [&](std::size_t r0, std::size_t r1) {
      std::vector<double> s(static_cast<std::size_t>(N));
      for (std::size_t r = r0; r < r1; ++r) {
        const int i = rows[r], last = causal ? i : N - 1;
        double mx = -HUGE_VAL, sum = 0;
        for (int j = 0; j <= last; ++j) {
          double d = 0;
          for (int e = 0; e < D; ++e) d += double(float(in.q[base + std::size_t(i) * D + e])) * double(float(in.k[base + std::size_t(j) * D + e]));
          s[std::size_t(j)] = d * scale;
          mx = std::max(mx, s[std::size_t(j)]);
        }
        const std::size_t w = (h * rows.size() + r) * D;
        for (int j = 0; j <= last; ++j) {
          const double p = std::exp(s[std::size_t(j)] - mx);
          sum += p;
          for (int e = 0; e < D; ++e) want_o[w + e] += p * double(float(in.v[base + std::size_t(j) * D + e]));
        }
        for (int e = 0; e < D; ++e) want_o[w + e] /= sum, got_o[w + e] = double(float(go[std::size_t(i) * D + e]));
        want_m[h * rows.size() + r] = (mx + std::log(sum)) * log2e;
        got_m[h * rows.size() + r] = gm[std::size_t(i)];
      }
    });
  }
  std::string e = compare(who + " O", got_o, want_o, kTol);
  const std::string em = compare(who + " M", got_m, want_m, 0, kTolM);
  return e.empty() ? em : em.empty() ? e : e + "; " + em;
}

/// The backward's dQ at the sampled rows and dK, dV at the sampled keys (as rows) of the sampled
/// heads, in float64 from the inputs, K pre-scaled and tile's O and M (as the kernels compute it);
/// then the given outputs there against it.
std::string check_bwd(const tile::device& dev, bench::pool& threads, const host_inputs& in, const buffers& b,
                      const tile::buffer<half>& dq, const tile::buffer<half>& dk, const tile::buffer<half>& dv, int N,
                      int D, bool causal, const std::string& who) {
  const auto rows = sample_rows(N);
  const double scale = 1.0 / std::sqrt(double(D)), ln2 = std::log(2.0);
  const std::size_t n_want = 2 * rows.size() * D;
  std::vector<double> w_dq(n_want), w_dk(n_want), w_dv(n_want), g_dq(n_want), g_dk(n_want), g_dv(n_want);
  for (int h = 0; h < 2; ++h) {
    const std::size_t base = std::size_t(kHeads[h]) * N * D, nd = std::size_t(N) * D;
    const auto o = download(dev, b.o, base, nd);
    const auto m = download(dev, b.m, std::size_t(kHeads[h]) * N, std::size_t(N));
    const auto gq = download(dev, dq, base, nd), gk = download(dev, dk, base, nd), gv = download(dev, dv, base, nd);
    auto at = [&](const std::vector<half>& t, int i, int e) { return double(float(t[base + std::size_t(i) * D + e])); };
    std::vector<double> delta(static_cast<std::size_t>(N));  // Delta_i = Σ O·dO
    for (int i = 0; i < N; ++i)
      for (int e = 0; e < D; ++e) delta[std::size_t(i)] += double(float(o[std::size_t(i) * D + e])) * at(in.d_o, i, e);
    // P_ij = 2^(q_i · ks_j − M_i) and dS_ij = P_ij (dO_i · v_j − Delta_i)
    auto p_ds = [&](int i, int j, double& p, double& ds) {
      double s = 0, dp = 0;
      for (int e = 0; e < D; ++e) s += at(in.q, i, e) * at(in.ks, j, e), dp += at(in.d_o, i, e) * at(in.v, j, e);
      p = std::exp2(s - double(m[std::size_t(i)]));
      ds = p * (dp - delta[std::size_t(i)]);
    };
    threads.parallel_for(rows.size(), [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) {
        const int x = rows[r];
        const std::size_t w = (h * rows.size() + r) * D;
        double p, ds;
        for (int j = 0; j <= (causal ? x : N - 1); ++j) {  // row x of dQ: the keys it sees
          p_ds(x, j, p, ds);
          for (int e = 0; e < D; ++e) w_dq[w + e] += ln2 * ds * at(in.ks, j, e);
        }
        for (int i = causal ? x : 0; i < N; ++i) {  // key x of dK, dV: the queries that see it
          p_ds(i, x, p, ds);
          for (int e = 0; e < D; ++e) w_dv[w + e] += p * at(in.d_o, i, e), w_dk[w + e] += scale * ds * at(in.q, i, e);
        }
        for (int e = 0; e < D; ++e) {
          const std::size_t g = std::size_t(x) * D + e;
          g_dq[w + e] = float(gq[g]), g_dk[w + e] = float(gk[g]), g_dv[w + e] = float(gv[g]);
        }
      }
    });
  }
  std::string out;
  for (const auto& e : {compare(who + " dQ", g_dq, w_dq, kTol), compare(who + " dK", g_dk, w_dk, kTol),
                        compare(who + " dV", g_dv, w_dv, kTol)})
    if (!e.empty()) out += (out.empty() ? "" : "; ") + e;
  return out;
}

std::string table_name(bool bwd, int D, bool causal) {
  return std::string("gpu-attention-") + (bwd ? "bwd" : "fwd") + "-d" + std::to_string(D) + (causal ? "-causal" : "");
}

/// The numbers the tables show: value[table][N][provider] (TFLOP/s).
using results = std::map<std::string, std::map<double, std::map<std::string, double>>>;

struct bench_ctx {
  tile::device dev;
  std::unique_ptr<tile::testing::timer> timer;
  bench::pool threads;
  int rounds = 5;
  results values;
  std::vector<std::string> lines, failures;  // per point: configs, per-round ratios, registers
};

/// tile's function and Triton's (absent: not exported or wrong) timed in alternating rounds into
/// `table` at N, with the point's line.
void time_pair(bench_ctx& ctx, const std::string& table, int N, double flops, const std::function<void()>& tile_fn,
               const std::function<void()>* triton_fn, const std::string& info) {
  std::vector<std::function<void()>> fns = {tile_fn};
  if (triton_fn) fns.push_back(*triton_fn);
  const auto r = bench::gpu::interleaved(fns, ctx.timer.get(), ctx.rounds);
  auto& row = ctx.values[table][N];
  row["tile"] = tflops(flops, r.ms[0]);
  row["Triton (this process)"] = triton_fn ? tflops(flops, r.ms[1]) : nan_v;
  std::string line = "  " + table + " N = " + std::to_string(N) + ": ";
  if (triton_fn) {
    const auto [lo, hi] = r.speedup_range(0, 1);
    char buf[96];
    std::snprintf(buf, sizeof buf, "tile / Triton per round %.3f (%.3f ... %.3f); ", r.paired_speedup(0, 1), lo, hi);
    line += buf;
  }
  ctx.lines.push_back(line + info);
  std::printf("%s\n", ctx.lines.back().c_str());
  std::fflush(stdout);
}

/// One (N, D, causal) point: the forward, then the backward from tile's forward's O and M.
void measure(bench_ctx& ctx, buffers& b, const host_inputs& in, int N, int D, bool causal) {
  using tk = bench::gpu::triton_kernel;
  auto& dev = ctx.dev;
  const std::string fwd_table = table_name(false, D, causal), bwd_table = table_name(true, D, causal);
  const std::string what = "D=" + std::to_string(D) + (causal ? " causal" : "") + " N=" + std::to_string(N);
  for (const auto& t : {fwd_table, bwd_table})
    ctx.values[t][N] = {{"tile", nan_v}, {"Triton (this process)", nan_v}};
  auto fail = [&](const std::string& msg) {
    ctx.failures.push_back(what + ": " + msg);
    std::printf("  FAILED %s: %s\n", what.c_str(), msg.c_str());
    std::fflush(stdout);
  };
  const float sm_scale = 1.0f / std::sqrt(float(D));
  const int sz = H * N * D, sh = N * D;
  const std::string dc = "-D" + std::to_string(D) + "-causal" + (causal ? "1" : "0");
  // Triton's kernel NAME, when exported (and with the arguments this bench passes: its .meta's args)
  auto find_triton = [&](const std::string& name, const std::vector<std::string>& args) -> std::optional<tk> {
    auto k = tk::find(dev, name);
    if (k && k->args() != args) fail("Triton's " + name + ": its .meta names other arguments than this bench passes");
    return k && k->args() == args ? std::move(k) : std::nullopt;
  };
  std::string step = "the forward";
  try {
    // tile's forward: each configuration checked, then the best of their do_bench medians
    std::optional<fwd_config> best;
    double best_ms = 0;
    for (const auto& c : kTileFwd) {
      step = "tile's forward " + c.str();
      fill_nan(dev, b.o), fill_nan(dev, b.m);
      auto run = [&] { launch_fwd(b, b.o, b.m, N, D, causal, c); };
      try {  // (one configuration's failure leaves the others)
        run();
        if (const auto e = check_fwd(dev, ctx.threads, in, b.o, b.m, N, D, causal, "tile"); !e.empty()) {
          fail(step + ": " + e);
          continue;
        }
        const double ms = bench::median_ms(run, ctx.timer.get());
        if (!best || ms < best_ms) best = c, best_ms = ms;
      } catch (const tile::error& e) {
        fail(step + " failed: " + e.message());
      }
    }
    // Triton's: the fastest of the configurations exported, each checked
    step = "Triton's forward";
    std::optional<tk> tri;
    std::optional<fwd_config> tri_cfg;
    double tri_ms = 0;
    auto tri_args = [&] {  // attn_fwd(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_n, H, N_CTX)
      return std::vector<tile::drivers::kernel_arg>{tk::arg(b.q), tk::arg(b.k), tk::arg(b.v), tk::arg(sm_scale),
                                                    tk::arg(b.t_m), tk::arg(b.t_o), tk::arg(std::int32_t(sz)),
                                                    tk::arg(std::int32_t(sh)), tk::arg(std::int32_t(D)),
                                                    tk::arg(std::int32_t(H)), tk::arg(std::int32_t(N))};
    };
    for (const auto& c : kTritonFwd) {
      const std::string name = "attn_fwd" + dc + "-" + std::to_string(c.bm) + "-" + std::to_string(c.bn) + "-" +
                               std::to_string(c.warps);
      auto k = find_triton(name, {"Q", "K", "V", "sm_scale", "M", "Out", "stride_z", "stride_h", "stride_n", "H", "N_CTX"});
      if (!k) continue;
      fill_nan(dev, b.t_o), fill_nan(dev, b.t_m);
      auto run = [&, c] { k->launch({tile::cdiv(N, c.bm), Z * H, 1}, tri_args()); };
      run();
      if (const auto e = check_fwd(dev, ctx.threads, in, b.t_o, b.t_m, N, D, causal, "Triton " + name); !e.empty()) {
        fail(e);
        continue;
      }
      const double ms = bench::median_ms(run, ctx.timer.get());
      if (!tri || ms < tri_ms) tri.emplace(std::move(*k)), tri_cfg = c, tri_ms = ms;
    }
    if (!best) return;  // (every configuration failed: no O and M to start the backward from)
    {
      step = "timing the forward";
      const fwd_config c = *best;
      std::function<void()> tile_fn = [&, c] { launch_fwd(b, b.o, b.m, N, D, causal, c); };
      std::function<void()> tri_fn = [&] { tri->launch({tile::cdiv(N, tri_cfg->bm), Z * H, 1}, tri_args()); };
      const std::vector<tile::named> meta = {tile::named("HEAD_DIM", D), tile::named("BLOCK_M", c.bm),
                                             tile::named("BLOCK_N", c.bn), tile::named("STAGE", causal ? 3 : 1),
                                             tile::named("num_warps", c.warps)};
      const int regs = bench::gpu::registers(
          c.desc ? tile::detail::compiled_module(attn_fwd_desc, {sm_scale, b.m, Z, H, b.q, b.k, b.v, b.o, N}, meta)
                 : tile::detail::compiled_module(
                       attn_fwd, {b.q, b.k, b.v, sm_scale, b.m, b.o, sz, sh, D, sz, sh, D, sz, sh, D, sz, sh, D, H, N}, meta));
      char info[200];
      std::snprintf(info, sizeof info, "configs tile %s, Triton %s; registers tile %d, Triton %d", c.str().c_str(),
                    tri ? tri_cfg->str().c_str() : "-", regs, tri ? tri->num_regs() : 0);
      time_pair(ctx, fwd_table, N, fwd_flops(N, D, causal), tile_fn, tri ? &tri_fn : nullptr, info);
      tile_fn();  // O and M for the backward: tile's forward in its configuration
    }

    // the backward: tile's, then Triton's (its preprocess and its dK/dV + dQ kernel), each checked
    // tile's: both forms (pointers, tensor descriptors), each checked, the faster timed against Triton's
    std::optional<bool> bwd_desc;
    double bwd_ms = 0;
    for (bool desc : {false, true}) {
      step = std::string("tile's backward") + (desc ? " (descriptors)" : "");
      try {
        for (const auto* t : {&b.dq, &b.dk, &b.dv}) fill_nan(dev, *t);
        auto run = [&] { launch_bwd(b, N, D, causal, desc); };
        run();
        if (const auto e = check_bwd(dev, ctx.threads, in, b, b.dq, b.dk, b.dv, N, D, causal, "tile"); !e.empty()) {
          fail(step + ": " + e);
          continue;
        }
        const double ms = bench::median_ms(run, ctx.timer.get());
        if (!bwd_desc || ms < bwd_ms) bwd_desc = desc, bwd_ms = ms;
      } catch (const tile::error& e) {
        fail(step + " failed: " + e.message());
      }
    }
    const bool tile_ok = bwd_desc.has_value(), use_desc = bwd_desc.value_or(false);
    std::function<void()> tile_bwd = [&] { launch_bwd(b, N, D, causal, use_desc); };
    step = "Triton's backward";
    auto pre = find_triton("attn_bwd_preprocess-D" + std::to_string(D) + "-" + std::to_string(kTritonPre),
                           {"O", "DO", "Delta", "N_CTX"});
    auto bwd = find_triton("attn_bwd" + dc + "-" + kTritonBwd, {"Q", "K", "V", "sm_scale", "DO", "DQ", "DK", "DV", "M",
                                                                 "D", "stride_z", "stride_h", "stride_tok", "H", "N_CTX"});
    std::function<void()> tri_bwd = [&] {
      // _attn_bwd_preprocess(O, DO, Delta, N_CTX); _attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D,
      // stride_z, stride_h, stride_tok, H, N_CTX)
      pre->launch({N / kTritonPre, Z * H, 1}, {tk::arg(b.o), tk::arg(b.d_o), tk::arg(b.t_delta), tk::arg(std::int32_t(N))});
      bwd->launch({N / kTritonN1, 1, Z * H},
                  {tk::arg(b.q), tk::arg(b.ks), tk::arg(b.v), tk::arg(sm_scale), tk::arg(b.d_o), tk::arg(b.t_dq),
                   tk::arg(b.t_dk), tk::arg(b.t_dv), tk::arg(b.m), tk::arg(b.t_delta), tk::arg(std::int32_t(sz)),
                   tk::arg(std::int32_t(sh)), tk::arg(std::int32_t(D)), tk::arg(std::int32_t(H)), tk::arg(std::int32_t(N))});
    };
    bool tri_ok = pre && bwd;
    if (tri_ok) {
      for (const auto* t : {&b.t_dq, &b.t_dk, &b.t_dv}) fill_nan(dev, *t);
      tri_bwd();
      if (const auto e = check_bwd(dev, ctx.threads, in, b, b.t_dq, b.t_dk, b.t_dv, N, D, causal, "Triton"); !e.empty())
        fail(e), tri_ok = false;
    }
    if (tile_ok) {
      step = "timing the backward";
      const std::vector<tile::named> meta = {tile::named("BLOCK_M1", kBwd.m1), tile::named("BLOCK_N1", kBwd.n1),
                                             tile::named("BLOCK_M2", kBwd.m2), tile::named("BLOCK_N2", kBwd.n2),
                                             tile::named("num_warps", kBwd.warps), tile::named("BLK_SLICE_FACTOR", 2),
                                             tile::named("HEAD_DIM", D), tile::named("CAUSAL", causal)};
      const int regs = bench::gpu::registers(
          use_desc ? tile::detail::compiled_module(attn_bwd_desc, {b.q, b.ks, b.v, sm_scale, b.d_o, b.dq, b.dk, b.dv, b.m, b.delta, Z, H, N}, meta)
                   : tile::detail::compiled_module(attn_bwd, {b.q, b.ks, b.v, sm_scale, b.d_o, b.dq, b.dk, b.dv, b.m, b.delta, sz, sh, D, H, N},
                                                   meta));
      time_pair(ctx, bwd_table, N, 2.5 * fwd_flops(N, D, causal), tile_bwd, tri_ok ? &tri_bwd : nullptr,
                std::string(use_desc ? "tile's descriptor form; " : "tile's pointer form; ") + "registers tile " +
                    std::to_string(regs) + ", Triton " + std::to_string(tri_ok ? bwd->num_regs() : 0));
    }
  } catch (const tile::error& e) {
    fail(step + " failed: " + e.message());
  }
}

void print_tables(const bench_ctx& ctx, const std::vector<int>& Ns) {
  const std::vector<double> xs(Ns.begin(), Ns.end());
  for (bool bwd : {false, true})
    for (int D : {64, 128})
      for (bool causal : {false, true}) {
        const std::string name = table_name(bwd, D, causal);
        auto b = bench::sweep(name, "N", xs, {"tile", "Triton (this process)"}, {"tile", "Triton (this process)"},
                              "TFLOP/s", true);
        tile::testing::run(b, [&](double x, const std::string& provider) {
          const auto t = ctx.values.find(name);
          if (t == ctx.values.end()) return nan_v;
          const auto row = t->second.find(x);
          if (row == t->second.end()) return nan_v;
          const auto v = row->second.find(provider);
          return v == row->second.end() ? nan_v : v->second;
        });
      }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--quick") quick = true;
    else if (arg == "--bwd" && i + 5 < argc) {
      kBwd = {std::atoi(argv[i + 1]), std::atoi(argv[i + 2]), std::atoi(argv[i + 3]), std::atoi(argv[i + 4]), std::atoi(argv[i + 5])};
      i += 5;
    }
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--rounds R] [--bwd M1 N1 M2 N2 warps]\n", argv[0]);
      return 2;
    }
  }
  if (const char* b = std::getenv("TILE_BACKEND"); b && std::string(b) == "null") return compile_only();
  auto dev = bench::gpu::cuda_device("gpu_attention");
  if (!dev) return 0;
  bench_ctx ctx{*dev, tile::testing::make_timer(*dev), {}, rounds, {}, {}, {}};
  const std::vector<int> Ns = quick ? std::vector<int>{1024, 4096, 16384} : std::vector<int>{1024, 2048, 4096, 8192, 16384};
  for (int D : {64, 128})
    for (int N : Ns) {
      // the inputs, shared by both masks: Q and K uniform in [-2, 2), V and dO in [-1, 1), as f16
      const std::size_t n = std::size_t(Z) * H * N * D;
      auto to_half = [&](const bench::floats& f) {
        std::vector<half> h(f.size());
        ctx.threads.parallel_for(f.size(), [&](std::size_t a, std::size_t e) {
          for (std::size_t i = a; i < e; ++i) h[i] = half(f[i]);
        });
        return h;
      };
      host_inputs in;
      in.q = to_half(bench::gpu::hash_floats(ctx.threads, n, 31, -2.f, 2.f));
      in.k = to_half(bench::gpu::hash_floats(ctx.threads, n, 32, -2.f, 2.f));
      in.v = to_half(bench::gpu::hash_floats(ctx.threads, n, 33));
      in.d_o = to_half(bench::gpu::hash_floats(ctx.threads, n, 34));
      in.ks.resize(n);  // K · sm_scale / ln 2, rounded to f16 (the tutorial's host code)
      const float ks_scale = float(1.0 / std::sqrt(double(D)) / std::log(2.0));
      ctx.threads.parallel_for(n, [&](std::size_t a, std::size_t e) {
        for (std::size_t i = a; i < e; ++i) in.ks[i] = half(float(in.k[i]) * ks_scale);
      });
      buffers b(*dev, n, std::size_t(Z) * H * N);
      const std::pair<const tile::buffer<half>*, const std::vector<half>*> uploads[] = {
          {&b.q, &in.q}, {&b.k, &in.k}, {&b.ks, &in.ks}, {&b.v, &in.v}, {&b.d_o, &in.d_o}};
      for (const auto& [to, from] : uploads)
        tile::detail::driver_of(*dev).copy_to_device(to->address(), from->data(), n * sizeof(half));
      for (bool causal : {false, true}) measure(ctx, b, in, N, D, causal);
    }
  std::printf("\n");
  print_tables(ctx, Ns);
  std::printf("\nper point: tile / Triton, the median (range) of the per-round speedups; configurations (BLOCK_M/"
              "BLOCK_N/num_warps) and registers\n");
  for (const auto& l : ctx.lines) std::printf("%s\n", l.c_str());
  std::printf("B = %d, H = %d, f16; TFLOP/s: forward 4·B·H·N²·D / time (halved for causal), backward (preprocess + "
              "dK/dV/dQ kernel) 2.5x that; tile backward %d/%d/%d/%d on %d warps, Triton's %s\n",
              Z, H, kBwd.m1, kBwd.n1, kBwd.m2, kBwd.n2, kBwd.warps, kTritonBwd.c_str());
  if (!ctx.failures.empty()) {
    std::fprintf(stderr, "gpu_attention: %zu failure(s):\n", ctx.failures.size());
    for (const auto& f : ctx.failures) std::fprintf(stderr, "  %s\n", f.c_str());
    return 1;
  }
  return 0;
}

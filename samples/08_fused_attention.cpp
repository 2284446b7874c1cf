// Sample 08 — fused attention, forward (Triton's tutorial 06): O = softmax(Q Kᵀ · sm_scale) V for
// every (batch, head), one program a block of BLOCK_M queries, K and V walked in blocks of
// BLOCK_N keys with the online softmax in base 2 (FlashAttention's rescaling: the running row
// maximum m and sum l, the accumulator scaled by 2^(m_old - m_new) when the maximum grows). The
// causal form runs the tutorial's two stages: the key blocks wholly left of the diagonal, then
// the diagonal block with its mask. Each program also writes M = m + log2(l), the row's
// log-sum-exp in base 2 that the backward pass (sample 09) reads.
// The tutorial assumes N is a multiple of the blocks; here the loads, the scores and the stores
// are masked at N, so any N works (the check below uses one that is not). The same forward
// through tensor descriptors (Triton 3.6's form, make_attn_fwd_desc: K and V named over all
// heads) is checked beside it; on sm_90a its K and V blocks are Tensor Memory Accelerator copies.
#include <cmath>

// the kernels (make_attn_fwd, attn_fwd_inner): attention_kernels.hpp, which bench/gpu_attention times too

#include "attention_kernels.hpp"
#include "common.hpp"

using namespace tile::literals;

auto attn_fwd_f16 = make_attn_fwd<tile::half>("attn_fwd_f16");
auto attn_fwd_bf16 = make_attn_fwd<tile::bfloat16>("attn_fwd_bf16");
auto attn_fwd_desc_f16 = make_attn_fwd_desc<tile::half>("attn_fwd_desc_f16");  // (Triton 3.6's tensor-descriptor form)
auto attn_fwd_desc_bf16 = make_attn_fwd_desc<tile::bfloat16>("attn_fwd_desc_bf16");

namespace {

/// The float64 reference: O = softmax(Q Kᵀ · scale) V per (z, h), and M = log2 of each row's
/// sum of exp2((s - max) · log2 e) plus that maximum in base 2 (the kernel's M).
void reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int ZH, int N,
               int D, double scale, bool causal, std::vector<double>& o, std::vector<double>& m) {
  o.assign(static_cast<std::size_t>(ZH) * N * D, 0.0);
  m.assign(static_cast<std::size_t>(ZH) * N, 0.0);
  std::vector<double> s(static_cast<std::size_t>(N));
  const double log2e = 1.0 / std::log(2.0);
  for (int zh = 0; zh < ZH; ++zh)
    for (int i = 0; i < N; ++i) {
      const std::size_t qi = (static_cast<std::size_t>(zh) * N + i) * D;
      const int last = causal ? i : N - 1;
      double mx = -INFINITY;
      for (int j = 0; j <= last; ++j) {
        const std::size_t kj = (static_cast<std::size_t>(zh) * N + j) * D;
        double d = 0;
        for (int e = 0; e < D; ++e) d += static_cast<double>(q[qi + e]) * k[kj + e];
        s[static_cast<std::size_t>(j)] = d * scale * log2e;  // base 2
        mx = std::max(mx, s[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (int j = 0; j <= last; ++j) sum += std::exp2(s[static_cast<std::size_t>(j)] - mx);
      for (int j = 0; j <= last; ++j) {
        const double p = std::exp2(s[static_cast<std::size_t>(j)] - mx) / sum;
        const std::size_t vj = (static_cast<std::size_t>(zh) * N + j) * D;
        for (int e = 0; e < D; ++e) o[qi + e] += p * v[vj + e];
      }
      m[static_cast<std::size_t>(zh) * N + i] = mx + std::log2(sum);
    }
}

/// One configuration on `dev`: the largest error of O and of M against the reference. `Desc`: the
/// kernel is make_attn_fwd_desc's.
template <class T, bool Desc, class Kernel>
std::pair<double, double> run(Kernel& kernel, tile::device& dev, int Z, int H, int N, int D, bool causal, int BM, int BN,
                              int warps = 4) {
  const std::size_t n = static_cast<std::size_t>(Z) * H * N * D;
  auto fq = sample::random_floats(n, 11), fk = sample::random_floats(n, 12), fv = sample::random_floats(n, 13);
  std::vector<T> hq(fq.begin(), fq.end()), hk(fk.begin(), fk.end()), hv(fv.begin(), fv.end());
  for (std::size_t i = 0; i < n; ++i) fq[i] = float(hq[i]), fk[i] = float(hk[i]), fv[i] = float(hv[i]);  // (as stored)
  auto q = dev.upload(hq), k = dev.upload(hk), v = dev.upload(hv);
  auto o = dev.alloc<T>(n);
  auto m = dev.alloc<float>(static_cast<std::size_t>(Z) * H * N);
  const float sm_scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int sz = H * N * D, sh = N * D, sm = D;
  auto grid = [&](const tile::meta& meta) { return tile::grid3{tile::cdiv(N, meta["BLOCK_M"]), Z * H}; };
  if constexpr (Desc)
    kernel[grid](sm_scale, m, Z, H, q, k, v, o, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = BM, "BLOCK_N"_c = BN,
                 "STAGE"_c = causal ? 3 : 1, "num_warps"_c = warps);
  else
    kernel[grid](q, k, v, sm_scale, m, o, sz, sh, sm, sz, sh, sm, sz, sh, sm, sz, sh, sm, H, N, "HEAD_DIM"_c = D,
                 "BLOCK_M"_c = BM, "BLOCK_N"_c = BN, "STAGE"_c = causal ? 3 : 1, "num_warps"_c = warps);
  if (!dev.computes()) return {0, 0};
  std::vector<double> want_o, want_m;
  reference(fq, fk, fv, Z * H, N, D, sm_scale, causal, want_o, want_m);
  return {sample::max_abs_error(o.to_host(), want_o), sample::max_abs_error(m.to_host(), want_m)};
}

}  // namespace

/// `--bench` (as the tutorial's bench_flash_attention): forward TFLOP/s at B = 4, H = 32, f16,
/// N = 1024 … 16384, D = 64 and 128, causal and not (4·B·H·N²·D flops, halved for causal); the
/// best of a few BLOCK_M / BLOCK_N / num_warps configurations at each point.
/// `--bench D N causal BLOCK_M BLOCK_N num_warps [form]`: that one point and configuration (for a
/// profiler; on a backend that only compiles, e.g. TILE_BACKEND=null TILE_TARGET=sm_90a, it compiles
/// it); form 0: the pointer form only, 1: the tensor-descriptor form only (both by default).
int bench(tile::device& dev, const std::vector<int>& one) {
  const int Z = 4, H = 32;
  struct config {
    int bm, bn, warps;
  };
  std::vector<config> configs = {{128, 64, 8}, {128, 128, 8}, {64, 64, 4}, {128, 32, 8}};
  std::vector<int> Ds = {64, 128}, Ns = {1024, 2048, 4096, 8192, 16384};
  std::vector<bool> causals = {false, true};
  std::vector<bool> forms = {false, true};  // the pointer form, the tensor-descriptor form
  if (one.size() >= 6) Ds = {one[0]}, Ns = {one[1]}, causals = {one[2] != 0}, configs = {{one[3], one[4], one[5]}};
  if (one.size() == 7) forms = {one[6] != 0};
  std::printf("%6s %4s %7s %11s %9s  %s\n", "N", "D", "causal", "form", "TFLOP/s", "BLOCK_M, BLOCK_N, num_warps");
  for (int D : Ds)
    for (bool causal : causals)
      for (int N : Ns) {
        const std::size_t n = static_cast<std::size_t>(Z) * H * N * D;
        // inputs uniform in [-1, 1) (a block of 2^20 values repeated): the data decides which
        // paths the kernel takes (a -inf row maximum, exp2 of very negative scores), so time real ones
        auto random = [n](unsigned seed) {
          const std::vector<float> block = sample::random_floats(std::size_t{1} << 20, seed);
          std::vector<tile::half> h(n);
          for (std::size_t i = 0; i < n; ++i) h[i] = tile::half(block[i % block.size()]);
          return h;
        };
        auto q = dev.upload(random(21)), k = dev.upload(random(22)), v = dev.upload(random(23));
        auto o = dev.alloc<tile::half>(n);
        auto m = dev.alloc<float>(static_cast<std::size_t>(Z) * H * N);
        const int sz = H * N * D, sh = N * D;
        for (bool desc : forms) {
          double best = 0;
          config chosen{};
          for (const config& c : configs) {
            auto run = [&] {
              const tile::grid3 grid{tile::cdiv(N, c.bm), Z * H};
              if (desc)
                attn_fwd_desc_f16[grid](0.125f, m, Z, H, q, k, v, o, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = c.bm,
                                        "BLOCK_N"_c = c.bn, "STAGE"_c = causal ? 3 : 1, "num_warps"_c = c.warps);
              else
                attn_fwd_f16[grid](q, k, v, 0.125f, m, o, sz, sh, D, sz, sh, D, sz, sh, D, sz, sh, D, H, N, "HEAD_DIM"_c = D,
                                   "BLOCK_M"_c = c.bm, "BLOCK_N"_c = c.bn, "STAGE"_c = causal ? 3 : 1,
                                   "num_warps"_c = c.warps);
            };
            run();
            if (!dev.computes()) continue;  // (a compile-only backend: the launch compiled it)
            const auto r = tile::testing::do_bench(run, 25, 100, {}, tile::testing::make_timer(dev).get());
            const double tflops =
                4.0 * Z * H * N * static_cast<double>(N) * D * (causal ? 0.5 : 1.0) / (r.median_ms * 1e-3) / 1e12;
            if (tflops > best) best = tflops, chosen = c;
          }
          if (dev.computes())
            std::printf("%6d %4d %7s %11s %9.1f  %d, %d, %d\n", N, D, causal ? "yes" : "no", desc ? "descriptors" : "pointers",
                        best, chosen.bm, chosen.bn, chosen.warps);
        }
      }
  return 0;
}

int main(int argc, char** argv) {
  auto dev = tile::device::best();
  if (argc > 1 && std::string(argv[1]) == "--bench") {
    std::vector<int> one;
    for (int i = 2; i < argc; ++i) one.push_back(std::atoi(argv[i]));
    return dev.computes() || one.size() >= 6 ? bench(dev, one) : 0;
  }
  if (argc > 1 && std::string(argv[1]) == "--check") {  // --check D N causal BLOCK_M BLOCK_N num_warps form: that one, f16
    std::vector<int> a;
    for (int i = 2; i < argc; ++i) a.push_back(std::atoi(argv[i]));
    if (a.size() != 7) {
      std::fprintf(stderr, "usage: %s --check D N causal BLOCK_M BLOCK_N num_warps form (0: pointers, 1: descriptors)\n", argv[0]);
      return 2;
    }
    const auto [eo, em] = a[6] ? run<tile::half, true>(attn_fwd_desc_f16, dev, 1, 2, a[1], a[0], a[2] != 0, a[3], a[4], a[5])
                               : run<tile::half, false>(attn_fwd_f16, dev, 1, 2, a[1], a[0], a[2] != 0, a[3], a[4], a[5]);
    return sample::report("08_fused_attention --check (f16 O)", dev, eo, 4e-3) |
           sample::report("08_fused_attention --check (log-sum-exp M)", dev, em, 1e-3);
  }
  const int Z = 1, H = 2, N = 200;  // N deliberately not a multiple of the blocks
  // O's elements are averages of values in [-1, 1]: f16 keeps 11 bits, bf16 8; P is rounded to
  // the input type before the second dot, as the tutorial does
  double worst_o_f16 = 0, worst_o_bf16 = 0, worst_m = 0;
  for (int D : {64, 128})
    for (bool causal : {false, true}) {
      for (auto [eo, em] : {run<tile::half, false>(attn_fwd_f16, dev, Z, H, N, D, causal, 64, 32),
                            run<tile::half, true>(attn_fwd_desc_f16, dev, Z, H, N, D, causal, 64, 32)}) {
        worst_o_f16 = std::max(worst_o_f16, eo);
        worst_m = std::max(worst_m, em);
      }
      for (auto [bo, bm] : {run<tile::bfloat16, false>(attn_fwd_bf16, dev, Z, H, N, D, causal, 64, 32),
                            run<tile::bfloat16, true>(attn_fwd_desc_bf16, dev, Z, H, N, D, causal, 64, 32)}) {
        worst_o_bf16 = std::max(worst_o_bf16, bo);
        worst_m = std::max(worst_m, bm);
      }
    }
  // on a GPU also the blocks of the benchmarks (8 warps: on sm_90a two consumer warpgroups, where
  // the kernel is warp-specialized), at an N of several blocks, not a multiple of them
  if (dev.backend() == "cuda")
    for (int D : {64, 128})
      for (bool causal : {false, true})
        for (int BN : {64, 128}) {
          const auto [eo, em] = run<tile::half, true>(attn_fwd_desc_f16, dev, Z, H, 600, D, causal, 128, BN, 8);
          worst_o_f16 = std::max(worst_o_f16, eo);
          worst_m = std::max(worst_m, em);
        }
  int rc = sample::report("08_fused_attention (f16 O)", dev, worst_o_f16, 4e-3);
  rc |= sample::report("08_fused_attention (bf16 O)", dev, worst_o_bf16, 2e-2);
  rc |= sample::report("08_fused_attention (log-sum-exp M)", dev, worst_m, 1e-3);
  return rc;
}

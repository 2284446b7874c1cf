// Sample 03 — matrix multiplication (Triton's third tutorial): C = leaky_relu(A @ B) in f16 with
// f32 accumulation, blocked along K with a runtime loop, program ids reordered in groups of
// GROUP_M rows of blocks so neighbouring programs share A and B tiles in the cache, and the
// activation fused into the epilogue.
#include "common.hpp"

using namespace tile::literals;

// A device function: plain C++ on tl values, inlined where it is called.
tl::tensor leaky_relu(const tl::tensor& x) { return tl::where(x >= 0, x, 0.01f * x); }

auto matmul = tile::kernel("matmul", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c,
                                        tl::i32 M, tl::i32 N, tl::i32 K,
                                        tl::i32 stride_am, tl::i32 stride_ak, tl::i32 stride_bk, tl::i32 stride_bn,
                                        tl::i32 stride_cm, tl::i32 stride_cn,
                                        tl::constexpr_<"BLOCK_M"> BM, tl::constexpr_<"BLOCK_N"> BN,
                                        tl::constexpr_<"BLOCK_K"> BK, tl::constexpr_<"GROUP_M"> GROUP_M,
                                        tl::constexpr_<"ACTIVATION", bool> ACTIVATION) {
  using tl::_;
  using tl::newaxis;
  // Grouped ordering: walk GROUP_M block-rows before moving to the next block-column.
  auto pid = tl::program_id(0);
  auto num_pid_m = tl::cdiv(M, BM);
  auto num_pid_n = tl::cdiv(N, BN);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  auto group_id = pid / num_pid_in_group;
  auto first_pid_m = group_id * GROUP_M;
  auto group_size_m = tl::minimum(num_pid_m - first_pid_m, GROUP_M);
  auto pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;
  auto pid_n = (pid % num_pid_in_group) / group_size_m;

  auto offs_am = (pid_m * BM + tl::arange(0, BM)) % M;
  auto offs_bn = (pid_n * BN + tl::arange(0, BN)) % N;
  auto offs_k = tl::arange(0, BK);
  auto a_ptrs = a + (offs_am(_, newaxis) * stride_am + offs_k(newaxis, _) * stride_ak);
  auto b_ptrs = b + (offs_k(_, newaxis) * stride_bk + offs_bn(newaxis, _) * stride_bn);

  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) {
    // a_ptrs, b_ptrs and acc are reassigned: they are carried from one iteration to the next.
    auto av = tl::load(a_ptrs, offs_k(newaxis, _) < K - k * BK, 0.0f);
    auto bv = tl::load(b_ptrs, offs_k(_, newaxis) < K - k * BK, 0.0f);
    acc = tl::dot(av, bv, acc);
    a_ptrs += BK * stride_ak;
    b_ptrs += BK * stride_bk;
  });
  if (ACTIVATION) acc = leaky_relu(acc);  // a trace-time branch: no runtime cost
  auto out = tl::cast<tl::f16>(acc);

  auto offs_cm = pid_m * BM + tl::arange(0, BM);
  auto offs_cn = pid_n * BN + tl::arange(0, BN);
  auto c_ptrs = c + stride_cm * offs_cm(_, newaxis) + stride_cn * offs_cn(newaxis, _);
  tl::store(c_ptrs, out, (offs_cm(_, newaxis) < M) & (offs_cn(newaxis, _) < N));
});

int main() {
  const int M = 200, N = 136, K = 152;  // deliberately not multiples of the blocks
  auto dev = tile::device::best();
  auto fa = sample::random_floats(static_cast<std::size_t>(M) * K, 3), fb = sample::random_floats(static_cast<std::size_t>(K) * N, 4);
  std::vector<tile::half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto c = dev.alloc<tile::half>(static_cast<std::size_t>(M) * N);

  const int BM = 64, BN = 64, BK = 32;
  auto grid = [&](const tile::meta& m) {
    return tile::grid3{tile::cdiv(M, m["BLOCK_M"]) * tile::cdiv(N, m["BLOCK_N"])};
  };
  matmul[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, "BLOCK_M"_c = BM, "BLOCK_N"_c = BN, "BLOCK_K"_c = BK,
               "GROUP_M"_c = 8, "ACTIVATION"_c = true);

  const std::vector<float> want = sample::matmul_leaky_relu_reference(ha, hb, M, N, K);
  // f16 output: half an ulp of values up to ~8 is 2^-8.
  return sample::report("03_matmul", dev, sample::max_abs_error(c.to_host(), want), 1.0 / 128);
}

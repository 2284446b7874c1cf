// Sample 07 — the matmul of sample 03 through tensor descriptors (Triton's tutorial 09 form): A, B
// and C are named once by their shapes and strides, blocks are loaded and stored by coordinates,
// and edges need no masks (outside the shape, loads read zeros and stores write nothing). On an
// H100 (sm_90a) the K loop's loads become Tensor Memory Accelerator copies: one thread issues a
// cp.async.bulk.tensor per block into a ring of shared buffers, completing on mbarriers, and no
// thread computes an address; every other backend runs the same masked loads sample 03 writes.
#include "common.hpp"

using namespace tile::literals;

tl::tensor leaky_relu(const tl::tensor& x) { return tl::where(x >= 0, x, 0.01f * x); }

auto matmul = tile::kernel("matmul_descriptors", [](tl::ptr<tile::half> a, tl::ptr<tile::half> b, tl::ptr<tile::half> c,
                                                    tl::i32 M, tl::i32 N, tl::i32 K, tl::constexpr_<"BLOCK_M"> BM,
                                                    tl::constexpr_<"BLOCK_N"> BN, tl::constexpr_<"BLOCK_K"> BK,
                                                    tl::constexpr_<"GROUP_M"> GROUP_M) {
  // grouped ordering, as in sample 03
  auto pid = tl::program_id(0);
  auto num_pid_n = tl::cdiv(N, BN);
  auto num_pid_in_group = GROUP_M * num_pid_n;
  auto first_pid_m = (pid / num_pid_in_group) * GROUP_M;
  auto group_size_m = tl::minimum(tl::cdiv(M, BM) - first_pid_m, GROUP_M);
  auto pid_m = first_pid_m + (pid % num_pid_in_group) % group_size_m;
  auto pid_n = (pid % num_pid_in_group) / group_size_m;

  auto a_desc = tl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
  auto b_desc = tl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
  auto c_desc = tl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
  auto acc = tl::zeros<float>({BM, BN});
  tl::for_range(0, tl::cdiv(K, BK), [&](tl::tensor k) {
    acc = tl::dot(a_desc.load({pid_m * BM, k * BK}), b_desc.load({k * BK, pid_n * BN}), acc);
  });
  c_desc.store({pid_m * BM, pid_n * BN}, tl::cast<tl::f16>(leaky_relu(acc)));
});

int main() {
  // not multiples of the blocks; N and K multiples of 16 (the rows the TMA copies start 16-byte
  // aligned, which the launch's specialization sees)
  const int M = 200, N = 144, K = 160;
  auto dev = tile::device::best();
  auto fa = sample::random_floats(static_cast<std::size_t>(M) * K, 5), fb = sample::random_floats(static_cast<std::size_t>(K) * N, 6);
  std::vector<tile::half> ha(fa.begin(), fa.end()), hb(fb.begin(), fb.end());
  auto a = dev.upload(ha), b = dev.upload(hb);
  auto c = dev.alloc<tile::half>(static_cast<std::size_t>(M) * N);

  auto grid = [&](const tile::meta& m) {
    return tile::grid3{tile::cdiv(M, m["BLOCK_M"]) * tile::cdiv(N, m["BLOCK_N"])};
  };
  matmul[grid](a, b, c, M, N, K, "BLOCK_M"_c = 64, "BLOCK_N"_c = 64, "BLOCK_K"_c = 64, "GROUP_M"_c = 8);

  const std::vector<float> want = sample::matmul_leaky_relu_reference(ha, hb, M, N, K);
  return sample::report("07_matmul_descriptors", dev, sample::max_abs_error(c.to_host(), want), 1.0 / 128);
}

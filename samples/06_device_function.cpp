// Sample 06 — a device function reused by two kernels. Device functions are plain C++
// functions of tl values: called while a kernel is traced, they are inlined into it, and they
// can be shared, templated and unit-tested like any C++ code.
#include <cmath>

#include "common.hpp"

using namespace tile::literals;

/// SiLU (x * sigmoid(x)), computed in f32 whatever the input's dtype.
tl::tensor silu(const tl::tensor& x) {
  auto xf = tl::cast<float>(x);
  return xf * tl::sigmoid(xf);
}

/// Block offsets and their bounds mask: another helper both kernels share.
std::pair<tl::tensor, tl::tensor> block_range(const tl::tensor& n, std::int64_t block) {
  auto offs = tl::program_id(0) * block + tl::arange(0, block);
  return {offs, offs < n};
}

auto silu_kernel = tile::kernel("silu", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
                                           tl::constexpr_<"BLOCK"> BLOCK) {
  auto [offs, mask] = block_range(n, BLOCK);
  tl::store(out + offs, silu(tl::load(x + offs, mask)), mask);
});

// The gated unit of LLM feed-forward layers: silu(gate) * up, fused.
auto silu_and_mul = tile::kernel("silu_and_mul", [](tl::ptr<float> gate, tl::ptr<float> up, tl::ptr<float> out,
                                                    tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto [offs, mask] = block_range(n, BLOCK);
  tl::store(out + offs, silu(tl::load(gate + offs, mask)) * tl::load(up + offs, mask), mask);
});

int main() {
  const int n = 5000;
  auto dev = tile::device::best();
  auto hg = sample::random_floats(n, 21, -6.f, 6.f), hu = sample::random_floats(n, 22);
  auto g = dev.upload(hg), u = dev.upload(hu);
  auto o1 = dev.alloc<float>(n), o2 = dev.alloc<float>(n);

  silu_kernel[{tile::cdiv(n, 512)}](g, o1, n, "BLOCK"_c = 512);
  silu_and_mul[{tile::cdiv(n, 256)}](g, u, o2, n, "BLOCK"_c = 256);

  std::vector<float> w1(n), w2(n);
  for (int i = 0; i < n; ++i) {
    float s = hg[i] * (1.0f / (1.0f + std::exp(-hg[i])));
    w1[i] = s;
    w2[i] = s * hu[i];
  }
  double err = std::max(sample::max_abs_error(o1.to_host(), w1), sample::max_abs_error(o2.to_host(), w2));
  return sample::report("06_device_function", dev, err, 1e-6);
}

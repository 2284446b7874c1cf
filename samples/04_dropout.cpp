// Sample 04 — low-memory dropout (Triton's fourth tutorial): instead of storing a random mask,
// each element's keep/drop decision is recomputed from (seed, offset) with Philox, so the
// backward pass can regenerate it from one integer.
#include <array>
#include <cstdint>

#include "common.hpp"

using namespace tile::literals;

auto dropout = tile::kernel("dropout", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::f32 p, tl::i32 seed,
                                          tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  auto xv = tl::load(x + offs, mask);
  auto keep = tl::rand(seed, offs) > p;  // uniform in [0, 1) per (seed, offset)
  tl::store(out + offs, tl::where(keep, xv / (1.0f - p), 0.0f), mask);
});

// The plain C++ reference: Philox 4x32-10 and Triton's uint-to-uniform conversion.
static std::uint32_t philox_first(std::uint64_t seed, std::uint32_t c0) {
  std::uint32_t c1 = 0, c2 = 0, c3 = 0;
  std::uint32_t k0 = static_cast<std::uint32_t>(seed), k1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c0, p2 = std::uint64_t{0xCD9E8D57u} * c2;
    std::uint32_t n0 = static_cast<std::uint32_t>(p2 >> 32) ^ c1 ^ k0;
    std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p2);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c0;
}
static float uniform(std::uint32_t bits) {
  auto i = static_cast<std::int32_t>(bits);
  if (i < 0) i = -i - 1;
  return static_cast<float>(i) * 4.6566127342e-10f;
}

int main() {
  const int n = 10000, seed = 123;
  const float p = 0.5f;
  auto dev = tile::device::best();
  auto hx = sample::random_floats(n, 5);
  auto x = dev.upload(hx);
  auto out = dev.alloc<float>(n);

  dropout[{tile::cdiv(n, 1024)}](x, out, n, p, seed, "BLOCK"_c = 1024);

  std::vector<float> want(n);
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    bool keep = uniform(philox_first(seed, static_cast<std::uint32_t>(i))) > p;
    kept += keep;
    want[i] = keep ? hx[i] / (1.0f - p) : 0.0f;
  }
  std::printf("kept %d of %d elements (p = %.2f)\n", kept, n, p);
  return sample::report("04_dropout", dev, sample::max_abs_error(out.to_host(), want), 0.0);
}

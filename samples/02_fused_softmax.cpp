// Sample 02 — fused softmax (Triton's second tutorial): one row per program instance; the row
// is read once, stays on chip for the max, exp and sum, and is written once.
#include <algorithm>
#include <bit>

#include "common.hpp"

using namespace tile::literals;

auto softmax = tile::kernel("softmax", [](tl::ptr<float> out, tl::ptr<float> in, tl::i32 stride, tl::i32 n_cols,
                                          tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto cols = tl::arange(0, BLOCK);
  auto mask = cols < n_cols;
  // Masked-off lanes read -inf so they vanish from the max and contribute exp(-inf) = 0.
  auto x = tl::load(in + row * stride + cols, mask, -tl::inf<float>());
  auto num = tl::exp(x - tl::max(x, 0));
  tl::store(out + row * stride + cols, num / tl::sum(num, 0), mask);
});

int main() {
  const int rows = 123, cols = 781;
  auto dev = tile::device::best();
  auto hx = sample::random_floats(static_cast<std::size_t>(rows) * cols, 7, -4.f, 4.f);
  auto x = dev.upload(hx);
  auto y = dev.alloc<float>(hx.size());

  const std::int64_t block = std::bit_ceil(static_cast<unsigned>(cols));  // one block spans a row
  softmax[{rows}](y, x, cols, cols, "BLOCK"_c = block);

  std::vector<float> want(hx.size());
  for (int r = 0; r < rows; ++r) {
    const float* in = &hx[static_cast<std::size_t>(r) * cols];
    float m = *std::max_element(in, in + cols), s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) want[static_cast<std::size_t>(r) * cols + c] = std::exp(in[c] - m) / s;
  }
  return sample::report("02_fused_softmax", dev, sample::max_abs_error(y.to_host(), want), 1e-6);
}

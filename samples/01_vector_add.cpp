// Sample 01 — vector add: the "hello world" of tile (Triton's first tutorial).
//
// Each program instance adds one block of BLOCK elements. The mask keeps the last block from
// running past n, which need not be a multiple of BLOCK.
#include "common.hpp"

using namespace tile::literals;

auto add = tile::kernel("add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                  tl::constexpr_<"BLOCK"> BLOCK) {
  auto pid = tl::program_id(0);
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);  // this block's element indices
  auto mask = offs < n;                            // false past the end
  auto sum = tl::load(x + offs, mask) + tl::load(y + offs, mask);
  tl::store(out + offs, sum, mask);
});

int main() {
  const int n = 98432;  // not a multiple of the block
  auto dev = tile::device::best();
  auto hx = sample::random_floats(n, 1), hy = sample::random_floats(n, 2);
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);

  add[{tile::cdiv(n, 1024)}](x, y, out, n, "BLOCK"_c = 1024);

  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = hx[i] + hy[i];
  return sample::report("01_vector_add", dev, sample::max_abs_error(out.to_host(), want), 0.0);
}

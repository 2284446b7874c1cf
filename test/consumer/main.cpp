// A project that uses an installed tile: the vector-add kernel on the interpreter.
#include <cstdio>
#include <vector>

#include <tile/tile.hpp>

using namespace tile::literals;

int main() {
  auto add = tile::kernel("add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto mask = offs < n;
    tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
  });
  const int n = 1000;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = float(i), hy[i] = 2.0f * float(i);
  auto dev = tile::device::get("interpreter");
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  add[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
  auto r = out.to_host();
  for (int i = 0; i < n; ++i)
    if (r[i] != 3.0f * float(i)) {
      std::printf("consumer: wrong result at %d\n", i);
      return 1;
    }
  std::printf("consumer OK\n");
  return 0;
}

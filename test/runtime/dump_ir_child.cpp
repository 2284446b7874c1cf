// A tiny program for test_runtime: launches one kernel (run under TILE_DUMP_IR=1 by the test).
#include <cstdio>
#include <tile/tile.hpp>

using namespace tile::literals;

int main() {
  auto k = tile::kernel("dump_me", [](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    tl::store(out + offs, tl::cast<float>(offs * 2 + 0));
  });
  auto out = tile::device::best().alloc<float>(16);
  k[{1}](out, "BLOCK"_c = 16);
  bool ok = out.to_host()[3] == 6.0f;
  std::printf("%s\n", ok ? "child OK" : "child FAILED");
  return ok ? 0 : 1;
}

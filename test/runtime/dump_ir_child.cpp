// test/runtime/dump_ir_child.cpp — a tiny program test_runtime runs as a child process, so that
// environment switches are read by a fresh process:
//   dump_ir_child          launch one kernel in two specializations (one of them twice); print
//                          "child OK" if the results are right (run under TILE_DUMP_IR=1 etc.)
//   dump_ir_child best     print tile::device::best().backend(), or the error and exit 1
#include <cstdio>
#include <cstring>
#include <tile/tile.hpp>

using namespace tile::literals;

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "best") == 0) {
    try {
      std::printf("best: %s\n", tile::device::best().backend().c_str());
      return 0;
    } catch (const tile::error& e) {
      std::printf("%s\n", e.what());
      return 1;
    }
  }
  auto k = tile::kernel("dump_me", [](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    tl::store(out + offs, tl::cast<float>(offs * 2 + 0));
  });
  auto out = tile::device::best().alloc<float>(32);
  k[{1}](out, "BLOCK"_c = 16);
  k[{1}](out, "BLOCK"_c = 16);  // cached: no second dump
  bool ok = out.to_host()[15] == 30.0f && out.to_host()[16] == 0.0f;
  k[{1}](out, "BLOCK"_c = 32);  // a new specialization: dumped again
  ok = ok && out.to_host()[31] == 62.0f && k.core().traces() == 2;
  std::printf("%s\n", ok ? "child OK" : "child FAILED");
  return ok ? 0 : 1;
}

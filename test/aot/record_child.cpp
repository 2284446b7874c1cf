// test/aot/record_child.cpp — run by test_aot with TILE_AOT_RECORD set: launches two kernels on
// the interpreter, and exits; the recorded launches are written at exit.
#include "kernels.hpp"

using namespace tile::literals;

int main() {
  auto dev = tile::device::get("interpreter");
  auto x = dev.upload(std::vector<float>(100, 1.0f)), y = dev.upload(std::vector<float>(100, 2.0f));
  auto out = dev.alloc<float>(100);
  aot_test::add[{2}](x, y, out, 100, "BLOCK"_c = 64);
  aot_test::add[{2}](x, y, out, 100, "BLOCK"_c = 64);  // the same specialization: recorded once
  aot_test::row_sum[{1}](x, out, 100, "BLOCK"_c = 128);
  return out.to_host()[0] == 100.0f ? 0 : 1;
}

// expect: OK (a correct launch and ir() compile: the harness must see them succeed)
#include "common.hpp"
void f(const tile::buffer<float>& a, const tile::buffer<std::int32_t>& c) {
  copy[{1}](a, a, 16, "BLOCK"_c = 16);
  count[{1}](c, 16);
  (void)copy.ir(a, a.view(1, 4), 16, "BLOCK"_c = 16, "num_warps"_c = 8);
}

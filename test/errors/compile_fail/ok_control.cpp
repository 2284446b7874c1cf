// expect: OK (a correct launch compiles: the harness must see it succeed)
#include "common.hpp"
void f(tile::buffer<float>& a) { copy[{1}](a, a, 16, "BLOCK"_c = 16); }

// expect: wrong number of runtime arguments
#include "common.hpp"
void f(const tile::buffer<float>& a) { copy[{1}](a, a, 16, 16, "BLOCK"_c = 16); }

// expect: does not match its kernel parameter
#include "common.hpp"
void f(const tile::buffer<float>& a) { copy[{1}](a, a, a, "BLOCK"_c = 16); }

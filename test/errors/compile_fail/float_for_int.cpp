// expect: does not match its kernel parameter
#include "common.hpp"
void f(const tile::buffer<float>& a) { copy[{1}](a, a, 16.0, "BLOCK"_c = 16); }

// expect: does not match its kernel parameter
#include "common.hpp"
void f(tile::buffer<int>& a, tile::buffer<float>& b) { copy[{1}](a, b, 16, "BLOCK"_c = 16); }

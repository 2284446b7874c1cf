// expect: a meta-parameter value is an integer, a bool or a float
#include "common.hpp"
void f(const tile::buffer<float>& a) { copy[{1}](a, a, 16, "BLOCK"_c = "16"); }

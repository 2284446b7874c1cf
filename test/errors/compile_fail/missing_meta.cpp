// expect: missing meta-parameter
#include "common.hpp"
void f(const tile::buffer<float>& a) { copy[{1}](a, a, 16); }

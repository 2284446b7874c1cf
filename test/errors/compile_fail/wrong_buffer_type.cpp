// expect: does not match its kernel parameter
#include "common.hpp"
void f(const tile::buffer<float>& a) { count[{1}](a, 16); }

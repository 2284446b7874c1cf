// expect: unknown meta-parameter
#include "common.hpp"
std::string f(const tile::buffer<float>& a) { return copy.ir(a, a, 16, "BLCK"_c = 16); }

// expect: a parameter struct's member does not match the kernel parameter at its position
#include "common.hpp"
// copy(src, dst, n): an int buffer where the kernel takes tl::ptr<float>
struct args {
  BOOST_HANA_DEFINE_STRUCT(args, (tile::buffer<std::int32_t>, src), (tile::buffer<float>, dst), (int, n));
};
void f(const args& a) { copy[{1}](a, "BLOCK"_c = 16); }

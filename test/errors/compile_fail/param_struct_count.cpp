// expect: a parameter struct's members, with the launch's other runtime arguments, must be the kernel's runtime arguments in order
#include "common.hpp"
// copy(src, dst, n): a struct of src and dst only, and no n after it
struct two {
  BOOST_HANA_DEFINE_STRUCT(two, (tile::buffer<float>, src), (tile::buffer<float>, dst));
};
void f(const two& t) { copy[{1}](t, "BLOCK"_c = 16); }

// expect: a meta-parameter holds an int64_t, a double or a bool
#include "common.hpp"
auto k = tile::kernel("k", [](tl::ptr<float> x, tl::constexpr_<"S", float> S) { tl::store(x, tl::constant<float>(S.value)); });

// A kernel the compile-fail cases launch wrongly.
#include <tile/tile.hpp>
using namespace tile::literals;
inline auto copy = tile::kernel("copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n,
                                           tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(dst + offs, tl::load(src + offs, offs < n), offs < n);
});

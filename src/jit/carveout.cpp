// src/jit/carveout.cpp — layer: jit. See carveout.hpp.
#include "jit/carveout.hpp"

#include <charconv>

#include "support/env.hpp"

namespace tile::jit {

int smem_carveout(const ir::Function& fn) {
  const std::string v = env::get("TILE_SMEM_CARVEOUT");
  if (v == "driver") return -1;
  int pct = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), pct);
  if (ec != std::errc() || end != v.data() + v.size() || pct < 0 || pct > 100)
    throw tile::error("kernel '" + fn.name + "': TILE_SMEM_CARVEOUT=" + v +
                          " is not 'driver' or a percentage from 0 to 100",
                      fn.loc, fn.name);
  return pct;
}

}  // namespace tile::jit

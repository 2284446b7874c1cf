// src/schedule/defer_dots.hpp — layer: schedule. The pass defer_dots (defer_dots.cpp): a
// warpgroup dot left in flight at the end of a loop's iteration, whose product the next iteration
// waits for, issued in the next iteration right after its first warpgroup dot, so that it runs
// while the threads compute with that dot's product (the loop rotated; in the first iteration the
// deferred dot's guard issues nothing). Run where TILE_DEFER_DOTS=1 or TILE_PINGPONG=1; by default
// such loops stay as pipeline_loops wrote them.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_defer_dots();

}  // namespace tile::schedule

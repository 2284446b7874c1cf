// src/schedule/overlap_dots.hpp — layer: schedule. The pass overlap_dots (overlap_dots.cpp): two
// independent warpgroup dots of a block issued back to back, each waited for at its first use.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_overlap_dots();

}  // namespace tile::schedule

// src/schedule/hoist_loads.hpp — layer: schedule. The pass hoist_loads (hoist_loads.cpp): the
// small global loads of a loop body that writes no memory issue at the top of the body, ahead of
// its tensor-core dots.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_hoist_loads();

}  // namespace tile::schedule

// src/schedule/defer_dots.hpp — layer: schedule. The pass defer_dots (defer_dots.cpp): the
// second dot of a chain in a pipelined loop (S = A·B; P = f(S); acc = P·V + …) issued one
// iteration later, beside the next iteration's first dot, so that the engine runs it while the
// threads compute f.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_defer_dots();

}  // namespace tile::schedule

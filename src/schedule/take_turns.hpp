// src/schedule/take_turns.hpp — layer: schedule. The pass take_turns (take_turns.cpp): the
// consumer warpgroups of a warp-specialized kernel issue a loop's tensor-core dots in turns
// (FlashAttention-3's ping-pong schedule), so that while one warpgroup's dots run on the tensor
// cores the other computes with its previous products (attention's softmax), instead of both
// asking the tensor cores at once and then both computing with them idle. Run after every other
// pass of the GPU level, where TILE_PINGPONG=1.
#pragma once

#include <memory>

#include "transforms/pass_manager.hpp"

namespace tile::schedule {

std::unique_ptr<transforms::Pass> make_take_turns();

}  // namespace tile::schedule

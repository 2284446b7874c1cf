// src/transforms/pipeline.hpp — layer: transforms. The order of the passes, in one place.
#pragma once

#include <string_view>
#include <vector>

#include "transforms/pass_manager.hpp"

namespace tile::transforms {

/// Canonicalize a freshly traced kernel: constant_fold, cse, dce; then version_single_trip_loops
/// (unless TILE_VERSION_LOOPS=0), constant_fold, cse, load_cse, cse, dce; under one PassManager
/// (dump/verify/timing as `options` say). Throws tile::error when verification fails.
void canonicalize(ir::Function& f, const PassManager::Options& options);

/// The names of the passes canonicalize() runs, in order.
std::vector<std::string_view> canonicalize_pass_names();

}  // namespace tile::transforms

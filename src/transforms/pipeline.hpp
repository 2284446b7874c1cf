// src/transforms/pipeline.hpp — layer: transforms. The order of the passes, in one place.
#pragma once

#include <string_view>
#include <vector>

#include "transforms/pass_manager.hpp"

namespace tile::transforms {

/// Canonicalize a freshly traced kernel: constant_fold, cse, dce, in that order, under one
/// PassManager (dump/verify/timing as `options` say). Throws tile::error when verification fails.
void canonicalize(ir::Function& f, const PassManager::Options& options);

/// The names of the passes canonicalize() runs, in order.
std::vector<std::string_view> canonicalize_pass_names();

}  // namespace tile::transforms

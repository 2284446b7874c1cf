// src/transforms/pipeline.cpp — layer: transforms. The pipeline, read top to bottom.
#include "transforms/pipeline.hpp"

#include "support/env.hpp"
#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {
std::vector<std::unique_ptr<Pass>> canonicalization_passes() {
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(make_constant_fold());  // literals and meta-parameters become constants
  passes.push_back(make_cse());            // one copy of each index computation and constant
  passes.push_back(make_dce());            // drop what folding and cse left unused
  if (env::enabled("TILE_VERSION_LOOPS"))  // loops over one range that read the same memory:
    passes.push_back(make_version_single_trip_loops());  // a version for a range of one step
  passes.push_back(make_constant_fold());  // the version's copies of index arithmetic, folded
  passes.push_back(make_cse());            // and merged, so repeated loads have equal operands
  passes.push_back(make_load_cse());       // a load that repeats one of its block takes its values
  passes.push_back(make_cse());            // and what was computed from both loads, once
  passes.push_back(make_dce());
  return passes;
}
}  // namespace

void canonicalize(ir::Function& f, const PassManager::Options& options) {
  PassManager pm(options);
  for (auto& p : canonicalization_passes()) pm.add(std::move(p));
  pm.run(f);
}

std::vector<std::string_view> canonicalize_pass_names() {
  std::vector<std::string_view> names;
  for (auto& p : canonicalization_passes()) names.push_back(p->name());  // names are literals
  return names;
}

}  // namespace tile::transforms

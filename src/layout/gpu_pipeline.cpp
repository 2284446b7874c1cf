// src/layout/gpu_pipeline.cpp — layer: layout. Tile IR to the GPU level, read top to bottom.
#include "layout/gpu_passes.hpp"
#include "transforms/passes.hpp"

namespace tile::layout {

namespace {
std::vector<std::unique_ptr<transforms::Pass>> gpu_passes(target_caps caps) {
  std::vector<std::unique_ptr<transforms::Pass>> passes;
  passes.push_back(make_select_mma(caps));       // which dots run on tensor cores
  passes.push_back(make_assign_layouts(caps));   // every tile's layout; a conversion at each use that wants another
  passes.push_back(make_remove_conversions());   // shared, or computed again where cheap
  passes.push_back(make_stage_mma_operands());   // tensor-core operands into shared-memory buffers
  passes.push_back(transforms::make_dce());      // what recomputation left unused
  return passes;
}
}  // namespace

void to_gpu_ir(ir::Function& f, target_caps caps, const transforms::PassManager::Options& options) {
  transforms::PassManager::Options o = options;
  o.input_stage = "canonicalize";  // (printed already, after its last pass)
  o.dump_input = false;
  transforms::PassManager pm(o);
  for (auto& p : gpu_passes(caps)) pm.add(std::move(p));
  pm.run(f);
}

std::vector<std::string_view> gpu_pass_names() {
  std::vector<std::string_view> names;
  for (auto& p : gpu_passes({})) names.push_back(p->name());
  return names;
}

}  // namespace tile::layout

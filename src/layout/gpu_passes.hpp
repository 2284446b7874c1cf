// src/layout/gpu_passes.hpp — layer: layout. The passes that make the GPU level of the IR
// (ir::Function::gpu) from tile IR, one a file, and the pipeline that runs them. Each leaves IR
// the verifier accepts (verify_layouts.cpp's rules at the GPU level); the PassManager prints it
// after each (TILE_DUMP_IR) and verifies it (TILE_VERIFY), naming the pass on a failure.
//
//   select_mma          (select_mma.cpp) tile IR: each dot's engine — a thread's fma chain, a
//                       warp's MMA or a warpgroup's — and its warps along M and N (dot attrs),
//                       as the target's description of its engines chooses (target_caps::mma,
//                       layout/mma_target.hpp), which the kernel then names (Function::mma_target);
//   assign_layouts      (assign_layouts_pass.cpp) tile IR -> GPU level: every tile's layout
//                       (assign_layouts.hpp) in its type, a convert_layout before each use that
//                       wants another;
//   remove_conversions  (remove_conversions.cpp) conversions shared, or computed again in the
//                       wanted layout where that is cheap;
//   stage_mma_operands  (stage_mma_operands.cpp) a tensor-core dot's A and B as local_alloc
//                       buffers in shared memory, arranged as its engine reads them;
//   dce                 what recomputation left unused.
// After them, the NVIDIA pipeline chooses the loops it pipelines (schedule/software_pipeline.hpp)
// and places every buffer (schedule/allocate_shared.hpp, the pass allocate_shared).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "layout/assign_layouts.hpp"
#include "transforms/pass_manager.hpp"

namespace tile::layout {

std::unique_ptr<transforms::Pass> make_select_mma(target_caps caps);
std::unique_ptr<transforms::Pass> make_assign_layouts(target_caps caps);
std::unique_ptr<transforms::Pass> make_remove_conversions();
std::unique_ptr<transforms::Pass> make_stage_mma_operands();

/// `f` (verified tile IR, num_warps set) made the GPU level for a target with `caps`: the passes
/// above in order, through a PassManager with `options`.
void to_gpu_ir(ir::Function& f, target_caps caps, const transforms::PassManager::Options& options);
/// Their names, in order (tests, TILE_TIME_PASSES).
std::vector<std::string_view> gpu_pass_names();

}  // namespace tile::layout

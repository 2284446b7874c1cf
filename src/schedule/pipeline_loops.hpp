// src/schedule/pipeline_loops.hpp — layer: schedule. The pass that writes the software pipeline
// plan_pipelines chose into the GPU-level IR (pipeline_loops.cpp has the shape it makes).
#pragma once

#include <memory>

#include "schedule/software_pipeline.hpp"
#include "transforms/pass_manager.hpp"

namespace tile::schedule {

/// pipeline_loops: each loop of `plan` (its ops must be `f`'s, the function the pass runs on)
/// becomes its rings, prologue, copies, waits and barriers. Run dce after it.
std::unique_ptr<transforms::Pass> make_pipeline_loops(const PipelinePlan& plan);

}  // namespace tile::schedule

// src/transforms/lower_descriptor_loads.hpp — layer: transforms. Tensor descriptors in plain
// IR: the pointers and mask of a block (descriptor_access, which the frontend's
// tensor_descriptor::store uses too) and the rewrite of `desc_load` ops into masked loads.
//
// Every backend runs the rewrite for all of a kernel's descriptor loads except the NVIDIA
// pipeline on sm_90a, which keeps those it copies with the Tensor Memory Accelerator
// (schedule/software_pipeline.hpp) and rewrites the rest.
#pragma once

#include <functional>
#include <span>

#include "ir/ir.hpp"

namespace tile::transforms {

struct DescriptorAccess {
  ir::Value* pointers = nullptr;  // base + Σ (offsets[d] + i_d) · strides[d], the block's shape
  ir::Value* mask = nullptr;      // 0 <= offsets[d] + i_d < shape[d] for every axis d
};

/// Builds (at `b`'s insertion point) the pointers and mask of the block at `offsets` of the
/// tensor `base`/`shape`/`strides` (integer scalars, one per axis, each converted to i64: the
/// index arithmetic is 64-bit, as a tensor copy's addresses). A stride that is the constant 1
/// multiplies nothing.
DescriptorAccess descriptor_access(ir::Builder& b, ir::Value* base, std::span<ir::Value* const> shape,
                                   std::span<ir::Value* const> strides, std::span<ir::Value* const> offsets,
                                   std::span<const std::int64_t> block, src_loc loc);

/// Rewrites every `desc_load` of `f` for which `keep` is false (or null) into the equivalent
/// masked load (`other` 0). Returns whether anything changed; the result still needs cse/dce.
bool lower_descriptor_loads(ir::Function& f, const std::function<bool(const ir::Op&)>& keep = {});

/// Whether `f` has a `desc_load` anywhere.
bool has_descriptor_loads(const ir::Function& f);

}  // namespace tile::transforms

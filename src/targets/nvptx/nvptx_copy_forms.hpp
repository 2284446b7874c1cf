// src/targets/nvptx/nvptx_copy_forms.hpp — layer: targets (nvptx). NVIDIA's asynchronous copies
// as the pipeline planner sees them (schedule/copy_target.hpp); the instructions are
// nvptx_async_copy.hpp's.
//   cp.async (sm_80 and later)  4, 8 or 16 bytes a thread, zero-filled where masked off
//   the TMA (sm_90a)            cp.async.bulk.tensor.2d boxes of at most 256 rows (a multiple of
//                               8) of 32, 64 or a multiple of 128 bytes (one swizzle span of at
//                               most 128 bytes a box's row), the tensor's base and row stride
//                               16-byte aligned
#pragma once

#include <string>

#include "schedule/copy_target.hpp"

namespace tile::targets::nvptx {

class NvptxCopyForms final : public schedule::CopyTarget {
 public:
  NvptxCopyForms(std::string name, bool tma) : name_(std::move(name)), tma_(tma) {}
  std::string_view name() const override { return name_; }
  int max_copy_bytes() const override { return 16; }
  int min_copy_bytes() const override { return 4; }
  bool tensor_copies() const override { return tma_; }
  bool tensor_copy_box(std::int64_t rows, std::int64_t row_bytes) const override;
  std::int64_t box_cols(std::int64_t cols, std::int64_t elem_bytes) const override;
  std::int64_t tensor_alignment() const override { return 16; }

 private:
  std::string name_;
  bool tma_;
};

/// The copies of an architecture with compute capability `sm` (`accel`: sm_90a): null below
/// sm_80 (no asynchronous copy the backend uses).
const NvptxCopyForms* copy_forms(int sm, bool accel);

}  // namespace tile::targets::nvptx

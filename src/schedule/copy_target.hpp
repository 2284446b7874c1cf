// src/schedule/copy_target.hpp — layer: schedule. A target's asynchronous copies into shared
// memory as the pipeline planner sees them (software_pipeline.hpp), described by the target that
// owns them (NVIDIA's target: per-thread and tensor copies; an AMD
// target's buffer loads would be another): how many bytes one thread's copy moves, whether whole
// tiles are copied from a tensor description (tensor_copy), and which boxes such a copy takes.
// The instructions are the target's codegen/gpu AsyncCopyEngine's.
#pragma once

#include <cstdint>
#include <string_view>

namespace tile::schedule {

class CopyTarget {
 public:
  virtual ~CopyTarget() = default;
  /// What dumps and messages call the description: the target and its architecture.
  virtual std::string_view name() const = 0;
  /// The bytes one thread's copy moves at most and at least: a run of elements along a row.
  virtual int max_copy_bytes() const = 0;
  virtual int min_copy_bytes() const = 0;
  /// Whether the target copies tiles from a tensor description (tensor_copy, copy barriers).
  virtual bool tensor_copies() const = 0;
  /// Whether a box of `rows` rows of `row_bytes` bytes is what one tensor copy moves.
  virtual bool tensor_copy_box(std::int64_t rows, std::int64_t row_bytes) const = 0;
  /// The columns a box covers of rows of `cols` elements of `elem_bytes` bytes (a tile is copied
  /// in column blocks of this width).
  virtual std::int64_t box_cols(std::int64_t cols, std::int64_t elem_bytes) const = 0;
  /// The alignment (bytes) a tensor copy needs of its tensor's base and row stride.
  virtual std::int64_t tensor_alignment() const = 0;
};

}  // namespace tile::schedule

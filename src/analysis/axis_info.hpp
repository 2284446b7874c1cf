// src/analysis/axis_info.hpp — layer: analysis. What is known, at compile time, about the values
// of integer and pointer tiles along each axis (Triton's AxisInfo):
//   contiguity[d]    values increase by 1 along d in runs of this many elements;
//   divisibility[d]  the first value of each such run is a multiple of this (bytes for
//                    pointers, the value for integers);
//   constancy[d]     values are equal along d in runs of this many elements.
// Every figure is a power of two. Fed by the launch's specialization (arguments that are
// multiples of 16 or non-negative, ir::ArgInfo), arange, constants, tl::multiple_of / tl::max_contiguous, and
// propagated through arithmetic, broadcasts and loops (to a fixed point). The GPU lowering reads
// it to make global loads and stores 128 bits wide where data and masks allow.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.hpp"

namespace tile::analysis {

struct AxisInfo {
  std::vector<std::int64_t> contiguity, divisibility, constancy;  // one per axis (empty: scalar)
  std::int64_t scalar_div = 1;  // scalars: the value is a multiple of this
  bool operator==(const AxisInfo&) const = default;
  std::string str() const;
};

class AxisAnalysis {
 public:
  explicit AxisAnalysis(const ir::Function& f);
  /// The facts for `v` (the weakest facts for values the analysis does not know).
  const AxisInfo& at(const ir::Value* v) const;
  /// Divisibility of a scalar value, or of a tile's elements along every axis (min).
  std::int64_t divisibility(const ir::Value* v) const;
  /// Integers proven >= 0 in every element, from a lower bound per value: program ids (0),
  /// aranges (their start), constants, non-negative launch arguments (ir::ArgInfo::nonneg), and
  /// what add, sub of a constant, mul, div, rem, min/max, shifts and shape ops make of them
  /// (index arithmetic is assumed not to overflow, as Triton's analyses assume).
  bool nonneg(const ir::Value* v) const {
    auto it = lower_.find(v);
    return it != lower_.end() && it->second >= 0;
  }

 private:
  void block(const ir::Block& b);
  void op(const ir::Op& o);
  void set(const ir::Value* v, AxisInfo i) { info_[v] = std::move(i); }
  void note_lower_bound(const ir::Op& o);
  mutable std::unordered_map<const ir::Value*, AxisInfo> info_;  // unknown values added on first query
  std::unordered_map<const ir::Value*, std::int64_t> lower_;  // proven lower bounds of integers
};

/// The weakest facts about a value of type t.
AxisInfo unknown_info(const ir::Type& t);

}  // namespace tile::analysis

// src/runtime/prof/viewer.hpp — layer: runtime. What the tile-prof tool prints
// (tools/tile-prof/tile_prof.cpp), the C++ counterpart of Proton's proton-viewer: the call-path
// tree with one or more metrics a line, drawn like hatchet's tree
//
//   8255.000 ROOT
//   ├─ 2048.000 eval
//   │  └─ 2048.000 scale
//   └─ 6207.000 train
//      ├─ 2015.000 backward
//
// a table of the kernels that took the most time, and the list of metrics. Values are inclusive,
// as proton-viewer computes them (hatchet's update_inclusive_columns): a frame's value of a metric
// is its own plus that of every frame below it, so a scope's time is the sum of its kernels' and
// its flops those booked on it and on the scopes inside it. Derived metrics divide inclusive
// values: tflop/s = flops / time / 1e12.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/prof/profile_data.hpp"

namespace tile::prof::detail {

struct view_options {
  /// Case-insensitive; see metric_legend for the names. Printed in this order, each "%.3f".
  std::vector<std::string> metrics{"time/ns"};
  /// Levels shown (ROOT is the first), as proton-viewer's -d.
  int depth = 100;
  /// Hide frames whose first metric is below it, unless a frame below them is shown.
  std::optional<double> threshold;
  /// > 0: after the tree, the `top` kernels with the most time (summed over every call path of
  /// the kernel's name), with their launches, total and average time and share of all time.
  int top = 0;
};

/// The tree, then the top-kernels table where asked. Throws std::invalid_argument for a metric
/// name that is unknown or whose source metric the profile lacks, or a depth below 1.
std::string render(const profile& p, const view_options& options);

/// What every metric name means, then the raw metrics this profile has ("- time"), as
/// proton-viewer's -l lists them.
std::string metric_legend(const profile& p);

/// "time/ns,tflop/s" -> {"time/ns", "tflop/s"}; throws std::invalid_argument on an empty name.
std::vector<std::string> split_metric_list(std::string_view list);

}  // namespace tile::prof::detail

// src/runtime/prof/profile_data.cpp — layer: runtime. The profile data model's one behaviour:
// finding or appending a frame's child. Kept apart from the recorder so the writers, the reader
// and the tile-prof viewer build without the rest of libtile.
#include "runtime/prof/profile_data.hpp"

namespace tile::prof::detail {

frame_node& frame_node::child(const std::string& child_name, bool is_kernel) {
  // A scope and a kernel of the same name are different frames (Proton keys frames by name
  // alone, but tile's kernels and scopes live in separate name spaces of the API).
  for (auto& c : children)
    if (c->name == child_name && c->kernel == is_kernel) return *c;
  auto node = std::make_unique<frame_node>();
  node->name = child_name;
  node->kernel = is_kernel;
  children.push_back(std::move(node));
  return *children.back();
}

}  // namespace tile::prof::detail

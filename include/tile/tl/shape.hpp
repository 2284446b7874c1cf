// tile/tl/shape.hpp — layer: language (public). Shape manipulation: expand_dims, broadcast_to,
// reshape, trans/permute, join/split. (Indexing with x(_, newaxis) lives on tl::tensor.)
#pragma once

#include <utility>

#include "tile/tl/types.hpp"

namespace tl {

/// Insert an axis of extent 1 at `axis` (negative counts from the end).
inline tensor expand_dims(const operand& x, int axis) {
  return tensor(tile::detail::expand_dims(x.d.n, axis, x.loc));
}
/// Broadcast to `shape` (numpy rules: extents of 1 stretch, leading axes are added).
inline tensor broadcast_to(const operand& x, const shape_t& shape) {
  return tensor(tile::detail::broadcast_to(x.d, shape, x.loc));
}
/// Same elements in row-major order, new shape (same element count).
inline tensor reshape(const operand& x, const shape_t& shape) {
  return tensor(tile::detail::reshape(x.d.n, shape, x.loc));
}
/// Reorder axes: result axis i is input axis order[i].
inline tensor permute(const operand& x, const std::vector<int>& order) {
  return tensor(tile::detail::permute(x.d.n, order, x.loc));
}
/// Transpose: reverse the axes (a 2-D tile's rows become columns).
inline tensor trans(const operand& x) {
  std::vector<int> order;
  for (int i = static_cast<int>(tile::detail::node_shape(x.d.n, x.loc).size()) - 1; i >= 0; --i) order.push_back(i);
  return permute(x, order);
}
/// Stack two tiles of the same shape along a new minor axis of extent 2.
inline tensor join(const operand& a, const operand& b) {
  return tensor(tile::detail::join(a.d, b.d, a.loc));
}
/// The inverse of join: split a minor axis of extent 2 into two tiles.
inline std::pair<tensor, tensor> split(const operand& x) {
  auto [a, b] = tile::detail::split(x.d.n, x.loc);
  return {tensor(a), tensor(b)};
}

}  // namespace tl

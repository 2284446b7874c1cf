// src/frontend/ops_shape.cpp — layer: frontend. Shape ops: expand_dims, broadcast_to, reshape,
// permute, join/split and x(_, newaxis) indexing.
#include <algorithm>

#include "frontend/trace.hpp"

namespace tile::detail {

using frontend::create1;
using frontend::shape_str;
using frontend::Trace;
using frontend::V;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
Value* need(node* x, const char* op, src_loc loc) {
  if (!x) Trace::current(loc).fail(std::string(op) + " needs a tensor, got a literal or an unassigned tensor", loc);
  return V(x);
}
}  // namespace

node* expand_dims(node* x, int axis, src_loc loc) {
  Value* v = need(x, "expand_dims", loc);
  int rank = static_cast<int>(v->type.shape.size());
  int ax = axis < 0 ? axis + rank + 1 : axis;
  if (ax < 0 || ax > rank)
    Trace::current(loc).fail("expand_dims: axis " + std::to_string(axis) + " is out of range for a tile of rank " +
                                 std::to_string(rank), loc);
  auto s = v->type.shape;
  s.insert(s.begin() + ax, 1);
  ir::Attrs a;
  a.ints = {ax};
  return create1(OpKind::expand_dims, {v}, v->type.with_shape(s), loc, a);
}

node* broadcast_to(const operand_data& x, std::span<const std::int64_t> shape, src_loc loc) {
  std::vector<std::int64_t> s(shape.begin(), shape.end());
  frontend::check_shape(s, loc, "broadcast_to");
  Value* v = frontend::materialize(x, nullptr, loc);
  return frontend::broadcast(v, s, loc);
}

node* reshape(node* x, std::span<const std::int64_t> shape, src_loc loc) {
  Value* v = need(x, "reshape", loc);
  std::vector<std::int64_t> s(shape.begin(), shape.end());
  frontend::check_shape(s, loc, "reshape");
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  if (n != v->type.numel())
    Trace::current(loc).fail("reshape from " + shape_str(v->type.shape) + " to " + shape_str(s) +
                                 " changes the number of elements", loc);
  if (s == v->type.shape) return v;
  return create1(OpKind::reshape, {v}, v->type.with_shape(s), loc);
}

node* permute(node* x, std::span<const int> order, src_loc loc) {
  Value* v = need(x, "permute", loc);
  const auto& s = v->type.shape;
  std::vector<int> seen(order.begin(), order.end());
  std::sort(seen.begin(), seen.end());
  bool ok = seen.size() == s.size();
  for (std::size_t i = 0; ok && i < seen.size(); ++i) ok = seen[i] == static_cast<int>(i);
  if (!ok) {
    std::string o;
    for (int i : order) o += (o.empty() ? "" : ", ") + std::to_string(i);
    Trace::current(loc).fail("permute: (" + o + ") is not a permutation of the axes of " + v->type.str(), loc);
  }
  std::vector<std::int64_t> r;
  ir::Attrs a;
  bool identity = true;
  for (std::size_t i = 0; i < order.size(); ++i) {
    r.push_back(s[static_cast<std::size_t>(order[i])]);
    a.ints.push_back(order[i]);
    identity = identity && order[i] == static_cast<int>(i);
  }
  if (identity) return v;
  return create1(OpKind::permute, {v}, v->type.with_shape(r), loc, a);
}

node* join(const operand_data& a, const operand_data& b, src_loc loc) {
  auto [va, vb] = frontend::binary_operands(a, b, loc, "join");
  auto s = va->type.shape;
  s.push_back(2);
  return create1(OpKind::join, {va, vb}, va->type.with_shape(s), loc);
}

std::pair<node*, node*> split(node* x, src_loc loc) {
  Value* v = need(x, "split", loc);
  const auto& s = v->type.shape;
  if (s.empty() || s.back() != 2)
    Trace::current(loc).fail("split needs a tile whose last axis has extent 2, got " + v->type.str(), loc);
  auto r = s;
  r.pop_back();
  auto* op = Trace::current(loc).builder().create(OpKind::split, {v}, {v->type.with_shape(r), v->type.with_shape(r)},
                                                   {}, loc);
  return {op->result(0), op->result(1)};
}

node* index(node* x, std::span<const std::uint8_t> kinds, src_loc loc) {
  Value* v = need(x, "indexing", loc);
  std::size_t kept = static_cast<std::size_t>(std::count(kinds.begin(), kinds.end(), 1));
  if (kept != v->type.shape.size())
    Trace::current(loc).fail("indexing a tile of rank " + std::to_string(v->type.shape.size()) + " with " +
                                 std::to_string(kept) + " `_` markers (one `_` per axis, `newaxis` to add one)", loc);
  std::vector<std::int64_t> s;
  std::size_t src = 0;
  for (auto k : kinds) s.push_back(k ? v->type.shape[src++] : 1);
  if (s == v->type.shape) return v;
  return create1(OpKind::reshape, {v}, v->type.with_shape(s), loc);
}

}  // namespace tile::detail

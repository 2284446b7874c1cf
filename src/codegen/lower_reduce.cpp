// src/codegen/lower_reduce.cpp — layer: codegen. reduce and scan along an axis: for every
// position of the other axes, a sequential fold in axis order (reverse for reverse scans), the
// combine region lowered on scalars — the interpreter's order exactly, so float results agree
// bit for bit.
// Exception: a reduction whose combine is one op that is exactly associative and commutative
// (integer add, mul, and, or, xor, min, max; float minimum/maximum, which ignore NaNs and order
// -0 below +0) gives the same value in any order, so it folds in kLanes independent partial
// results that the loop vectorizer turns into vector code, then folds those.
#include "codegen/lowering.hpp"

namespace tile::codegen {

using ir::OpKind;

namespace {

constexpr std::int64_t kLanes = 16;

/// The combine op of `region` if the region is `r = op(a, b); yield r` (either operand order) with
/// an op whose result does not depend on the order of the fold.
const ir::Op* reorderable_combine(const ir::Block& region) {
  if (region.args.size() != 2 || region.ops.size() != 2) return nullptr;
  const ir::Op& c = *region.ops.front();
  const ir::Op& y = *region.ops.back();
  if (y.kind != OpKind::yield || y.operands.size() != 1 || y.operand(0) != c.result()) return nullptr;
  if (c.operands.size() != 2) return nullptr;
  const bool args = (c.operand(0) == region.arg(0) && c.operand(1) == region.arg(1)) ||
                    (c.operand(0) == region.arg(1) && c.operand(1) == region.arg(0));
  if (!args) return nullptr;
  const ir::Type& t = c.operand(0)->type;
  if (t.ptr) return nullptr;
  if (is_float(t.elem)) return c.kind == OpKind::minimum || c.kind == OpKind::maximum ? &c : nullptr;
  switch (c.kind) {
    case OpKind::add:
    case OpKind::mul:
    case OpKind::bit_and:
    case OpKind::bit_or:
    case OpKind::bit_xor:
    case OpKind::minimum:
    case OpKind::maximum: return &c;
    default: return nullptr;
  }
}

}  // namespace

void Lowering::lower_reduce(const ir::Op& op) {
  if (op.kind == OpKind::reduce && op.operands.size() == 1) {
    const auto& shape = op.operand(0)->type.shape;
    const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
    const std::int64_t len = shape.at(axis);
    if (const ir::Op* c = reorderable_combine(*op.region(0)); c && len >= 2 * kLanes && len % kLanes == 0)
      return lower_reorderable_reduce(op, *c);
  }
  const bool is_scan = op.kind == OpKind::scan;
  const std::size_t n = op.operands.size();
  const auto& shape = op.operand(0)->type.shape;
  const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
  const bool reverse = is_scan && op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  const std::int64_t len = shape.at(axis);
  std::vector<std::int64_t> outer = shape;
  outer.erase(outer.begin() + static_cast<std::ptrdiff_t>(axis));

  std::vector<const TV*> in;
  std::vector<ir::Type> et;  // element types
  for (std::size_t i = 0; i < n; ++i) {
    in.push_back(&get(op.operand(static_cast<unsigned>(i))));
    et.push_back(op.operand(static_cast<unsigned>(i))->type.scalar());
  }
  std::vector<llvm::Value*> acc(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    acc[i] = alloc_slot(et[i], "acc");
    const ir::Type& rt = op.result(static_cast<unsigned>(i))->type;
    if (!rt.is_scalar()) out[i] = alloc_buffer(rt, is_scan ? "scan" : "red");
  }
  const ir::Block& region = *op.region(0);

  loop_nest(outer, [&](const Index& o) {
    auto at = [&](llvm::Value* t) {
      std::vector<llvm::Value*> axes = o.axis;
      axes.insert(axes.begin() + static_cast<std::ptrdiff_t>(axis), t);
      return index_of(std::move(axes), shape);
    };
    auto pos = [&](llvm::Value* step) { return reverse ? b->CreateSub(i64(len - 1), step) : step; };
    {
      Index ix = at(pos(i64(0)));
      for (std::size_t i = 0; i < n; ++i) {
        llvm::Value* v = elem(*in[i], ix);
        store_slot(acc[i], et[i], v);
        if (is_scan) store_elem(out[i], et[i], ix.flat, v);
      }
    }
    counted_loop(i64(1), i64(len), [&](llvm::Value* step) {
      Index ix = at(pos(step));
      std::vector<TV> args;
      for (std::size_t i = 0; i < n; ++i) args.push_back(scalar(load_slot(acc[i], et[i]), et[i]));
      for (std::size_t i = 0; i < n; ++i) args.push_back(scalar(elem(*in[i], ix), et[i]));
      std::vector<TV> r = lower_region(region, args);
      for (std::size_t i = 0; i < n; ++i) {
        store_slot(acc[i], et[i], r.at(i).v);
        if (is_scan) store_elem(out[i], et[i], ix.flat, r[i].v);
      }
    }, "k");
    if (!is_scan)
      for (std::size_t i = 0; i < n; ++i)
        if (out[i]) store_elem(out[i], et[i], o.flat, load_slot(acc[i], et[i]));
  });

  for (std::size_t i = 0; i < n; ++i) {
    const ir::Type& rt = op.result(static_cast<unsigned>(i))->type;
    if (rt.is_scalar())
      set(op.result(static_cast<unsigned>(i)), scalar(load_slot(acc[i], et[i]), rt));
    else
      set(op.result(static_cast<unsigned>(i)), TV{TV::K::buffer, out[i], {}, rt});
  }
}

void Lowering::lower_reorderable_reduce(const ir::Op& op, const ir::Op& combine) {
  const auto& shape = op.operand(0)->type.shape;
  const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
  const std::int64_t len = shape.at(axis);
  std::vector<std::int64_t> outer = shape;
  outer.erase(outer.begin() + static_cast<std::ptrdiff_t>(axis));
  const TV& x = get(op.operand(0));
  const ir::Type et = op.operand(0)->type.scalar();
  const ir::Type& rt = op.result()->type;
  const ir::Type lanes_t = et.with_shape({kLanes});
  llvm::Value* part = alloc_buffer(lanes_t, "lanes");
  llvm::Value* acc = alloc_slot(et, "acc");
  llvm::Value* out = rt.is_scalar() ? nullptr : alloc_buffer(rt, "red");
  auto fold2 = [&](llvm::Value* a, llvm::Value* v) {
    llvm::Value* in[2] = {a, v};
    return scalar_op(combine, in);
  };
  loop_nest(outer, [&](const Index& o) {
    auto at = [&](llvm::Value* t) {
      std::vector<llvm::Value*> axes = o.axis;
      axes.insert(axes.begin() + static_cast<std::ptrdiff_t>(axis), t);
      return index_of(std::move(axes), shape);
    };
    counted_loop(i64(0), i64(kLanes), [&](llvm::Value* j) { store_elem(part, et, j, elem(x, at(j))); }, "l");
    counted_loop(i64(1), i64(len / kLanes), [&](llvm::Value* t) {
      llvm::Value* base = b->CreateMul(t, i64(kLanes));
      counted_loop(i64(0), i64(kLanes), [&](llvm::Value* j) {
        llvm::Value* pj = elem_addr(TV{TV::K::buffer, part, {}, lanes_t}, j);
        llvm::Value* cur = from_storage(b->CreateLoad(storage_type(et), pj), et);
        store_elem(part, et, j, fold2(cur, elem(x, at(b->CreateAdd(base, j)))));
      }, "l");
    }, "k");
    store_slot(acc, et, from_storage(b->CreateLoad(storage_type(et), part), et));
    counted_loop(i64(1), i64(kLanes), [&](llvm::Value* j) {
      llvm::Value* pj = elem_addr(TV{TV::K::buffer, part, {}, lanes_t}, j);
      store_slot(acc, et, fold2(load_slot(acc, et), from_storage(b->CreateLoad(storage_type(et), pj), et)));
    }, "l");
    if (out) store_elem(out, et, o.flat, load_slot(acc, et));
  });
  if (rt.is_scalar())
    set(op.result(), scalar(load_slot(acc, et), rt));
  else
    set(op.result(), TV{TV::K::buffer, out, {}, rt});
}

}  // namespace tile::codegen

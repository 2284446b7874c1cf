// src/transforms/lower_descriptor_loads.cpp — layer: transforms. See lower_descriptor_loads.hpp.
#include "transforms/lower_descriptor_loads.hpp"

#include <vector>

namespace tile::transforms {

using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
ir::Attrs ints(std::vector<std::int64_t> v) {
  ir::Attrs a;
  a.ints = std::move(v);
  return a;
}
bool is_const_one(const Value* v) { return ir::int_constant(v) == 1; }
}  // namespace

DescriptorAccess descriptor_access(ir::Builder& b, Value* base, std::span<Value* const> shape, std::span<Value* const> strides,
                                   std::span<Value* const> offsets, std::span<const std::int64_t> block, src_loc loc) {
  const std::size_t r = block.size();
  // 64-bit index arithmetic: (offset + i) * stride overflows 32 bits past 2^31 elements, which
  // a tensor copy (64-bit addresses) would not
  const dtype it = dtype::i64;
  const std::vector<std::int64_t> full(block.begin(), block.end());
  auto op1 = [&](OpKind k, std::vector<Value*> in, Type t, ir::Attrs a = {}) { return b.create(k, std::move(in), {std::move(t)}, std::move(a), loc)->result(); };
  auto scalar = [&](Value* v) { return v->type.elem == it ? v : op1(OpKind::cast, {v}, Type{it, false, {}}); };
  Value* off = nullptr;
  Value* mask = nullptr;
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t n = block[d];
    // offsets[d] + arange(0, n), shaped [1, …, n, …, 1] and broadcast to the block
    Value* idx = op1(OpKind::arange, {}, Type{dtype::i32, false, {n}}, ints({0, n}));
    if (it != dtype::i32) idx = op1(OpKind::cast, {idx}, Type{it, false, {n}});
    idx = op1(OpKind::add, {op1(OpKind::splat, {scalar(offsets[d])}, Type{it, false, {n}}), idx}, Type{it, false, {n}});
    std::vector<std::int64_t> s{n};
    for (std::size_t k = 0; k < r; ++k) {
      if (k == d) continue;
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(k), 1);
      idx = op1(OpKind::expand_dims, {idx}, Type{it, false, s}, ints({static_cast<std::int64_t>(k)}));
    }
    const Type tile{it, false, full};
    if (r > 1) idx = op1(OpKind::broadcast, {idx}, tile);
    const Type bits_t{dtype::i1, false, full};
    Value* ge = op1(OpKind::cmp, {idx, b.constant_int(tile, 0, loc)}, bits_t, ints({static_cast<std::int64_t>(ir::CmpPred::ge)}));
    Value* lt = op1(OpKind::cmp, {idx, op1(OpKind::splat, {scalar(shape[d])}, tile)}, bits_t,
                    ints({static_cast<std::int64_t>(ir::CmpPred::lt)}));
    Value* in = op1(OpKind::bit_and, {ge, lt}, bits_t);
    Value* term = is_const_one(strides[d]) ? idx : op1(OpKind::mul, {idx, op1(OpKind::splat, {scalar(strides[d])}, tile)}, tile);
    off = off ? op1(OpKind::add, {off, term}, tile) : term;
    mask = mask ? op1(OpKind::bit_and, {mask, in}, bits_t) : in;
  }
  const Type ptrs{base->type.elem, true, full};
  return {op1(OpKind::addptr, {op1(OpKind::splat, {base}, ptrs), off}, ptrs), mask};
}

bool lower_descriptor_loads(ir::Function& f, const std::function<bool(const ir::Op&)>& keep) {
  std::vector<ir::Op*> todo;
  ir::walk(f.body, [&](ir::Op& op) {
    if (op.kind == OpKind::desc_load && !(keep && keep(op))) todo.push_back(&op);
  });
  for (ir::Op* op : todo) {
    const std::size_t r = op->attrs.ints.size();
    std::vector<Value*> ops(op->operands.begin(), op->operands.end());
    const std::span<Value* const> all(ops);
    ir::Builder b(op->parent);
    b.set_insertion_before(op);
    const DescriptorAccess acc =
        descriptor_access(b, ops[0], all.subspan(1, r), all.subspan(1 + r, r), all.subspan(1 + 2 * r, r), op->attrs.ints, op->loc);
    const Type& t = op->result()->type;
    Value* zero = t.is_float() ? b.constant_float(t, 0.0, op->loc) : b.constant_int(t, 0, op->loc);
    Value* v = b.create(OpKind::load, {acc.pointers, acc.mask, zero}, {t}, ints({1, 1, 0, 0, 0}), op->loc)->result();
    ir::replace_all_uses(f.body, op->result(), v);
    ir::erase(op);
  }
  return !todo.empty();
}

bool has_descriptor_loads(const ir::Function& f) {
  bool any = false;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) { any |= op.kind == OpKind::desc_load; });
  return any;
}

}  // namespace tile::transforms

// src/frontend/ops_reduce.cpp — layer: frontend. Reductions and scans (with a combine function
// traced into a region) and dot.
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
/// Shared by reduce and scan: checks inputs, creates the op and traces `combine` into its region.
ir::Op* combine_op(OpKind kind, std::span<node* const> inputs, int axis, bool reverse,
                   const combine_fn& combine, src_loc loc) {
  auto& tr = Trace::current(loc);
  const char* what = kind == OpKind::reduce ? "reduce" : "scan";
  if (inputs.empty()) tr.fail(std::string(what) + " needs at least one input", loc);
  std::vector<Value*> in;
  for (node* n : inputs) {
    if (!n) tr.fail(std::string(what) + " needs tensors, not literals", loc);
    in.push_back(V(n));
  }
  const auto& shape = in[0]->type.shape;
  for (Value* v : in) {
    if (v->type.shape != shape)
      tr.fail(std::string(what) + ": all inputs must have one shape, got " + shape_str(shape) + " and " +
                  shape_str(v->type.shape), loc);
    if (v->type.ptr) tr.fail(std::string(what) + " of pointers is not supported", loc);
  }
  int rank = static_cast<int>(shape.size());
  if (rank == 0) tr.fail(std::string(what) + " needs a tile, got a scalar", loc);
  int ax = axis < 0 ? axis + rank : axis;
  if (ax < 0 || ax >= rank)
    tr.fail(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for a tile of rank " +
                std::to_string(rank), loc);
  std::vector<Type> results;
  for (Value* v : in) {
    if (kind == OpKind::reduce) {
      auto s = shape;
      s.erase(s.begin() + ax);
      results.push_back(v->type.with_shape(s));
    } else {
      results.push_back(v->type);
    }
  }
  ir::Attrs a;
  a.ints = {ax};
  if (kind == OpKind::scan) a.ints.push_back(reverse);
  auto& b = tr.builder();
  ir::Op* op = b.create(kind, in, results, a, loc, 1);
  ir::Block* body = op->region(0);
  std::vector<node*> lhs, rhs;
  for (Value* v : in) lhs.push_back(body->add_arg(v->type.scalar()));
  for (Value* v : in) rhs.push_back(body->add_arg(v->type.scalar()));
  frontend::InsertionGuard guard(b);
  b.set_insertion_end(body);
  std::vector<node*> out = combine(lhs, rhs);
  if (out.size() != in.size())
    tr.fail(std::string(what) + ": the combine function returned " + std::to_string(out.size()) +
                " values for " + std::to_string(in.size()) + " inputs", loc);
  std::vector<Value*> ys;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) tr.fail(std::string(what) + ": the combine function returned an unassigned tensor", loc);
    Value* y = V(out[i]);
    if (y->type != in[i]->type.scalar())
      tr.fail(std::string(what) + ": the combine function must return " + in[i]->type.scalar().str() +
                  " scalars, it returned " + y->type.str(), loc);
    ys.push_back(y);
  }
  b.create(OpKind::yield, ys, {}, {}, loc);
  return op;
}

std::vector<node*> results_of(ir::Op* op) {
  std::vector<node*> r;
  for (auto& v : op->results) r.push_back(v.get());
  return r;
}
}  // namespace

std::vector<node*> reduce(std::span<node* const> inputs, int axis, const combine_fn& combine, src_loc loc) {
  return results_of(combine_op(OpKind::reduce, inputs, axis, false, combine, loc));
}

std::vector<node*> scan(std::span<node* const> inputs, int axis, bool reverse, const combine_fn& combine,
                        src_loc loc) {
  return results_of(combine_op(OpKind::scan, inputs, axis, reverse, combine, loc));
}

node* dot(const operand_data& a, const operand_data& b, const operand_data& acc, precision p, src_loc loc) {
  auto& tr = Trace::current(loc);
  Value* va = frontend::materialize(a, nullptr, loc);
  Value* vb = frontend::materialize(b, nullptr, loc);
  const Type& ta = va->type;
  const Type& tb = vb->type;
  if (ta.ptr || tb.ptr || ta.shape.size() != 2 || tb.shape.size() != 2)
    tr.fail("dot needs two 2-D tiles, got " + ta.str() + " and " + tb.str(), loc);
  if (ta.shape[1] != tb.shape[0])
    tr.fail("dot: inner dimensions differ: a is " + ta.str() + " (K = " + std::to_string(ta.shape[1]) +
                "), b is " + tb.str() + " (K = " + std::to_string(tb.shape[0]) + ")", loc);
  std::int64_t M = ta.shape[0], N = tb.shape[1], Kd = ta.shape[1];
  if (M < 16 || N < 16 || Kd < 16)
    tr.fail("dot needs M, N and K of at least 16, got M = " + std::to_string(M) + ", N = " + std::to_string(N) +
                ", K = " + std::to_string(Kd), loc);
  if (ta.elem != tb.elem)
    tr.fail("dot: both inputs must have one dtype, got " + ta.str() + " and " + tb.str() +
                " (cast one of them)", loc);
  dtype in = ta.elem, out;
  switch (in) {
    case dtype::f16: case dtype::bf16: case dtype::f32: out = dtype::f32; break;
    case dtype::f64: out = dtype::f64; break;
    case dtype::i8: case dtype::u8: out = dtype::i32; break;
    default: tr.fail("dot does not support " + std::string(name(in)) + " inputs (f16, bf16, f32, f64, i8, u8)", loc);
  }
  Type rt{out, false, {M, N}};
  Value* vacc;
  if (acc.present()) {
    vacc = frontend::materialize(acc, &rt, loc);
    if (vacc->type.ptr || vacc->type.elem != out)
      tr.fail("dot: the accumulator must be " + std::string(name(out)) + " for " + std::string(name(in)) +
                  " inputs, got " + vacc->type.str(), loc);
    auto s = frontend::broadcast_shapes(vacc->type.shape, rt.shape, loc, "dot accumulator");
    if (s != rt.shape)
      tr.fail("dot: accumulator of shape " + shape_str(vacc->type.shape) + " does not fit the product's " +
                  shape_str(rt.shape), loc);
    vacc = frontend::broadcast(vacc, rt.shape, loc);
  } else {
    Value* z = is_float(out) ? tr.builder().constant_float(rt.scalar(), 0.0, loc)
                             : tr.builder().constant_int(rt.scalar(), 0, loc);
    vacc = frontend::broadcast(z, rt.shape, loc);
  }
  ir::Attrs at;
  at.ints = {static_cast<std::int64_t>(p)};
  return create1(OpKind::dot, {va, vb, vacc}, rt, loc, at);
}

}  // namespace tile::detail

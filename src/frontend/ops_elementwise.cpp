// src/frontend/ops_elementwise.cpp — layer: frontend. Creation ops (program_id, arange, full,
// literals), conversions and elementwise arithmetic: the checks and the IR they build.
#include "frontend/trace.hpp"

namespace tile::detail {

using frontend::create1;
using frontend::Trace;
using frontend::V;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
void check_axis(int axis, src_loc loc, const char* what) {
  if (axis < 0 || axis > 2)
    Trace::current(loc).fail(std::string(what) + ": axis must be 0, 1 or 2, got " + std::to_string(axis), loc);
}
ir::Attrs ints(std::vector<std::int64_t> v) {
  ir::Attrs a;
  a.ints = std::move(v);
  return a;
}
}  // namespace

node* program_id(int axis, src_loc loc) {
  check_axis(axis, loc, "program_id");
  return create1(OpKind::program_id, {}, Type{dtype::i32, false, {}}, loc, ints({axis}));
}

node* num_programs(int axis, src_loc loc) {
  check_axis(axis, loc, "num_programs");
  return create1(OpKind::num_programs, {}, Type{dtype::i32, false, {}}, loc, ints({axis}));
}

node* arange(std::int64_t start, std::int64_t end, src_loc loc) {
  auto& t = Trace::current(loc);
  if (end <= start)
    t.fail("arange(" + std::to_string(start) + ", " + std::to_string(end) + "): end must be greater than start", loc);
  if (!frontend::is_pow2(end - start))
    t.fail("arange(" + std::to_string(start) + ", " + std::to_string(end) + "): the length " +
               std::to_string(end - start) + " must be a power of two", loc);
  if (start < INT32_MIN || end > static_cast<std::int64_t>(INT32_MAX) + 1)
    t.fail("arange bounds must fit in i32", loc);
  return create1(OpKind::arange, {}, Type{dtype::i32, false, {end - start}}, loc, ints({start, end}));
}

node* literal(const operand_data& value, const dtype* t, src_loc loc) {
  if (!t) return frontend::materialize(value, nullptr, loc);
  Type like{*t, false, {}};
  Value* v = frontend::materialize(value, &like, loc);
  return frontend::convert(v, *t, loc);
}

node* full(std::span<const std::int64_t> shape, dtype t, const operand_data& value, src_loc loc) {
  std::vector<std::int64_t> s(shape.begin(), shape.end());
  frontend::check_shape(s, loc, "full");
  Value* v = V(literal(value, &t, loc));
  if (!v->type.is_scalar())
    Trace::current(loc).fail("full: the fill value must be a scalar, got " + v->type.str(), loc);
  return frontend::broadcast(v, s, loc);
}

node* cast(const operand_data& x, dtype to, bool bitcast, src_loc loc) {
  Value* v = frontend::materialize(x, nullptr, loc);
  if (bitcast) {
    if (v->type.ptr || bits(v->type.elem) != bits(to) || to == dtype::i1 || v->type.elem == dtype::i1)
      Trace::current(loc).fail("bitcast from " + v->type.str() + " to " + std::string(name(to)) +
                                   " needs element types of the same width", loc);
    if (v->type.elem == to) return v;
    return create1(OpKind::bitcast, {v}, v->type.with_elem(to), loc);
  }
  if (v->type.ptr) {
    if (to != dtype::i64 && to != dtype::u64)
      Trace::current(loc).fail("a pointer converts only to i64 or u64, not " + std::string(name(to)), loc);
    return create1(OpKind::cast, {v}, v->type.with_elem(to), loc);
  }
  return frontend::convert(v, to, loc);
}

node* pointer_cast(const operand_data& x, dtype pointee, src_loc loc) {
  Value* v = frontend::materialize(x, nullptr, loc);
  if (v->type.ptr) {
    if (v->type.elem == pointee) return v;
    return create1(OpKind::bitcast, {v}, Type{pointee, true, v->type.shape}, loc);
  }
  if (v->type.elem != dtype::i64 && v->type.elem != dtype::u64)
    Trace::current(loc).fail("pointer_cast needs a pointer or an i64/u64 address, got " + v->type.str(), loc);
  return create1(OpKind::cast, {v}, Type{pointee, true, v->type.shape}, loc);
}

namespace {
const char* binop_name(binop op) {
  constexpr const char* n[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||",
                               "minimum", "maximum", "umulhi", "fast_div", "==", "!=", "<", "<=", ">", ">="};
  return n[static_cast<int>(op)];
}

Value* pointer_arith(binop op, const operand_data& a, const operand_data& b, src_loc loc) {
  auto& tr = Trace::current(loc);
  const Type* ta = frontend::value_type(a);
  const Type* tb = frontend::value_type(b);
  bool a_ptr = ta && ta->ptr;
  Value* p = V(a_ptr ? a.n : b.n);
  const operand_data& off = a_ptr ? b : a;
  if (op != binop::add && !(op == binop::sub && a_ptr))
    tr.fail(std::string("invalid operands to ") + binop_name(op) + ": " + (ta ? ta->str() : "literal") +
                " and " + (tb ? tb->str() : "literal") + " (pointers support + and - of integers)", loc);
  Type i32{dtype::i32, false, {}};
  Value* o = frontend::materialize(off, frontend::value_type(off) ? nullptr : &i32, loc);
  if (o->type.ptr || !o->type.is_int())
    tr.fail(std::string("pointer offsets must be integers, got ") + o->type.str(), loc);
  if (op == binop::sub) o = create1(OpKind::neg, {o}, o->type, loc);
  auto shape = frontend::broadcast_shapes(p->type.shape, o->type.shape, loc, "pointer arithmetic");
  p = frontend::broadcast(p, shape, loc);
  o = frontend::broadcast(o, shape, loc);
  return create1(OpKind::addptr, {p, o}, p->type, loc);
}

Value* compare_pointers(binop op, const operand_data& a, const operand_data& b, src_loc loc) {
  Value* va = frontend::require_pointer(a, "pointer comparison", loc);
  Value* vb = frontend::require_pointer(b, "pointer comparison", loc);
  auto shape = frontend::broadcast_shapes(va->type.shape, vb->type.shape, loc, "comparison");
  va = frontend::broadcast(va, shape, loc);
  vb = frontend::broadcast(vb, shape, loc);
  ir::Attrs at;
  at.ints = {static_cast<std::int64_t>(op) - static_cast<std::int64_t>(binop::eq)};
  return create1(OpKind::cmp, {va, vb}, Type{dtype::i1, false, shape}, loc, at);
}
}  // namespace

node* binary(binop op, const operand_data& a, const operand_data& b, src_loc loc) {
  auto& tr = Trace::current(loc);
  const Type* ta = frontend::value_type(a);
  const Type* tb = frontend::value_type(b);
  bool is_cmp = op >= binop::eq;
  if ((ta && ta->ptr) || (tb && tb->ptr)) {
    if (is_cmp) return compare_pointers(op, a, b, loc);
    return pointer_arith(op, a, b, loc);
  }
  if (op == binop::logical_and || op == binop::logical_or) {
    Value* va = frontend::to_bool(frontend::materialize(a, nullptr, loc), loc);
    Value* vb = frontend::to_bool(frontend::materialize(b, nullptr, loc), loc);
    auto shape = frontend::broadcast_shapes(va->type.shape, vb->type.shape, loc, binop_name(op));
    va = frontend::broadcast(va, shape, loc);
    vb = frontend::broadcast(vb, shape, loc);
    return create1(op == binop::logical_and ? OpKind::bit_and : OpKind::bit_or, {va, vb}, va->type, loc);
  }
  auto [va, vb] = frontend::binary_operands(a, b, loc, binop_name(op));
  const Type& t = va->type;
  if (is_cmp) {
    ir::Attrs at;
    at.ints = {static_cast<std::int64_t>(op) - static_cast<std::int64_t>(binop::eq)};
    return create1(OpKind::cmp, {va, vb}, t.with_elem(dtype::i1), loc, at);
  }
  bool int_only = op == binop::bit_and || op == binop::bit_or || op == binop::bit_xor ||
                  op == binop::shl || op == binop::shr || op == binop::umulhi;
  if (int_only && t.is_float())
    tr.fail(std::string("operator ") + binop_name(op) + " needs integer operands, got " + t.str(), loc);
  if (op == binop::umulhi && bits(t.elem) < 32)
    tr.fail("umulhi needs 32- or 64-bit integers, got " + t.str(), loc);
  OpKind k{};
  switch (op) {
    case binop::add: k = OpKind::add; break;
    case binop::sub: k = OpKind::sub; break;
    case binop::mul: k = OpKind::mul; break;
    case binop::div: k = OpKind::div; break;
    case binop::rem: k = OpKind::rem; break;
    case binop::bit_and: k = OpKind::bit_and; break;
    case binop::bit_or: k = OpKind::bit_or; break;
    case binop::bit_xor: k = OpKind::bit_xor; break;
    case binop::shl: k = OpKind::shl; break;
    case binop::shr: k = OpKind::shr; break;
    case binop::minimum: k = OpKind::minimum; break;
    case binop::maximum: k = OpKind::maximum; break;
    case binop::umulhi: k = OpKind::umulhi; break;
    case binop::div_approx: {
      if (!t.is_float()) tr.fail("tl::fast_div needs floating-point operands, got " + t.str(), loc);
      ir::Attrs at;
      at.ints = {1};  // approximate (ops.def)
      return create1(OpKind::div, {va, vb}, t, loc, at);
    }
    default: tr.fail("unhandled binary operator", loc);
  }
  return create1(k, {va, vb}, t, loc);
}

node* unary(unop op, const operand_data& a, src_loc loc) {
  auto& tr = Trace::current(loc);
  Value* v = frontend::materialize(a, nullptr, loc);
  if (v->type.ptr) tr.fail("invalid operand to a unary operation: " + v->type.str(), loc);
  OpKind k{};
  bool float_only = true;
  switch (op) {
    case unop::neg: k = OpKind::neg; float_only = false; break;
    case unop::bit_not:
      if (v->type.is_float()) tr.fail("operator ~ needs an integer operand, got " + v->type.str(), loc);
      return create1(OpKind::bit_not, {v}, v->type, loc);
    case unop::logical_not: {
      Value* b = frontend::to_bool(v, loc);
      return create1(OpKind::bit_not, {b}, b->type, loc);
    }
    case unop::exp: k = OpKind::exp; break;
    case unop::exp2: k = OpKind::exp2; break;
    case unop::log: k = OpKind::log; break;
    case unop::log2: k = OpKind::log2; break;
    case unop::sqrt: k = OpKind::sqrt; break;
    case unop::rsqrt: k = OpKind::rsqrt; break;
    case unop::sin: k = OpKind::sin; break;
    case unop::cos: k = OpKind::cos; break;
    case unop::abs: k = OpKind::abs; float_only = false; break;
    case unop::floor: k = OpKind::floor; break;
    case unop::ceil: k = OpKind::ceil; break;
    case unop::erf: k = OpKind::erf; break;
    case unop::sqrt_approx: k = OpKind::sqrt; break;
    case unop::exp_approx: k = OpKind::exp; break;
  }
  if (float_only && !v->type.is_float()) {
    if ((op == unop::floor || op == unop::ceil)) return v;  // integers are already whole
    v = frontend::convert(v, dtype::f32, loc);                // Triton computes math on ints in f32
  }
  if (op == unop::sqrt_approx || op == unop::exp_approx) {
    ir::Attrs at;
    at.ints = {1};  // approximate (ops.def)
    return create1(k, {v}, v->type, loc, at);
  }
  return create1(k, {v}, v->type, loc);
}

node* select(const operand_data& c, const operand_data& a, const operand_data& b, src_loc loc) {
  Value* vc = frontend::to_bool(frontend::materialize(c, nullptr, loc), loc);
  const Type* ta = frontend::value_type(a);
  const Type* tb = frontend::value_type(b);
  Value* va;
  Value* vb;
  if ((ta && ta->ptr) || (tb && tb->ptr)) {
    va = frontend::require_pointer(a, "where", loc);
    vb = frontend::require_pointer(b, "where", loc);
    if (va->type.elem != vb->type.elem)
      Trace::current(loc).fail("where: pointers to different types " + va->type.str() + " and " + vb->type.str(), loc);
    auto s = frontend::broadcast_shapes(va->type.shape, vb->type.shape, loc, "where");
    va = frontend::broadcast(va, s, loc);
    vb = frontend::broadcast(vb, s, loc);
  } else {
    std::tie(va, vb) = frontend::binary_operands(a, b, loc, "where");
  }
  auto shape = frontend::broadcast_shapes(vc->type.shape, va->type.shape, loc, "where");
  vc = frontend::broadcast(vc, shape, loc);
  va = frontend::broadcast(va, shape, loc);
  vb = frontend::broadcast(vb, shape, loc);
  return create1(OpKind::select, {vc, va, vb}, va->type, loc);
}

node* fma(const operand_data& a, const operand_data& b, const operand_data& c, src_loc loc) {
  auto [va, vb] = frontend::binary_operands(a, b, loc, "fma");
  operand_data ad;
  ad.k = operand_data::kind::value;
  ad.n = va;
  auto [vab, vc] = frontend::binary_operands(ad, c, loc, "fma");
  va = frontend::convert(va, vab->type.elem, loc);
  vb = frontend::convert(vb, vab->type.elem, loc);
  if (!vab->type.is_float()) Trace::current(loc).fail("fma needs floating-point operands, got " + vab->type.str(), loc);
  auto shape = vc->type.shape;
  va = frontend::broadcast(va, shape, loc);
  vb = frontend::broadcast(vb, shape, loc);
  return create1(OpKind::fma, {va, vb, vc}, vc->type, loc);
}

node* hint(node* x, hint_kind k, std::span<const std::int64_t> values, src_loc loc) {
  if (!x) Trace::current(loc).fail("hints apply to tensors, not literals", loc);
  Value* v = V(x);
  if (values.empty() || values[0] <= 0)
    Trace::current(loc).fail("hint values must be positive", loc);
  if (v->type.is_float()) Trace::current(loc).fail("hints apply to integers and pointers, got " + v->type.str(), loc);
  ir::Attrs a;
  a.ints = {static_cast<std::int64_t>(k)};
  a.ints.insert(a.ints.end(), values.begin(), values.end());
  return create1(OpKind::hint, {v}, v->type, loc, a);
}

}  // namespace tile::detail

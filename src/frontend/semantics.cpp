// src/frontend/semantics.cpp — layer: frontend. Triton's typing rules in one place: literal
// materialization (weak typing), dtype promotion, broadcasting and shape checks.
#include <limits>

#include "frontend/trace.hpp"

namespace tile::frontend {

using K = detail::operand_data::kind;

bool is_pow2(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Value* create1(ir::OpKind k, std::vector<Value*> operands, Type result, src_loc loc, ir::Attrs attrs) {
  auto& b = Trace::current(loc).builder();
  return b.create(k, std::move(operands), {std::move(result)}, std::move(attrs), loc)->result();
}

dtype promote(dtype a, dtype b) {
  if (a == b) return a;
  if (a == dtype::f64 || b == dtype::f64) return dtype::f64;
  if (a == dtype::f32 || b == dtype::f32) return dtype::f32;
  bool af = is_float(a), bf = is_float(b);
  if (af && bf) return dtype::f32;  // f16 with bf16
  if (af) return a;
  if (bf) return b;
  // integers: C's usual arithmetic conversions, as Triton applies them
  int ar = bits(a), br = bits(b);
  bool au = is_unsigned(a), bu = is_unsigned(b);
  if (au == bu) return ar > br ? a : b;
  if (au) return ar >= br ? a : b;
  return br >= ar ? b : a;
}

const Type* value_type(const detail::operand_data& o) {
  return o.k == K::value ? &V(o.n)->type : nullptr;
}

namespace {
bool fits(std::int64_t v, dtype t) {
  if (t == dtype::i1) return v == 0 || v == 1;
  int w = bits(t);
  if (is_unsigned(t)) return v >= 0 && (w == 64 || v <= (std::int64_t{1} << w) - 1);
  if (w == 64) return true;
  return v >= -(std::int64_t{1} << (w - 1)) && v <= (std::int64_t{1} << (w - 1)) - 1;
}
}  // namespace

Value* materialize(const detail::operand_data& o, const Type* like, src_loc loc) {
  switch (o.k) {
    case K::none:
      Trace::current(loc).fail("missing operand", loc);
    case K::value:
      if (!o.n) Trace::current(loc).fail("use of a tensor that was never assigned", loc);
      return V(o.n);
    case K::int_lit: {
      dtype t = (o.i >= std::numeric_limits<std::int32_t>::min() && o.i <= std::numeric_limits<std::int32_t>::max())
                    ? dtype::i32 : dtype::i64;
      if (like && !like->ptr && like->elem != dtype::i1) {
        if (is_float(like->elem)) {
          auto& b = Trace::current(loc).builder();
          return b.constant_float(Type{like->elem, false, {}}, static_cast<double>(o.i), loc);
        }
        if (!fits(o.i, like->elem))
          Trace::current(loc).fail("integer literal " + std::to_string(o.i) + " does not fit in " +
                                   std::string(name(like->elem)), loc);
        t = like->elem;
      }
      return Trace::current(loc).builder().constant_int(Type{t, false, {}}, o.i, loc);
    }
    case K::float_lit: {
      dtype t = dtype::f32;
      if (like && like->is_float()) t = like->elem;
      return Trace::current(loc).builder().constant_float(Type{t, false, {}}, o.f, loc);
    }
    case K::bool_lit: {
      dtype t = dtype::i1;
      if (like && like->is_int()) t = like->elem;
      if (like && like->is_float())
        return Trace::current(loc).builder().constant_float(Type{like->elem, false, {}}, static_cast<double>(o.i), loc);
      return Trace::current(loc).builder().constant_int(Type{t, false, {}}, o.i, loc);
    }
  }
  Trace::current(loc).fail("bad operand", loc);
}

Value* convert(Value* v, dtype t, src_loc loc) {
  if (v->type.ptr) Trace::current(loc).fail("cannot convert a pointer " + v->type.str() + " to " + std::string(name(t)), loc);
  if (v->type.elem == t) return v;
  return create1(ir::OpKind::cast, {v}, v->type.with_elem(t), loc);
}

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t>& a,
                                           const std::vector<std::int64_t>& b, src_loc loc,
                                           const char* what) {
  std::size_t n = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      Trace::current(loc).fail(std::string("shape mismatch in ") + what + ": cannot broadcast " +
                                   shape_str(a) + " with " + shape_str(b),
                               loc);
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Value* broadcast(Value* v, const std::vector<std::int64_t>& shape, src_loc loc) {
  const auto& s = v->type.shape;
  if (s == shape) return v;
  if (s.empty()) return create1(ir::OpKind::splat, {v}, v->type.with_shape(shape), loc);
  if (s.size() > shape.size())
    Trace::current(loc).fail("cannot broadcast " + shape_str(s) + " to " + shape_str(shape), loc);
  Value* cur = v;
  if (s.size() < shape.size()) {  // prepend axes of extent 1
    std::vector<std::int64_t> r(shape.size() - s.size(), 1);
    r.insert(r.end(), s.begin(), s.end());
    cur = create1(ir::OpKind::reshape, {cur}, v->type.with_shape(r), loc);
  }
  const auto& cs = cur->type.shape;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (cs[i] != shape[i] && cs[i] != 1)
      Trace::current(loc).fail("cannot broadcast " + shape_str(s) + " to " + shape_str(shape), loc);
  if (cs == shape) return cur;
  return create1(ir::OpKind::broadcast, {cur}, cur->type.with_shape(shape), loc);
}

std::pair<Value*, Value*> binary_operands(const detail::operand_data& a,
                                          const detail::operand_data& b, src_loc loc,
                                          const char* what) {
  const Type* ta = value_type(a);
  const Type* tb = value_type(b);
  Value* va;
  Value* vb;
  if (ta && tb) {
    va = V(a.n);
    vb = V(b.n);
  } else if (ta) {
    va = V(a.n);
    vb = materialize(b, ta, loc);
  } else if (tb) {
    vb = V(b.n);
    va = materialize(a, tb, loc);
  } else {
    va = materialize(a, nullptr, loc);
    vb = materialize(b, nullptr, loc);
  }
  if (va->type.ptr || vb->type.ptr)
    Trace::current(loc).fail(std::string("invalid operands to ") + what + ": " + va->type.str() +
                                 " and " + vb->type.str(), loc);
  dtype t = promote(va->type.elem, vb->type.elem);
  va = convert(va, t, loc);
  vb = convert(vb, t, loc);
  auto shape = broadcast_shapes(va->type.shape, vb->type.shape, loc, what);
  return {broadcast(va, shape, loc), broadcast(vb, shape, loc)};
}

Value* require_pointer(const detail::operand_data& o, const char* op, src_loc loc) {
  if (o.k != K::value)
    Trace::current(loc).fail(std::string(op) + " expects a pointer or a tile of pointers, got a literal", loc);
  Value* v = materialize(o, nullptr, loc);
  if (!v->type.ptr)
    Trace::current(loc).fail(std::string(op) + " expects a pointer or a tile of pointers, got " + v->type.str(), loc);
  return v;
}

void check_shape(const std::vector<std::int64_t>& shape, src_loc loc, const char* what) {
  std::int64_t n = 1;
  for (auto e : shape) {
    if (!is_pow2(e))
      Trace::current(loc).fail(std::string(what) + ": tile shapes must have power-of-two extents, got " +
                                   shape_str(shape), loc);
    n *= e;
  }
  if (n > (1 << 20))
    Trace::current(loc).fail(std::string(what) + ": a tile may hold at most 1048576 elements, got " +
                                 std::to_string(n), loc);
}

Value* to_bool(Value* v, src_loc loc) {
  if (v->type.ptr) Trace::current(loc).fail("expected a boolean (i1), got " + v->type.str(), loc);
  if (v->type.elem == dtype::i1) return v;
  Value* zero = v->type.is_float()
                    ? Trace::current(loc).builder().constant_float(v->type.scalar(), 0.0, loc)
                    : Trace::current(loc).builder().constant_int(v->type.scalar(), 0, loc);
  zero = broadcast(zero, v->type.shape, loc);
  ir::Attrs a;
  a.ints = {static_cast<std::int64_t>(ir::CmpPred::ne)};
  return create1(ir::OpKind::cmp, {v, zero}, v->type.with_elem(dtype::i1), loc, a);
}

}  // namespace tile::frontend

// src/transforms/constant_fold.cpp — layer: transforms. Constant folding and integer identities
// with the interpreter's exact semantics (see passes.hpp for the contract).
//
// One walk in program order: each op's operands are first redirected to the values that
// replaced them, then the op is folded if it can be. A folded op's result gets a replacement —
// a new `constant` inserted just before the op, or an existing value — and the op itself stays,
// unused, for dce. Since definitions precede uses in the walk, one pass folds whole chains.
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::OpKind;
using ir::Type;
using ir::Value;

// ---- integer semantics: two's complement at the dtype's width ------------------------------------
std::uint64_t width_mask(int w) { return w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w) - 1; }

/// The canonical int64 representation of `v` as a value of `t`: sign-extended for signed types,
/// zero-extended for unsigned ones and i1.
std::int64_t wrap(std::uint64_t v, dtype t) {
  int w = bits(t);
  std::uint64_t u = v & width_mask(w);
  if (is_signed(t) && w < 64 && ((u >> (w - 1)) & 1)) u |= ~width_mask(w);
  return static_cast<std::int64_t>(u);
}
std::int64_t wrap(std::int64_t v, dtype t) { return wrap(static_cast<std::uint64_t>(v), t); }

std::optional<std::int64_t> int_binary(OpKind k, dtype t, std::int64_t a, std::int64_t b) {
  const bool sgn = is_signed(t);
  const int w = bits(t);
  const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  switch (k) {
    case OpKind::add: return wrap(ua + ub, t);
    case OpKind::sub: return wrap(ua - ub, t);
    case OpKind::mul: return wrap(ua * ub, t);
    case OpKind::div:
      if (b == 0) return 0;
      if (sgn) return b == -1 ? wrap(std::uint64_t{0} - ua, t) : wrap(a / b, t);  // INT_MIN / -1 wraps
      return wrap(ua / ub, t);
    case OpKind::rem:
      if (b == 0) return 0;
      if (sgn) return b == -1 ? 0 : wrap(a % b, t);
      return wrap(ua % ub, t);
    case OpKind::bit_and: return wrap(ua & ub, t);
    case OpKind::bit_or: return wrap(ua | ub, t);
    case OpKind::bit_xor: return wrap(ua ^ ub, t);
    case OpKind::shl:
      if (sgn && b < 0) return std::nullopt;
      return ub >= static_cast<std::uint64_t>(w) ? 0 : wrap(ua << ub, t);
    case OpKind::shr:
      if (sgn && b < 0) return std::nullopt;
      if (ub >= static_cast<std::uint64_t>(w)) return sgn && a < 0 ? -1 : 0;
      return sgn ? wrap(a >> ub, t) : wrap(ua >> ub, t);
    case OpKind::minimum: return sgn ? std::min(a, b) : static_cast<std::int64_t>(std::min(ua, ub));
    case OpKind::maximum: return sgn ? std::max(a, b) : static_cast<std::int64_t>(std::max(ua, ub));
    default: return std::nullopt;
  }
}

template <class T>
bool compare(ir::CmpPred p, T a, T b) {
  switch (p) {
    case ir::CmpPred::eq: return a == b;
    case ir::CmpPred::ne: return a != b;
    case ir::CmpPred::lt: return a < b;
    case ir::CmpPred::le: return a <= b;
    case ir::CmpPred::gt: return a > b;
    case ir::CmpPred::ge: return a >= b;
  }
  return false;
}

/// float -> int: truncation toward zero, NaN -> 0, saturation at the type's bounds.
std::int64_t float_to_int(double x, dtype t) {
  if (std::isnan(x)) return 0;
  const double v = std::trunc(x);
  const int w = bits(t);
  if (is_signed(t)) {
    const double limit = std::ldexp(1.0, w - 1);  // 2^(w-1), exact
    if (v >= limit) return w == 64 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (w - 1)) - 1;
    if (v <= -limit) return w == 64 ? std::numeric_limits<std::int64_t>::min() : -(std::int64_t{1} << (w - 1));
    return static_cast<std::int64_t>(v);
  }
  if (v <= 0.0) return 0;
  if (v >= std::ldexp(1.0, w)) return wrap(~std::uint64_t{0}, t);
  return wrap(static_cast<std::uint64_t>(v), t);
}

bool foldable_float(dtype t) { return t == dtype::f32 || t == dtype::f64; }

/// double -> float with IEEE round-to-nearest, overflow included (a plain cast of an
/// out-of-range double is undefined in C++; the hardware gives what this spells out).
float to_f32(double v) {
  constexpr double max = std::numeric_limits<float>::max();
  constexpr double halfway = 0x1.ffffffp127;  // max + half an ulp: from here on, infinity
  if (std::isfinite(v) && std::fabs(v) > max) {
    float r = std::fabs(v) >= halfway ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
    return std::signbit(v) ? -r : r;
  }
  return static_cast<float>(v);
}

/// A double holding exactly the value of type `t` (f32 values are rounded to float first).
double as_float(double v, dtype t) { return t == dtype::f32 ? static_cast<double>(to_f32(v)) : v; }

// ---- the pass ---------------------------------------------------------------------------------
class Folder {
 public:
  bool run(ir::Function& f) {
    block(f.body);
    return changed_;
  }

 private:
  std::unordered_map<Value*, Value*> subst_;
  bool changed_ = false;
  ir::Block* block_ = nullptr;
  std::list<std::unique_ptr<ir::Op>>::iterator at_;

  static const ir::Op* const_def(const Value* v) {
    return v && v->def && v->def->kind == OpKind::constant ? v->def : nullptr;
  }
  static bool is_int_const(const Value* v) {
    const ir::Op* d = const_def(v);
    return d && v->type.is_int() && !d->attrs.ints.empty();
  }
  static std::int64_t int_of(const Value* v) { return wrap(v->def->attrs.ints[0], v->type.elem); }
  static bool is_float_const(const Value* v) { return const_def(v) && v->type.is_float() && foldable_float(v->type.elem); }
  static double float_of(const Value* v) { return as_float(v->def->attrs.f, v->type.elem); }
  static bool int_equals(const Value* v, std::int64_t c) { return is_int_const(v) && int_of(v) == c; }

  Value* make_int(const ir::Op& op, std::int64_t v) {
    return ir::Builder(block_, at_).constant_int(op.results[0]->type, v, op.loc);
  }
  Value* make_float(const ir::Op& op, double v) {
    return ir::Builder(block_, at_).constant_float(op.results[0]->type, v, op.loc);
  }

  void block(ir::Block& b) {
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      ir::Op& op = **it;
      for (auto& o : op.operands)
        if (auto s = subst_.find(o); s != subst_.end()) o = s->second;
      if (op.regions.empty() && op.results.size() == 1 && ir::is_pure(op.kind)) {
        block_ = &b;
        at_ = it;
        if (Value* r = fold(op)) {
          subst_[op.result(0)] = r;
          changed_ = true;
        }
      }
      for (auto& r : op.regions) block(*r);
    }
  }

  Value* fold(const ir::Op& op) {
    const Type& rt = op.results[0]->type;
    const auto& in = op.operands;
    switch (op.kind) {
      case OpKind::splat:
      case OpKind::broadcast:
      case OpKind::reshape:
      case OpKind::expand_dims:
      case OpKind::permute:
        if (const ir::Op* d = const_def(in[0]))
          return ir::Builder(block_, at_).create(OpKind::constant, {}, {rt}, d->attrs, op.loc)->result();
        return nullptr;
      case OpKind::select:
        if (is_int_const(in[0])) return int_of(in[0]) ? in[1] : in[2];
        return in[1] == in[2] ? in[1] : nullptr;
      case OpKind::cast:
      case OpKind::bitcast:
        return conversion(op);
      case OpKind::cmp:
        return comparison(op);
      default:
        break;
    }
    if (rt.is_int()) return integer(op);
    if (rt.is_float() && foldable_float(rt.elem)) return floating(op);
    return nullptr;
  }

  Value* integer(const ir::Op& op) {
    const dtype t = op.results[0]->type.elem;
    const auto& in = op.operands;
    if (in.size() == 1) {
      if (!is_int_const(in[0])) return nullptr;
      const auto a = static_cast<std::uint64_t>(int_of(in[0]));
      if (op.kind == OpKind::neg) return make_int(op, wrap(std::uint64_t{0} - a, t));
      if (op.kind == OpKind::bit_not) return make_int(op, wrap(~a, t));
      return nullptr;
    }
    if (in.size() != 2) return nullptr;
    Value* a = in[0];
    Value* b = in[1];
    if (is_int_const(a) && is_int_const(b)) {
      auto r = int_binary(op.kind, t, int_of(a), int_of(b));
      return r ? make_int(op, *r) : nullptr;
    }
    switch (op.kind) {  // identities; the constant operand has the result's type
      case OpKind::add:
        return int_equals(b, 0) ? a : int_equals(a, 0) ? b : nullptr;
      case OpKind::sub:
      case OpKind::shl:
      case OpKind::shr:
        return int_equals(b, 0) ? a : nullptr;
      case OpKind::mul:
        if (int_equals(a, 0)) return a;
        if (int_equals(b, 0)) return b;
        return int_equals(b, 1) ? a : int_equals(a, 1) ? b : nullptr;
      case OpKind::bit_and:
        return int_equals(a, 0) ? a : int_equals(b, 0) ? b : nullptr;
      case OpKind::bit_or:
      case OpKind::bit_xor:
        return int_equals(b, 0) ? a : int_equals(a, 0) ? b : nullptr;
      default:
        return nullptr;
    }
  }

  Value* floating(const ir::Op& op) {
    const bool f32 = op.results[0]->type.elem == dtype::f32;
    const auto& in = op.operands;
    for (Value* v : in)
      if (!is_float_const(v)) return nullptr;
    if (in.size() == 1 && op.kind == OpKind::neg)
      return make_float(op, -float_of(in[0]));  // exact in float and in double
    if (in.size() != 2) return nullptr;
    auto apply = [&](auto x, auto y) -> std::optional<double> {
      switch (op.kind) {
        case OpKind::add: return static_cast<double>(x + y);
        case OpKind::sub: return static_cast<double>(x - y);
        case OpKind::mul: return static_cast<double>(x * y);
        case OpKind::div: return static_cast<double>(x / y);
        default: return std::nullopt;
      }
    };
    std::optional<double> r = f32 ? apply(to_f32(float_of(in[0])), to_f32(float_of(in[1])))
                                   : apply(float_of(in[0]), float_of(in[1]));
    return r ? make_float(op, *r) : nullptr;
  }

  Value* comparison(const ir::Op& op) {
    Value* a = op.operands[0];
    Value* b = op.operands[1];
    if (op.attrs.ints.empty()) return nullptr;
    auto p = static_cast<ir::CmpPred>(op.attrs.ints[0]);
    if (is_int_const(a) && is_int_const(b)) {
      bool r = is_signed(a->type.elem)
                   ? compare(p, int_of(a), int_of(b))
                   : compare(p, static_cast<std::uint64_t>(int_of(a)), static_cast<std::uint64_t>(int_of(b)));
      return make_int(op, r);
    }
    if (is_float_const(a) && is_float_const(b)) return make_int(op, compare(p, float_of(a), float_of(b)));
    return nullptr;
  }

  Value* conversion(const ir::Op& op) {
    Value* x = op.operands[0];
    const Type& from = x->type;
    const Type& to = op.results[0]->type;
    if (from == to) return x;
    if (from.ptr || to.ptr) return nullptr;
    if (op.kind == OpKind::bitcast) {
      if (is_int_const(x) && to.is_int()) return make_int(op, wrap(int_of(x), to.elem));
      return nullptr;
    }
    if (is_int_const(x)) {
      std::int64_t v = int_of(x);  // extended by the source's signedness
      if (to.elem == dtype::i1) return make_int(op, v != 0);
      if (to.is_int()) return make_int(op, wrap(v, to.elem));
      if (!foldable_float(to.elem)) return nullptr;
      const bool sgn = is_signed(from.elem);
      const auto u = static_cast<std::uint64_t>(v);
      if (to.elem == dtype::f32) return make_float(op, sgn ? static_cast<float>(v) : static_cast<float>(u));
      return make_float(op, sgn ? static_cast<double>(v) : static_cast<double>(u));
    }
    if (is_float_const(x)) {
      double v = float_of(x);
      if (to.is_int() && to.elem != dtype::i1) return make_int(op, float_to_int(v, to.elem));
      if (foldable_float(to.elem)) return make_float(op, as_float(v, to.elem));
    }
    return nullptr;
  }
};

class ConstantFold final : public Pass {
 public:
  std::string_view name() const override { return "constant_fold"; }
  bool run(ir::Function& f) override { return Folder().run(f); }
};

}  // namespace

std::unique_ptr<Pass> make_constant_fold() { return std::make_unique<ConstantFold>(); }

}  // namespace tile::transforms

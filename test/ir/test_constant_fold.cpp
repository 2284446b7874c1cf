// test/ir/test_constant_fold.cpp — constant_fold: every folded op class with the interpreter's
// semantics (wraparound, division by zero, shifts past the width, unsigned comparisons,
// saturating float->int casts, f32 computed in float), splat constants, integer identities,
// and what must never be folded.
#include <cmath>
#include <limits>
#include <optional>

#include "ir_test.hpp"
#include "transforms/passes.hpp"

using namespace irt;
using tile::transforms::make_constant_fold;

namespace {

constexpr std::int64_t I32_MIN = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t I32_MAX = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t I64_MIN = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t I64_MAX = std::numeric_limits<std::int64_t>::max();

/// Build a value with `build`, keep it alive through a print, fold, verify; returns what the
/// print sees afterwards.
template <class Build>
Value* fold(K& k, Build&& build) {
  Value* v = build(k);
  Op* s = k.sink({v});
  k.ret();
  run_pass(make_constant_fold(), k.f());
  return s->operands[0];
}

const Op* const_op(const Value* v) { return v->def && v->def->kind == OpKind::constant ? v->def : nullptr; }

/// The folded integer, or nothing when the value is not a constant.
std::optional<std::int64_t> as_int(const Value* v) {
  const Op* c = const_op(v);
  if (!c || c->attrs.ints.empty()) return std::nullopt;
  return c->attrs.ints[0];
}
std::optional<double> as_float(const Value* v) {
  const Op* c = const_op(v);
  if (!c) return std::nullopt;
  return c->attrs.f;
}

/// `a op b` on constants of type `t` (result type `rt`, or `t`).
std::optional<std::int64_t> bin(OpKind op, dtype t, std::int64_t a, std::int64_t b) {
  K k;
  Value* r = fold(k, [&](K& kk) { return kk.v(op, {kk.ci(T(t), a), kk.ci(T(t), b)}, T(t)); });
  if (r->type != T(t)) return std::nullopt;
  return as_int(r);
}
std::optional<std::int64_t> cmp(dtype t, CmpPred p, std::int64_t a, std::int64_t b) {
  K k;
  Value* r = fold(k, [&](K& kk) {
    return kk.v(OpKind::cmp, {kk.ci(T(t), a), kk.ci(T(t), b)}, T(dtype::i1), A({static_cast<std::int64_t>(p)}));
  });
  return as_int(r);
}
std::optional<std::int64_t> fcmp(dtype t, CmpPred p, double a, double b) {
  K k;
  Value* r = fold(k, [&](K& kk) {
    return kk.v(OpKind::cmp, {kk.cf(T(t), a), kk.cf(T(t), b)}, T(dtype::i1), A({static_cast<std::int64_t>(p)}));
  });
  return as_int(r);
}
std::optional<std::int64_t> un(OpKind op, dtype t, std::int64_t a) {
  K k;
  return as_int(fold(k, [&](K& kk) { return kk.v(op, {kk.ci(T(t), a)}, T(t)); }));
}
std::optional<double> fbin(OpKind op, dtype t, double a, double b) {
  K k;
  return as_float(fold(k, [&](K& kk) { return kk.v(op, {kk.cf(T(t), a), kk.cf(T(t), b)}, T(t)); }));
}
/// cast of an integer constant of `from` to `to`.
Value* icast(K& k, dtype from, std::int64_t v, dtype to, OpKind kind = OpKind::cast) {
  return fold(k, [&](K& kk) { return kk.v(kind, {kk.ci(T(from), v)}, T(to)); });
}
Value* fcast(K& k, dtype from, double v, dtype to) {
  return fold(k, [&](K& kk) { return kk.v(OpKind::cast, {kk.cf(T(from), v)}, T(to)); });
}
std::optional<std::int64_t> icast_i(dtype from, std::int64_t v, dtype to, OpKind kind = OpKind::cast) {
  K k;
  return as_int(icast(k, from, v, to, kind));
}
std::optional<std::int64_t> fcast_i(dtype from, double v, dtype to) {
  K k;
  return as_int(fcast(k, from, v, to));
}

}  // namespace

TEST_CASE("fold: integer arithmetic wraps at the width") {
  CHECK(bin(OpKind::add, dtype::i8, 100, 100) == -56);
  CHECK(bin(OpKind::add, dtype::u8, 200, 100) == 44);
  CHECK(bin(OpKind::mul, dtype::i8, 16, 16) == 0);
  CHECK(bin(OpKind::mul, dtype::i16, 300, 300) == static_cast<std::int16_t>(90000));
  CHECK(bin(OpKind::sub, dtype::i32, I32_MIN, 1) == I32_MAX);
  CHECK(bin(OpKind::sub, dtype::u32, 0, 1) == 4294967295);
  CHECK(bin(OpKind::add, dtype::i64, I64_MAX, 1) == I64_MIN);
  CHECK(bin(OpKind::sub, dtype::u64, 0, 1) == -1);  // u64 max, as its bit pattern
  CHECK(bin(OpKind::add, dtype::i32, 2, 3) == 5);
  CHECK(un(OpKind::neg, dtype::i8, -128) == -128);
  CHECK(un(OpKind::neg, dtype::u8, 1) == 255);
  CHECK(un(OpKind::bit_not, dtype::i32, 5) == -6);
  CHECK(un(OpKind::bit_not, dtype::u16, 0) == 65535);
  // constants are read modulo their width (a u32 may hold -1 as written by the frontend)
  CHECK(bin(OpKind::add, dtype::u32, -1, 1) == 0);
}

TEST_CASE("fold: division truncates; by zero gives 0; INT_MIN / -1 wraps") {
  CHECK(bin(OpKind::div, dtype::i32, -7, 2) == -3);
  CHECK(bin(OpKind::rem, dtype::i32, -7, 2) == -1);
  CHECK(bin(OpKind::rem, dtype::i32, 7, -2) == 1);
  CHECK(bin(OpKind::div, dtype::i32, 7, 0) == 0);
  CHECK(bin(OpKind::rem, dtype::i32, 7, 0) == 0);
  CHECK(bin(OpKind::div, dtype::u8, 7, 0) == 0);
  CHECK(bin(OpKind::rem, dtype::u64, 7, 0) == 0);
  CHECK(bin(OpKind::div, dtype::i32, I32_MIN, -1) == I32_MIN);
  CHECK(bin(OpKind::rem, dtype::i32, I32_MIN, -1) == 0);
  CHECK(bin(OpKind::div, dtype::i64, I64_MIN, -1) == I64_MIN);
  CHECK(bin(OpKind::rem, dtype::i64, I64_MIN, -1) == 0);
  CHECK(bin(OpKind::div, dtype::i8, -128, -1) == -128);
  CHECK(bin(OpKind::div, dtype::u32, -1, 2) == 0x7fffffff);  // unsigned: 4294967295 / 2
  CHECK(bin(OpKind::rem, dtype::u8, 255, 7) == 3);
  CHECK(bin(OpKind::div, dtype::u64, -1, 2) == I64_MAX);
}

TEST_CASE("fold: shifts past the width; arithmetic vs logical shr") {
  CHECK(bin(OpKind::shl, dtype::i32, 1, 31) == I32_MIN);
  CHECK(bin(OpKind::shl, dtype::i32, 1, 32) == 0);
  CHECK(bin(OpKind::shl, dtype::i8, 1, 8) == 0);
  CHECK(bin(OpKind::shl, dtype::i8, 3, 7) == -128);
  CHECK(bin(OpKind::shr, dtype::i32, -8, 1) == -4);
  CHECK(bin(OpKind::shr, dtype::i32, -8, 40) == -1);
  CHECK(bin(OpKind::shr, dtype::i32, 8, 40) == 0);
  CHECK(bin(OpKind::shr, dtype::i8, -128, 7) == -1);
  CHECK(bin(OpKind::shr, dtype::u8, 128, 7) == 1);
  CHECK(bin(OpKind::shr, dtype::u32, 0x80000000LL, 31) == 1);
  CHECK(bin(OpKind::shr, dtype::u32, -1, 32) == 0);
  CHECK(bin(OpKind::shl, dtype::u64, 1, 63) == I64_MIN);
  CHECK(bin(OpKind::shr, dtype::u64, -1, 63) == 1);
  CHECK(bin(OpKind::shr, dtype::i64, -1, 64) == -1);
  // a negative amount has no pinned-down meaning: left alone
  CHECK(bin(OpKind::shl, dtype::i32, 1, -1) == std::nullopt);
  CHECK(bin(OpKind::shr, dtype::i32, 1, -1) == std::nullopt);
}

TEST_CASE("fold: bitwise, minimum/maximum by signedness") {
  CHECK(bin(OpKind::bit_and, dtype::i32, 12, 10) == 8);
  CHECK(bin(OpKind::bit_or, dtype::i32, 12, 10) == 14);
  CHECK(bin(OpKind::bit_xor, dtype::i32, 12, 10) == 6);
  CHECK(bin(OpKind::minimum, dtype::i32, -1, 1) == -1);
  CHECK(bin(OpKind::maximum, dtype::i32, -1, 1) == 1);
  CHECK(bin(OpKind::minimum, dtype::u32, -1, 1) == 1);
  CHECK(bin(OpKind::maximum, dtype::u32, -1, 1) == 4294967295);
  CHECK(bin(OpKind::umulhi, dtype::u32, 1 << 20, 1 << 20) == std::nullopt);  // not folded
}

TEST_CASE("fold: i1 is a 1-bit unsigned integer") {
  CHECK(bin(OpKind::add, dtype::i1, 1, 1) == 0);
  CHECK(bin(OpKind::sub, dtype::i1, 0, 1) == 1);
  CHECK(bin(OpKind::mul, dtype::i1, 1, 1) == 1);
  CHECK(bin(OpKind::bit_xor, dtype::i1, 1, 1) == 0);
  CHECK(bin(OpKind::bit_or, dtype::i1, 0, 1) == 1);
  CHECK(un(OpKind::bit_not, dtype::i1, 1) == 0);
  CHECK(un(OpKind::bit_not, dtype::i1, 0) == 1);
  CHECK(cmp(dtype::i1, CmpPred::lt, 0, 1) == 1);  // unsigned: true > false
}

TEST_CASE("fold: comparisons; unsigned types compare unsigned") {
  CHECK(cmp(dtype::i32, CmpPred::eq, 3, 5) == 0);
  CHECK(cmp(dtype::i32, CmpPred::ne, 3, 5) == 1);
  CHECK(cmp(dtype::i32, CmpPred::lt, 3, 5) == 1);
  CHECK(cmp(dtype::i32, CmpPred::le, 5, 5) == 1);
  CHECK(cmp(dtype::i32, CmpPred::gt, 3, 5) == 0);
  CHECK(cmp(dtype::i32, CmpPred::ge, 3, 5) == 0);
  CHECK(cmp(dtype::i32, CmpPred::lt, -1, 1) == 1);
  CHECK(cmp(dtype::u32, CmpPred::lt, -1, 1) == 0);
  CHECK(cmp(dtype::u64, CmpPred::gt, -1, 1) == 1);
  CHECK(cmp(dtype::u8, CmpPred::eq, -1, 255) == 1);  // the same u8 value, written two ways
  CHECK(fcmp(dtype::f32, CmpPred::lt, 1.5, 2.5) == 1);
  CHECK(fcmp(dtype::f64, CmpPred::eq, NAN, NAN) == 0);
  CHECK(fcmp(dtype::f64, CmpPred::ne, NAN, 1.0) == 1);
  CHECK(fcmp(dtype::f32, CmpPred::ge, NAN, 1.0) == 0);
  CHECK(fcmp(dtype::f32, CmpPred::eq, 0.1, 0.1 + 1e-12) == 1);  // equal once rounded to float
  CHECK(fcmp(dtype::f64, CmpPred::eq, 0.1, 0.1 + 1e-12) == 0);
  CHECK(fcmp(dtype::f16, CmpPred::lt, 1.0, 2.0) == std::nullopt);
}

TEST_CASE("fold: select with a constant condition picks a side") {
  K k("s", {T(dtype::i32), T(dtype::i32)});
  Value* t = fold(k, [](K& kk) { return kk.v(OpKind::select, {kk.ci(T(dtype::i1), 1), kk.arg(0), kk.arg(1)}, T(dtype::i32)); });
  CHECK(t == k.arg(0));
  K k2("s", {T(dtype::i32), T(dtype::i32)});
  Value* e = fold(k2, [](K& kk) { return kk.v(OpKind::select, {kk.ci(T(dtype::i1), 0), kk.arg(0), kk.arg(1)}, T(dtype::i32)); });
  CHECK(e == k2.arg(1));
  K k3("s", {T(dtype::i1), T(dtype::i32)});
  Value* same = fold(k3, [](K& kk) { return kk.v(OpKind::select, {kk.arg(0), kk.arg(1), kk.arg(1)}, T(dtype::i32)); });
  CHECK(same == k3.arg(1));
  K k4("s", {T(dtype::i1), T(dtype::i32), T(dtype::i32)});
  Value* kept = fold(k4, [](K& kk) { return kk.v(OpKind::select, {kk.arg(0), kk.arg(1), kk.arg(2)}, T(dtype::i32)); });
  CHECK(kept->def->kind == OpKind::select);
}

TEST_CASE("fold: integer casts extend by the source's signedness; to i1 is != 0") {
  CHECK(icast_i(dtype::i32, -1, dtype::u32) == 4294967295);
  CHECK(icast_i(dtype::u8, 255, dtype::i32) == 255);
  CHECK(icast_i(dtype::i8, -1, dtype::i32) == -1);
  CHECK(icast_i(dtype::i8, -1, dtype::u64) == -1);  // sign-extended: all ones
  CHECK(icast_i(dtype::u32, -1, dtype::i64) == 4294967295);
  CHECK(icast_i(dtype::i32, 300, dtype::i8) == 44);
  CHECK(icast_i(dtype::i32, 200, dtype::i8) == -56);
  CHECK(icast_i(dtype::i32, 5, dtype::i1) == 1);
  CHECK(icast_i(dtype::i32, 256, dtype::i1) == 1);  // not truncation to the low bit
  CHECK(icast_i(dtype::i32, 0, dtype::i1) == 0);
  CHECK(icast_i(dtype::i1, 1, dtype::i32) == 1);    // true is 1, not -1
  CHECK(icast_i(dtype::i32, -1, dtype::u32, OpKind::bitcast) == 4294967295);
  CHECK(icast_i(dtype::u16, 65535, dtype::i16, OpKind::bitcast) == -1);
}

TEST_CASE("fold: float -> int truncates, NaN -> 0, out of range saturates") {
  CHECK(fcast_i(dtype::f32, 3.7, dtype::i32) == 3);
  CHECK(fcast_i(dtype::f32, -3.7, dtype::i32) == -3);
  CHECK(fcast_i(dtype::f64, NAN, dtype::i32) == 0);
  CHECK(fcast_i(dtype::f32, 1e10, dtype::i32) == I32_MAX);
  CHECK(fcast_i(dtype::f32, -1e10, dtype::i32) == I32_MIN);
  CHECK(fcast_i(dtype::f64, 1e300, dtype::i64) == I64_MAX);
  CHECK(fcast_i(dtype::f64, -1e300, dtype::i64) == I64_MIN);
  CHECK(fcast_i(dtype::f64, INFINITY, dtype::i8) == 127);
  CHECK(fcast_i(dtype::f32, -5.0, dtype::u8) == 0);
  CHECK(fcast_i(dtype::f32, 300.0, dtype::u8) == 255);
  CHECK(fcast_i(dtype::f64, 1e30, dtype::u64) == -1);  // u64 max
  CHECK(fcast_i(dtype::f64, 4294967295.9, dtype::u32) == 4294967295);
  CHECK(fcast_i(dtype::f32, 1.0, dtype::i1) == std::nullopt);  // float -> i1: left alone
  CHECK(fcast_i(dtype::f16, 3.0, dtype::i32) == std::nullopt);
}

TEST_CASE("fold: int -> float and float -> float round once to the target") {
  K k;
  Value* a = icast(k, dtype::i32, 16777217, dtype::f32);
  CHECK(as_float(a) == 16777216.0);
  K k2;
  Value* b = icast(k2, dtype::i32, 16777217, dtype::f64);
  CHECK(as_float(b) == 16777217.0);
  K k3;
  Value* c = icast(k3, dtype::u32, -1, dtype::f64);
  CHECK(as_float(c) == 4294967295.0);
  K k4;
  Value* d = fcast(k4, dtype::f64, 0.1, dtype::f32);
  CHECK(as_float(d) == static_cast<double>(0.1f));
  K k5;
  Value* e = fcast(k5, dtype::f32, 0.1, dtype::f64);  // an f32 constant holds float(0.1)
  CHECK(as_float(e) == static_cast<double>(0.1f));
  K k8;  // overflow to f32 rounds like the hardware: to the largest float, then to infinity
  CHECK(as_float(fcast(k8, dtype::f64, 1e300, dtype::f32)) == INFINITY);
  K k9;
  CHECK(as_float(fcast(k9, dtype::f64, -0x1.fffffe8p127, dtype::f32)) == -std::numeric_limits<float>::max());
  K k10;
  CHECK(as_float(fcast(k10, dtype::f64, 0x1.ffffffp127, dtype::f32)) == INFINITY);
  CHECK(fbin(OpKind::mul, dtype::f32, 1e300, 1.0) == INFINITY);  // an f32 constant is a float
  K k6;
  CHECK_FALSE(as_float(icast(k6, dtype::i32, 1, dtype::f16)).has_value());
  K k7;
  CHECK_FALSE(as_float(fcast(k7, dtype::f32, 1.0, dtype::bf16)).has_value());
}

TEST_CASE("fold: f32 is computed in float, f64 in double; f16/bf16 never") {
  CHECK(fbin(OpKind::add, dtype::f32, 0.1, 0.2) == static_cast<double>(0.1f + 0.2f));
  CHECK(fbin(OpKind::add, dtype::f32, 0.1, 0.2) != 0.1 + 0.2);
  CHECK(fbin(OpKind::add, dtype::f64, 0.1, 0.2) == 0.1 + 0.2);
  CHECK(fbin(OpKind::add, dtype::f32, 16777216.0, 1.0) == 16777216.0);
  CHECK(fbin(OpKind::add, dtype::f64, 16777216.0, 1.0) == 16777217.0);
  CHECK(fbin(OpKind::mul, dtype::f32, 1e20, 1e20) == INFINITY);
  CHECK(fbin(OpKind::sub, dtype::f64, 1.0, 0.25) == 0.75);
  CHECK(fbin(OpKind::div, dtype::f32, 1.0, 0.0) == INFINITY);
  CHECK(std::isnan(*fbin(OpKind::div, dtype::f64, 0.0, 0.0)));
  CHECK(fbin(OpKind::div, dtype::f32, 1.0, 3.0) == static_cast<double>(1.0f / 3.0f));
  K k;
  auto n = as_float(fold(k, [](K& kk) { return kk.v(OpKind::neg, {kk.cf(T(dtype::f32), 0.0)}, T(dtype::f32)); }));
  REQUIRE(n.has_value());
  CHECK(std::signbit(*n));
  CHECK(fbin(OpKind::add, dtype::f16, 1.0, 2.0) == std::nullopt);
  CHECK(fbin(OpKind::mul, dtype::bf16, 1.0, 2.0) == std::nullopt);
  CHECK(fbin(OpKind::rem, dtype::f32, 5.0, 3.0) == std::nullopt);
  CHECK(fbin(OpKind::minimum, dtype::f32, 5.0, 3.0) == std::nullopt);
}

TEST_CASE("fold: splats and shape ops of constants become tile constants") {
  K k;
  Value* s = fold(k, [](K& kk) { return kk.splat(kk.ci(T(dtype::i32), 3), {16}); });
  REQUIRE(as_int(s).has_value());
  CHECK(*as_int(s) == 3);
  CHECK(s->type == T(dtype::i32, {16}));

  K k2;
  Value* b = fold(k2, [](K& kk) {
    Value* x = kk.splat(kk.cf(T(dtype::f16), 1.5), {1, 8});
    Value* y = kk.v(OpKind::broadcast, {x}, T(dtype::f16, {4, 8}));
    Value* z = kk.v(OpKind::permute, {y}, T(dtype::f16, {8, 4}), A({1, 0}));
    Value* w = kk.v(OpKind::reshape, {z}, T(dtype::f16, {32}));
    return kk.v(OpKind::expand_dims, {w}, T(dtype::f16, {32, 1}), A({1}));
  });
  CHECK(as_float(b) == 1.5);
  CHECK(b->type == T(dtype::f16, {32, 1}));

  K k3;
  Value* t = fold(k3, [](K& kk) {
    Value* a = kk.splat(kk.ci(T(dtype::i8), 100), {4});
    Value* c = kk.splat(kk.ci(T(dtype::i8), 100), {4});
    return kk.v(OpKind::add, {a, c}, T(dtype::i8, {4}));
  });
  CHECK(as_int(t) == -56);
  CHECK(t->type == T(dtype::i8, {4}));

  K k4;  // a chain folds in one run
  Value* ch = fold(k4, [](K& kk) {
    Value* a = kk.v(OpKind::add, {kk.ci(T(dtype::i32), 2), kk.ci(T(dtype::i32), 3)}, T(dtype::i32));
    Value* m = kk.v(OpKind::mul, {a, kk.ci(T(dtype::i32), 4)}, T(dtype::i32));
    return kk.v(OpKind::cmp, {kk.splat(m, {2}), kk.splat(kk.ci(T(dtype::i32), 20), {2})}, T(dtype::i1, {2}), A({0}));
  });
  CHECK(as_int(ch) == 1);
  CHECK(ch->type == T(dtype::i1, {2}));
}

TEST_CASE("fold: integer identities") {
  auto ident = [](OpKind op, bool zero_left, std::int64_t c) {
    K k("id", {T(dtype::i32)});
    Value* x = nullptr;
    Value* r = fold(k, [&](K& kk) {
      x = kk.splat(kk.arg(0), {8});
      Value* cst = kk.splat(kk.ci(T(dtype::i32), c), {8});
      std::vector<Value*> ops = zero_left ? std::vector<Value*>{cst, x} : std::vector<Value*>{x, cst};
      return kk.v(op, ops, T(dtype::i32, {8}));
    });
    if (r == x) return std::string("x");
    if (auto v = as_int(r)) return std::to_string(*v) + ":" + r->type.str();
    return std::string(op_name(r->def->kind));
  };
  CHECK(ident(OpKind::add, false, 0) == "x");
  CHECK(ident(OpKind::add, true, 0) == "x");
  CHECK(ident(OpKind::sub, false, 0) == "x");
  CHECK(ident(OpKind::sub, true, 0) == "sub");  // 0 - x is not x
  CHECK(ident(OpKind::mul, false, 1) == "x");
  CHECK(ident(OpKind::mul, true, 1) == "x");
  CHECK(ident(OpKind::mul, false, 0) == "0:i32[8]");
  CHECK(ident(OpKind::mul, true, 0) == "0:i32[8]");
  CHECK(ident(OpKind::bit_and, false, 0) == "0:i32[8]");
  CHECK(ident(OpKind::bit_and, true, 0) == "0:i32[8]");
  CHECK(ident(OpKind::bit_or, false, 0) == "x");
  CHECK(ident(OpKind::bit_xor, true, 0) == "x");
  CHECK(ident(OpKind::shl, false, 0) == "x");
  CHECK(ident(OpKind::shr, false, 0) == "x");
  CHECK(ident(OpKind::shl, true, 0) == "shl");
  CHECK(ident(OpKind::add, false, 1) == "add");
  CHECK(ident(OpKind::div, false, 1) == "div");

  K k("fid", {T(dtype::f32)});  // x + 0.0 is not x for x = -0.0: floats keep their op
  Value* r = fold(k, [](K& kk) { return kk.v(OpKind::add, {kk.arg(0), kk.cf(T(dtype::f32), 0.0)}, T(dtype::f32)); });
  CHECK(r->def->kind == OpKind::add);
}

TEST_CASE("fold: never ops with side effects, math functions or region ops; reports no change") {
  K k("nf", {P(dtype::f32)});
  Value* ld = k.v(OpKind::load, {k.arg(0)}, T(dtype::f32), A({0, 0, 0, 0, 0}));
  Value* e = k.v(OpKind::exp, {k.cf(T(dtype::f32), 0.0)}, T(dtype::f32));
  Value* ab = k.v(OpKind::abs, {k.ci(T(dtype::i32), -3)}, T(dtype::i32));
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Op* sink = k.sink({ld, e, ab, pid});
  k.ret();
  std::string before = print(k.f());
  CHECK_FALSE(run_pass(make_constant_fold(), k.f()));
  CHECK(print(k.f()) == before);
  CHECK(sink->operands[0]->def->kind == OpKind::load);

  K k2;  // folding inside regions, from constants of the enclosing block
  Value* c = k2.ci(T(dtype::i32), 6);
  Value* z = k2.ci(T(dtype::i32), 0);
  Op* loop = k2.op(OpKind::for_, {z, c, c}, {}, {}, {}, 1);
  loop->region(0)->add_arg(T(dtype::i32));
  Builder in(loop->region(0));
  Value* m = in.create(OpKind::mul, {c, c}, {T(dtype::i32)})->result();
  Op* p = in.create(OpKind::print, {m}, {}, A({0}));
  in.create(OpKind::yield, {}, {});
  k2.ret();
  CHECK(run_pass(make_constant_fold(), k2.f()));
  CHECK(as_int(p->operands[0]) == 36);
  CHECK(p->operands[0]->def->parent == loop->region(0));  // inserted where the op was
}

// test/ir/test_guard_selects.cpp — guard_bounded_selects on hand-built IR: which selects in a
// loop get the uniform branch (a compare of an index span with a scalar bound, either side,
// each of lt/le/gt/ge), what the branch's condition is, where the compares go, and what is left
// alone (a condition from memory, a select outside a loop, a small tile, unsigned indices).
#include <climits>
#include <optional>

#include "ir_test.hpp"
#include "transforms/passes.hpp"

using namespace irt;
using tile::transforms::make_guard_bounded_selects;

namespace {

constexpr std::int64_t kN = 256;  // the tile: 8 elements a thread on one warp

Attrs pred(CmpPred p) { return A({static_cast<std::int64_t>(p)}); }

struct Built {
  K k{"guard", {P(dtype::f32), T(dtype::i32), P(dtype::i32)}};
  Op* sel = nullptr;
  Op* loop = nullptr;
};

/// for iv in [0, n) step kN: x = load(x_ptr + iv + arange); r = select(cond(iv), x, -1);
/// print(r). `cond` builds the condition from the block's keys `cols` and the loop's iv;
/// `in_loop` false builds the same ops at the top level with iv = 0.
template <class Cond>
Built build(Cond cond, bool in_loop = true, std::int64_t n = kN, dtype idx = dtype::i32) {
  Built t;
  K& k = t.k;
  k.f().num_warps = 1;
  auto body = [&](Value* iv) {
    Value* r = k.v(OpKind::arange, {}, T(dtype::i32, {n}), A({0, n}));
    if (idx != dtype::i32) r = k.v(OpKind::cast, {r}, T(idx, {n}));
    Value* cols = k.v(OpKind::add, {k.splat(iv, {n}), r}, T(idx, {n}));
    Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(0), {n}), cols}, P(dtype::f32, {n}));
    Value* x = k.v(OpKind::load, {ptrs}, T(dtype::f32, {n}), A({0, 0, 0, 0, 0}));
    Value* c = cond(k, cols, iv);
    t.sel = k.op(OpKind::select, {c, x, k.splat(k.cf(T(dtype::f32), -1.0), {n})}, {T(dtype::f32, {n})});
    k.sink({t.sel->result()});
  };
  Value* zero = k.ci(T(idx), 0);
  if (in_loop) {
    Value* hi = idx == dtype::i32 ? k.arg(1) : k.v(OpKind::cast, {k.arg(1)}, T(idx));
    t.loop = k.op(OpKind::for_, {zero, hi, k.ci(T(idx), n)}, {}, {}, {}, 1);
    Value* iv = t.loop->region(0)->add_arg(T(idx));
    Block* outer = k.b.block();
    k.b.set_insertion_end(t.loop->region(0));
    body(iv);
    k.op(OpKind::yield, {}, {});
    k.b.set_insertion_end(outer);
  } else {
    body(zero);
  }
  k.ret();
  return t;
}

Value* lt_n(K& k, Value* cols, Value*) {
  const dtype idx = cols->type.elem;
  Value* n = idx == dtype::i32 ? k.arg(1) : k.v(OpKind::cast, {k.arg(1)}, T(idx));
  return k.v(OpKind::cmp, {cols, k.splat(n, {cols->type.shape[0]})}, T(dtype::i1, cols->type.shape), pred(CmpPred::lt));
}

Op* only_if(Function& f) {
  Op* found = nullptr;
  walk(f.body, [&](Op& o) {
    if (o.kind == OpKind::if_) found = &o;
  });
  return found;
}

/// The scalar compare of the if's condition: (cast iv to i64) + edge against (cast n to i64);
/// where the span reaches past that edge (`far`: its other end), also that the far end does
/// not wrap in i32: and-ed, (cast iv) + far >= INT32_MIN (lt, le) or <= INT32_MAX (gt, ge).
void check_condition(Op& branch, CmpPred p, std::int64_t edge, Value* iv, Value* n, std::optional<std::int64_t> far = {}) {
  Op* c = branch.operand(0)->def;
  if (far) {
    REQUIRE(c->kind == OpKind::bit_and);
    Op* wrap = c->operand(1)->def;
    REQUIRE(wrap->kind == OpKind::cmp);
    const bool below = p == CmpPred::lt || p == CmpPred::le;
    CHECK(wrap->attrs.ints[0] == static_cast<std::int64_t>(below ? CmpPred::ge : CmpPred::le));
    CHECK(int_constant(wrap->operand(0)->def->operand(1)) == *far);
    CHECK(int_constant(wrap->operand(1)) == (below ? std::int64_t{INT32_MIN} : std::int64_t{INT32_MAX}));
    c = c->operand(0)->def;
  }
  REQUIRE(c->kind == OpKind::cmp);
  CHECK(c->attrs.ints[0] == static_cast<std::int64_t>(p));
  CHECK(c->result()->type.shape.empty());
  Op* sum = c->operand(0)->def;
  REQUIRE(sum->kind == OpKind::add);
  CHECK(sum->result()->type.elem == dtype::i64);
  CHECK(sum->operand(0)->def->kind == OpKind::cast);
  CHECK(sum->operand(0)->def->operand(0) == iv);
  CHECK(int_constant(sum->operand(1)) == edge);
  CHECK(c->operand(1)->def->kind == OpKind::cast);
  CHECK(c->operand(1)->def->operand(0) == n);
}

}  // namespace

TEST_CASE("guard_bounded_selects: cols < n in a loop becomes if (iv + 255 < n) { x } else { select }") {
  Built t = build(lt_n);
  Function& f = t.k.f();
  CHECK(run_pass(make_guard_bounded_selects(), f));
  Op* branch = only_if(f);
  REQUIRE(branch != nullptr);
  Value* iv = t.loop->region(0)->arg(0);
  check_condition(*branch, CmpPred::lt, kN - 1, iv, t.k.arg(1));
  // first branch: the kept operand as it is; second: the compare, its splat, and the select
  Block& all = *branch->region(0);
  REQUIRE(all.ops.size() == 1);
  CHECK(all.terminator()->operand(0) == t.sel->operand(1));
  Block& some = *branch->region(1);
  CHECK(t.sel->parent == &some);
  CHECK(some.terminator()->operand(0) == t.sel->result());
  CHECK(t.sel->operand(0)->def->parent == &some);  // the compare moved in: only the select used it
  // the print takes the if's result; the keys (the load's address too) stay in the loop body
  Op* print = nullptr;
  walk(f.body, [&](Op& o) {
    if (o.kind == OpKind::print) print = &o;
  });
  CHECK(print->operand(0) == branch->result());
  CHECK(count_ops(f, OpKind::select) == 1);
  CHECK_FALSE(run_pass(make_guard_bounded_selects(), f));  // the select left in the branch: not guarded again
}

TEST_CASE("guard_bounded_selects: the span on either side, each order, and an offset inside the span") {
  struct Case {
    const char* name;
    CmpPred written, checked;
    bool span_left;
    std::int64_t shift, edge;
    std::optional<std::int64_t> far;  // the span's other end, checked not to wrap
  };
  const Case cases[] = {
      {"cols < n", CmpPred::lt, CmpPred::lt, true, 0, kN - 1, {}},
      {"cols <= n", CmpPred::le, CmpPred::le, true, 0, kN - 1, {}},
      {"cols >= n", CmpPred::ge, CmpPred::ge, true, 0, 0, kN - 1},
      {"cols > n", CmpPred::gt, CmpPred::gt, true, 0, 0, kN - 1},
      {"n > cols (mirrored: cols < n)", CmpPred::gt, CmpPred::lt, false, 0, kN - 1, {}},
      {"n <= cols (mirrored: cols >= n)", CmpPred::le, CmpPred::ge, false, 0, 0, kN - 1},
      {"cols + 3 < n", CmpPred::lt, CmpPred::lt, true, 3, kN + 2, {}},
      {"cols - 5 < n (below 0: the low end must not wrap)", CmpPred::lt, CmpPred::lt, true, -5, kN - 6, -5},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    Built t = build([&](K& k, Value* cols, Value*) {
      Value* lhs = cols;
      if (c.shift) lhs = k.v(OpKind::add, {cols, k.splat(k.ci(T(dtype::i32), c.shift), {kN})}, T(dtype::i32, {kN}));
      Value* bound = k.splat(k.arg(1), {kN});
      std::vector<Value*> operands = c.span_left ? std::vector<Value*>{lhs, bound} : std::vector<Value*>{bound, lhs};
      return k.v(OpKind::cmp, operands, T(dtype::i1, {kN}), pred(c.written));
    });
    CHECK(run_pass(make_guard_bounded_selects(), t.k.f()));
    Op* branch = only_if(t.k.f());
    REQUIRE(branch != nullptr);
    check_condition(*branch, c.checked, c.edge, t.loop->region(0)->arg(0), t.k.arg(1), c.far);
  }
}

TEST_CASE("guard_bounded_selects: left alone where the condition is not a span against a bound") {
  SUBCASE("a mask loaded from memory") {
    Built t = build([](K& k, Value* cols, Value*) {
      Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(2), {kN}), cols}, P(dtype::i32, {kN}));
      Value* m = k.v(OpKind::load, {ptrs}, T(dtype::i32, {kN}), A({0, 0, 0, 0, 0}));
      return k.v(OpKind::cmp, {m, k.splat(k.arg(1), {kN})}, T(dtype::i1, {kN}), pred(CmpPred::lt));
    });
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  SUBCASE("a span against a span (the causal mask: rows >= cols)") {
    Built t = build([](K& k, Value* cols, Value*) {
      Value* rows = k.v(OpKind::arange, {}, T(dtype::i32, {kN}), A({0, kN}));
      return k.v(OpKind::cmp, {rows, cols}, T(dtype::i1, {kN}), pred(CmpPred::ge));
    });
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  SUBCASE("equality") {
    Built t = build([](K& k, Value* cols, Value*) {
      return k.v(OpKind::cmp, {cols, k.splat(k.arg(1), {kN})}, T(dtype::i1, {kN}), pred(CmpPred::ne));
    });
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  SUBCASE("outside a loop") {
    Built t = build(lt_n, false);
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  SUBCASE("fewer than 4 elements a thread") {
    Built t = build(lt_n, true, 64);
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  SUBCASE("unsigned indices (their compare wraps differently)") {
    Built t = build(lt_n, true, kN, dtype::u32);
    CHECK_FALSE(run_pass(make_guard_bounded_selects(), t.k.f()));
  }
  CHECK(true);
}

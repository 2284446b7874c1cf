// test/ir/test_hoist_loads.cpp — schedule::hoist_loads on hand-built IR: a loop body's small
// loads move to its top with the ops their addresses come from; large loads, volatile loads and
// the loads of a loop that stores stay where they are.
#include "ir_test.hpp"
#include "schedule/hoist_loads.hpp"

using namespace irt;
using tile::schedule::make_hoist_loads;

namespace {

struct Built {
  K k{"hoist", {P(dtype::f32), P(dtype::f32), T(dtype::i32)}};
  Op* small = nullptr;  // the load of 32 elements
  Op* big = nullptr;    // the load of 1024
};

/// for iv in [0, n) step 32: x = load(big); e = exp(x); m = load(a + iv + arange(32)); print(e, m)
/// [store(a + arange(32), m) where `stores`]; the small load volatile where `volatile_small`.
Built build(bool stores = false, bool volatile_small = false) {
  Built t;
  K& k = t.k;
  Value* zero = k.ci(T(dtype::i32), 0);
  Op* loop = k.op(OpKind::for_, {zero, k.arg(2), k.ci(T(dtype::i32), 32)}, {}, {}, {}, 1);
  Value* iv = loop->region(0)->add_arg(T(dtype::i32));
  Block* outer = k.b.block();
  k.b.set_insertion_end(loop->region(0));
  Value* big_ptrs = k.v(OpKind::addptr, {k.splat(k.arg(1), {1024}), k.v(OpKind::arange, {}, T(dtype::i32, {1024}), A({0, 1024}))},
                        P(dtype::f32, {1024}));
  t.big = k.op(OpKind::load, {big_ptrs}, {T(dtype::f32, {1024})}, A({0, 0, 0, 0, 0}));
  Value* e = k.v(OpKind::exp, {t.big->result()}, T(dtype::f32, {1024}));
  Value* rows = k.v(OpKind::add, {k.splat(iv, {32}), k.v(OpKind::arange, {}, T(dtype::i32, {32}), A({0, 32}))}, T(dtype::i32, {32}));
  Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(0), {32}), rows}, P(dtype::f32, {32}));
  t.small = k.op(OpKind::load, {ptrs}, {T(dtype::f32, {32})}, A({0, 0, 0, 0, volatile_small ? 1 : 0}));
  k.sink({e, t.small->result()});
  if (stores) k.op(OpKind::store, {ptrs, t.small->result()}, {}, A({0, 0, 0}));
  k.op(OpKind::yield, {}, {});
  k.b.set_insertion_end(outer);
  k.ret();
  return t;
}

std::size_t position(const Op& op) {
  std::size_t i = 0;
  for (const auto& o : op.parent->ops) {
    if (o.get() == &op) return i;
    ++i;
  }
  return i;
}

}  // namespace

TEST_CASE("hoist_loads: a loop's small load moves to the top of the body with its address; a large one stays") {
  Built t = build();
  const std::size_t big_at = position(*t.big);
  CHECK(run_pass(make_hoist_loads(), t.k.f()));
  // the small load and the 5 ops its pointers come from (splat, arange, add, splat, addptr) lead
  CHECK(position(*t.small) == 5);
  CHECK(position(*t.big) == big_at + 6);
  CHECK(t.small->operand(0)->def->parent == t.small->parent);
  CHECK(position(*t.small->operand(0)->def) < position(*t.small));
  CHECK_FALSE(run_pass(make_hoist_loads(), t.k.f()));  // at the top already: nothing to do
}

TEST_CASE("hoist_loads: nothing moves in a loop that stores, nor a volatile load") {
  SUBCASE("a store in the body") {
    Built t = build(true);
    const std::size_t at = position(*t.small);
    CHECK_FALSE(run_pass(make_hoist_loads(), t.k.f()));
    CHECK(position(*t.small) == at);
  }
  SUBCASE("the small load is volatile") {
    Built t = build(false, true);
    CHECK_FALSE(run_pass(make_hoist_loads(), t.k.f()));
  }
  CHECK(true);
}

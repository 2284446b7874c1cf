// test/ir/test_load_passes.cpp — load_cse and version_single_trip_loops on hand-built IR: which
// loads merge and which must not (aliasing stores, atomics, volatile and `.cv` loads, region
// boundaries), which loops get a one-step version and what that version is.
#include "ir_test.hpp"
#include "transforms/passes.hpp"

using namespace irt;
using tile::transforms::make_constant_fold;
using tile::transforms::make_cse;
using tile::transforms::make_load_cse;
using tile::transforms::make_version_single_trip_loops;

namespace {

constexpr std::int64_t kB = 16;  // the block the loops step by
const Type kRow = T(dtype::f32, {kB});

Attrs load_attrs(std::int64_t cache = 0, std::int64_t is_volatile = 0) { return A({1, 0, cache, 0, is_volatile}); }

/// A kernel over (x, out, n): pointers x and out, noalias as given, and n.
K row_kernel(const char* name, bool noalias) {
  K k(name, {P(dtype::f32), P(dtype::f32), T(dtype::i32)});
  k.f().arg_info[0].noalias = k.f().arg_info[1].noalias = noalias;
  return k;
}

/// base[off + arange(kB)] under off + arange < n, loaded at k's insertion point.
Value* load_block(K& k, Value* base, Value* off, Value* n, Attrs a = load_attrs()) {
  Value* cols = k.v(OpKind::add, {k.splat(off, {kB}), k.v(OpKind::arange, {}, T(dtype::i32, {kB}), A({0, kB}))},
                    T(dtype::i32, {kB}));
  Value* mask = k.v(OpKind::cmp, {cols, k.splat(n, {kB})}, T(dtype::i1, {kB}), A({static_cast<std::int64_t>(CmpPred::lt)}));
  Value* ptrs = k.v(OpKind::addptr, {k.splat(base, {kB}), cols}, P(dtype::f32, {kB}));
  return k.v(OpKind::load, {ptrs, mask}, kRow, a);
}

/// out[0 .. kB) = v (unmasked).
void store_row(K& k, Value* out, Value* v) {
  Value* ptrs = k.v(OpKind::addptr, {k.splat(out, {kB}), k.v(OpKind::arange, {}, T(dtype::i32, {kB}), A({0, kB}))},
                    P(dtype::f32, {kB}));
  k.op(OpKind::store, {ptrs, v}, {}, A({0, 0, 0}));
}

/// for iv = lo to hi step `step`, carrying `init` (null: nothing); `body(iv, carried)` builds the
/// body and returns what it yields.
template <class F>
Op* loop(K& k, Value* lo, Value* hi, Value* step, Value* init, F&& body) {
  std::vector<Value*> operands{lo, hi, step};
  std::vector<Type> results;
  if (init) operands.push_back(init), results.push_back(init->type);
  Block* outer = k.b.block();
  Op* l = k.op(OpKind::for_, operands, results, {}, {}, 1);
  Value* iv = l->region(0)->add_arg(lo->type);
  Value* carried = init ? l->region(0)->add_arg(init->type) : nullptr;
  k.b.set_insertion_end(l->region(0));
  Value* y = body(iv, carried);
  k.op(OpKind::yield, y ? std::vector<Value*>{y} : std::vector<Value*>{}, {});
  k.b.set_insertion_end(outer);
  return l;
}

/// A loop whose body only loads base[iv + arange(kB)] (masked by n).
Op* reading_loop(K& k, Value* lo, Value* hi, Value* step, Value* base, Value* n) {
  return loop(k, lo, hi, step, nullptr, [&](Value* iv, Value*) -> Value* {
    k.sink({load_block(k, base, iv, n)});
    return nullptr;
  });
}

std::size_t loads_in(Block& b) {
  std::size_t n = 0;
  walk(b, [&](Op& o) { n += o.kind == OpKind::load; });
  return n;
}

Op* only(Function& f, OpKind kind) {
  Op* found = nullptr;
  for (auto& op : f.body.ops)
    if (op->kind == kind) found = op.get();
  return found;
}

/// The tutorial's shape: a loop summing x's blocks, the sum stored to out, a loop writing each
/// block of x doubled to out. `hi2`/`step2`: the second loop's bounds (default: the first's).
struct TwoPasses {
  K k;
  Op *first = nullptr, *second = nullptr;
  TwoPasses(bool noalias, Value* (*hi2)(K&) = nullptr, bool step_arg = false) : k(row_kernel("passes", noalias)) {
    Value *x = k.arg(0), *out = k.arg(1), *n = k.arg(2);
    Value* lo = k.ci(T(dtype::i32), 0);
    Value* step = step_arg ? n : k.ci(T(dtype::i32), kB);
    Value* zeros = k.cf(kRow, 0.0);
    first = loop(k, lo, n, step, zeros, [&](Value* iv, Value* acc) {
      return k.v(OpKind::add, {acc, load_block(k, x, iv, n)}, kRow);
    });
    store_row(k, out, first->result());
    Value* hi = hi2 ? hi2(k) : n;
    second = loop(k, lo, hi, step, nullptr, [&](Value* iv, Value*) -> Value* {
      Value* v = load_block(k, x, iv, n);
      store_row(k, out, k.v(OpKind::add, {v, v}, kRow));
      return nullptr;
    });
    k.ret();
  }
};

/// version, then what canonicalize runs after it: fold, cse, load_cse, cse.
bool version_and_merge(Function& f) {
  const bool versioned = run_pass(make_version_single_trip_loops(), f);
  run_pass(make_constant_fold(), f);
  run_pass(make_cse(), f);
  run_pass(make_load_cse(), f);
  run_pass(make_cse(), f);
  return versioned;
}

}  // namespace

// ---- load_cse -------------------------------------------------------------------------------
TEST_CASE("load_cse: an equal load takes the first one's values; a may-alias store between keeps both") {
  for (bool noalias : {true, false}) {
    CAPTURE(noalias);
    K k = row_kernel("twice", noalias);
    Value* a = load_block(k, k.arg(0), k.ci(T(dtype::i32), 0), k.arg(2));
    store_row(k, k.arg(1), a);  // out: another argument
    Value* ptrs = a->def->operand(0);
    Value* mask = a->def->operand(1);
    Value* b = k.v(OpKind::load, {ptrs, mask}, kRow, load_attrs());
    Op* s = k.sink({a, b});
    k.ret();
    // out and x are different arguments: with the launch's promise that they are disjoint the
    // store cannot reach x; without it (the same buffer passed twice) it may
    CHECK(run_pass(make_load_cse(), k.f()) == noalias);
    CHECK(count_ops(k.f(), OpKind::load) == (noalias ? 1u : 2u));
    CHECK((s->operand(1) == a) == noalias);
  }
}

TEST_CASE("load_cse: a store through the loaded pointer, atomics, volatile and .cv loads (or one between) keep both") {
  enum what { same_ptr_store, atomic, volatile_load, cv_load, other_differs, volatile_between, none };
  for (what w : {same_ptr_store, atomic, volatile_load, cv_load, other_differs, volatile_between, none}) {
    CAPTURE(static_cast<int>(w));
    K k = row_kernel("kept", true);
    const Attrs at = w == volatile_load ? load_attrs(0, 1) : w == cv_load ? load_attrs(3) : load_attrs();
    Value* a = load_block(k, k.arg(0), k.ci(T(dtype::i32), 0), k.arg(2), at);
    Value *ptrs = a->def->operand(0), *mask = a->def->operand(1);
    if (w == same_ptr_store) k.op(OpKind::store, {ptrs, a, mask}, {}, A({1, 0, 0}));
    if (w == atomic)  // on out, a disjoint argument: it may still order other programs' writes to x
      k.v(OpKind::atomic_rmw, {k.arg(1), k.cf(T(dtype::f32), 1.0)}, T(dtype::f32), A({0, 0}));
    if (w == volatile_between)  // a flag polled on out: what another program wrote before it may be new
      k.sink({k.v(OpKind::load, {k.arg(1)}, T(dtype::f32), A({0, 0, 0, 0, 1}))});
    std::vector<Value*> operands{ptrs, mask};
    Attrs bt = at;
    if (w == other_differs) operands.push_back(k.cf(kRow, 1.0)), bt.ints[1] = 1;
    Value* b = k.v(OpKind::load, operands, kRow, bt);
    k.sink({a, b});
    k.ret();
    const std::size_t loads = w == volatile_between ? 3 : 2;
    CHECK(run_pass(make_load_cse(), k.f()) == (w == none));
    CHECK(count_ops(k.f(), OpKind::load) == (w == none ? 1u : loads));
  }
}

TEST_CASE("load_cse: loads are reused within their block only; a loop that writes between forgets them") {
  SUBCASE("a load in a loop body does not take the values of one before the loop") {
    K k = row_kernel("inner", true);
    Value* zero = k.ci(T(dtype::i32), 0);
    Value* a = load_block(k, k.arg(0), zero, k.arg(2));
    loop(k, zero, k.arg(2), k.ci(T(dtype::i32), 1), nullptr, [&](Value*, Value*) -> Value* {
      k.sink({k.v(OpKind::load, {a->def->operand(0), a->def->operand(1)}, kRow, load_attrs())});
      return nullptr;
    });
    k.ret();
    CHECK_FALSE(run_pass(make_load_cse(), k.f()));
    CHECK(count_ops(k.f(), OpKind::load) == 2);
  }
  for (bool writes_x : {true, false}) {
    CAPTURE(writes_x);
    K k = row_kernel("between", true);
    Value* zero = k.ci(T(dtype::i32), 0);
    Value* a = load_block(k, k.arg(0), zero, k.arg(2));
    loop(k, zero, k.arg(2), k.ci(T(dtype::i32), 1), nullptr, [&](Value*, Value*) -> Value* {
      store_row(k, writes_x ? k.arg(0) : k.arg(1), k.cf(kRow, 2.0));
      return nullptr;
    });
    Value* b = k.v(OpKind::load, {a->def->operand(0), a->def->operand(1)}, kRow, load_attrs());
    k.sink({a, b});
    k.ret();
    CHECK(run_pass(make_load_cse(), k.f()) == !writes_x);
    CHECK(count_ops(k.f(), OpKind::load) == (writes_x ? 2u : 1u));
  }
}

// ---- version_single_trip_loops ---------------------------------------------------------------
TEST_CASE("version_single_trip_loops: two loops reading x give an if whose first branch reads it once") {
  TwoPasses t(true);
  Function& f = t.k.f();
  CHECK(version_and_merge(f));
  Op* branch = only(f, OpKind::if_);
  REQUIRE(branch != nullptr);
  CHECK(count_ops(f, OpKind::for_) == 2);                           // the loops, in the second branch
  CHECK(loads_in(*branch->region(0)) == 1);                          // one step: x read once
  CHECK(loads_in(*branch->region(1)) == 2);                          // any other range: as written
  CHECK(std::none_of(branch->region(0)->ops.begin(), branch->region(0)->ops.end(),
                     [](const auto& o) { return o->kind == OpKind::for_; }));
  // the condition: 0 < n && n <= 0 + 16
  Op* cond = branch->operand(0)->def;
  REQUIRE(cond->kind == OpKind::bit_and);
  Op* runs = cond->operand(0)->def;
  Op* once = cond->operand(1)->def;
  CHECK(runs->attrs.ints[0] == static_cast<std::int64_t>(CmpPred::lt));
  CHECK(runs->operand(1) == t.k.arg(2));
  CHECK(once->attrs.ints[0] == static_cast<std::int64_t>(CmpPred::le));
  CHECK(once->operand(0) == t.k.arg(2));
  CHECK(once->operand(1)->def->attrs.ints[0] == kB);
  CHECK_FALSE(run_pass(make_version_single_trip_loops(), f));  // the loops it kept are not versioned again
}

TEST_CASE("version_single_trip_loops: other bounds, a step not constant, or a may-alias store between: no version") {
  SUBCASE("the second loop has another upper bound") {
    TwoPasses t(true, [](K& k) { return k.v(OpKind::add, {k.arg(2), k.ci(T(dtype::i32), 1)}, T(dtype::i32)); });
    CHECK_FALSE(run_pass(make_version_single_trip_loops(), t.k.f()));
  }
  SUBCASE("the step is an argument") {
    TwoPasses t(true, nullptr, true);
    CHECK_FALSE(run_pass(make_version_single_trip_loops(), t.k.f()));
  }
  SUBCASE("the store to out between them may reach x") {
    TwoPasses t(false);
    CHECK_FALSE(run_pass(make_version_single_trip_loops(), t.k.f()));
    CHECK(count_ops(t.k.f(), OpKind::if_) == 0);
  }
}

TEST_CASE("version_single_trip_loops: the loops' results used later come out of the if") {
  K k = row_kernel("escape", true);
  Value *x = k.arg(0), *n = k.arg(2);
  Value* lo = k.ci(T(dtype::i32), 4);
  Value* step = k.ci(T(dtype::i32), kB);
  Op* a = loop(k, lo, n, step, k.cf(kRow, 0.0), [&](Value* iv, Value* acc) {
    return k.v(OpKind::add, {acc, load_block(k, x, iv, n)}, kRow);
  });
  Op* b = loop(k, lo, n, step, k.cf(kRow, 1.0), [&](Value* iv, Value* acc) {
    return k.v(OpKind::mul, {acc, load_block(k, x, iv, n)}, kRow);
  });
  Op* s = k.sink({a->result(), b->result()});
  k.ret();
  CHECK(version_and_merge(k.f()));
  Op* branch = only(k.f(), OpKind::if_);
  REQUIRE(branch != nullptr);
  REQUIRE(branch->results.size() == 2);
  CHECK(s->operand(0) == branch->result(0));
  CHECK(s->operand(1) == branch->result(1));
  CHECK(loads_in(*branch->region(0)) == 1);
  // the one-step branch yields init + x and init * x of the same load
  Op* y = branch->region(0)->terminator();
  REQUIRE(y->kind == OpKind::yield);
  CHECK(y->operand(0)->def->kind == OpKind::add);
  CHECK(y->operand(1)->def->kind == OpKind::mul);
  CHECK(y->operand(0)->def->operand(1) == y->operand(1)->def->operand(1));
  // the bound is lo + step: 4 < n && n <= 20
  CHECK(branch->operand(0)->def->operand(1)->def->operand(1)->def->attrs.ints[0] == 4 + kB);
}

TEST_CASE("version_single_trip_loops: no version where lo + step overflows the bounds' type") {
  K k = row_kernel("overflow", true);
  Value *x = k.arg(0), *n = k.arg(2);
  Value* lo = k.ci(T(dtype::i32), 2147483647 - 8);
  Value* step = k.ci(T(dtype::i32), kB);
  for (int i = 0; i < 2; ++i) reading_loop(k, lo, n, step, x, n);
  k.ret();
  CHECK_FALSE(run_pass(make_version_single_trip_loops(), k.f()));
}

TEST_CASE("version_single_trip_loops: loops of other bounds inside the span are versioned in both branches, once") {
  // a1, b1, b2, a2: the a loops (bounds 0, n, 16) read x, the b loops (0, n, 32) read out
  K k = row_kernel("nested_spans", true);
  Value *x = k.arg(0), *out = k.arg(1), *n = k.arg(2);
  Value* lo = k.ci(T(dtype::i32), 0);
  Value* s16 = k.ci(T(dtype::i32), kB);
  Value* s32 = k.ci(T(dtype::i32), 2 * kB);
  reading_loop(k, lo, n, s16, x, n);
  reading_loop(k, lo, n, s32, out, n);
  reading_loop(k, lo, n, s32, out, n);
  reading_loop(k, lo, n, s16, x, n);
  k.ret();
  CHECK(run_pass(make_version_single_trip_loops(), k.f()));
  CHECK(count_ops(k.f(), OpKind::if_) == 3);  // the a span's, and the b loops' in each of its branches
  CHECK_FALSE(run_pass(make_version_single_trip_loops(), k.f()));
  CHECK(count_ops(k.f(), OpKind::if_) == 3);
}

TEST_CASE("version_single_trip_loops: a constant upper bound that the loops reach in one step: inlined in place") {
  for (std::int64_t hi : {kB, 4 * kB}) {
    CAPTURE(hi);
    K k = row_kernel("constant_hi", true);
    Value *x = k.arg(0), *n = k.arg(2);
    Value* lo = k.ci(T(dtype::i32), 0);
    Value* end = k.ci(T(dtype::i32), hi);
    Value* step = k.ci(T(dtype::i32), kB);
    Op* a = loop(k, lo, end, step, k.cf(kRow, 0.0), [&](Value* iv, Value* acc) {
      return k.v(OpKind::add, {acc, load_block(k, x, iv, n)}, kRow);
    });
    reading_loop(k, lo, end, step, x, n);
    Op* s = k.sink({a->result()});
    k.ret();
    const bool once = hi == kB;  // 0 to 64 by 16 runs four times: nothing to version
    CHECK(version_and_merge(k.f()) == once);
    CHECK(count_ops(k.f(), OpKind::if_) == 0);
    CHECK(count_ops(k.f(), OpKind::for_) == (once ? 0u : 2u));
    CHECK(count_ops(k.f(), OpKind::load) == (once ? 1u : 2u));
    if (once) CHECK(s->operand(0)->def->kind == OpKind::add);  // 0 + x, from the inlined body
    CHECK_FALSE(run_pass(make_version_single_trip_loops(), k.f()));
  }
}

TEST_CASE("version_single_trip_loops: inner loops inlined from two bodies pair up by their bounds' values") {
  // two x loops (0, n, 16), each reading x and holding a y loop (0, n, 8) whose literal bounds
  // are traced inside its own body, as the frontend traces them
  K k = row_kernel("inner_pairs", true);
  Value *x = k.arg(0), *y = k.arg(1), *n = k.arg(2);
  Value* lo = k.ci(T(dtype::i32), 0);
  Value* s16 = k.ci(T(dtype::i32), kB);
  for (int i = 0; i < 2; ++i)
    loop(k, lo, n, s16, nullptr, [&](Value* iv, Value*) -> Value* {
      k.sink({load_block(k, x, iv, n)});
      reading_loop(k, k.ci(T(dtype::i32), 0), n, k.ci(T(dtype::i32), 8), y, n);
      return nullptr;
    });
  k.ret();
  CHECK(run_pass(make_version_single_trip_loops(), k.f()));
  // the x loops' version, and in its first branch the y loops' (the second branch keeps one y
  // loop in each x loop: no pair)
  CHECK(count_ops(k.f(), OpKind::if_) == 2);
  run_pass(make_cse(), k.f());
  CHECK_FALSE(run_pass(make_version_single_trip_loops(), k.f()));
  CHECK(count_ops(k.f(), OpKind::if_) == 2);
}

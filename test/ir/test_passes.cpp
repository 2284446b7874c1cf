// test/ir/test_passes.cpp — cse, dce, the pass manager (dumps, verification after every pass,
// timing, options from the environment) and the canonicalization pipeline. Constant folding has
// its own file (test_constant_fold.cpp).
#include <cstdlib>
#include <sstream>

#include "ir_test.hpp"
#include "transforms/passes.hpp"
#include "transforms/pipeline.hpp"

using namespace irt;
using tile::transforms::make_constant_fold;
using tile::transforms::make_cse;
using tile::transforms::make_dce;
using tile::transforms::Pass;
using tile::transforms::PassManager;

namespace {

/// for %iv = 0 to n step 1 with no carried values; returns the body.
Block* make_loop(K& k, Value* n, Op** loop_out = nullptr) {
  Value* z = k.ci(T(dtype::i32), 0);
  Value* one = k.ci(T(dtype::i32), 1);
  Op* loop = k.op(OpKind::for_, {z, n, one}, {}, {}, {}, 1);
  loop->region(0)->add_arg(T(dtype::i32));
  if (loop_out) *loop_out = loop;
  return loop->region(0);
}

}  // namespace

// ---- cse ------------------------------------------------------------------------------------
TEST_CASE("cse: equal pure ops merge; different attrs, types or operands do not") {
  K k("c", {T(dtype::i32), T(dtype::i32)});
  Value* a1 = k.v(OpKind::add, {k.arg(0), k.arg(1)}, T(dtype::i32));
  Value* a2 = k.v(OpKind::add, {k.arg(0), k.arg(1)}, T(dtype::i32));
  Value* swapped = k.v(OpKind::add, {k.arg(1), k.arg(0)}, T(dtype::i32));
  Value* lt = k.v(OpKind::cmp, {a1, a2}, T(dtype::i1), A({2}));
  Value* gt = k.v(OpKind::cmp, {a1, a2}, T(dtype::i1), A({4}));
  Value* c1 = k.ci(T(dtype::i32), 7);
  Value* c2 = k.ci(T(dtype::i32), 7, L(99));  // locations do not matter
  Value* c3 = k.ci(T(dtype::i64), 7);
  Value* z1 = k.cf(T(dtype::f32), 0.0);
  Value* z2 = k.cf(T(dtype::f32), -0.0);     // 0.0 and -0.0 are different constants
  Value* z3 = k.cf(T(dtype::f32), 0.0);
  Value* p1 = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* p2 = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* p3 = k.v(OpKind::program_id, {}, T(dtype::i32), A({1}));
  Op* s = k.sink({a1, a2, swapped, lt, gt, c1, c2, c3, z1, z2, z3, p1, p2, p3});
  k.ret();
  CHECK(run_pass(make_cse(), k.f()));
  auto& o = s->operands;
  CHECK(o[1] == a1);
  CHECK(o[2] == swapped);
  CHECK(o[3] != o[4]);
  CHECK(o[6] == c1);
  CHECK(o[7] == c3);
  CHECK(o[9] == z2);
  CHECK(o[10] == z1);
  CHECK(o[12] == p1);
  CHECK(o[13] == p3);
  CHECK(lt->def->operands == std::vector<Value*>{a1, a1});  // uses inside later ops are rewritten
  CHECK_FALSE(run_pass(make_cse(), k.f()));                  // a fixed point
}

TEST_CASE("cse: loads, stores and atomics are never merged") {
  K k("m", {P(dtype::f32)});
  Value* l1 = k.v(OpKind::load, {k.arg(0)}, T(dtype::f32), A({0, 0, 0, 0, 0}));
  Value* l2 = k.v(OpKind::load, {k.arg(0)}, T(dtype::f32), A({0, 0, 0, 0, 0}));
  Op* s = k.sink({l1, l2});
  k.ret();
  CHECK_FALSE(run_pass(make_cse(), k.f()));
  CHECK(s->operands[1] == l2);
}

TEST_CASE("cse: a region reuses what precedes it in enclosing blocks, never the other way") {
  K k("scope", {T(dtype::i32)});
  Value* outer = k.v(OpKind::mul, {k.arg(0), k.arg(0)}, T(dtype::i32));
  Op* loop = nullptr;
  Block* body = make_loop(k, k.arg(0), &loop);
  Builder in(body);
  Value* inner_dup = in.create(OpKind::mul, {k.arg(0), k.arg(0)}, {T(dtype::i32)})->result();
  Value* inner_new = in.create(OpKind::sub, {k.arg(0), k.arg(0)}, {T(dtype::i32)})->result();
  // nested one level deeper: an if inside the loop
  Value* t = in.constant_int(T(dtype::i1), 1);
  Op* br = in.create(OpKind::if_, {t}, {}, {}, {}, 2);
  Builder th(br->region(0));
  Value* deep_dup = th.create(OpKind::sub, {k.arg(0), k.arg(0)}, {T(dtype::i32)})->result();
  Op* deep_print = th.create(OpKind::print, {deep_dup, inner_dup}, {}, A({0}));
  th.create(OpKind::yield, {}, {});
  Builder el(br->region(1));
  Value* sibling = el.create(OpKind::sub, {k.arg(0), k.arg(0)}, {T(dtype::i32)})->result();
  Value* else_only = el.create(OpKind::add, {k.arg(0), k.arg(0)}, {T(dtype::i32)})->result();
  Op* else_print = el.create(OpKind::print, {sibling, else_only}, {}, A({0}));
  el.create(OpKind::yield, {}, {});
  Op* body_print = in.create(OpKind::print, {inner_dup, inner_new}, {}, A({0}));
  in.create(OpKind::yield, {}, {});
  // after the loop: the sub and the add exist only inside regions, so they are not reused
  Value* after_sub = k.v(OpKind::sub, {k.arg(0), k.arg(0)}, T(dtype::i32));
  Value* after_add = k.v(OpKind::add, {k.arg(0), k.arg(0)}, T(dtype::i32));
  Value* after_mul = k.v(OpKind::mul, {k.arg(0), k.arg(0)}, T(dtype::i32));
  Op* tail = k.sink({after_sub, after_add, after_mul});
  k.ret();

  CHECK(run_pass(make_cse(), k.f()));
  CHECK(body_print->operands[0] == outer);       // the loop body reuses the outer mul
  CHECK(body_print->operands[1] == inner_new);
  CHECK(deep_print->operands[0] == inner_new);    // two levels down, reuses the loop body's sub
  CHECK(deep_print->operands[1] == outer);
  CHECK(else_print->operands[0] == inner_new);   // the else branch too
  CHECK(else_print->operands[1] == else_only);
  CHECK(tail->operands[0] == after_sub);         // not the sub from inside the loop
  CHECK(tail->operands[1] == after_add);         // not the add from inside the else branch
  CHECK(tail->operands[2] == outer);
  (void)deep_dup;
}

TEST_CASE("cse: then and else branches do not share; combine regions stay self-contained") {
  K k("sib", {T(dtype::i32)});
  Value* t = k.ci(T(dtype::i1), 1);
  Op* br = k.op(OpKind::if_, {t}, {}, {}, {}, 2);
  Builder th(br->region(0));
  Value* a = th.create(OpKind::neg, {k.arg(0)}, {T(dtype::i32)})->result();
  th.create(OpKind::print, {a}, {}, A({0}));
  th.create(OpKind::yield, {}, {});
  Builder el(br->region(1));
  Value* b = el.create(OpKind::neg, {k.arg(0)}, {T(dtype::i32)})->result();
  Op* p = el.create(OpKind::print, {b}, {}, A({0}));
  el.create(OpKind::yield, {}, {});

  Value* one = k.cf(T(dtype::f32), 1.0);
  Value* x = k.splat(one, {16});
  Op* red = k.op(OpKind::reduce, {x}, {T(dtype::f32)}, A({0}), {}, 1);
  Value* l = red->region(0)->add_arg(T(dtype::f32));
  Value* r = red->region(0)->add_arg(T(dtype::f32));
  Builder cb(red->region(0));
  Value* inner_one = cb.constant_float(T(dtype::f32), 1.0);
  Value* s1 = cb.create(OpKind::add, {l, r}, {T(dtype::f32)})->result();
  Value* s2 = cb.create(OpKind::add, {l, r}, {T(dtype::f32)})->result();  // merges inside the region
  Value* s3 = cb.create(OpKind::mul, {s2, inner_one}, {T(dtype::f32)})->result();
  Op* y = cb.create(OpKind::yield, {s3}, {});
  Value* outside = k.v(OpKind::add, {one, one}, T(dtype::f32));
  k.sink({red->result(), outside});
  k.ret();

  run_pass(make_cse(), k.f());
  CHECK(p->operands[0] == b);
  CHECK(s3->def->operands[0] == s1);
  CHECK(s3->def->operands[1] == inner_one);  // not the outer constant 1.0
  CHECK(y->operands[0] == s3);
}

// ---- dce ------------------------------------------------------------------------------------
TEST_CASE("dce: dead pure chains go; stores, loads, prints and asserts stay") {
  K k("d", {P(dtype::f32), T(dtype::i32)});
  Value* a = k.v(OpKind::add, {k.arg(1), k.arg(1)}, T(dtype::i32));
  Value* b = k.v(OpKind::mul, {a, a}, T(dtype::i32));
  k.v(OpKind::neg, {b}, T(dtype::i32));                    // dead chain of three
  Value* ld = k.v(OpKind::load, {k.arg(0)}, T(dtype::f32), A({0, 0, 0, 0, 0}));  // unused, kept
  Value* used = k.v(OpKind::sub, {k.arg(1), k.arg(1)}, T(dtype::i32));
  Value* cond = k.v(OpKind::cmp, {used, k.arg(1)}, T(dtype::i1), A({0}));
  k.op(OpKind::assert_, {cond}, {}, A({}, "m"));
  Value* v = k.cf(T(dtype::f32), 2.0);
  k.op(OpKind::store, {k.arg(0), v}, {}, A({0, 0, 0}));
  k.op(OpKind::atomic_rmw, {k.arg(0), v}, {T(dtype::f32)}, A({0, 0}));  // result unused, kept
  k.ret();
  CHECK(run_pass(make_dce(), k.f()));
  CHECK(count_ops(k.f(), OpKind::add) == 0);
  CHECK(count_ops(k.f(), OpKind::mul) == 0);
  CHECK(count_ops(k.f(), OpKind::neg) == 0);
  CHECK(count_ops(k.f(), OpKind::load) == 1);
  CHECK(count_ops(k.f(), OpKind::sub) == 1);
  CHECK(count_ops(k.f(), OpKind::store) == 1);
  CHECK(count_ops(k.f(), OpKind::atomic_rmw) == 1);
  CHECK(count_ops(k.f(), OpKind::assert_) == 1);
  (void)ld;
  CHECK_FALSE(run_pass(make_dce(), k.f()));
}

TEST_CASE("dce: a loop with no side effects and unused results is dead, with its operands") {
  K k("loop", {P(dtype::f32), T(dtype::i32)});
  Value* init = k.splat(k.cf(T(dtype::f32), 0.0), {16});
  Value* z = k.ci(T(dtype::i32), 0);
  Value* one = k.ci(T(dtype::i32), 1);
  Op* loop = k.op(OpKind::for_, {z, k.arg(1), one, init}, {T(dtype::f32, {16})}, {}, {}, 1);
  loop->region(0)->add_arg(T(dtype::i32));
  Value* acc = loop->region(0)->add_arg(T(dtype::f32, {16}));
  Builder in(loop->region(0));
  Value* nx = in.create(OpKind::add, {acc, acc}, {T(dtype::f32, {16})})->result();
  in.create(OpKind::yield, {nx}, {});
  k.ret();
  CHECK(run_pass(make_dce(), k.f()));
  CHECK(print(k.f(), false) == "kernel @loop(%arg0: ptr<f32>, %arg1: i32) {\n  return\n}\n");
}

TEST_CASE("dce: loops and branches with side effects, or used results, stay") {
  K k("keep", {P(dtype::f32), T(dtype::i32)});
  // a loop that stores
  Block* body = make_loop(k, k.arg(1));
  Builder in(body);
  Value* dead_inside = in.create(OpKind::neg, {k.arg(1)}, {T(dtype::i32)})->result();
  Value* v = in.constant_float(T(dtype::f32), 1.0);
  in.create(OpKind::store, {k.arg(0), v}, {}, A({0, 0, 0}));
  in.create(OpKind::yield, {}, {});
  // an if whose only effect is a nested load (loads count as memory ops)
  Value* c = k.ci(T(dtype::i1), 1);
  Op* br = k.op(OpKind::if_, {c}, {}, {}, {}, 2);
  Builder th(br->region(0));
  Op* l2 = th.create(OpKind::for_, {k.arg(1), k.arg(1), k.arg(1)}, {}, {}, {}, 1);
  l2->region(0)->add_arg(T(dtype::i32));
  Builder(l2->region(0)).create(OpKind::load, {k.arg(0)}, {T(dtype::f32)}, A({0, 0, 0, 0, 0}));
  Builder(l2->region(0)).create(OpKind::yield, {}, {});
  th.create(OpKind::yield, {}, {});
  Builder(br->region(1)).create(OpKind::yield, {}, {});
  // a pure while whose result is used
  Value* z = k.ci(T(dtype::i32), 0);
  Op* w = k.op(OpKind::while_, {z}, {T(dtype::i32)}, {}, {}, 2);
  Value* ca = w->region(0)->add_arg(T(dtype::i32));
  Builder wc(w->region(0));
  Value* lt = wc.create(OpKind::cmp, {ca, k.arg(1)}, {T(dtype::i1)}, A({2}))->result();
  wc.create(OpKind::condition, {lt}, {});
  Value* ba = w->region(1)->add_arg(T(dtype::i32));
  Builder wb(w->region(1));
  Value* inc = wb.create(OpKind::add, {ba, k.arg(1)}, {T(dtype::i32)})->result();
  wb.create(OpKind::yield, {inc}, {});
  k.sink({w->result()});
  // a pure while whose result is unused: dead
  Op* w2 = k.op(OpKind::while_, {z}, {T(dtype::i32)}, {}, {}, 2);
  Value* c2 = w2->region(0)->add_arg(T(dtype::i32));
  Builder(w2->region(0)).create(OpKind::condition, {Builder(w2->region(0)).create(OpKind::cmp, {c2, z}, {T(dtype::i1)}, A({0}))->result()}, {});
  Value* b2 = w2->region(1)->add_arg(T(dtype::i32));
  Builder(w2->region(1)).create(OpKind::yield, {b2}, {});
  // a pure reduce whose result is unused: dead
  Value* x = k.splat(k.cf(T(dtype::f32), 1.0), {8});
  Op* red = k.op(OpKind::reduce, {x}, {T(dtype::f32)}, A({0}), {}, 1);
  Value* ra = red->region(0)->add_arg(T(dtype::f32));
  red->region(0)->add_arg(T(dtype::f32));
  Builder(red->region(0)).create(OpKind::yield, {ra}, {});
  k.ret();

  CHECK(run_pass(make_dce(), k.f()));
  CHECK(count_ops(k.f(), OpKind::for_) == 2);
  CHECK(count_ops(k.f(), OpKind::if_) == 1);
  CHECK(count_ops(k.f(), OpKind::while_) == 1);
  CHECK(count_ops(k.f(), OpKind::reduce) == 0);
  CHECK(count_ops(k.f(), OpKind::splat) == 0);
  CHECK(count_ops(k.f(), OpKind::neg) == 0);  // dead ops inside a kept loop go
  CHECK(count_ops(k.f(), OpKind::load) == 1);
  CHECK(count_ops(k.f(), OpKind::store) == 1);
  (void)dead_inside;
}

// ---- the pass manager -----------------------------------------------------------------------
namespace {

/// A pass that breaks the IR on purpose: it gives the first add a wrong result type.
class Breaker final : public Pass {
 public:
  std::string_view name() const override { return "breaker"; }
  bool run(Function& f) override {
    walk(f.body, [](Op& op) {
      if (op.kind == OpKind::add) op.results[0]->type = T(dtype::f64);
    });
    return true;
  }
};

/// Counts its runs; changes nothing.
class Counter final : public Pass {
 public:
  explicit Counter(int* n) : n_(n) {}
  std::string_view name() const override { return "counter"; }
  bool run(Function&) override {
    ++*n_;
    return false;
  }

 private:
  int* n_;
};

PassManager::Options quiet(std::ostream& os) {
  PassManager::Options o;
  o.dump_ir = false;
  o.verify = true;
  o.time_passes = false;
  o.out = &os;
  return o;
}

}  // namespace

TEST_CASE("pass manager: dumps the IR after trace and after every pass") {
  auto f = add_kernel();
  std::ostringstream os;
  auto o = quiet(os);
  o.dump_ir = true;
  tile::transforms::canonicalize(*f, o);
  std::string s = os.str();
  auto at = [&](const std::string& h) { return s.find(h); };
  std::size_t t = at("// ----- IR after trace (kernel add) ----- //\nkernel @add(");
  std::size_t c = at("// ----- IR after constant_fold (kernel add) ----- //\n");
  std::size_t e = at("// ----- IR after cse (kernel add) ----- //\n");
  std::size_t d = at("// ----- IR after dce (kernel add) ----- //\n");
  REQUIRE(t != std::string::npos);
  REQUIRE(c != std::string::npos);
  REQUIRE(e != std::string::npos);
  REQUIRE(d != std::string::npos);
  CHECK(t < c);
  CHECK(c < e);
  CHECK(e < d);
  CHECK(s.find("loc(\"add.cpp\":12)") != std::string::npos);  // dumps carry locations
  CHECK(s.substr(d).find(print(*f)) != std::string::npos);     // the last dump is the result
  CHECK(s.find("pass timing") == std::string::npos);
}

TEST_CASE("pass manager: a timing table of every pass") {
  auto f = add_kernel();
  std::ostringstream os;
  auto o = quiet(os);
  o.time_passes = true;
  PassManager pm(o);
  pm.add(make_constant_fold());
  pm.add(make_cse());
  pm.add(make_dce());
  pm.run(*f);
  std::string s = os.str();
  CHECK(s.find("// ----- pass timing (kernel add) ----- //") == 0);
  CHECK(s.find("IR after") == std::string::npos);
  for (const char* p : {"constant_fold", "cse", "dce", "total"}) {
    std::size_t at = s.find(std::string("\n  ") + p + " ");
    CHECK_MESSAGE(at != std::string::npos, p << " row missing in\n" << s);
  }
  CHECK(s.find("100.0%") != std::string::npos);
  REQUIRE(pm.timings().size() == 3);
  CHECK(pm.timings()[1].pass == "cse");
  for (auto& t : pm.timings()) CHECK(t.ms >= 0.0);
}

TEST_CASE("pass manager: the verifier runs on the input and after every pass") {
  {  // after the pass that broke the IR, named in the message
    auto f = add_kernel();
    std::ostringstream os;
    int runs = 0;
    PassManager pm(quiet(os));
    pm.add(make_cse());
    pm.add(std::make_unique<Breaker>());
    pm.add(std::make_unique<Counter>(&runs));
    Caught c = catch_error([&] { pm.run(*f); });
    REQUIRE(c.thrown);
    CHECK(c.message.rfind("IR verifier (after breaker): op 'add':", 0) == 0);
    CHECK(c.where.line == 12);
    CHECK(c.kernel == "add");
    CHECK(runs == 0);  // stopped right after the breaking pass
  }
  {  // broken input: "after trace", before any pass runs
    auto f = add_kernel();
    walk(f->body, [](Op& op) {
      if (op.kind == OpKind::neg) op.results[0]->type = T(dtype::i32, {16});
    });
    std::ostringstream os;
    int runs = 0;
    PassManager pm(quiet(os));
    pm.add(std::make_unique<Counter>(&runs));
    Caught c = catch_error([&] { pm.run(*f); });
    CHECK(c.message.rfind("IR verifier (after trace): op 'neg':", 0) == 0);
    CHECK(c.where.line == 19);
    CHECK(runs == 0);
  }
  {  // with verification off, nothing checks
    auto f = add_kernel();
    std::ostringstream os;
    auto o = quiet(os);
    o.verify = false;
    PassManager pm(o);
    pm.add(std::make_unique<Breaker>());
    CHECK(pm.run(*f));
    CHECK_THROWS_AS(verify(*f), tile::error);
  }
}

TEST_CASE("pass manager: options from TILE_DUMP_IR, TILE_VERIFY, TILE_TIME_PASSES") {
  ::unsetenv("TILE_DUMP_IR");
  ::unsetenv("TILE_VERIFY");
  ::unsetenv("TILE_TIME_PASSES");
  auto d = PassManager::Options::from_env();
  CHECK_FALSE(d.dump_ir);
  CHECK(d.verify);
  CHECK_FALSE(d.time_passes);
  CHECK(d.out != nullptr);
  ::setenv("TILE_DUMP_IR", "1", 1);
  ::setenv("TILE_VERIFY", "0", 1);
  ::setenv("TILE_TIME_PASSES", "yes", 1);
  auto e = PassManager::Options::from_env();
  CHECK(e.dump_ir);
  CHECK_FALSE(e.verify);
  CHECK(e.time_passes);
  ::unsetenv("TILE_DUMP_IR");
  ::unsetenv("TILE_VERIFY");
  ::unsetenv("TILE_TIME_PASSES");
  PassManager::Options plain;
  CHECK_FALSE(plain.dump_ir);
  CHECK(plain.verify);
  CHECK_FALSE(plain.time_passes);
}

// ---- the pipeline ---------------------------------------------------------------------------
TEST_CASE("canonicalize: fold, cse, dce in order, to a clean kernel") {
  CHECK(tile::transforms::canonicalize_pass_names() ==
        std::vector<std::string_view>{"constant_fold", "cse", "dce", "version_single_trip_loops", "constant_fold",
                                      "cse", "load_cse", "cse", "dce"});
  ::setenv("TILE_VERSION_LOOPS", "0", 1);  // the switch leaves the versioning out, nothing else
  CHECK(tile::transforms::canonicalize_pass_names() ==
        std::vector<std::string_view>{"constant_fold", "cse", "dce", "constant_fold", "cse", "load_cse", "cse", "dce"});
  ::unsetenv("TILE_VERSION_LOOPS");

  // offs = pid * (8 + 8) + arange; the literal arithmetic folds, duplicates merge, dead code goes
  K k("canon", {P(dtype::f32), T(dtype::i32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* sixteen = k.v(OpKind::add, {k.ci(T(dtype::i32), 8), k.ci(T(dtype::i32), 8)}, T(dtype::i32));
  Value* base = k.v(OpKind::mul, {pid, sixteen}, T(dtype::i32));
  Value* r = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  Value* offs = k.v(OpKind::add, {k.splat(base, {16}), r}, T(dtype::i32, {16}));
  Value* pid2 = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* base2 = k.v(OpKind::mul, {pid2, k.ci(T(dtype::i32), 16)}, T(dtype::i32));
  Value* offs2 = k.v(OpKind::add, {k.splat(base2, {16}), r}, T(dtype::i32, {16}));
  Value* zero = k.splat(k.ci(T(dtype::i32), 0), {16});
  Value* shifted = k.v(OpKind::add, {offs2, zero}, T(dtype::i32, {16}));
  Value* mask = k.v(OpKind::cmp, {offs, k.splat(k.arg(1), {16})}, T(dtype::i1, {16}), A({2}));
  Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(0), {16}), shifted}, P(dtype::f32, {16}));
  Value* x = k.v(OpKind::load, {ptrs, mask}, T(dtype::f32, {16}), A({1, 0, 0, 0, 0}));
  k.v(OpKind::mul, {x, x}, T(dtype::f32, {16}));  // dead
  Value* two = k.splat(k.cf(T(dtype::f32), 2.0), {16});
  k.op(OpKind::store, {ptrs, k.v(OpKind::mul, {x, two}, T(dtype::f32, {16})), mask}, {}, A({1, 0, 0}));
  k.ret();
  std::ostringstream os;
  tile::transforms::canonicalize(k.f(), quiet(os));
  CHECK(os.str().empty());
  CHECK(print(k.f(), false) == R"(kernel @canon(%arg0: ptr<f32>, %arg1: i32) {
  %0 = program_id {axis = 0} : i32
  %1 = constant 16 : i32
  %2 = mul %0, %1 : i32
  %3 = arange {start = 0, end = 16} : i32[16]
  %4 = splat %2 : i32 -> i32[16]
  %5 = add %4, %3 : i32[16]
  %6 = splat %arg1 : i32 -> i32[16]
  %7 = cmp lt %5, %6 : i1[16]
  %8 = splat %arg0 : ptr<f32> -> ptr<f32>[16]
  %9 = addptr %8, %5 : ptr<f32>[16]
  %10 = load %9, %7 : f32[16]
  %11 = constant 2.0 : f32[16]
  %12 = mul %10, %11 : f32[16]
  store %9, %12, %7 : ptr<f32>[16], f32[16], i1[16]
  return
}
)");
}

TEST_CASE("canonicalize: sample kernels stay valid and reach a fixed point") {
  for (auto make : {add_kernel, misc_kernel}) {
    auto f = make();
    std::ostringstream os;
    tile::transforms::canonicalize(*f, quiet(os));
    std::string once = print(*f);
    std::uint64_t h = structural_hash(*f);
    tile::transforms::canonicalize(*f, quiet(os));
    CHECK(print(*f) == once);
    CHECK(structural_hash(*f) == h);
    CHECK(count_ops(*f, OpKind::store) + count_ops(*f, OpKind::print) >= 1);
  }
}

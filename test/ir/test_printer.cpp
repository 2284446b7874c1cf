// test/ir/test_printer.cpp — the textual form: golden text for small kernels (a loop with
// carried values, a branch, a while, a reduction, memory ops and every attr kind), numbering,
// locations and robustness on malformed IR. The kernels are in sample_kernels.cpp.
#include <cmath>

#include "ir_test.hpp"

using namespace irt;

TEST_CASE("golden: a kernel with a loop, a branch and masked memory ops") {
  auto f = add_kernel();
  verify(*f);
  const char* expected = R"(kernel @add(%arg0: ptr<f32> {div=16}, %arg1: i32, %arg2: ptr<f32> {div=16}) {
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
  %10 = constant -0.5 : f32
  %11 = splat %10 : f32 -> f32[16]
  %12 = load %9, %7, %11 {cache = cg} : f32[16]
  %13 = constant 0 : i32
  %14 = constant 4 : i32
  %15 = constant 1 : i32
  %16 = for %17 = %13 to %14 step %15 iter_args(%18 = %12) -> (f32[16]) {
    %19 = add %18, %18 : f32[16]
    yield %19 : f32[16]
  }
  %20 = cmp gt %arg1, %1 : i1
  %21 = if %20 -> (f32[16]) {
    yield %16 : f32[16]
  } else {
    %22 = neg %16 : f32[16]
    yield %22 : f32[16]
  }
  %23 = splat %arg2 : ptr<f32> -> ptr<f32>[16]
  %24 = addptr %23, %5 : ptr<f32>[16]
  store %24, %21, %7 : ptr<f32>[16], f32[16], i1[16]
  return
}
)";
  CHECK(print(*f, false) == expected);
}
TEST_CASE("golden: while, reduce, scan, dot, shape ops, atomics, print, assert") {
  auto f = misc_kernel();
  verify(*f);
  const char* expected = R"(kernel @misc(%arg0: ptr<f16>, %arg1: i64) {
  %0 = cast %arg1 : i64 -> i32
  %1 = constant 0 : i32
  %2 = while (%3 = %1) -> (i32) {
    %4 = cmp lt %3, %0 : i1
    condition %4 : i1
  } do (%5: i32) {
    %6 = constant 1 : i32
    %7 = add %5, %6 : i32
    yield %7 : i32
  }
  %8 = arange {start = 0, end = 16} : i32[16]
  %9 = expand_dims %8 {axis = 1} : i32[16] -> i32[16,1]
  %10 = broadcast %9 : i32[16,1] -> i32[16,16]
  %11 = permute %10 {order = [1, 0]} : i32[16,16] -> i32[16,16]
  %12 = splat %arg0 : ptr<f16> -> ptr<f16>[16,16]
  %13 = addptr %12, %11 : ptr<f16>[16,16]
  %14 = load %13 {evict = last, volatile} : f16[16,16]
  %15 = constant 0.0 : f32
  %16 = splat %15 : f32 -> f32[16,16]
  %17 = dot %14, %14, %16 {precision = ieee} : f32[16,16]
  %18 = reduce %17 {axis = 1} -> (f32[16]) combine(%19: f32, %20: f32) {
    %21 = maximum %19, %20 : f32
    yield %21 : f32
  }
  %22 = scan %8 {axis = 0, reverse} -> (i32[16]) combine(%23: i32, %24: i32) {
    %25 = add %23, %24 : i32
    yield %25 : i32
  }
  %26 = join %18, %18 : f32[16], f32[16] -> f32[16,2]
  %27, %28 = split %26 : f32[16,2] -> f32[16], f32[16]
  %29 = bitcast %28 : f32[16] -> i32[16]
  %30 = hint %29 {multiple_of = 16} : i32[16]
  %31 = constant 1 : i1
  %32 = splat %31 : i1 -> i1[16]
  %33 = constant inf : f64
  %34 = constant -0.0 : f64
  %35 = constant 1.0 : f64
  %36 = splat %arg0 : ptr<f16> -> ptr<f16>[16]
  %37 = addptr %36, %22 : ptr<f16>[16]
  %38 = constant 1.0 : f16
  %39 = splat %38 : f16 -> f16[16]
  %40 = atomic_rmw add %37, %39, %32 : f16[16]
  print "x = \"q\"\n" %30, %2, %40, %33, %34, %35 {hex} : i32[16], i32, f16[16], f64, f64, f64
  assert %32, "kern.cpp:40: x > 0" : i1[16]
  return
}
)";
  CHECK(print(*f, false) == expected);
}

TEST_CASE("locations: the file's basename and line, after two spaces; unknown ones are omitted") {
  K k("locs", {T(dtype::i32)});
  Value* c = k.ci(T(dtype::i32), 3, L(7, "/a/b/c/my kernel.cpp"));
  Value* s = k.v(OpKind::add, {k.arg(0), c}, T(dtype::i32));
  k.sink({s}, L(9, "C:\\win\\k.cpp"));
  Op* loop = k.op(OpKind::for_, {c, c, c}, {}, {}, L(11, "/x/loop.cpp"), 1);
  loop->region(0)->add_arg(T(dtype::i32));
  Builder(loop->region(0)).create(OpKind::yield, {}, {});
  k.ret(L(12, "rel.cpp"));
  k.f().loc = L(1, "/x/launch.cpp");
  CHECK(print(k.f()) == R"(kernel @locs(%arg0: i32) {  loc("launch.cpp":1)
  %0 = constant 3 : i32  loc("my kernel.cpp":7)
  %1 = add %arg0, %0 : i32
  print "v" %1 : i32  loc("k.cpp":9)
  for %2 = %0 to %0 step %0 {  loc("loop.cpp":11)
    yield
  }
  return  loc("rel.cpp":12)
}
)");
  CHECK(print(k.f(), false).find("loc(") == std::string::npos);
}

TEST_CASE("numbering restarts per print and follows the text") {
  auto f = add_kernel();
  std::string a = print(*f), b = print(*f);
  CHECK(a == b);
  // the loop's result is numbered before its region's arguments and ops
  CHECK(a.find("%16 = for %17 = %13") != std::string::npos);
}

TEST_CASE("attrs beyond an op's documented meaning are printed generically") {
  K k;
  Value* c = k.ci(T(dtype::i32), 1);
  c->def->attrs.ints.push_back(99);
  Value* d = k.v(OpKind::add, {c, c}, T(dtype::i32), A({5}, "tag", 0.25));
  Value* z1 = k.cf(T(dtype::f32), 0.0);
  Value* z2 = k.cf(T(dtype::f32), -0.0);
  Value* nan = k.cf(T(dtype::f32), NAN);
  Value* m = k.v(OpKind::cmp, {c, c}, T(dtype::i1), A({17}));
  Value* ld = k.v(OpKind::load, {k.v(OpKind::constant, {}, P(dtype::f32), A({0}))}, T(dtype::f32), A({1, 0, 0, 0, 0}));
  k.sink({d, z1, z2, nan, m, ld});
  k.ret();
  std::string s = print(k.f(), false);
  CHECK(s.find("%0 = constant 1 {ints = [99]} : i32") != std::string::npos);
  CHECK(s.find("%1 = add %0, %0 {ints = [5], f = 0.25, str = \"tag\"} : i32") != std::string::npos);
  CHECK(s.find("constant 0.0 : f32") != std::string::npos);
  CHECK(s.find("constant -0.0 : f32") != std::string::npos);
  CHECK(s.find("constant nan : f32") != std::string::npos);
  CHECK(s.find("cmp pred(17) %0, %0") != std::string::npos);
  // has_mask = 1 with no mask operand: the inconsistent flags are shown
  CHECK(s.find("load %6 {ints = [1, 0, 0, 0, 0]} : f32") != std::string::npos);
}

TEST_CASE("malformed IR still prints (dumps of IR that failed verification)") {
  K k;
  Value* c = k.ci(T(dtype::i32), 1);
  Value* stray = std::make_unique<Value>().release();
  stray->type = T(dtype::i32);
  k.op(OpKind::add, {c, nullptr}, {T(dtype::i32)});
  k.op(OpKind::add, {c, stray}, {T(dtype::i32)});
  Op* bad_for = k.op(OpKind::for_, {c}, {}, {}, {}, 1);  // no iv, too few operands
  (void)bad_for;
  std::string s = print(k.f(), false);
  CHECK(s.find("add %0, <null>") != std::string::npos);
  CHECK(s.find("add %0, <undefined>") != std::string::npos);
  CHECK(s.find("for %0 region() {") != std::string::npos);
  delete stray;
}

TEST_CASE("kernel arguments: names from ArgInfo, divisibility shown when > 1") {
  K k("named", {P(dtype::bf16), T(dtype::u64), T(dtype::f64)}, {16, 8, 1});
  k.f().arg_info[2].name = "scale";
  k.ret();
  CHECK(print(k.f()) == "kernel @named(%arg0: ptr<bf16> {div=16}, %arg1: u64 {div=8}, %scale: f64) {\n  return\n}\n");
  k.f().arg_info.clear();  // missing infos: default names, no divisibility
  CHECK(print(k.f()) == "kernel @named(%arg0: ptr<bf16>, %arg1: u64, %arg2: f64) {\n  return\n}\n");
}

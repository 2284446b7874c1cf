// test/ir/test_verifier.cpp — the verifier accepts valid IR and rejects each kind of broken IR
// with a message naming the stage, the op and the broken rule, located at the op's file:line
// and naming the kernel.
#include "ir_test.hpp"

using namespace irt;

namespace {

/// Verify `f` expecting a failure whose message contains `fragment`, located at kern.cpp:line.
void expect_broken(const Function& f, const std::string& fragment, std::uint32_t line, const char* stage = "test") {
  Caught c = catch_error([&] { verify(f, stage); });
  REQUIRE_MESSAGE(c.thrown, "expected the verifier to reject: " << fragment << "\n" << print(f));
  CHECK_MESSAGE(c.message.find(fragment) != std::string::npos, "message: " << c.message << "\nwanted: " << fragment);
  CHECK(c.message.rfind("IR verifier (after " + std::string(stage) + "): op '", 0) == 0);
  CHECK(c.where.line == line);
  CHECK_MESSAGE(c.what.find("kern.cpp:" + std::to_string(line) + ": error: kernel '" + f.name + "': IR verifier") !=
                    std::string::npos,
                c.what);
  CHECK(c.kernel == f.name);
}

/// A for loop over [0, 4) carrying one value of type `carried`; returns the loop.
Op* make_for(K& k, Value* init, std::uint32_t line) {
  Value* c = k.ci(T(dtype::i32), 0);
  Op* loop = k.op(OpKind::for_, {c, c, c, init}, {init->type}, {}, L(line), 1);
  loop->region(0)->add_arg(T(dtype::i32));
  loop->region(0)->add_arg(init->type);
  return loop;
}

}  // namespace

TEST_CASE("valid IR passes") {
  auto a = add_kernel();
  auto m = misc_kernel();
  CHECK_NOTHROW(verify(*a));
  CHECK_NOTHROW(verify(*m, "cse"));
  auto c = clone(*m);
  CHECK_NOTHROW(verify(*c));
  // non-power-of-two extents are the frontend's business, not the IR's
  K k("odd", {P(dtype::f32)});
  Value* r = k.v(OpKind::arange, {}, T(dtype::i32, {10}), A({3, 13}));
  Value* p = k.v(OpKind::addptr, {k.splat(k.arg(0), {10}), r}, P(dtype::f32, {10}));
  k.v(OpKind::load, {p}, T(dtype::f32, {10}), A({0, 0, 0, 0, 0}));
  k.ret();
  CHECK_NOTHROW(verify(k.f()));
}

TEST_CASE("arithmetic operands of different types") {
  K k("mixed", {T(dtype::i32), T(dtype::f32)});
  k.v(OpKind::add, {k.arg(0), k.arg(1)}, T(dtype::i32), {}, L(21));
  k.ret();
  Caught c = catch_error([&] { verify(k.f(), "cse"); });
  CHECK(c.message == "IR verifier (after cse): op 'add': operands and result must have the same type (f32, i32)");
  CHECK(c.what == "/home/user/kernels/kern.cpp:21: error: kernel 'mixed': " + c.message);
  expect_broken(k.f(), "operands and result must have the same type (f32, i32)", 21);
}

TEST_CASE("elementwise shapes must agree") {
  K k;
  Value* a = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  Value* b = k.v(OpKind::arange, {}, T(dtype::i32, {8}), A({0, 8}));
  k.v(OpKind::mul, {a, b}, T(dtype::i32, {16}), {}, L(22));
  k.ret();
  expect_broken(k.f(), "op 'mul': operands and result of an elementwise op must have one shape (i32[16], i32[8] -> i32[16])", 22);
}

TEST_CASE("cmp yields i1") {
  K k;
  Value* a = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  k.v(OpKind::cmp, {a, a}, T(dtype::i32, {16}), A({0}), L(23));
  k.ret();
  expect_broken(k.f(), "op 'cmp': the result must be i1 of the operands' shape (i32[16], i1[16])", 23);
}

TEST_CASE("select needs an i1 condition; addptr needs integer offsets") {
  K k("sel", {P(dtype::f32)});
  Value* a = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  k.v(OpKind::select, {a, a, a}, T(dtype::i32, {16}), {}, L(24));
  k.ret();
  expect_broken(k.f(), "op 'select': the condition must be i1 (i32[16])", 24);

  K k2("ptr", {P(dtype::f32)});
  Value* off = k2.splat(k2.cf(T(dtype::f32), 1.0), {16});
  k2.v(OpKind::addptr, {k2.splat(k2.arg(0), {16}), off}, P(dtype::f32, {16}), {}, L(25));
  k2.ret();
  expect_broken(k2.f(), "op 'addptr': addptr takes pointers and integer offsets (ptr<f32>[16], f32[16])", 25);
}

TEST_CASE("load: operand count per has_mask/has_other, result = pointee type") {
  K k("ld", {P(dtype::f32)});
  Value* p = k.splat(k.arg(0), {16});
  k.v(OpKind::load, {p}, T(dtype::f32, {16}), A({1, 0, 0, 0, 0}), L(26));
  k.ret();
  expect_broken(k.f(), "op 'load': expects 2 operands, got 1", 26);

  K k2("ld2", {P(dtype::f32)});
  Value* p2 = k2.splat(k2.arg(0), {16});
  k2.v(OpKind::load, {p2}, T(dtype::f16, {16}), A({0, 0, 0, 0, 0}), L(27));
  k2.ret();
  expect_broken(k2.f(), "op 'load': the result must have the pointee type of the pointers' shape (f16[16], f32[16])", 27);

  K k3("ld3", {P(dtype::f32)});
  Value* p3 = k3.splat(k3.arg(0), {16});
  Value* m3 = k3.splat(k3.ci(T(dtype::i1), 1), {8});
  k3.v(OpKind::load, {p3, m3}, T(dtype::f32, {16}), A({1, 0, 0, 0, 0}), L(28));
  k3.ret();
  expect_broken(k3.f(), "op 'load': the mask must be i1 of the pointers' shape (ptr<f32>[16], i1[8])", 28);
}

TEST_CASE("store: the value has the pointee type") {
  K k("st", {P(dtype::f32)});
  Value* p = k.splat(k.arg(0), {16});
  Value* v = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  k.op(OpKind::store, {p, v}, {}, A({0, 0, 0}), L(29));
  k.ret();
  expect_broken(k.f(), "op 'store': the stored value must have the pointee type of the pointers' shape (i32[16], f32[16])", 29);
}

TEST_CASE("dot shapes are [M,K] x [K,N] -> [M,N]") {
  K k;
  Value* a = k.splat(k.cf(T(dtype::f32), 1.0), {16, 32});
  Value* b = k.splat(k.cf(T(dtype::f32), 1.0), {16, 16});
  Value* c = k.splat(k.cf(T(dtype::f32), 0.0), {16, 16});
  k.v(OpKind::dot, {a, b, c}, T(dtype::f32, {16, 16}), A({0}), L(30));
  k.ret();
  expect_broken(k.f(), "op 'dot': dot takes [M,K] x [K,N] with an [M,N] accumulator (f32[16,32], f32[16,16], f32[16,16])", 30);
}

TEST_CASE("reduce removes its axis; its combine region takes two scalars per input") {
  K k;
  Value* x = k.splat(k.cf(T(dtype::f32), 1.0), {16, 8});
  Op* red = k.op(OpKind::reduce, {x}, {T(dtype::f32, {8, 16})}, A({1}), L(31), 1);
  Value* a = red->region(0)->add_arg(T(dtype::f32));
  red->region(0)->add_arg(T(dtype::f32));
  Builder(red->region(0)).create(OpKind::yield, {a}, {});
  k.ret();
  expect_broken(k.f(), "op 'reduce': result 0 must be input 0 without axis 1 ([16,8] -> [16]) (f32[16,8], f32[8,16])", 31);

  K k2;
  Value* x2 = k2.splat(k2.cf(T(dtype::f32), 1.0), {16});
  Op* red2 = k2.op(OpKind::reduce, {x2}, {T(dtype::f32)}, A({0}), L(32), 1);
  Value* a2 = red2->region(0)->add_arg(T(dtype::f32));
  Builder(red2->region(0)).create(OpKind::yield, {a2}, {});
  k2.ret();
  expect_broken(k2.f(), "op 'reduce': the combine region takes two scalars per input (a0..an-1, b0..bn-1) (f32 for inputs f32[16])", 32);
}

TEST_CASE("a for's yield must match its results") {
  K k;
  Value* init = k.splat(k.cf(T(dtype::f32), 0.0), {16});
  Op* loop = make_for(k, init, 33);
  Value* s = Builder(loop->region(0)).constant_float(T(dtype::f32), 1.0);
  Builder(loop->region(0)).create(OpKind::yield, {s}, {}, {}, L(34));
  k.ret();
  expect_broken(k.f(), "op 'yield': yields (f32) where the enclosing 'for' expects (f32[16])", 34);

  K k2;
  Value* init2 = k2.ci(T(dtype::i32), 0);
  Value* c = k2.ci(T(dtype::i32), 0);
  Op* loop2 = k2.op(OpKind::for_, {c, c, c, init2}, {T(dtype::i32)}, {}, L(35), 1);
  loop2->region(0)->add_arg(T(dtype::i32));  // the carried argument is missing
  Builder(loop2->region(0)).create(OpKind::yield, {init2}, {});
  k2.ret();
  expect_broken(k2.f(), "op 'for': the body takes the induction variable and one argument per carried value, got 1", 35);
}

TEST_CASE("if: an i1 scalar condition, and both branches yield the results") {
  K k;
  Value* cond = k.ci(T(dtype::i1), 1);
  Op* br = k.op(OpKind::if_, {cond}, {T(dtype::i32)}, {}, L(36), 2);
  Value* one = Builder(br->region(0)).constant_int(T(dtype::i32), 1);
  Builder(br->region(0)).create(OpKind::yield, {one}, {}, {}, L(37));
  Builder(br->region(1)).create(OpKind::yield, {}, {}, {}, L(38));
  k.ret();
  expect_broken(k.f(), "op 'yield': yields () where the enclosing 'if' expects (i32)", 38);

  K k2;
  Value* tile = k2.splat(k2.ci(T(dtype::i1), 1), {4});
  Op* br2 = k2.op(OpKind::if_, {tile}, {}, {}, L(39), 2);
  Builder(br2->region(0)).create(OpKind::yield, {}, {});
  Builder(br2->region(1)).create(OpKind::yield, {}, {});
  k2.ret();
  expect_broken(k2.f(), "op 'if': the condition must be an i1 scalar (i1[4])", 39);
}

TEST_CASE("a while's condition region ends with `condition`") {
  K k;
  Value* init = k.ci(T(dtype::i32), 0);
  Op* w = k.op(OpKind::while_, {init}, {T(dtype::i32)}, {}, L(40), 2);
  Value* a = w->region(0)->add_arg(T(dtype::i32));
  Builder(w->region(0)).create(OpKind::yield, {a}, {}, {}, L(41));
  Value* b = w->region(1)->add_arg(T(dtype::i32));
  Builder(w->region(1)).create(OpKind::yield, {b}, {});
  k.ret();
  expect_broken(k.f(), "op 'yield': the condition region of 'while' must end with 'condition'", 41);
}

TEST_CASE("terminators: exactly one, at the end; the body ends with return") {
  K k;
  Value* c = k.ci(T(dtype::i32), 0);
  Op* loop = make_for(k, c, 42);
  Builder in(loop->region(0));
  in.create(OpKind::yield, {c}, {}, {}, L(43));
  in.create(OpKind::add, {c, c}, {T(dtype::i32)}, {}, L(44));
  k.ret();
  expect_broken(k.f(), "op 'yield': a terminator must be the last op of its block", 43);

  K k2;
  Value* c2 = k2.ci(T(dtype::i32), 0);
  Op* loop2 = make_for(k2, c2, 45);
  Builder(loop2->region(0)).create(OpKind::add, {c2, c2}, {T(dtype::i32)}, {}, L(46));
  k2.ret();
  expect_broken(k2.f(), "op 'add': the block does not end with a terminator (yield or condition expected after it)", 46);

  K k3("noret", {P(dtype::f32)});
  k3.op(OpKind::store, {k3.arg(0), k3.cf(T(dtype::f32), 1.0)}, {}, A({0, 0, 0}), L(47));
  expect_broken(k3.f(), "op 'store': the block does not end with a terminator (return expected after it)", 47);

  K k4;
  k4.op(OpKind::yield, {}, {}, {}, L(48));
  expect_broken(k4.f(), "op 'yield': the kernel body must end with 'return'", 48);

  K k5;
  Value* c5 = k5.ci(T(dtype::i32), 0);
  Op* loop5 = make_for(k5, c5, 49);
  Builder(loop5->region(0)).create(OpKind::ret, {}, {}, {}, L(50));
  k5.ret();
  expect_broken(k5.f(), "op 'return': a region of 'for' must end with 'yield'", 50);
}

TEST_CASE("dominance: no use of a region's value outside it, no use before definition") {
  K k;
  Value* c = k.ci(T(dtype::i32), 0);
  Op* loop = make_for(k, c, 51);
  Value* inner = Builder(loop->region(0)).create(OpKind::add, {c, c}, {T(dtype::i32)})->result();
  Builder(loop->region(0)).create(OpKind::yield, {inner}, {});
  k.v(OpKind::mul, {inner, c}, T(dtype::i32), {}, L(52));
  k.ret();
  expect_broken(k.f(), "op 'mul': operand #0 is defined inside a region that does not enclose this use (i32)", 52);

  K k2;
  Value* a = k2.ci(T(dtype::i32), 1);
  Op* use = k2.op(OpKind::add, {a, a}, {T(dtype::i32)}, {}, L(53));
  Value* later = k2.ci(T(dtype::i32), 2);
  use->operands[1] = later;
  k2.ret();
  expect_broken(k2.f(), "op 'add': operand #1 is used before its definition (i32)", 53);

  K k3;  // a loop's own result inside its body
  Value* c3 = k3.ci(T(dtype::i32), 0);
  Op* loop3 = make_for(k3, c3, 54);
  Builder(loop3->region(0)).create(OpKind::yield, {loop3->result()}, {}, {}, L(55));
  k3.ret();
  expect_broken(k3.f(), "op 'yield': operand #0 is a result of the enclosing 'for', which is not visible inside its regions (i32)", 55);

  K k4;
  Value* stray = std::make_unique<Value>().release();
  stray->type = T(dtype::i64);
  k4.v(OpKind::neg, {stray}, T(dtype::i64), {}, L(56));
  k4.ret();
  expect_broken(k4.f(), "op 'neg': operand #0 is not defined in this function (i64)", 56);
  delete stray;

  K k5;
  k5.v(OpKind::neg, {nullptr}, T(dtype::i64), {}, L(57));
  k5.ret();
  expect_broken(k5.f(), "op 'neg': operand #0 is null", 57);
}

TEST_CASE("shape ops, casts, constants and attributes") {
  K k;
  Value* t = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  k.v(OpKind::splat, {t}, T(dtype::i32, {16}), {}, L(58));
  k.ret();
  expect_broken(k.f(), "op 'splat': splat takes a scalar to a tile of its element type (i32[16], i32[16])", 58);

  K k2("c", {P(dtype::f32)});
  k2.v(OpKind::cast, {k2.arg(0)}, T(dtype::f32), {}, L(59));
  k2.ret();
  expect_broken(k2.f(), "op 'cast': a pointer casts only to or from i64/u64 (ptr<f32>, f32)", 59);

  K k3;
  k3.v(OpKind::constant, {}, T(dtype::i1), A({2}), L(60));
  k3.ret();
  expect_broken(k3.f(), "op 'constant': an i1 constant must be 0 or 1, got 2 (i1)", 60);

  K k4;
  k4.v(OpKind::program_id, {}, T(dtype::i32), A({3}), L(61));
  k4.ret();
  expect_broken(k4.f(), "op 'program_id': axis 3 is out of range", 61);

  K k5;
  Value* r = k5.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  Value* r2 = k5.v(OpKind::expand_dims, {r}, T(dtype::i32, {16, 1}), A({1}));
  k5.v(OpKind::broadcast, {r2}, T(dtype::i32, {8, 16}), {}, L(62));
  k5.ret();
  expect_broken(k5.f(), "op 'broadcast': broadcast keeps the element type and rank and stretches only extents of 1", 62);

  K k6;
  Value* r6 = k6.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  k6.v(OpKind::reshape, {r6}, T(dtype::i32, {4, 8}), {}, L(63));
  k6.ret();
  expect_broken(k6.f(), "op 'reshape': reshape keeps the element type and the number of elements (i32[16], i32[4,8])", 63);

  K k7;
  k7.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 8}), L(64));
  k7.ret();
  expect_broken(k7.f(), "op 'arange': the result must be i32[end - start] for start 0, end 8 (i32[16])", 64);

  K k8;
  Value* z = k8.v(OpKind::arange, {}, T(dtype::i32, {0}), A({0, 0}), L(65));
  (void)z;
  k8.ret();
  expect_broken(k8.f(), "op 'arange': tile extents must be positive (i32[0])", 65);
}

TEST_CASE("the stage is named in the message") {
  K k;
  k.v(OpKind::neg, {k.cf(T(dtype::f32), 1.0)}, T(dtype::f64), {}, L(66));
  k.ret();
  expect_broken(k.f(), "operands and result must have the same type (f32, f64)", 66, "constant_fold");
}

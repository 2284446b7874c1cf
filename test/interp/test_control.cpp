// test/interp/test_control.cpp — control flow (for, while, if), device_print's format,
// device_assert, program ids, and the launch itself (grids, threads, errors).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sstream>

#include "build_helpers.hpp"

using namespace it;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;

namespace {
/// sum = 0; for (iv = lo; iv < hi; iv += step) sum += iv; out[0] = sum; out[1] = trips.
template <class E>
std::vector<E> run_for(dtype t, E lo, E hi, E step, src_loc loc = {}) {
  K k("loop", {T(t), T(t), T(t), P(t)});
  Op* f = k.op(OpKind::for_, {k.arg(0), k.arg(1), k.arg(2), k.ci(T(t), 0), k.ci(T(t), 0)}, {T(t), T(t)}, {}, loc, 1);
  Block* body = f->region(0);
  Value* iv = body->add_arg(T(t));
  Value* sum = body->add_arg(T(t));
  Value* trips = body->add_arg(T(t));
  {
    In in(k, body);
    k.yield({k.bin(OpKind::add, sum, iv), k.bin(OpKind::add, trips, k.ci(T(t), 1))});
  }
  k.store(k.arg(3), f->result(0));
  k.store(k.v(OpKind::addptr, {k.arg(3), k.ci(T(dtype::i32), 1)}, P(t)), f->result(1));
  Buf<E> out(2, E{});
  auto as_arg = [](E v) {
    if constexpr (std::is_unsigned_v<E>) return I(static_cast<std::int64_t>(static_cast<std::uint64_t>(v)));
    else return I(static_cast<std::int64_t>(v));
  };
  launch(k.done(), {}, {as_arg(lo), as_arg(hi), as_arg(step), out.arg()}, {out.region()});
  return out.data;
}
}  // namespace

TEST_CASE("for: iv from lo while iv < hi; results are the final carried values") {
  CHECK(run_for<i32>(dtype::i32, 0, 10, 1) == std::vector<i32>{45, 10});
  CHECK(run_for<i32>(dtype::i32, -5, 6, 4) == std::vector<i32>{-5 + -1 + 3, 3});
  CHECK(run_for<i32>(dtype::i32, 5, 5, 1) == std::vector<i32>{0, 0});
  CHECK(run_for<i32>(dtype::i32, 7, 2, 1) == std::vector<i32>{0, 0});
  // bounds compare unsigned for unsigned types
  CHECK(run_for<std::uint32_t>(dtype::u32, 0xfffffff0u, 0xfffffff4u, 1) ==
        std::vector<std::uint32_t>{0xfffffff0u * 4 + 6, 4});
  // no wrap-around at the top of the type: stops when iv + step would pass hi
  CHECK(run_for<std::int8_t>(dtype::i8, 120, 127, 5) == std::vector<std::int8_t>{static_cast<std::int8_t>(245 - 256), 2});
  CHECK(run_for<i64>(dtype::i64, INT64_MAX - 2, INT64_MAX, 10) == std::vector<i64>{INT64_MAX - 2, 1});
}

TEST_CASE("for: a step <= 0 is an error at the op's location") {
  auto msg = error_of([] { run_for<i32>(dtype::i32, 0, 10, 0, L(77, "loops.cpp")); });
  CHECK(msg.find("loops.cpp:77: error: kernel 'loop': for_range step must be positive, got 0") == 0);
  msg = error_of([] { run_for<i32>(dtype::i32, 0, 10, -2); });
  CHECK(msg.find("for_range step must be positive, got -2") != std::string::npos);
}

TEST_CASE("for carrying tiles; while; if") {
  // acc[4] = 0; for i in 0..3: acc = acc * 2 + arange
  K k("tiles", {P(dtype::i32)});
  Value* zero = k.splat(k.ci(T(dtype::i32), 0), {4});
  Op* f = k.op(OpKind::for_, {k.ci(T(dtype::i32), 0), k.ci(T(dtype::i32), 3), k.ci(T(dtype::i32), 1), zero},
               {T(dtype::i32, {4})}, {}, {}, 1);
  f->region(0)->add_arg(T(dtype::i32));
  Value* acc = f->region(0)->add_arg(T(dtype::i32, {4}));
  {
    In in(k, f->region(0));
    Value* two = k.splat(k.ci(T(dtype::i32), 2), {4});
    k.yield({k.bin(OpKind::add, k.bin(OpKind::mul, acc, two), k.arange(4))});
  }
  // while (x < 100) x = x * 3   (x = 1 -> 243), carrying a count too
  Op* w = k.op(OpKind::while_, {k.ci(T(dtype::i32), 1), k.ci(T(dtype::i32), 0)}, {T(dtype::i32), T(dtype::i32)}, {}, {}, 2);
  Value* cx = w->region(0)->add_arg(T(dtype::i32));
  w->region(0)->add_arg(T(dtype::i32));
  {
    In in(k, w->region(0));
    k.op(OpKind::condition, {k.cmp(CmpPred::lt, cx, k.ci(T(dtype::i32), 100))}, {});
  }
  Value* bx = w->region(1)->add_arg(T(dtype::i32));
  Value* bn = w->region(1)->add_arg(T(dtype::i32));
  {
    In in(k, w->region(1));
    k.yield({k.bin(OpKind::mul, bx, k.ci(T(dtype::i32), 3)), k.bin(OpKind::add, bn, k.ci(T(dtype::i32), 1))});
  }
  // if (count == 5) 1000 else 2000
  Op* br = k.op(OpKind::if_, {k.cmp(CmpPred::eq, w->result(1), k.ci(T(dtype::i32), 5))}, {T(dtype::i32)}, {}, {}, 2);
  {
    In in(k, br->region(0));
    k.yield({k.ci(T(dtype::i32), 1000)});
  }
  {
    In in(k, br->region(1));
    k.yield({k.ci(T(dtype::i32), 2000)});
  }
  k.store(k.ptrs(k.arg(0), 4), f->result());
  k.store(k.v(OpKind::addptr, {k.arg(0), k.ci(T(dtype::i32), 4)}, P(dtype::i32)), w->result(0));
  k.store(k.v(OpKind::addptr, {k.arg(0), k.ci(T(dtype::i32), 5)}, P(dtype::i32)), w->result(1));
  k.store(k.v(OpKind::addptr, {k.arg(0), k.ci(T(dtype::i32), 6)}, P(dtype::i32)), br->result());
  Buf<i32> out(7, -1);
  launch(k.done(), {}, {out.arg()}, {out.region()});
  CHECK(out.data == std::vector<i32>{0, 7, 14, 21, 243, 5, 1000});
}

TEST_CASE("if without results: an empty else, or no else region at all") {
  for (unsigned regions : {2u, 1u}) {
    K k("if_only", {T(dtype::i32), P(dtype::i32)});
    Op* br = k.op(OpKind::if_, {k.cmp(CmpPred::gt, k.arg(0), k.ci(T(dtype::i32), 0))}, {}, {}, {}, regions);
    {
      In in(k, br->region(0));
      k.store(k.arg(1), k.arg(0));
      k.yield({});
    }
    if (regions == 2) {
      In in(k, br->region(1));
      k.yield({});
    }
    auto fn = k.done();
    Buf<i32> out(1, 7);
    launch(fn, {}, {I(5), out.arg()}, {out.region()});
    CHECK(out.data[0] == 5);
    launch(fn, {}, {I(-1), out.arg()}, {out.region()});
    CHECK(out.data[0] == 5);
  }
}

TEST_CASE("program_id and num_programs over a 3-D grid; every program runs once") {
  K k("ids", {P(dtype::i32)});
  auto id = [&](OpKind kind, int ax) { return k.v(kind, {}, T(dtype::i32), A({ax})); };
  Value* nx = id(OpKind::num_programs, 0);
  Value* ny = id(OpKind::num_programs, 1);
  Value* nz = id(OpKind::num_programs, 2);
  Value* lin = k.bin(OpKind::add, id(OpKind::program_id, 0),
                     k.bin(OpKind::mul, nx, k.bin(OpKind::add, id(OpKind::program_id, 1),
                                                  k.bin(OpKind::mul, ny, id(OpKind::program_id, 2)))));
  Value* total = k.bin(OpKind::mul, k.bin(OpKind::mul, nx, ny), nz);
  Value* p = k.v(OpKind::addptr, {k.arg(0), lin}, P(dtype::i32));
  k.v(OpKind::atomic_rmw, {p, total}, T(dtype::i32), A({0, 0}));
  Buf<i32> out(3 * 5 * 7, 0);
  launch(k.done(), {3, 5, 7}, {out.arg()}, {out.region()}, 3);
  CHECK(std::all_of(out.data.begin(), out.data.end(), [](i32 v) { return v == 105; }));
  // a zero extent runs nothing
  launch(k.done(), {3, 0, 7}, {out.arg()}, {out.region()});
  CHECK(std::all_of(out.data.begin(), out.data.end(), [](i32 v) { return v == 105; }));
}

TEST_CASE("print: one line per element, prefix, operand numbers, hex, floats round-trip") {
  K k("printer", {});
  Value* t = k.v(OpKind::reshape, {k.arange(4)}, T(dtype::i32, {2, 2}));
  k.op(OpKind::print, {t}, {}, A({0}, "t = "));
  k.op(OpKind::print, {k.cf(T(dtype::f32), 0.1), k.cf(T(dtype::f16), 0.1)}, {}, A({0}, "x: "));
  k.op(OpKind::print, {k.ci(T(dtype::i32), -1), k.ci(T(dtype::u8), 255), k.cf(T(dtype::f16), 1.0)}, {}, A({1}, "h "));
  k.op(OpKind::print, {k.cf(T(dtype::f64), 1.0 / 3.0), k.ci(T(dtype::u64), -1)}, {}, A({0}, ""));
  std::ostringstream os;
  launch(k.done(), {1, 2, 1}, {}, {}, 1, &os);
  const std::string expect_pid1 =
      "pid (0, 1, 0) idx (0, 0) t = 0\n"
      "pid (0, 1, 0) idx (0, 1) t = 1\n"
      "pid (0, 1, 0) idx (1, 0) t = 2\n"
      "pid (0, 1, 0) idx (1, 1) t = 3\n"
      "pid (0, 1, 0) idx () x: (operand 0) 0.1\n"
      "pid (0, 1, 0) idx () x: (operand 1) 0.1\n"
      "pid (0, 1, 0) idx () h (operand 0) 0xffffffff\n"
      "pid (0, 1, 0) idx () h (operand 1) 0xff\n"
      "pid (0, 1, 0) idx () h (operand 2) 0x3c00\n"
      "pid (0, 1, 0) idx () (operand 0) 0.3333333333333333\n"
      "pid (0, 1, 0) idx () (operand 1) 18446744073709551615\n";
  std::string expect_pid0 = expect_pid1;
  for (std::size_t at = 0; (at = expect_pid0.find("pid (0, 1, 0)", at)) != std::string::npos;)
    expect_pid0.replace(at, 13, "pid (0, 0, 0)");
  CHECK(os.str() == expect_pid0 + expect_pid1);
}

TEST_CASE("print lines stay whole when programs print in parallel") {
  K k("par", {});
  k.op(OpKind::print, {k.v(OpKind::program_id, {}, T(dtype::i32), A({0}))}, {}, A({0}, "p="));
  std::ostringstream os;
  launch(k.done(), {200}, {}, {}, 8, &os);
  std::istringstream is(os.str());
  std::string line;
  int n = 0;
  while (std::getline(is, line)) {
    ++n;
    CHECK(line.rfind("pid (", 0) == 0);
    CHECK(line.find(" idx () p=") != std::string::npos);
  }
  CHECK(n == 200);
}

TEST_CASE("device_assert failure names the message, program and first failing element") {
  K k("asserting", {});
  Value* ok = k.cmp(CmpPred::lt, k.arange(8), k.splat(k.ci(T(dtype::i32), 5), {8}));
  k.op(OpKind::assert_, {ok}, {}, A({}, "idx < 5"), L(12, "a.cpp"));
  auto msg = error_of([&] { launch(k.done(), {1}, {}, {}); });
  CHECK(msg == "a.cpp:12: error: kernel 'asserting': device_assert failed: idx < 5 (program (0, 0, 0), element [5])");
  // a true assert passes
  K k2("fine", {});
  k2.op(OpKind::assert_, {k2.ci(T(dtype::i1), 1)}, {}, A({}, "always"));
  launch(k2.done(), {4}, {}, {});
}

TEST_CASE("the first error stops the launch and is rethrown; other programs stop promptly") {
  // program 3 fails at once while programs 0..2 (on the other threads) are in a loop of 2e9
  // iterations: the launch only ends quickly if they are stopped between iterations
  K k("stopper", {P(dtype::i32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  k.op(OpKind::assert_, {k.cmp(CmpPred::ne, pid, k.ci(T(dtype::i32), 3))}, {}, A({}, "not three"));
  Op* f = k.op(OpKind::for_, {k.ci(T(dtype::i32), 0), k.ci(T(dtype::i32), 2000000000), k.ci(T(dtype::i32), 1),
                              k.ci(T(dtype::i32), 0)},
               {T(dtype::i32)}, {}, {}, 1);
  f->region(0)->add_arg(T(dtype::i32));
  Value* c = f->region(0)->add_arg(T(dtype::i32));
  {
    In in(k, f->region(0));
    k.yield({k.bin(OpKind::add, c, k.ci(T(dtype::i32), 1))});
  }
  k.store(k.arg(0), f->result());
  Buf<i32> out(1, 0);
  auto fn = k.done();
  auto msg = error_of([&] { launch(fn, {64}, {out.arg()}, {out.region()}, 4); });
  CHECK(msg.find("device_assert failed: not three (program (3, 0, 0))") != std::string::npos);
}

TEST_CASE("launch errors: wrong argument count") {
  K k("two_args", {P(dtype::i32), T(dtype::i32)});
  auto msg = error_of([&] { launch(k.done(), {}, {I(0)}, {}); });
  CHECK(msg.find("kernel 'two_args': interpreter: launched with 1 arguments, the kernel takes 2") != std::string::npos);
}

TEST_CASE("print: bf16, f16, i1 and pointers") {
  K k("printer2", {P(dtype::f32)});
  k.op(OpKind::print, {k.cf(T(dtype::bf16), 1.0 / 3.0)}, {}, A({0}, "b="));
  k.op(OpKind::print, {k.cf(T(dtype::f16), 65504.0)}, {}, A({0}, "h="));
  k.op(OpKind::print, {k.ci(T(dtype::i1), 1)}, {}, A({0}, "c="));
  k.op(OpKind::print, {k.v(OpKind::cast, {k.ci(T(dtype::i64), 0x1234)}, P(dtype::f32))}, {}, A({0}, "p="));
  k.op(OpKind::print, {k.cf(T(dtype::f32), -0.0), k.cf(T(dtype::f32), 1e30)}, {}, A({0}, ""));
  std::ostringstream os;
  launch(k.done(), {}, {I(0)}, {}, 1, &os);
  CHECK(os.str() ==
        "pid (0, 0, 0) idx () b=0.334\n"
        "pid (0, 0, 0) idx () h=65504\n"
        "pid (0, 0, 0) idx () c=1\n"
        "pid (0, 0, 0) idx () p=0x0000000000001234\n"
        "pid (0, 0, 0) idx () (operand 0) -0\n"
        "pid (0, 0, 0) idx () (operand 1) 1e+30\n");
}

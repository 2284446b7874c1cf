// test/interp/test_memory.cpp — checked memory access in the interpreter: masked loads and
// stores, `other`, i1 in memory, out-of-bounds messages, atomics (parallel and per kind) and CAS.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "build_helpers.hpp"

using namespace it;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using u64 = std::uint64_t;

namespace {
Value* lanes_below(K& k, std::int64_t n, std::int64_t bound) {
  return k.cmp(CmpPred::lt, k.arange(n), k.splat(k.ci(T(dtype::i32), bound), {n}));
}
}  // namespace

TEST_CASE("masked load gives `other` (or 0) and does not touch masked-off lanes; masked store") {
  K k("masked", {P(dtype::i32), P(dtype::i32), P(dtype::i32)});
  Value* m = lanes_below(k, 8, 5);
  Value* x = k.load(k.ptrs(k.arg(0), 8), m, k.splat(k.ci(T(dtype::i32), -1), {8}));
  k.store(k.ptrs(k.arg(1), 8), x);
  Value* y = k.load(k.ptrs(k.arg(0), 8), m);
  k.store(k.ptrs(k.arg(2), 8), y, lanes_below(k, 8, 3));
  Buf<i32> in({10, 11, 12, 13, 14}), out(8, 99), out2(8, 99);  // in: only 5 elements
  launch(k.done(), {}, {in.arg(), out.arg(), out2.arg()}, {in.region(), out.region(), out2.region()});
  CHECK(out.data == std::vector<i32>{10, 11, 12, 13, 14, -1, -1, -1});
  CHECK(out2.data == std::vector<i32>{10, 11, 12, 99, 99, 99, 99, 99});
}

TEST_CASE("i1 in memory: one byte, nonzero reads as 1, stores 0/1") {
  K k("bools", {P(dtype::i1), P(dtype::i32), P(dtype::i1)});
  Value* b = k.load(k.ptrs(k.arg(0), 4));
  k.store(k.ptrs(k.arg(1), 4), k.cast(b, dtype::i32));
  k.store(k.ptrs(k.arg(2), 4), k.v(OpKind::bit_not, {b}, b->type));
  Buf<u8> in({0, 2, 255, 1}), nb(4, 7);
  Buf<i32> out(4, 0);
  launch(k.done(), {}, {in.arg(), out.arg(), nb.arg()}, {in.region(), out.region(), nb.region()});
  CHECK(out.data == std::vector<i32>{0, 1, 1, 1});
  CHECK(nb.data == std::vector<u8>{1, 0, 0, 0});
}

TEST_CASE("out-of-bounds load: kernel, program, element, bytes past the end, file:line") {
  K k("oob_kernel", {T(dtype::i32), T(dtype::i32), P(dtype::f32), P(dtype::f32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* offs = k.bin(OpKind::add, k.arange(128), k.splat(k.bin(OpKind::mul, pid, k.ci(T(dtype::i32), 300)), {128}));
  // lanes at 1000 and 1001 are masked off: the first bad lane reads element 1002
  Value* m = k.bin(OpKind::bit_and, k.cmp(CmpPred::ne, offs, k.splat(k.ci(T(dtype::i32), 1000), {128})),
                   k.cmp(CmpPred::ne, offs, k.splat(k.ci(T(dtype::i32), 1001), {128})));
  Value* x = k.load(k.addptr(k.arg(2), offs), m, nullptr, L(42));
  k.store(k.addptr(k.arg(3), k.arange(128)), x);
  Buf<float> in(1000, 1.0f, "argument 2 (ptr<f32>, 1000 elements)");
  Buf<float> out(128, 0.0f, "argument 3 (ptr<f32>, 128 elements)");
  auto f = k.done();
  for (unsigned threads : {1u, 4u}) {
    std::string msg = error_of([&] {
      launch(f, {4, 1, 1}, {I(0), I(0), in.arg(), out.arg()}, {in.region(), out.region()}, threads);
    });
    CHECK(msg.find("/home/user/kernels/kern.cpp:42: error: kernel 'oob_kernel': ") == 0);
    CHECK(msg.find("out-of-bounds load: program (3, 0, 0), element [102] (of f32[128]) reads 4 bytes at 0x") !=
          std::string::npos);
    CHECK(msg.find(", 8 bytes past the end of argument 2 (ptr<f32>, 1000 elements)") != std::string::npos);
  }
  // the error's fields
  try {
    launch(f, {4, 1, 1}, {I(0), I(0), in.arg(), out.arg()}, {in.region(), out.region()}, 1);
    FAIL("expected an error");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "oob_kernel");
    CHECK(e.where().line == 42);
    CHECK(e.message().rfind("out-of-bounds load", 0) == 0);
  }
}

TEST_CASE("out-of-bounds store before the start; 2-D element index; atomics") {
  K k("oob_store", {P(dtype::i32)});
  Value* rows = k.v(OpKind::expand_dims, {k.arange(4)}, T(dtype::i32, {4, 1}), A({1}));
  Value* cols = k.v(OpKind::expand_dims, {k.arange(8)}, T(dtype::i32, {1, 8}), A({0}));
  Value* r8 = k.bin(OpKind::mul, k.v(OpKind::broadcast, {rows}, T(dtype::i32, {4, 8})),
                    k.splat(k.ci(T(dtype::i32), 8), {4, 8}));
  Value* offs = k.bin(OpKind::add, r8, k.v(OpKind::broadcast, {cols}, T(dtype::i32, {4, 8})));
  offs = k.bin(OpKind::sub, offs, k.splat(k.ci(T(dtype::i32), 19), {4, 8}));  // element [2, 3] -> offset 0
  // lanes from [2, 3] on are in bounds; active lanes: offsets >= -2, so [2, 1] (-2) is the first bad one
  Value* m = k.cmp(CmpPred::ne, offs, k.splat(k.ci(T(dtype::i32), -3), {4, 8}));
  m = k.bin(OpKind::bit_and, m, k.cmp(CmpPred::ge, offs, k.splat(k.ci(T(dtype::i32), -3), {4, 8})));
  k.store(k.addptr(k.arg(0), offs), offs, m, L(7, "store.cpp"));
  Buf<i32> buf(16, 0, "argument 0 (ptr<i32>, 16 elements)");
  auto msg = error_of([&] { launch(k.done(), {1, 2, 1}, {buf.arg()}, {buf.region()}, 1); });
  CHECK(msg.find("store.cpp:7: error: kernel 'oob_store': out-of-bounds store: program (0, 0, 0), element [2, 1] "
                 "(of i32[4,8]) writes 4 bytes at 0x") != std::string::npos);
  CHECK(msg.find("8 bytes before the start of argument 0 (ptr<i32>, 16 elements)") != std::string::npos);
  CHECK(buf.data == std::vector<i32>(16, 0));  // nothing was written: all lanes are checked first

  K a("oob_atomic", {P(dtype::i32)});
  a.v(OpKind::atomic_rmw, {a.v(OpKind::addptr, {a.arg(0), a.ci(T(dtype::i32), 16)}, P(dtype::i32)), a.ci(T(dtype::i32), 1)},
      T(dtype::i32), A({0, 0}), L(9));
  msg = error_of([&] { launch(a.done(), {}, {buf.arg()}, {buf.region()}); });
  CHECK(msg.find("out-of-bounds atomic: program (0, 0, 0), scalar (i32) writes 4 bytes at 0x") != std::string::npos);
  CHECK(msg.find("0 bytes past the end of argument 0") != std::string::npos);
}

TEST_CASE("null, far-away and straddling addresses") {
  auto scalar_load = [](std::int64_t addr_offset, bool from_null) {
    K k("wild", {P(dtype::i32), P(dtype::i32)});
    Value* base = from_null ? k.ci(T(dtype::i64), 0) : k.cast(k.arg(0), dtype::i64);
    Value* a = k.bin(OpKind::add, base, k.ci(T(dtype::i64), addr_offset));
    Value* p = k.v(OpKind::cast, {a}, P(dtype::i32));
    k.store(k.arg(1), k.load(p, nullptr, nullptr, L(3)));
    return k.done();
  };
  Buf<i32> in(1, 5, "argument 0 (ptr<i32>, 1 elements)"), out(1, 0, "argument 1 (ptr<i32>, 1 elements)");
  auto run = [&](const std::shared_ptr<const Function>& f) {
    return error_of([&] { launch(f, {}, {in.arg(), out.arg()}, {in.region(), out.region()}); });
  };
  auto msg = run(scalar_load(0, true));
  CHECK(msg.find("reads 4 bytes at 0x0 (a null pointer), which is not inside any buffer passed to the kernel") !=
        std::string::npos);
  msg = run(scalar_load(std::int64_t{1} << 40, false));
  CHECK(msg.find("which is not inside any buffer passed to the kernel") != std::string::npos);
  msg = run(scalar_load(2, false));
  CHECK(msg.find("straddling the end of argument 0") != std::string::npos);
  launch(scalar_load(0, false), {}, {in.arg(), out.arg()}, {in.region(), out.region()});
  CHECK(out.data[0] == 5);
}

TEST_CASE("parallel atomic_add: 1000 programs, one counter, exact; each gets a distinct old value") {
  K k("count", {P(dtype::i32), P(dtype::i32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* old = k.v(OpKind::atomic_rmw, {k.arg(0), k.ci(T(dtype::i32), 1)}, T(dtype::i32), A({0, 0}));
  k.store(k.v(OpKind::addptr, {k.arg(1), pid}, P(dtype::i32)), old);
  Buf<i32> counter(1, 0), olds(1000, -1);
  launch(k.done(), {1000, 1, 1}, {counter.arg(), olds.arg()}, {counter.region(), olds.region()}, 8);
  CHECK(counter.data[0] == 1000);
  std::sort(olds.data.begin(), olds.data.end());
  std::vector<i32> expect(1000);
  std::iota(expect.begin(), expect.end(), 0);
  CHECK(olds.data == expect);

  // f32 adds from 4096 programs across a 2-D grid: every value is a small integer, so exact
  K f("fcount", {P(dtype::f32)});
  f.v(OpKind::atomic_rmw, {f.arg(0), f.cf(T(dtype::f32), 1.0)}, T(dtype::f32), A({0, 0}));
  Buf<float> fc(1, 0.0f);
  launch(f.done(), {64, 8, 8}, {fc.arg()}, {fc.region()});
  CHECK(fc.data[0] == 4096.0f);
}

TEST_CASE("atomic kinds on tiles: row-major lanes, masks, unsigned max, f16 rounding") {
  auto run_kind = [](atomic_kind kind, std::vector<i32> mem, std::vector<i32> vals, std::vector<u8> mask) {
    K k("kinds", {P(dtype::i32), P(dtype::i32), P(dtype::i1), P(dtype::i32)});
    Value* offs = k.bin(OpKind::rem, k.arange(4), k.splat(k.ci(T(dtype::i32), 2), {4}));  // lanes 0,2 and 1,3 share
    Value* m = k.load(k.ptrs(k.arg(2), 4));
    Value* old = k.v(OpKind::atomic_rmw, {k.addptr(k.arg(0), offs), k.load(k.ptrs(k.arg(1), 4)), m}, T(dtype::i32, {4}),
                     A({static_cast<std::int64_t>(kind), 1}));
    k.store(k.ptrs(k.arg(3), 4), old);
    Buf<i32> mb(std::move(mem)), vb(std::move(vals)), ob(4, -7);
    Buf<u8> kb(std::move(mask));
    launch(k.done(), {}, {mb.arg(), vb.arg(), kb.arg(), ob.arg()}, {mb.region(), vb.region(), kb.region(), ob.region()});
    return std::pair{mb.data, ob.data};
  };
  auto [m1, o1] = run_kind(atomic_kind::add, {10, 20}, {1, 2, 3, 4}, {1, 1, 1, 0});
  CHECK(m1 == std::vector<i32>{14, 22});
  CHECK(o1 == std::vector<i32>{10, 20, 11, 0});  // lane 2 sees lane 0's add; lane 3 masked: 0
  auto [m2, o2] = run_kind(atomic_kind::max, {10, 20}, {5, 25, 30, -1}, {1, 1, 1, 1});
  CHECK(m2 == std::vector<i32>{30, 25});
  CHECK(o2 == std::vector<i32>{10, 20, 10, 25});
  auto [m3, o3] = run_kind(atomic_kind::min, {10, 20}, {5, 25, 30, -1}, {1, 1, 1, 1});
  CHECK(m3 == std::vector<i32>{5, -1});
  auto [m4, o4] = run_kind(atomic_kind::xchg, {10, 20}, {5, 25, 30, -1}, {1, 1, 0, 1});
  CHECK(m4 == std::vector<i32>{5, -1});
  CHECK(o4 == std::vector<i32>{10, 20, 0, 25});
  auto [m5, o5] = run_kind(atomic_kind::bit_and, {0xff, 0xff}, {0x0f, 0x3c, 0x03, 0x30}, {1, 1, 1, 1});
  CHECK(m5 == std::vector<i32>{0x03, 0x30});
  auto [m6, o6] = run_kind(atomic_kind::bit_or, {0, 0}, {1, 2, 4, 8}, {1, 1, 1, 1});
  CHECK(m6 == std::vector<i32>{5, 10});
  auto [m7, o7] = run_kind(atomic_kind::bit_xor, {1, 1}, {1, 3, 1, 0}, {1, 1, 1, 1});
  CHECK(m7 == std::vector<i32>{1, 2});

  // u64 max compares unsigned
  K u("umax", {P(dtype::u64)});
  u.v(OpKind::atomic_rmw, {u.arg(0), u.ci(T(dtype::u64), -1)}, T(dtype::u64), A({1, 0}));
  Buf<u64> ub(1, 5);
  launch(u.done(), {}, {ub.arg()}, {ub.region()});
  CHECK(ub.data[0] == UINT64_MAX);

  // f16 add: 2048 + 1 stays 2048
  K h("hadd", {P(dtype::f16)});
  h.v(OpKind::atomic_rmw, {h.arg(0), h.cf(T(dtype::f16), 1.0)}, T(dtype::f16), A({0, 0}));
  Buf<tile::half> hb(1, H(2048));
  launch(h.done(), {4}, {hb.arg()}, {hb.region()});
  CHECK(static_cast<float>(hb.data[0]) == 2048.0f);
}

TEST_CASE("atomic_cas: stores where old == cmp, returns old; a CAS spin lock is mutually exclusive") {
  K k("cas", {P(dtype::i32), P(dtype::i32)});
  Value* p = k.ptrs(k.arg(0), 3);
  Value* cmpv = k.load(k.ptrs(k.arg(1), 3));
  Value* val = k.bin(OpKind::add, cmpv, k.splat(k.ci(T(dtype::i32), 100), {3}));
  Value* old = k.v(OpKind::atomic_cas, {p, cmpv, val}, T(dtype::i32, {3}));
  k.store(k.ptrs(k.arg(1), 3), old);
  Buf<i32> mem({0, 5, 7}), io({0, 1, 7});
  launch(k.done(), {}, {mem.arg(), io.arg()}, {mem.region(), io.region()});
  CHECK(mem.data == std::vector<i32>{100, 5, 107});
  CHECK(io.data == std::vector<i32>{0, 5, 7});

  // while (cas(lock, 0, 1) != 0) {}  counter = counter + 1 (plain load/store)  xchg(lock, 0)
  K s("spin", {P(dtype::i32), P(dtype::i32)});
  Op* w = s.op(OpKind::while_, {s.ci(T(dtype::i32), 0)}, {T(dtype::i32)}, {}, {}, 2);
  {
    In in(s, w->region(0));
    w->region(0)->add_arg(T(dtype::i32));
    Value* o = s.v(OpKind::atomic_cas, {s.arg(0), s.ci(T(dtype::i32), 0), s.ci(T(dtype::i32), 1)}, T(dtype::i32));
    s.op(OpKind::condition, {s.cmp(CmpPred::ne, o, s.ci(T(dtype::i32), 0))}, {});
  }
  {
    Value* a = w->region(1)->add_arg(T(dtype::i32));
    In in(s, w->region(1));
    s.yield({a});
  }
  s.store(s.arg(1), s.bin(OpKind::add, s.load(s.arg(1)), s.ci(T(dtype::i32), 1)));
  s.v(OpKind::atomic_rmw, {s.arg(0), s.ci(T(dtype::i32), 0)}, T(dtype::i32), A({3, 0}));
  Buf<i32> lock(1, 0), counter(1, 0);
  launch(s.done(), {2000}, {lock.arg(), counter.arg()}, {lock.region(), counter.region()}, 8);
  CHECK(counter.data[0] == 2000);
  CHECK(lock.data[0] == 0);
}

TEST_CASE("scalar loads and stores with a false mask touch nothing, even through a null pointer") {
  K k("scalar_mask", {P(dtype::f32), T(dtype::i1)});
  Value* null_p = k.v(OpKind::cast, {k.ci(T(dtype::i64), 0)}, P(dtype::f32));
  Value* x = k.load(null_p, k.arg(1), k.cf(T(dtype::f32), 2.5));
  Value* hinted = k.v(OpKind::hint, {x}, x->type, A({0, 16}));
  k.store(null_p, hinted, k.arg(1));
  k.store(k.arg(0), hinted);
  Buf<float> out(1, 0.0f);
  launch(k.done(), {}, {out.arg(), I(0)}, {out.region()});
  CHECK(out.data[0] == 2.5f);
  CHECK_THROWS_AS(launch(k.done(), {}, {out.arg(), I(1)}, {out.region()}), tile::error);
}

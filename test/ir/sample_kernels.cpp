// test/ir/sample_kernels.cpp — hand-built kernels shared by the IR tests (declared in
// ir_test.hpp): valid IR that uses every op kind, as the frontend would build it.
#include <cmath>

#include "ir_test.hpp"

namespace irt {

/// Vector add with a loop and a branch, built as the frontend would.
std::unique_ptr<Function> add_kernel() {
  K k("add", {P(dtype::f32), T(dtype::i32), P(dtype::f32)}, {16, 1, 16});
  const char* file = "/src/app/add.cpp";
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}), L(12, file));
  Value* block = k.ci(T(dtype::i32), 16, L(12, file));
  Value* base = k.v(OpKind::mul, {pid, block}, T(dtype::i32), {}, L(12, file));
  Value* r = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}), L(12, file));
  Value* offs = k.v(OpKind::add, {k.splat(base, {16}), r}, T(dtype::i32, {16}), {}, L(12, file));
  Value* mask = k.v(OpKind::cmp, {offs, k.splat(k.arg(1), {16})}, T(dtype::i1, {16}), A({2}), L(13, file));
  Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(0), {16}), offs}, P(dtype::f32, {16}), {}, L(14, file));
  Value* other = k.splat(k.cf(T(dtype::f32), -0.5), {16});
  Value* x = k.v(OpKind::load, {ptrs, mask, other}, T(dtype::f32, {16}), A({1, 1, 2, 0, 0}), L(14, file));
  Value* lo = k.ci(T(dtype::i32), 0);
  Value* hi = k.ci(T(dtype::i32), 4);
  Value* step = k.ci(T(dtype::i32), 1);
  Op* loop = k.op(OpKind::for_, {lo, hi, step, x}, {T(dtype::f32, {16})}, {}, L(15, file), 1);
  {
    Block* body = loop->region(0);
    body->add_arg(T(dtype::i32));
    Value* acc = body->add_arg(T(dtype::f32, {16}));
    Builder in(body);
    Value* twice = in.create(OpKind::add, {acc, acc}, {T(dtype::f32, {16})}, {}, L(16, file))->result();
    in.create(OpKind::yield, {twice}, {}, {}, L(15, file));
  }
  Value* big = k.v(OpKind::cmp, {k.arg(1), block}, T(dtype::i1), A({4}), L(18, file));
  Op* branch = k.op(OpKind::if_, {big}, {T(dtype::f32, {16})}, {}, L(18, file), 2);
  {
    Builder t(branch->region(0));
    t.create(OpKind::yield, {loop->result()}, {}, {}, L(18, file));
    Builder e(branch->region(1));
    Value* n = e.create(OpKind::neg, {loop->result()}, {T(dtype::f32, {16})}, {}, L(19, file))->result();
    e.create(OpKind::yield, {n}, {}, {}, L(18, file));
  }
  Value* out = k.v(OpKind::addptr, {k.splat(k.arg(2), {16}), offs}, P(dtype::f32, {16}), {}, L(20, file));
  k.op(OpKind::store, {out, branch->result(), mask}, {}, A({1, 0, 0}), L(20, file));
  k.ret(L(21, file));
  return std::move(k.fn);
}

/// One of everything else: while, reduce with a combine region, scan, dot, atomics, shape ops,
/// conversions, debugging ops and constants of every flavour.
std::unique_ptr<Function> misc_kernel() {
  K k("misc", {P(dtype::f16), T(dtype::i64)});
  Value* n = k.v(OpKind::cast, {k.arg(1)}, T(dtype::i32));
  Value* zero = k.ci(T(dtype::i32), 0);
  Op* loop = k.op(OpKind::while_, {zero}, {T(dtype::i32)}, {}, {}, 2);
  {
    Block* cond = loop->region(0);
    Value* i = cond->add_arg(T(dtype::i32));
    Builder c(cond);
    Value* lt = c.create(OpKind::cmp, {i, n}, {T(dtype::i1)}, A({2}))->result();
    c.create(OpKind::condition, {lt}, {});
    Block* body = loop->region(1);
    Value* j = body->add_arg(T(dtype::i32));
    Builder b(body);
    Value* one = b.constant_int(T(dtype::i32), 1);
    Value* nx = b.create(OpKind::add, {j, one}, {T(dtype::i32)})->result();
    b.create(OpKind::yield, {nx}, {});
  }
  Value* r = k.v(OpKind::arange, {}, T(dtype::i32, {16}), A({0, 16}));
  Value* r2 = k.v(OpKind::expand_dims, {r}, T(dtype::i32, {16, 1}), A({1}));
  Value* r3 = k.v(OpKind::broadcast, {r2}, T(dtype::i32, {16, 16}));
  Value* tr = k.v(OpKind::permute, {r3}, T(dtype::i32, {16, 16}), A({1, 0}));
  Value* ptrs = k.v(OpKind::addptr, {k.splat(k.arg(0), {16, 16}), tr}, P(dtype::f16, {16, 16}));
  Value* a = k.v(OpKind::load, {ptrs}, T(dtype::f16, {16, 16}), A({0, 0, 0, 2, 1}));
  Value* acc = k.splat(k.cf(T(dtype::f32), 0.0), {16, 16});
  Value* d = k.v(OpKind::dot, {a, a, acc}, T(dtype::f32, {16, 16}), A({2}));
  Op* red = k.op(OpKind::reduce, {d}, {T(dtype::f32, {16})}, A({1}), {}, 1);
  {
    Block* comb = red->region(0);
    Value* x = comb->add_arg(T(dtype::f32));
    Value* y = comb->add_arg(T(dtype::f32));
    Builder b(comb);
    Value* m = b.create(OpKind::maximum, {x, y}, {T(dtype::f32)})->result();
    b.create(OpKind::yield, {m}, {});
  }
  Op* sc = k.op(OpKind::scan, {r}, {T(dtype::i32, {16})}, A({0, 1}), {}, 1);
  {
    Block* comb = sc->region(0);
    Value* x = comb->add_arg(T(dtype::i32));
    Value* y = comb->add_arg(T(dtype::i32));
    Builder b(comb);
    Value* s = b.create(OpKind::add, {x, y}, {T(dtype::i32)})->result();
    b.create(OpKind::yield, {s}, {});
  }
  Value* j = k.v(OpKind::join, {red->result(), red->result()}, T(dtype::f32, {16, 2}));
  Op* sp = k.op(OpKind::split, {j}, {T(dtype::f32, {16}), T(dtype::f32, {16})});
  Value* bits = k.v(OpKind::bitcast, {sp->result(1)}, T(dtype::i32, {16}));
  Value* h = k.v(OpKind::hint, {bits}, T(dtype::i32, {16}), A({0, 16}));
  Value* tru = k.splat(k.ci(T(dtype::i1), 1), {16});
  Value* inf = k.cf(T(dtype::f64), INFINITY);
  Value* nzero = k.cf(T(dtype::f64), -0.0);
  Value* one = k.cf(T(dtype::f64), 1.0);
  Value* ap = k.v(OpKind::addptr, {k.splat(k.arg(0), {16}), sc->result()}, P(dtype::f16, {16}));
  Value* old = k.v(OpKind::atomic_rmw, {ap, k.splat(k.cf(T(dtype::f16), 1.0), {16}), tru}, T(dtype::f16, {16}),
                   A({0, 1}));
  k.op(OpKind::print, {h, loop->result(), old, inf, nzero, one}, {}, A({1}, "x = \"q\"\n"));
  k.op(OpKind::assert_, {tru}, {}, A({}, "kern.cpp:40: x > 0"));
  k.ret();
  return std::move(k.fn);
}

}  // namespace irt

// test/codegen/test_codegen.cpp — tile-level ops and control flow on the CPU backend against the
// interpreter, bit for bit: reduce along every axis of 2-D and 3-D tiles (sums whose order
// matters, a two-operand argmax region, a region with a branch), forward and reverse scans, dot
// (f32 at tf32 and ieee precision, f16/bf16 with 16-bit and f32 accumulators, i8/u8 into i32,
// wrapping i16, f64), chains of broadcast/permute/expand_dims/join/split/reshape, loops (a tile
// carried, two tiles swapped, while, if with results, nesting); lowering errors that name the op
// and the user's file:line; and the generated code of a vector add (TILE_DUMP_DIR).
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "codegen_helpers.hpp"
#include "../requires.hpp"

using namespace cg;
namespace fs = std::filesystem;

namespace {

/// i32 offsets of a tile of `shape` in a row-major buffer (2-D: through broadcasts, as a tl::
/// kernel writes them; otherwise a reshaped arange).
Value* offsets(K& k, const std::vector<std::int64_t>& shape) {
  if (shape.size() == 2) return offsets2d(k, shape[0], shape[1]);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  Value* a = k.arange(n);
  return shape.size() == 1 ? a : k.v(OpKind::reshape, {a}, T(dtype::i32, shape));
}

/// Position along axis `ax` of a tile of `shape`, as i32 of that shape.
Value* axis_index(K& k, const std::vector<std::int64_t>& shape, std::size_t ax) {
  std::vector<std::int64_t> s(shape.size(), 1);
  s[ax] = shape[ax];
  Value* a = k.v(OpKind::reshape, {k.arange(shape[ax])}, T(dtype::i32, s));
  return k.v(OpKind::broadcast, {a}, T(dtype::i32, shape));
}

struct TileIn {
  Arr data;
  std::vector<std::int64_t> shape;
};
using TileFn = std::function<std::vector<Value*>(K&, const std::vector<Value*>&)>;

/// A one-program kernel: loads each input as a tile of its shape, computes the results with `f`
/// and stores each (row-major) to an output buffer of its own. Runs on both backends and compares
/// every buffer; returns the runs (inputs first, then the outputs).
Both run_tiles(const std::string& what, const std::vector<TileIn>& ins, const TileFn& f) {
  std::vector<Type> args;
  for (auto& in : ins) args.push_back(P(in.data.t));
  K k(what, args);
  std::vector<Value*> xs;
  for (unsigned i = 0; i < ins.size(); ++i)
    xs.push_back(ins[i].shape.empty() ? k.load(k.arg(i)) : k.load(k.addptr(k.arg(i), offsets(k, ins[i].shape))));
  std::vector<Value*> rs = f(k, xs);
  std::vector<Arg> run_args;
  for (auto& in : ins) run_args.push_back(buffer(in.data));
  for (Value* r : rs) {
    Value* p = k.fn->body.add_arg(P(r->type.elem));
    k.fn->arg_info.push_back({"out" + std::to_string(k.fn->arg_info.size()), 1});
    k.store(r->type.is_scalar() ? p : k.addptr(p, offsets(k, r->type.shape)), r);
    run_args.push_back(buffer(Arr(r->type.elem, static_cast<std::size_t>(r->type.numel()), 0xcd)));
  }
  auto fn = k.done();
  ir::verify(*fn);  // hand-built, but well formed: the verifier agrees
  Both b = run_both(fn, run_args);
  same_all(what, b);
  return b;
}

Arr random_floats(dtype t, std::size_t n, double lo = -4.0, double hi = 4.0) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> d(n);
  for (auto& x : d) x = u(rng());
  return arr_floats(t, d);
}
Arr random_ints(dtype t, std::size_t n, u64 modulo = 0) {
  std::vector<u64> v(n);
  for (auto& x : v) x = modulo ? rng()() % modulo : rng()();
  return arr_bits(t, v);
}

std::vector<Value*> add_region(K& k, std::vector<Value*> a, std::vector<Value*> b) {
  return {k.bin(OpKind::add, a[0], b[0])};
}

/// argmax over (value, index) pairs: the larger value, the smaller index on ties.
std::vector<Value*> argmax_region(K& k, std::vector<Value*> a, std::vector<Value*> b) {
  Value* gt = k.cmp(CmpPred::gt, b[0], a[0]);
  Value* eq = k.cmp(CmpPred::eq, b[0], a[0]);
  Value* lt_i = k.cmp(CmpPred::lt, b[1], a[1]);
  Value* take_b = k.bin(OpKind::bit_or, gt, k.bin(OpKind::bit_and, eq, lt_i));
  return {k.v(OpKind::select, {take_b, b[0], a[0]}, a[0]->type), k.v(OpKind::select, {take_b, b[1], a[1]}, a[1]->type)};
}

}  // namespace

// ---- reduce and scan ---------------------------------------------------------------------------

TEST_CASE("reduce along each axis of 2-D and 3-D tiles: sums (order matters), max, argmax region, branchy region") {
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{8, 16}, {4, 6, 8}, {3, 1, 5}}) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    CAPTURE(shape.size());
    // floats with a wide range (a sum's order changes its rounding) and integer-valued floats
    // with ties for argmax
    Arr wide = random_floats(dtype::f32, static_cast<std::size_t>(n), -1e4, 1e4);
    for (std::size_t i = 0; i < wide.n(); i += 7) wide.set_bits(i, std::bit_cast<u32>(wide.get<float>(i) * 1e-6f));
    Arr ties = arr_floats(dtype::f32, [&] {
      std::vector<double> d(static_cast<std::size_t>(n));
      for (auto& x : d) x = static_cast<double>(rng()() % 5);
      return d;
    }());
    Arr ints = random_ints(dtype::i32, static_cast<std::size_t>(n));
    for (std::size_t ax = 0; ax < shape.size(); ++ax) {
      CAPTURE(ax);
      const auto a = static_cast<std::int64_t>(ax);
      run_tiles("reduce", {{wide, shape}, {ties, shape}, {ints, shape}}, [&](K& k, const std::vector<Value*>& x) {
        std::vector<Value*> out;
        out.push_back(combine_op(k, {x[0]}, a, [&k](auto p, auto q) { return add_region(k, p, q); })[0]);
        out.push_back(combine_op(k, {x[0]}, a, [&k](auto p, auto q) {
          return std::vector<Value*>{k.bin(OpKind::maximum, p[0], q[0])};
        })[0]);
        out.push_back(combine_op(k, {x[2]}, a, [&k](auto p, auto q) { return add_region(k, p, q); })[0]);  // wraps
        auto am = combine_op(k, {x[1], axis_index(k, shape, ax)}, a, [&k](auto p, auto q) { return argmax_region(k, p, q); });
        out.push_back(am[0]);
        out.push_back(am[1]);
        // min through an if (the region runs per position on the interpreter)
        out.push_back(combine_op(k, {x[2]}, a, [&k](auto p, auto q) {
          Op* br = k.op(OpKind::if_, {k.cmp(CmpPred::lt, p[0], q[0])}, {T(dtype::i32)}, {}, {}, 2);
          {
            In i0(k, br->region(0));
            k.yield({p[0]});
          }
          {
            In i1(k, br->region(1));
            k.yield({q[0]});
          }
          return std::vector<Value*>{br->result()};
        })[0]);
        return out;
      });
    }
  }
  // a 1-D tile to a scalar; a constant-yielding region
  Arr v = random_floats(dtype::f32, 64, -1e6, 1e6);
  run_tiles("reduce1d", {{v, {64}}}, [](K& k, const std::vector<Value*>& x) {
    return std::vector<Value*>{combine_op(k, {x[0]}, 0, [&k](auto p, auto q) { return add_region(k, p, q); })[0],
                               combine_op(k, {x[0]}, 0, [&k](auto, auto) { return std::vector<Value*>{k.cf(T(dtype::f32), 2.5)}; })[0]};
  });
}

TEST_CASE("reduce of f16 and bf16 (rounded after every step) and of u8 / i64") {
  for (dtype t : {dtype::f16, dtype::bf16}) {
    Arr x = random_floats(t, 128, -300, 300);
    run_tiles("reduce16", {{x, {8, 16}}}, [](K& k, const std::vector<Value*>& in) {
      return std::vector<Value*>{combine_op(k, {in[0]}, 0, [&k](auto p, auto q) { return add_region(k, p, q); })[0],
                                 combine_op(k, {in[0]}, 1, [&k](auto p, auto q) { return add_region(k, p, q); })[0]};
    });
  }
  run_tiles("reduce_u8_i64", {{random_ints(dtype::u8, 64), {4, 16}}, {random_ints(dtype::i64, 64), {4, 16}}},
            [](K& k, const std::vector<Value*>& in) {
              return std::vector<Value*>{
                  combine_op(k, {in[0]}, 1, [&k](auto p, auto q) { return add_region(k, p, q); })[0],
                  combine_op(k, {in[0]}, 0, [&k](auto p, auto q) { return std::vector<Value*>{k.bin(OpKind::maximum, p[0], q[0])}; })[0],
                  combine_op(k, {in[1]}, 1, [&k](auto p, auto q) { return std::vector<Value*>{k.bin(OpKind::mul, p[0], q[0])}; })[0]};
            });
}

TEST_CASE("scan forward and reverse along each axis; non-commutative and two-operand regions") {
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{6, 10}, {3, 4, 5}}) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    Arr f = random_floats(dtype::f32, static_cast<std::size_t>(n), -1e3, 1e3);
    Arr i = random_ints(dtype::i32, static_cast<std::size_t>(n), 10);
    for (std::size_t ax = 0; ax < shape.size(); ++ax) {
      for (bool rev : {false, true}) {
        CAPTURE(shape.size());
        CAPTURE(ax);
        CAPTURE(rev);
        const auto a = static_cast<std::int64_t>(ax);
        run_tiles("scan", {{f, shape}, {i, shape}}, [&](K& k, const std::vector<Value*>& x) {
          std::vector<Value*> out;
          out.push_back(combine_op(k, {x[0]}, a, [&k](auto p, auto q) { return add_region(k, p, q); }, true, rev)[0]);
          // (p, q) -> 10 p + q shows the order (wrapping)
          out.push_back(combine_op(k, {x[1]}, a, [&k](auto p, auto q) {
            return std::vector<Value*>{k.bin(OpKind::add, k.bin(OpKind::mul, p[0], k.ci(T(dtype::i32), 10)), q[0])};
          }, true, rev)[0]);
          // running (max, count of steps where the max changed)
          Value* ones = k.splat(k.ci(T(dtype::i32), 0), shape);
          auto two = combine_op(k, {x[0], ones}, a, [&k](auto p, auto q) {
            Value* up = k.cmp(CmpPred::gt, q[0], p[0]);
            return std::vector<Value*>{k.v(OpKind::select, {up, q[0], p[0]}, p[0]->type),
                                       k.bin(OpKind::add, p[1], k.cast(up, dtype::i32))};
          }, true, rev);
          out.push_back(two[0]);
          out.push_back(two[1]);
          return out;
        });
      }
    }
  }
}

// ---- dot -----------------------------------------------------------------------------------------

namespace {

/// acc + a[M, K] @ b[K, N] (the dtypes are the arrays').
Both run_dot(std::int64_t M, std::int64_t Kd, std::int64_t N, const Arr& a, const Arr& b, const Arr& c, precision prec) {
  return run_tiles("dot", {{a, {M, Kd}}, {b, {Kd, N}}, {c, {M, N}}}, [&](K& k, const std::vector<Value*>& x) {
    return std::vector<Value*>{k.v(OpKind::dot, {x[0], x[1], x[2]}, x[2]->type, A({static_cast<std::int64_t>(prec)}))};
  });
}

}  // namespace

TEST_CASE("dot: f32 at tf32 and ieee precision; f16/bf16 with 16-bit and f32 accumulators; f64") {
  const std::int64_t M = 16, Kd = 32, N = 24;
  for (precision p : {precision::tf32, precision::tf32x3, precision::ieee}) {
    CAPTURE(static_cast<int>(p));
    Arr a = random_floats(dtype::f32, M * Kd), b = random_floats(dtype::f32, Kd * N), c = random_floats(dtype::f32, M * N);
    Both r = run_dot(M, Kd, N, a, b, c, p);
    if (p == precision::tf32) {  // tf32 really rounds the inputs: differs from ieee somewhere
      Both ie = run_dot(M, Kd, N, a, b, c, precision::ieee);
      CHECK(std::memcmp(ie.cpu[3].bytes.data(), r.cpu[3].bytes.data(), r.cpu[3].bytes.size()) != 0);
    }
  }
  for (dtype ti : {dtype::f16, dtype::bf16}) {
    for (dtype acc : {ti, dtype::f32}) {
      CAPTURE(name(ti));
      CAPTURE(name(acc));
      run_dot(16, 16, 16, random_floats(ti, 256, -8, 8), random_floats(ti, 256, -8, 8), random_floats(acc, 256, -100, 100),
              precision::ieee);
      run_dot(3, 5, 7, random_floats(ti, 15), random_floats(ti, 35), random_floats(acc, 21), precision::tf32);
    }
  }
  run_dot(8, 9, 10, random_floats(dtype::f64, 72), random_floats(dtype::f64, 90), random_floats(dtype::f64, 80),
          precision::ieee);
  // f16 inputs into an f64 accumulator, f32 inputs into f16
  run_dot(4, 4, 4, random_floats(dtype::f16, 16), random_floats(dtype::f16, 16), random_floats(dtype::f64, 16),
          precision::ieee);
  run_dot(4, 8, 4, random_floats(dtype::f32, 32), random_floats(dtype::f32, 32), random_floats(dtype::f16, 16),
          precision::tf32);
}

TEST_CASE("dot: i8 and u8 into i32, wrapping i16 and i32 accumulators") {
  run_dot(16, 32, 16, random_ints(dtype::i8, 512), random_ints(dtype::i8, 512), random_ints(dtype::i32, 256),
          precision::ieee);
  run_dot(8, 16, 8, random_ints(dtype::u8, 128), random_ints(dtype::u8, 128), random_ints(dtype::i32, 64),
          precision::ieee);
  run_dot(8, 64, 8, random_ints(dtype::i8, 512), random_ints(dtype::i8, 512), random_ints(dtype::i16, 64),
          precision::ieee);
  run_dot(4, 8, 4, random_ints(dtype::i32, 32), random_ints(dtype::i32, 32), random_ints(dtype::i32, 16),
          precision::ieee);
  run_dot(4, 8, 4, random_ints(dtype::u8, 32), random_ints(dtype::u8, 32), random_ints(dtype::u32, 16),
          precision::ieee);
  // i8 extremes: -128 * -128 summed past INT32_MAX wraps
  Arr a = arr(dtype::i8, std::vector<i8>(2 * 64, -128)), b = arr(dtype::i8, std::vector<i8>(64 * 2, -128));
  Both r = run_dot(2, 64, 2, a, b, arr(dtype::i32, std::vector<i32>(4, INT32_MAX)), precision::ieee);
  CHECK(r.cpu[3].get<i32>(0) == static_cast<i32>(static_cast<u32>(INT32_MAX) + 64u * 16384u));
}

TEST_CASE("dot on views: a transposed (permuted) operand, a broadcast accumulator, elementwise around it") {
  run_tiles("dot_views", {{random_floats(dtype::f32, 64), {8, 8}}, {random_floats(dtype::f32, 8), {1, 8}}},
            [](K& k, const std::vector<Value*>& x) {
              Value* bt = k.v(OpKind::permute, {x[0]}, T(dtype::f32, {8, 8}), A({1, 0}));
              Value* acc = k.v(OpKind::broadcast, {x[1]}, T(dtype::f32, {8, 8}));
              Value* d = k.v(OpKind::dot, {x[0], bt, acc}, acc->type, A({static_cast<std::int64_t>(precision::ieee)}));
              Value* d2 = k.v(OpKind::dot, {k.v(OpKind::exp, {d}, d->type), x[0], d}, d->type, A({static_cast<std::int64_t>(precision::tf32)}));
              return std::vector<Value*>{d, d2};
            });
}

// ---- shape ops -----------------------------------------------------------------------------------

TEST_CASE("shape chains: reshape, permute, expand_dims, broadcast, split, join, splat") {
  Arr x = random_ints(dtype::i32, 32, 1000);
  run_tiles("chain_i32", {{x, {4, 8}}}, [](K& k, const std::vector<Value*>& in) {
    Value* r = k.v(OpKind::reshape, {in[0]}, T(dtype::i32, {2, 2, 8}));
    Value* p = k.v(OpKind::permute, {r}, T(dtype::i32, {8, 2, 2}), A({2, 0, 1}));
    Value* e = k.v(OpKind::expand_dims, {p}, T(dtype::i32, {8, 1, 2, 2}), A({1}));
    Value* b = k.v(OpKind::broadcast, {e}, T(dtype::i32, {8, 3, 2, 2}));
    Value* r2 = k.v(OpKind::reshape, {b}, T(dtype::i32, {24, 2, 2}));
    Op* sp = k.op(OpKind::split, {r2}, {T(dtype::i32, {24, 2}), T(dtype::i32, {24, 2})});
    Value* j = k.v(OpKind::join, {sp->result(1), sp->result(0)}, T(dtype::i32, {24, 2, 2}));
    Value* q = k.v(OpKind::permute, {j}, T(dtype::i32, {2, 24, 2}), A({1, 0, 2}));
    Value* mix = k.bin(OpKind::add, k.bin(OpKind::mul, sp->result(1), k.splat(k.ci(T(dtype::i32), 1000), {24, 2})), sp->result(0));
    // a row vector expanded and broadcast against a permuted tile
    Value* row = k.v(OpKind::expand_dims, {k.arange(4)}, T(dtype::i32, {1, 4}), A({0}));
    Value* t = k.v(OpKind::permute, {in[0]}, T(dtype::i32, {8, 4}), A({1, 0}));
    Value* sum = k.bin(OpKind::add, t, k.v(OpKind::broadcast, {row}, T(dtype::i32, {8, 4})));
    return std::vector<Value*>{q, mix, sum, r2};
  });
  run_tiles("chain_f16", {{random_floats(dtype::f16, 16), {16}}, {random_floats(dtype::f16, 16), {16}}},
            [](K& k, const std::vector<Value*>& in) {
              Value* j = k.v(OpKind::join, {in[0], in[1]}, T(dtype::f16, {16, 2}));
              Value* r = k.v(OpKind::reshape, {j}, T(dtype::f16, {4, 8}));
              Value* p = k.v(OpKind::permute, {r}, T(dtype::f16, {8, 4}), A({1, 0}));
              Value* col = k.v(OpKind::reshape, {in[0]}, T(dtype::f16, {16, 1}));
              Value* c8 = k.v(OpKind::reshape, {k.v(OpKind::broadcast, {col}, T(dtype::f16, {16, 2}))}, T(dtype::f16, {8, 4}));
              Value* s = k.bin(OpKind::mul, p, c8);
              Op* sp = k.op(OpKind::split, {j}, {T(dtype::f16, {16}), T(dtype::f16, {16})});
              return std::vector<Value*>{s, k.bin(OpKind::sub, sp->result(0), sp->result(1)), j};
            });
  // i1 tiles through shape ops; select on a permuted mask; 3-D permute orders then a reduce
  run_tiles("chain_i1", {{random_floats(dtype::f32, 60), {3, 4, 5}}}, [](K& k, const std::vector<Value*>& in) {
    Value* m = k.cmp(CmpPred::gt, in[0], k.splat(k.cf(T(dtype::f32), 0.0), {3, 4, 5}));
    Value* mp = k.v(OpKind::permute, {m}, T(dtype::i1, {4, 5, 3}), A({1, 2, 0}));
    Value* xp = k.v(OpKind::permute, {in[0]}, T(dtype::f32, {4, 5, 3}), A({1, 2, 0}));
    Value* sel = k.v(OpKind::select, {mp, xp, k.v(OpKind::neg, {xp}, xp->type)}, xp->type);
    Value* red = combine_op(k, {sel}, 1, [&k](auto p, auto q) { return add_region(k, p, q); })[0];
    Value* q = k.v(OpKind::permute, {in[0]}, T(dtype::f32, {5, 3, 4}), A({2, 0, 1}));
    return std::vector<Value*>{mp, sel, red, q, k.v(OpKind::reshape, {mp}, T(dtype::i1, {60}))};
  });
  // splat of scalar arguments (f32, i64) and of a loaded scalar
  K k("splats", {T(dtype::f32), T(dtype::i64), P(dtype::f32), P(dtype::i64)});
  Value* f = k.splat(k.arg(0), {4, 4});
  Value* fx = k.bin(OpKind::mul, f, k.cast(offsets2d(k, 4, 4), dtype::f32));
  k.store(k.addptr(k.arg(2), offsets2d(k, 4, 4)), fx);
  Value* i = k.v(OpKind::expand_dims, {k.splat(k.arg(1), {4})}, T(dtype::i64, {4, 1}), A({1}));
  Value* ib = k.bin(OpKind::add, k.v(OpKind::broadcast, {i}, T(dtype::i64, {4, 4})), k.cast(offsets2d(k, 4, 4), dtype::i64));
  k.store(k.addptr(k.arg(3), offsets2d(k, 4, 4)), ib);
  Both r = run_both(k.done(), {floating(dtype::f32, 0.1), integer(dtype::i64, -5000000000ll), buffer(Arr(dtype::f32, 16)), buffer(Arr(dtype::i64, 16))});
  same_all("splats", r);
  CHECK(r.cpu[1].get<i64>(5) == -5000000000ll + 5);
}

// ---- control flow --------------------------------------------------------------------------------

TEST_CASE("for: a carried tile; two carried tiles swapped; a carried pointer tile; unsigned and i64 bounds") {
  // acc[32] = 0; for iv in [lo, hi) step s: acc = acc * 0.5 + x * iv; swap (a, b) -> (b, a + b),
  // (u, v) -> (v^T, u) on [4, 4] tiles; p (pointers) advance by 8
  auto build = [](dtype it) {
    K k("loops", {T(it), T(it), T(it), P(dtype::f32), P(dtype::f32), P(dtype::i32), P(dtype::i32), P(dtype::i32)});
    Value* x = k.load(k.ptrs(k.arg(3), 32));
    Value* acc0 = k.splat(k.cf(T(dtype::f32), 0.0), {32});
    Value* a0 = k.arange(16);
    Value* b0 = k.splat(k.ci(T(dtype::i32), 1), {16});
    Value* u0 = offsets2d(k, 4, 4);
    Value* v0 = k.bin(OpKind::mul, offsets2d(k, 4, 4), k.splat(k.ci(T(dtype::i32), -1), {4, 4}));
    Value* p0 = k.ptrs(k.arg(7), 8);
    Op* f = k.op(OpKind::for_, {k.arg(0), k.arg(1), k.arg(2), acc0, a0, b0, u0, v0, p0},
                 {acc0->type, a0->type, b0->type, u0->type, v0->type, p0->type}, {}, L(70), 1);
    Block* body = f->region(0);
    Value* iv = body->add_arg(T(it));
    Value* acc = body->add_arg(acc0->type);
    Value* a = body->add_arg(a0->type);
    Value* b = body->add_arg(b0->type);
    Value* u = body->add_arg(u0->type);
    Value* v = body->add_arg(v0->type);
    Value* p = body->add_arg(p0->type);
    {
      In in(k, body);
      Value* ivf = k.splat(k.cast(iv, dtype::f32), {32});
      Value* nacc = k.bin(OpKind::add, k.bin(OpKind::mul, acc, k.splat(k.cf(T(dtype::f32), 0.5), {32})), k.bin(OpKind::mul, x, ivf));
      Value* vt = k.v(OpKind::permute, {v}, v->type, A({1, 0}));
      Value* ivi = k.splat(k.cast(iv, dtype::i32), {8});
      k.store(p, k.bin(OpKind::add, k.load(p), ivi));
      Value* np = k.addptr(p, k.splat(k.ci(T(dtype::i32), 8), {8}));
      k.yield({nacc, b, k.bin(OpKind::add, a, b), vt, u, np});
    }
    k.store(k.ptrs(k.arg(4), 32), f->result(0));
    k.store(k.ptrs(k.arg(5), 16), f->result(1));
    k.store(k.addptr(k.arg(5), k.arange(16, 16)), f->result(2));
    k.store(k.addptr(k.arg(6), offsets2d(k, 4, 4)), f->result(3));
    Value* off16 = k.bin(OpKind::add, offsets2d(k, 4, 4), k.splat(k.ci(T(dtype::i32), 16), {4, 4}));
    k.store(k.addptr(k.arg(6), off16), f->result(4));
    return k.done();
  };
  struct Case {
    dtype t;
    i64 lo, hi, step;
  };
  for (const Case& c : {Case{dtype::i32, 0, 7, 1}, Case{dtype::i32, 3, 20, 3}, Case{dtype::i32, 5, 5, 1}, Case{dtype::i32, 9, 2, 1},
                        Case{dtype::u8, 250, 255, 3}, Case{dtype::u32, 0xfffffff0ll, 0xfffffff5ll, 1},
                        Case{dtype::i64, INT64_MAX - 2, INT64_MAX, 10}, Case{dtype::i64, -3, 4, 2}}) {
    CAPTURE(name(c.t));
    CAPTURE(c.lo);
    CAPTURE(c.hi);
    CAPTURE(c.step);
    auto fn = build(c.t);
    ir::verify(*fn);
    Both r = run_both(fn, {integer(c.t, c.lo), integer(c.t, c.hi), integer(c.t, c.step), buffer(random_floats(dtype::f32, 32)),
                           buffer(Arr(dtype::f32, 32)), buffer(Arr(dtype::i32, 32)), buffer(Arr(dtype::i32, 32)),
                           buffer(random_ints(dtype::i32, 64, 100))});
    same_all("for", r);
  }
}

TEST_CASE("while with a reduce in its condition; if with results; an if inside a for") {
  // while (sum(x) < limit) { x = x * 2 + 1; n += 1 }, then if (n odd) (x, n * 10) else (-x, n)
  K k("ctl", {P(dtype::f32), T(dtype::f32), P(dtype::f32), P(dtype::i32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* x0 = k.load(k.ptrs(k.arg(0), 8));
  Op* w = k.op(OpKind::while_, {x0, k.ci(T(dtype::i32), 0)}, {x0->type, T(dtype::i32)}, {}, {}, 2);
  {
    Value* cx = w->region(0)->add_arg(x0->type);
    w->region(0)->add_arg(T(dtype::i32));
    In in(k, w->region(0));
    Value* s = combine_op(k, {cx}, 0, [&k](auto p, auto q) { return add_region(k, p, q); })[0];
    // the limit grows with the program id: every program loops a different number of times
    Value* lim = k.bin(OpKind::mul, k.arg(1), k.cast(k.bin(OpKind::add, pid, k.ci(T(dtype::i32), 1)), dtype::f32));
    k.op(OpKind::condition, {k.cmp(CmpPred::lt, s, lim)}, {});
  }
  {
    Value* bx = w->region(1)->add_arg(x0->type);
    Value* bn = w->region(1)->add_arg(T(dtype::i32));
    In in(k, w->region(1));
    k.yield({k.bin(OpKind::add, k.bin(OpKind::mul, bx, k.splat(k.cf(T(dtype::f32), 2.0), {8})), k.splat(k.cf(T(dtype::f32), 1.0), {8})),
             k.bin(OpKind::add, bn, k.ci(T(dtype::i32), 1))});
  }
  Value* odd = k.cmp(CmpPred::ne, k.bin(OpKind::rem, w->result(1), k.ci(T(dtype::i32), 2)), k.ci(T(dtype::i32), 0));
  Op* br = k.op(OpKind::if_, {odd}, {x0->type, T(dtype::i32)}, {}, {}, 2);
  {
    In in(k, br->region(0));
    k.yield({w->result(0), k.bin(OpKind::mul, w->result(1), k.ci(T(dtype::i32), 10))});
  }
  {
    In in(k, br->region(1));
    k.yield({k.v(OpKind::neg, {w->result(0)}, x0->type), w->result(1)});
  }
  // for i in [0, 6): acc = (i % 3 == 0) ? acc + x : acc - 1   (an if with a tile result in a loop)
  Op* f = k.op(OpKind::for_, {k.ci(T(dtype::i32), 0), k.ci(T(dtype::i32), 6), k.ci(T(dtype::i32), 1), x0}, {x0->type}, {}, {}, 1);
  {
    Value* iv = f->region(0)->add_arg(T(dtype::i32));
    Value* acc = f->region(0)->add_arg(x0->type);
    In in(k, f->region(0));
    Value* c = k.cmp(CmpPred::eq, k.bin(OpKind::rem, iv, k.ci(T(dtype::i32), 3)), k.ci(T(dtype::i32), 0));
    Op* inner = k.op(OpKind::if_, {c}, {x0->type}, {}, {}, 2);
    {
      In i0(k, inner->region(0));
      k.yield({k.bin(OpKind::add, acc, x0)});
    }
    {
      In i1(k, inner->region(1));
      k.yield({k.bin(OpKind::sub, acc, k.splat(k.cf(T(dtype::f32), 1.0), {8}))});
    }
    k.yield({inner->result()});
  }
  Value* base = k.bin(OpKind::mul, pid, k.ci(T(dtype::i32), 16));
  k.store(k.addptr(k.arg(2), k.bin(OpKind::add, k.splat(base, {8}), k.arange(8))), br->result(0));
  k.store(k.addptr(k.arg(2), k.bin(OpKind::add, k.splat(base, {8}), k.arange(8, 8))), f->result());
  k.store(k.v(OpKind::addptr, {k.arg(3), pid}, P(dtype::i32)), br->result(1));
  auto fn = k.done();
  ir::verify(*fn);
  Both r = run_both(fn, {buffer(random_floats(dtype::f32, 8, 0.0, 1.0)), floating(dtype::f32, 1000.0), buffer(Arr(dtype::f32, 4 * 16)),
                         buffer(Arr(dtype::i32, 4))},
                    Grid{4, 1, 1});
  same_all("while/if", r);
  CHECK(r.cpu[2].get<i32>(0) != r.cpu[2].get<i32>(3));
}

// ---- errors --------------------------------------------------------------------------------------

namespace {

std::string compile_error(const std::shared_ptr<const Function>& fn) {
  try {
    (void)tile::jit::compile_cpu(fn);
  } catch (const tile::error& e) {
    return e.what();
  }
  FAIL_CHECK("compile_cpu accepted kernel '" << fn->name << "'");
  return {};
}

}  // namespace

TEST_CASE("errors: a kernel the verifier accepts but the cpu backend cannot lower names the op and the user's file:line") {
  {
    // atomic and (a bitwise atomic) on f32 pointers
    K k("bad_atomic", {P(dtype::f32)});
    Value* p = k.ptrs(k.arg(0), 4);
    Value* old = k.v(OpKind::atomic_rmw, {p, k.splat(k.cf(T(dtype::f32), 1.0), {4})}, T(dtype::f32, {4}),
                     A({static_cast<std::int64_t>(atomic_kind::bit_and), 0}), L(42));
    k.store(p, old);
    auto fn = k.done();
    CHECK_NOTHROW(ir::verify(*fn));
    const std::string msg = compile_error(fn);
    CHECK(msg.find("/home/user/kernels/kern.cpp:42") == 0);
    CHECK(msg.find("'atomic_rmw'") != std::string::npos);
    CHECK(msg.find("bad_atomic") != std::string::npos);
    MESSAGE("atomic error: " << msg);
  }
  {
    // dot of float inputs into an integer accumulator
    K k("bad_dot", {P(dtype::f32), P(dtype::i32)});
    Value* a = k.load(k.addptr(k.arg(0), offsets2d(k, 2, 2)));
    Value* acc = k.load(k.addptr(k.arg(1), offsets2d(k, 2, 2)));
    Value* d = k.v(OpKind::dot, {a, a, acc}, acc->type, A({static_cast<std::int64_t>(precision::ieee)}), L(57, "/home/user/kernels/mm.cpp"));
    k.store(k.addptr(k.arg(1), offsets2d(k, 2, 2)), d);
    auto fn = k.done();
    CHECK_NOTHROW(ir::verify(*fn));
    const std::string msg = compile_error(fn);
    CHECK(msg.find("/home/user/kernels/mm.cpp:57") == 0);
    CHECK(msg.find("'dot'") != std::string::npos);
    MESSAGE("dot error: " << msg);
  }
  // the backend is still fine afterwards
  Both r = run_ew("after_error", {random_floats(dtype::f32, 100)}, {unary(OpKind::neg)});
  same_all("after an error", r);
}

// ---- generated code ------------------------------------------------------------------------------

namespace {

bool host_has_avx2() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line.find(" avx2") != std::string::npos;
  return false;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

namespace {

/// out[offs] = x[offs] + y[offs] for offs = pid * 1024 + arange(1024), masked by offs < n
std::shared_ptr<const Function> vector_add() {
  K k("vadd", {P(dtype::f32), P(dtype::f32), P(dtype::f32), T(dtype::i32)});
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* offs = k.bin(OpKind::add, k.splat(k.bin(OpKind::mul, pid, k.ci(T(dtype::i32), 1024)), {1024}), k.arange(1024));
  Value* mask = k.cmp(CmpPred::lt, offs, k.splat(k.arg(3), {1024}));
  Value* s = k.bin(OpKind::add, k.load(k.addptr(k.arg(0), offs), mask), k.load(k.addptr(k.arg(1), offs), mask));
  k.store(k.addptr(k.arg(2), offs), s, mask);
  return k.done();
}

/// What compiling `fn` with TILE_DUMP_DIR set writes: extension -> contents.
std::map<std::string, std::string> dumped_files(const std::shared_ptr<const Function>& fn) {
  char tmpl[] = "/tmp/tile-codegen-dump-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  ::setenv("TILE_DUMP_DIR", dir.c_str(), 1);
  std::string what;
  try {
    (void)tile::jit::compile_cpu(fn);
  } catch (const std::exception& e) {
    what = e.what();
  }
  ::unsetenv("TILE_DUMP_DIR");
  CHECK(what.empty());
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string nm = e.path().filename().string();
    CHECK(nm.rfind(fn->name + "-", 0) == 0);
    files[e.path().extension().string()] = slurp(e.path());
  }
  fs::remove_all(dir);
  return files;
}

/// The vectorization check depends on the host's vector ISA: the target is the host CPU (its
/// features), and LLVM's loop vectorizer emits masked vector loads for the masked tile load only
/// where the ISA has them (AVX2's vmaskmov / AVX-512's masked moves).
constexpr tiletest::needs needs_avx2{"needs an AVX2 host", []() -> std::string {
  return host_has_avx2() ? "" : "the host has no AVX2 (/proc/cpuinfo)";
}};

}  // namespace

TEST_CASE("TILE_DUMP_DIR: a vector add's .tir/.ll/.s, and it computes the interpreter's results") {
  auto fn = vector_add();
  std::map<std::string, std::string> files = dumped_files(fn);
  REQUIRE(files.count(".tir") == 1);
  REQUIRE(files.count(".ll") == 1);
  REQUIRE(files.count(".s") == 1);
  CHECK(files[".tir"].find("arange") != std::string::npos);
  CHECK(files[".tir"].find("kern.cpp") == std::string::npos);  // no locations were given
  CHECK(files[".ll"].find("define") != std::string::npos);

  // and it computes what the interpreter computes, on a partial last block
  const std::size_t n = 3000;
  Both r = run_both(fn, {buffer(random_floats(dtype::f32, n)), buffer(random_floats(dtype::f32, n)), buffer(Arr(dtype::f32, n, 0xcd)),
                         integer(dtype::i32, static_cast<i64>(n))},
                    Grid{3, 1, 1});
  same_all("vadd", r);
}

TEST_CASE("a vector add's loop is vectorized with masked loads (AVX2 hosts)" * needs_avx2) {
  std::map<std::string, std::string> files = dumped_files(vector_add());
  REQUIRE(files.count(".ll") == 1);
  const std::string& ll = files[".ll"];
  const bool v16 = ll.find("<16 x float>") != std::string::npos, v8 = ll.find("<8 x float>") != std::string::npos;
  const bool vec = v16 || v8;
  MESSAGE("vector add: " << std::string(v16 ? "<16 x float>" : v8 ? "<8 x float>" : "no vector type") << " in the LLVM IR");
  CHECK_MESSAGE(vec, "no <8 x float> / <16 x float> in the vector add's LLVM IR: the loop was not vectorized");
  CHECK_MESSAGE(ll.find("llvm.masked.load") != std::string::npos, "no llvm.masked.load in the vector add's LLVM IR");
}

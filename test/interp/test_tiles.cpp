// test/interp/test_tiles.cpp — tile-level ops in the interpreter: shape ops (broadcast,
// expand_dims, reshape, permute, join, split), reduce and scan (whole-slice and per-position
// combine regions), and dot (f16, f32 tf32 vs ieee, i8/u8 wrapping, f64).
#include <cmath>
#include <cstdint>
#include <numeric>

#include "build_helpers.hpp"

using namespace it;
using i8 = std::int8_t;
using i32 = std::int32_t;
using u8 = std::uint8_t;

namespace {
/// in[M, N] -> f(tile) -> out (the result stored row-major, `out_n` elements).
template <class E, class Fn>
std::vector<E> on_tile(dtype t, std::int64_t m, std::int64_t n, std::vector<E> in, std::size_t out_n, Fn f) {
  K k("tile", {P(t), P(t)});
  Value* x = k.load(k.addptr(k.arg(0), offsets2d(k, m, n)));
  Value* r = f(k, x);
  if (r->type.is_scalar())
    k.store(k.arg(1), r);
  else
    k.store(k.addptr(k.arg(1), k.v(OpKind::reshape, {k.arange(static_cast<std::int64_t>(out_n))},
                                   T(dtype::i32, r->type.shape))),
            r);
  Buf<E> ib(std::move(in)), ob(out_n, E{});
  launch(k.done(), {}, {ib.arg(), ob.arg()}, {ib.region(), ob.region()});
  return ob.data;
}
std::vector<i32> iota(std::size_t n, i32 start = 0) {
  std::vector<i32> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}
auto add_combine(K& k) {
  return [&k](std::vector<Value*> a, std::vector<Value*> b) { return std::vector<Value*>{k.bin(OpKind::add, a[0], b[0])}; };
}
}  // namespace

TEST_CASE("shape ops: broadcast, expand_dims, reshape, permute, join, split") {
  // broadcast [2, 1] -> [2, 3] and [1, 3] -> [2, 3]
  auto b = on_tile<i32>(dtype::i32, 2, 1, {5, 6}, 6, [](K& k, Value* x) {
    return k.v(OpKind::broadcast, {x}, T(dtype::i32, {2, 3}));
  });
  CHECK(b == std::vector<i32>{5, 5, 5, 6, 6, 6});
  b = on_tile<i32>(dtype::i32, 1, 3, {1, 2, 3}, 6, [](K& k, Value* x) {
    return k.v(OpKind::broadcast, {x}, T(dtype::i32, {2, 3}));
  });
  CHECK(b == std::vector<i32>{1, 2, 3, 1, 2, 3});
  // reshape keeps row-major order; permute [2, 3, 4] by {2, 0, 1}: out[k][i][j] = in[i][j][k]
  auto p = on_tile<i32>(dtype::i32, 6, 4, iota(24), 24, [](K& k, Value* x) {
    Value* r = k.v(OpKind::reshape, {x}, T(dtype::i32, {2, 3, 4}));
    return k.v(OpKind::permute, {r}, T(dtype::i32, {4, 2, 3}), A({2, 0, 1}));
  });
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int kk = 0; kk < 4; ++kk) CHECK(p[static_cast<std::size_t>(kk * 6 + i * 3 + j)] == i * 12 + j * 4 + kk);
  // 2-D transpose
  auto tr = on_tile<float>(dtype::f32, 2, 3, {0, 1, 2, 3, 4, 5}, 6, [](K& k, Value* x) {
    return k.v(OpKind::permute, {x}, T(dtype::f32, {3, 2}), A({1, 0}));
  });
  CHECK(tr == std::vector<float>{0, 3, 1, 4, 2, 5});
  // join interleaves on a new minor axis; split undoes it
  auto j = on_tile<i32>(dtype::i32, 2, 2, {1, 2, 3, 4}, 8, [](K& k, Value* x) {
    Value* y = k.bin(OpKind::mul, x, k.splat(k.ci(T(dtype::i32), 10), {2, 2}));
    return k.v(OpKind::join, {x, y}, T(dtype::i32, {2, 2, 2}));
  });
  CHECK(j == std::vector<i32>{1, 10, 2, 20, 3, 30, 4, 40});
  auto s = on_tile<i32>(dtype::i32, 2, 4, {1, 10, 2, 20, 3, 30, 4, 40}, 4, [](K& k, Value* x) {
    Value* r = k.v(OpKind::reshape, {x}, T(dtype::i32, {2, 2, 2}));
    Op* sp = k.op(OpKind::split, {r}, {T(dtype::i32, {2, 2}), T(dtype::i32, {2, 2})});
    return k.bin(OpKind::sub, sp->result(1), sp->result(0));
  });
  CHECK(s == std::vector<i32>{9, 18, 27, 36});
}

TEST_CASE("reduce: sum and max on axis 0 and 1, 1-D to scalar, sequential left fold") {
  const auto in = iota(12);  // [3, 4]
  auto sum0 = on_tile<i32>(dtype::i32, 3, 4, in, 4, [](K& k, Value* x) { return combine_op(k, {x}, 0, add_combine(k))[0]; });
  CHECK(sum0 == std::vector<i32>{12, 15, 18, 21});
  auto sum1 = on_tile<i32>(dtype::i32, 3, 4, in, 3, [](K& k, Value* x) { return combine_op(k, {x}, 1, add_combine(k))[0]; });
  CHECK(sum1 == std::vector<i32>{6, 22, 38});
  auto max1 = on_tile<float>(dtype::f32, 2, 3, {1, -5, 3, -1, -2, -0.5f}, 2, [](K& k, Value* x) {
    return combine_op(k, {x}, 1, [&k](auto a, auto b) { return std::vector<Value*>{k.bin(OpKind::maximum, a[0], b[0])}; })[0];
  });
  CHECK(max1 == std::vector<float>{3, -0.5f});
  // 1-D -> scalar, and the fold is sequential: ((1e8 + 1) - 1e8) + 1 = 1 in f32
  auto seq = on_tile<float>(dtype::f32, 1, 4, {1e8f, 1, -1e8f, 1}, 1, [](K& k, Value* x) {
    Value* r = k.v(OpKind::reshape, {x}, T(dtype::f32, {4}));
    return combine_op(k, {r}, 0, add_combine(k))[0];
  });
  CHECK(seq == std::vector<float>{1.0f});
}

TEST_CASE("reduce with two inputs: argmax (first index wins ties) on both axes") {
  // values [2, 4]: row 0 has a tie for the max at 1 and 3
  const std::vector<float> vals{1, 7, 3, 7, 9, 2, 9, 0};
  auto argmax = [](std::int64_t axis) {
    return [axis](K& k, Value* x) {
      Value* idx = offsets2d(k, 2, 4);
      if (axis == 1) idx = k.bin(OpKind::rem, idx, k.splat(k.ci(T(dtype::i32), 4), {2, 4}));
      else idx = k.bin(OpKind::div, idx, k.splat(k.ci(T(dtype::i32), 4), {2, 4}));
      auto r = combine_op(k, {x, idx}, axis, [&k](auto a, auto b) {
        Value* gt = k.cmp(CmpPred::gt, b[0], a[0]);
        Value* eq = k.cmp(CmpPred::eq, b[0], a[0]);
        Value* lt_i = k.cmp(CmpPred::lt, b[1], a[1]);
        Value* take_b = k.bin(OpKind::bit_or, gt, k.bin(OpKind::bit_and, eq, lt_i));
        return std::vector<Value*>{k.v(OpKind::select, {take_b, b[0], a[0]}, a[0]->type),
                                   k.v(OpKind::select, {take_b, b[1], a[1]}, a[1]->type)};
      });
      return k.cast(r[1], dtype::f32);
    };
  };
  CHECK(on_tile<float>(dtype::f32, 2, 4, vals, 2, argmax(1)) == std::vector<float>{1, 0});
  CHECK(on_tile<float>(dtype::f32, 2, 4, vals, 4, argmax(0)) == std::vector<float>{1, 0, 1, 0});
}

TEST_CASE("combine regions with constants, outer values and control flow") {
  const auto in = iota(8, 1);  // [2, 4]: 1..8
  // (a + b) * 1 + 0, with a constant and a value from outside the region (zero from the kernel)
  auto r = on_tile<i32>(dtype::i32, 2, 4, in, 2, [](K& k, Value* x) {
    Value* zero = k.ci(T(dtype::i32), 0);
    return combine_op(k, {x}, 1, [&k, zero](auto a, auto b) {
      Value* s = k.bin(OpKind::mul, k.bin(OpKind::add, a[0], b[0]), k.ci(T(dtype::i32), 1));
      return std::vector<Value*>{k.bin(OpKind::add, s, zero)};
    })[0];
  });
  CHECK(r == std::vector<i32>{10, 26});
  // a region that yields a constant: every position gets it
  auto c = on_tile<i32>(dtype::i32, 2, 4, in, 4, [](K& k, Value* x) {
    return combine_op(k, {x}, 0, [&k](auto, auto) { return std::vector<Value*>{k.ci(T(dtype::i32), 42)}; })[0];
  });
  CHECK(c == std::vector<i32>{42, 42, 42, 42});
  // a region with an if (runs per position): max via a branch
  auto m = on_tile<i32>(dtype::i32, 2, 4, {3, 9, 2, 5, -1, -7, 0, -3}, 2, [](K& k, Value* x) {
    return combine_op(k, {x}, 1, [&k](auto a, auto b) {
      Op* br = k.op(OpKind::if_, {k.cmp(CmpPred::gt, a[0], b[0])}, {T(dtype::i32)}, {}, {}, 2);
      {
        In i0(k, br->region(0));
        k.yield({a[0]});
      }
      {
        In i1(k, br->region(1));
        k.yield({b[0]});
      }
      return std::vector<Value*>{br->result()};
    })[0];
  });
  CHECK(m == std::vector<i32>{9, 0});
}

TEST_CASE("scan: inclusive, forward and reverse, on both axes; two inputs") {
  const auto in = iota(6, 1);  // [2, 3]: 1 2 3 / 4 5 6
  auto f1 = on_tile<i32>(dtype::i32, 2, 3, in, 6, [](K& k, Value* x) { return combine_op(k, {x}, 1, add_combine(k), true)[0]; });
  CHECK(f1 == std::vector<i32>{1, 3, 6, 4, 9, 15});
  auto r1 = on_tile<i32>(dtype::i32, 2, 3, in, 6, [](K& k, Value* x) {
    return combine_op(k, {x}, 1, add_combine(k), true, true)[0];
  });
  CHECK(r1 == std::vector<i32>{6, 5, 3, 15, 11, 6});
  auto f0 = on_tile<i32>(dtype::i32, 2, 3, in, 6, [](K& k, Value* x) { return combine_op(k, {x}, 0, add_combine(k), true)[0]; });
  CHECK(f0 == std::vector<i32>{1, 2, 3, 5, 7, 9});
  auto r0 = on_tile<i32>(dtype::i32, 2, 3, in, 6, [](K& k, Value* x) {
    return combine_op(k, {x}, 0, add_combine(k), true, true)[0];
  });
  CHECK(r0 == std::vector<i32>{5, 7, 9, 4, 5, 6});
  // non-commutative combine shows the order: (a, b) -> 10 * a + b
  auto digits = on_tile<i32>(dtype::i32, 1, 4, {1, 2, 3, 4}, 4, [](K& k, Value* x) {
    return combine_op(k, {x}, 1, [&k](auto a, auto b) {
      return std::vector<Value*>{k.bin(OpKind::add, k.bin(OpKind::mul, a[0], k.ci(T(dtype::i32), 10)), b[0])};
    }, true, true)[0];
  });
  CHECK(digits == std::vector<i32>{4321, 432, 43, 4});
  // two inputs: running (sum, count of positives)
  auto two = on_tile<i32>(dtype::i32, 1, 4, {5, -1, 2, 0}, 4, [](K& k, Value* x) {
    Value* pos = k.cast(k.cmp(CmpPred::gt, x, k.splat(k.ci(T(dtype::i32), 0), {1, 4})), dtype::i32);
    auto r = combine_op(k, {x, pos}, 1, [&k](auto a, auto b) {
      return std::vector<Value*>{k.bin(OpKind::add, a[0], b[0]), k.bin(OpKind::add, a[1], b[1])};
    }, true);
    return k.bin(OpKind::add, k.bin(OpKind::mul, r[0], k.splat(k.ci(T(dtype::i32), 100), {1, 4})), r[1]);
  });
  CHECK(two == std::vector<i32>{501, 401, 602, 602});
}

namespace {
/// out = dot(a[M, K], b[K, N], acc) with acc = acc_init everywhere.
template <class E, class R>
std::vector<R> run_dot(dtype ti, dtype tacc, std::int64_t M, std::int64_t Kd, std::int64_t N, std::vector<E> a,
                       std::vector<E> b, R acc_init, precision prec = precision::ieee) {
  K k("dot", {P(ti), P(ti), P(tacc)});
  Value* x = k.load(k.addptr(k.arg(0), offsets2d(k, M, Kd)));
  Value* y = k.load(k.addptr(k.arg(1), offsets2d(k, Kd, N)));
  Value* acc = k.load(k.addptr(k.arg(2), offsets2d(k, M, N)));
  Value* d = k.v(OpKind::dot, {x, y, acc}, acc->type, A({static_cast<std::int64_t>(prec)}));
  k.store(k.addptr(k.arg(2), offsets2d(k, M, N)), d);
  Buf<E> ab(std::move(a)), bb(std::move(b));
  Buf<R> cb(static_cast<std::size_t>(M * N), acc_init);
  launch(k.done(), {}, {ab.arg(), bb.arg(), cb.arg()}, {ab.region(), bb.region(), cb.region()});
  return cb.data;
}
}  // namespace

TEST_CASE("dot: f16 inputs accumulate in f32") {
  // [2, 3] x [3, 2]; 2048 + 1 + 1 is exact in f32 (not in f16)
  std::vector<tile::half> a{H(2048), H(1), H(1), H(1), H(2), H(3)};
  std::vector<tile::half> b{H(1), H(0), H(1), H(1), H(1), H(2)};
  auto r = run_dot<tile::half, float>(dtype::f16, dtype::f32, 2, 3, 2, a, b, 0.5f);
  CHECK(r == std::vector<float>{2050.5f, 3.5f, 6.5f, 8.5f});
  // f16 accumulator: rounded to f16 after every step
  auto h = run_dot<tile::half, tile::half>(dtype::f16, dtype::f16, 1, 3, 1, {H(2048), H(1), H(1)}, {H(1), H(1), H(1)}, H(0));
  CHECK(static_cast<float>(h[0]) == 2048.0f);
}

TEST_CASE("dot: f32 with tf32 rounds the inputs; ieee and tf32x3 are exact f32") {
  const float x = 1.0f + std::ldexp(1.0f, -12), y = 1.0f + std::ldexp(1.0f, -10) + std::ldexp(1.0f, -11);
  // tf32: x -> 1, y -> 1 + 2^-9 (halfway, ties to even rounds up)
  auto tf = run_dot<float, float>(dtype::f32, dtype::f32, 1, 2, 1, {x, y}, {1.0f, 1.0f}, 0.0f, precision::tf32);
  CHECK(tf[0] == 1.0f + (1.0f + std::ldexp(1.0f, -9)));
  auto ie = run_dot<float, float>(dtype::f32, dtype::f32, 1, 2, 1, {x, y}, {1.0f, 1.0f}, 0.0f, precision::ieee);
  CHECK(ie[0] == x + y);
  auto x3 = run_dot<float, float>(dtype::f32, dtype::f32, 1, 2, 1, {x, y}, {1.0f, 1.0f}, 0.0f, precision::tf32x3);
  CHECK(x3[0] == x + y);
  // accumulation order: acc first, then k = 0, 1, ... in f32
  auto ord = run_dot<float, float>(dtype::f32, dtype::f32, 1, 3, 1, {1e8f, 1.0f, -1e8f}, {1, 1, 1}, 1.0f);
  CHECK(ord[0] == 0.0f);  // ((1 + 1e8) + 1) - 1e8 = 0 in f32
}

TEST_CASE("dot: i8 and u8 accumulate in i32, wrapping; f64") {
  auto r = run_dot<i8, i32>(dtype::i8, dtype::i32, 1, 2, 2, {-128, 127}, {-128, 1, 127, -1}, 0);
  CHECK(r == std::vector<i32>{16384 + 16129, -128 - 127});
  auto w = run_dot<i8, i32>(dtype::i8, dtype::i32, 1, 1, 1, {1}, {1}, INT32_MAX);
  CHECK(w == std::vector<i32>{INT32_MIN});
  auto u = run_dot<u8, i32>(dtype::u8, dtype::i32, 1, 2, 1, {255, 255}, {255, 1}, 0);
  CHECK(u == std::vector<i32>{65025 + 255});
  auto d = run_dot<double, double>(dtype::f64, dtype::f64, 1, 2, 1, {0.1, 0.2}, {3.0, 7.0}, 1.0);
  CHECK(d[0] == (1.0 + 0.1 * 3.0) + 0.2 * 7.0);
}

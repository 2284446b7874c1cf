// test/lang/test_control.cpp — runtime control flow (tl::for_range with loop-carried tiles,
// tl::while_, tl::if_), trace-time control flow (plain C++ loops and ifs on meta-parameters),
// device functions shared by kernels, and specialization (one trace per meta-parameter set).
#include <algorithm>
#include <array>
#include <numeric>

#include "lang_test2.hpp"

namespace {
using lt2::ix;
}

TEST_CASE("for_range carries an accumulator, a pointer tile, a scalar and a mask, several at once") {
  auto k = tile::kernel("carry", [](tl::ptr<float> x, tl::ptr<float> out, tl::ptr<std::int32_t> iout, tl::i32 n_blocks,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    auto ptrs = x + offs;                         // pointer tile, advanced each iteration
    auto acc = tl::zeros<float>({BLOCK});         // accumulator
    auto last = tl::full<float>({BLOCK}, -1.0f);  // overwritten, not accumulated
    auto count = tl::constant<std::int32_t>(0);   // scalar
    auto seen_big = offs < 0;                     // i1 tile: all false
    auto unchanged = tl::full<float>({BLOCK}, 7.0f);  // read in the body, never assigned
    tl::for_range(0, n_blocks, [&](tl::tensor i) {
      auto v = tl::load(ptrs);
      acc += v * unchanged;
      last = v;
      ptrs += BLOCK;
      count = count + i;  // uses the induction variable
      seen_big = seen_big || (v > 40.0f);
    });
    tl::store(out + offs, acc);
    tl::store(out + BLOCK + offs, last);
    tl::store(out + 2 * BLOCK + offs, unchanged);
    tl::store(iout, count);
    tl::store(iout + 1 + offs, tl::cast<std::int32_t>(seen_big));
    tl::store(iout + 1 + BLOCK, tl::cast<std::int32_t>(tl::max(tl::load(ptrs) - tl::load(x + offs), 0)));  // where ptrs ended
  });
  auto d = lt2::dev();
  std::vector<float> h(7 * 16);
  std::iota(h.begin(), h.end(), 0.0f);
  auto x = d.upload(h);
  for (int nb : {0, 1, 2, 5}) {
    CAPTURE(nb);
    auto out = d.alloc<float>(48);
    auto iout = d.alloc<std::int32_t>(18);
    k[{1}](x, out, iout, nb, "BLOCK"_c = 16);
    auto r = out.to_host();
    auto ri = iout.to_host();
    for (int j = 0; j < 16; ++j) {
      float s = 0;
      for (int b = 0; b < nb; ++b) s += h[ix(b * 16 + j)] * 7.0f;
      CHECK(r[ix(j)] == s);
      CHECK(r[ix(16 + j)] == (nb ? h[ix((nb - 1) * 16 + j)] : -1.0f));
      CHECK(r[ix(32 + j)] == 7.0f);
      bool big = false;
      for (int b = 0; b < nb; ++b) big = big || h[ix(b * 16 + j)] > 40.0f;
      CHECK(ri[ix(1 + j)] == static_cast<int>(big));
    }
    CHECK(ri[0] == nb * (nb - 1) / 2);
    CHECK(ri[17] == nb * 16);
  }
}

TEST_CASE("zero-trip loops leave carried tiles at their initial values") {
  auto k = tile::kernel("zero_trip", [](tl::ptr<std::int32_t> out, tl::i32 lo, tl::i32 hi) {
    auto acc = tl::full<std::int32_t>({16}, 5);
    auto s = tl::constant<std::int32_t>(-3);
    tl::for_range(lo, hi, [&](tl::tensor i) {
      acc = acc * 2 + i;
      s = s + 1;
    });
    tl::for_range(10, 3, [&](tl::tensor) { acc = acc + 1000; });  // trace-time bounds, empty
    tl::store(out + tl::arange(0, 16), acc);
    tl::store(out + 16, s);
  });
  auto d = lt2::dev();
  for (auto [lo, hi] : {std::pair{0, 0}, {5, 5}, {7, 2}, {-1, -9}, {3, 5}}) {
    CAPTURE(lo);
    CAPTURE(hi);
    auto out = d.alloc<std::int32_t>(17);
    k[{1}](out, lo, hi);
    auto r = out.to_host();
    int acc = 5, s = -3;
    for (int i = lo; i < hi; ++i) acc = acc * 2 + i, ++s;
    CHECK(r[3] == acc);
    CHECK(r[16] == s);
  }
}

TEST_CASE("loops over one range that read the row again: every trip count, a store between that reaches it or not") {
  // the tutorial layer norm's shape in integers: the row's sum, then each element times 10 plus
  // the sum. Where the row fits one BLOCK the compiler reads it once (a version of the two loops
  // for one step, transforms/version_single_trip_loops.cpp); the sum is stored to `flag` between
  // the walks, and where flag is the row itself the second walk must see that store.
  auto k = tile::kernel("row_walks", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> y, tl::ptr<std::int32_t> flag,
                                        tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto acc = tl::zeros<std::int32_t>({BLOCK});
    tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      acc += tl::load(x + cols, cols < n, 0);
    });
    auto total = tl::sum(acc, 0);
    tl::store(flag, total);
    tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
      auto cols = off + tl::arange(0, BLOCK);
      tl::store(y + cols, tl::load(x + cols, cols < n, 0) * 10 + total, cols < n);
    });
  });
  auto d = lt2::dev();
  for (bool alias : {false, true})
    for (int n : {0, 1, 15, 16, 17, 40}) {
      CAPTURE(alias);
      CAPTURE(n);
      std::vector<std::int32_t> hx(48);
      for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<std::int32_t>(i) * 3 - 7;
      auto x = d.upload(hx);
      auto y = d.upload(std::vector<std::int32_t>(48, -1));
      auto flag = d.alloc<std::int32_t>(1);
      if (alias)
        k[{1}](x, y, x, n, "BLOCK"_c = 16);
      else
        k[{1}](x, y, flag, n, "BLOCK"_c = 16);
      const std::int32_t total = std::accumulate(hx.begin(), hx.begin() + n, 0);
      if (alias) hx[0] = total;  // the row as the second walk reads it
      const auto got = y.to_host();
      for (int i = 0; i < 48; ++i) CHECK(got[ix(i)] == (i < n ? hx[ix(i)] * 10 + total : -1));
      CHECK((alias ? x : flag).to_host()[0] == total);
    }
}

TEST_CASE("for_range with a step, runtime bounds, i64 bounds and the induction variable") {
  auto k = tile::kernel("steps", [](tl::ptr<std::int32_t> out, tl::i32 lo, tl::i32 hi, tl::i32 step) {
    auto n = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      tl::store(out + n, i);  // the iteration's induction variable
      n = n + 1;
    });
    tl::store(out + 63, n);
  });
  auto d = lt2::dev();
  for (auto [lo, hi, step] : {std::array{0, 10, 3}, {0, 9, 3}, {-5, 5, 4}, {2, 3, 100}, {1, 40, 1}, {0, 10, 16}}) {
    CAPTURE(lo);
    CAPTURE(hi);
    CAPTURE(step);
    auto out = d.alloc<std::int32_t>(64);
    k[{1}](out, lo, hi, step);
    auto r = out.to_host();
    int n = 0;
    for (int i = lo; i < hi; i += step) CHECK(r[ix(n++)] == i);
    CHECK(r[63] == n);
  }
  // 64-bit bounds: the induction variable takes the bounds' type
  auto k64 = tile::kernel("steps64", [](tl::ptr<std::int64_t> out, tl::i64 lo, tl::i64 hi, tl::i64 step) {
    auto n = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      CHECK(i.dtype() == tile::dtype::i64);
      tl::store(out + n, i);
      n = n + 1;
    });
  });
  auto out = d.upload(std::vector<std::int64_t>(8, 0));
  const std::int64_t lo = (std::int64_t{1} << 40) - 3, step = std::int64_t{1} << 33;
  k64[{1}](out, lo, lo + 3 * step, step);
  auto r = out.to_host();
  CHECK(r[0] == lo);
  CHECK(r[1] == lo + step);
  CHECK(r[2] == lo + 2 * step);
  CHECK(r[3] == 0);
}

TEST_CASE("for_range near the integer limits and with unsigned bounds") {
  // iv + step past the largest i32 must end the loop, not wrap around
  auto k = tile::kernel("limits", [](tl::ptr<std::int32_t> out, tl::i32 lo, tl::i32 hi, tl::i32 step) {
    auto n = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      tl::store(out + n, i);
      n = n + 1;
    });
    tl::store(out + 15, n);
  });
  auto d = lt2::dev();
  const int big = std::numeric_limits<std::int32_t>::max();
  auto out = d.upload(std::vector<std::int32_t>(16, 0));
  k[{1}](out, big - 20, big, 8);
  auto r = out.to_host();
  CHECK(r[15] == 3);
  CHECK(r[0] == big - 20);
  CHECK(r[1] == big - 12);
  CHECK(r[2] == big - 4);
  k[{1}](out, big - 1, big, big);  // one iteration; iv + step overflows
  CHECK(out.to_host()[15] == 1);
  // u32 bounds compare unsigned: 5 < 0x80000005 (negative as an i32)
  auto ku = tile::kernel("unsigned_loop", [](tl::ptr<std::uint32_t> dst, tl::u32 lo, tl::u32 hi, tl::u32 step) {
    auto n = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      CHECK(i.dtype() == tile::dtype::u32);
      tl::store(dst + n, i);
      n = n + 1;
    });
    tl::store(dst + 7, tl::cast<std::uint32_t>(n));
  });
  auto outu = d.upload(std::vector<std::uint32_t>(8, 0));
  ku[{1}](outu, 5u, 0x80000005u, 0x30000000u);
  auto ru = outu.to_host();
  CHECK(ru[7] == 3);
  CHECK(ru[0] == 5u);
  CHECK(ru[1] == 0x30000005u);
  CHECK(ru[2] == 0x60000005u);
  ku[{1}](outu, 0xfffffff0u, 0xffffffffu, 0x10u);  // iv + step wraps past 2^32: one iteration
  CHECK(outu.to_host()[7] == 1);
  // mixed bound types promote: an i32 literal and an i64 argument give an i64 induction variable
  auto km = tile::kernel("mixed_bounds", [](tl::ptr<std::int64_t> dst, tl::i64 hi) {
    auto s = tl::constant<std::int64_t>(0);
    tl::for_range(0, hi, [&](tl::tensor i) {
      CHECK(i.dtype() == tile::dtype::i64);
      s = s + i;
    });
    tl::store(dst, s);
  });
  auto o64 = d.alloc<std::int64_t>(1);
  km[{1}](o64, 100);
  CHECK(o64.to_host()[0] == 4950);
}

TEST_CASE("carried tiles that trade values: Fibonacci, swaps, and reassignment from outer tiles") {
  auto k = tile::kernel("fib", [](tl::ptr<std::int64_t> out, tl::i32 n) {
    auto a = tl::constant<std::int64_t>(0), b = tl::constant<std::int64_t>(1);
    auto x = tl::full<std::int64_t>({4}, 1), y = tl::full<std::int64_t>({4}, 2);
    const auto fixed = tl::full<std::int64_t>({4}, 9);
    auto z = tl::full<std::int64_t>({4}, 0);
    tl::for_range(0, n, [&](tl::tensor) {
      auto t = a + b;  // a tile of the body, not carried
      a = b;           // takes the other carried tile's value
      b = t;
      auto tmp = x;    // a swap
      x = y;
      y = tmp;
      z = fixed;       // an outer tile that is not itself carried
    });
    tl::store(out, a);
    tl::store(out + 1, b);
    tl::store(out + 2 + tl::arange(0, 4), x);
    tl::store(out + 6 + tl::arange(0, 4), y);
    tl::store(out + 10 + tl::arange(0, 4), z);
  });
  auto d = lt2::dev();
  for (int n : {0, 1, 2, 7, 50}) {
    CAPTURE(n);
    auto out = d.alloc<std::int64_t>(14);
    k[{1}](out, n);
    auto r = out.to_host();
    std::int64_t a = 0, b = 1;
    for (int i = 0; i < n; ++i) {
      std::int64_t t = a + b;
      a = b;
      b = t;
    }
    CHECK(r[0] == a);
    CHECK(r[1] == b);
    CHECK(r[2] == (n % 2 ? 2 : 1));
    CHECK(r[6] == (n % 2 ? 1 : 2));
    CHECK(r[10] == (n ? 9 : 0));
  }
}

TEST_CASE("tiles held in std::array and std::vector are carried like named ones") {
  auto k = tile::kernel("arrays", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 8);
    std::array<tl::tensor, 3> powers{tl::zeros<float>({8}), tl::zeros<float>({8}), tl::zeros<float>({8})};
    std::vector<tl::tensor> shifted;
    for (int j = 0; j < 4; ++j) shifted.push_back(tl::full<float>({8}, static_cast<float>(j)));
    tl::for_range(0, n, [&](tl::tensor i) {
      auto v = tl::load(x + i * 8 + offs);
      auto p = v;
      for (auto& acc : powers) {  // unrolled: three carried tiles
        acc = acc + p;
        p = p * v;
      }
      shifted[static_cast<std::size_t>(1)] = shifted[0] + shifted[1] + 1.0f;  // only one of four carried
    });
    for (std::int64_t j = 0; j < 3; ++j) tl::store(out + j * 8 + offs, powers[static_cast<std::size_t>(j)]);
    for (std::int64_t j = 0; j < 4; ++j) tl::store(out + 24 + j * 8 + offs, shifted[static_cast<std::size_t>(j)]);
  });
  auto h = lt2::random_vec<float>(5 * 8, 3, -2, 2);
  auto d = lt2::dev();
  auto out = d.alloc<float>(56);
  k[{1}](d.upload(h), out, 5, "enable_fp_fusion"_c = false);  // compared exactly with the unfused C++ below
  auto r = out.to_host();
  for (int e = 0; e < 8; ++e) {
    float s[3] = {0, 0, 0};
    for (int i = 0; i < 5; ++i) {
      const float v = h[ix(i * 8 + e)];
      float p = v;
      for (float& acc : s) {
        acc += p;
        p *= v;
      }
    }
    for (int j = 0; j < 3; ++j) CHECK(r[ix(j * 8 + e)] == s[j]);
    CHECK(r[ix(24 + e)] == 0.0f);
    CHECK(r[ix(32 + e)] == 1.0f + 5.0f);
    CHECK(r[ix(40 + e)] == 2.0f);
    CHECK(r[ix(48 + e)] == 3.0f);
  }
}

TEST_CASE("loops inside loop bodies: a body tile carried by an inner loop, while_ inside for_range") {
  // sum over i < n of gcd(v[i], m) (Euclid in a while_), and per-row counts in an inner for_range
  // that carries a tile created in the outer body
  auto k = tile::kernel("inner_loops", [](tl::ptr<std::int32_t> v, tl::ptr<std::int32_t> out, tl::i32 n, tl::i32 m) {
    auto total = tl::constant<std::int32_t>(0);
    auto rows = tl::zeros<std::int32_t>({8});
    tl::for_range(0, n, [&](tl::tensor i) {
      auto a = tl::load(v + i), b = m + 0;
      tl::while_([&] { return b != 0; }, [&] {
        auto t = a % b;
        a = b;
        b = t;
      });
      total = total + a;
      auto local = tl::zeros<std::int32_t>({8});  // created in the outer body
      tl::for_range(0, i, [&](tl::tensor) { local = local + tl::arange(0, 8); });
      rows = rows + local;
    });
    tl::store(out, total);
    tl::store(out + 1 + tl::arange(0, 8), rows);
  });
  auto d = lt2::dev();
  std::vector<std::int32_t> h{12, 18, 7, 100, 45, 0, 36, 81, 64};
  auto out = d.alloc<std::int32_t>(9);
  k[{1}](d.upload(h), out, 9, 36);
  auto r = out.to_host();
  int total = 0;
  for (int x : h) total += std::gcd(x, 36);
  CHECK(r[0] == total);
  for (int e = 0; e < 8; ++e) CHECK(r[ix(1 + e)] == e * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8));
}

// On the cuda backend a device-side failure traps: the context would be lost.
TEST_CASE("for_range rejects a step that is not positive at run time" * tiletest::needs_host_backend) {
  auto k = tile::kernel("bad_step", [](tl::ptr<std::int32_t> out, tl::i32 step) {
    auto acc = tl::constant<std::int32_t>(0);
    tl::for_range(0, 10, step, [&](tl::tensor i) { acc = acc + i; });
    tl::store(out, acc);
  });
  auto out = lt2::dev().alloc<std::int32_t>(1);
  CHECK_THROWS_AS(k[{1}](out, 0), tile::error);
  CHECK_THROWS_AS(k[{1}](out, -2), tile::error);
  k[{1}](out, 3);
  CHECK(out.to_host()[0] == 0 + 3 + 6 + 9);
}

TEST_CASE("nested for_range loops carry tiles across both levels") {
  auto k = tile::kernel("nested", [](tl::ptr<std::int32_t> out, tl::i32 lo, tl::i32 hi, tl::i32 step, tl::i32 inner) {
    auto total = tl::zeros<std::int32_t>({16});
    auto iters = tl::constant<std::int32_t>(0);
    auto tri = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      tl::for_range(0, inner, [&](tl::tensor j) {
        total += tl::arange(0, 16) * i + j;
        iters = iters + 1;
      });
      tl::for_range(0, i, [&](tl::tensor j) { tri = tri + j; });  // inner bound from the outer variable
    });
    tl::store(out + tl::arange(0, 16), total);
    tl::store(out + 16, iters);
    tl::store(out + 17, tri);
  });
  auto out = lt2::dev().alloc<std::int32_t>(18);
  k[{1}](out, 3, 20, 4, 3);
  auto r = out.to_host();
  int it = 0, tri = 0;
  std::vector<int> want(16, 0);
  for (int i = 3; i < 20; i += 4) {
    for (int j = 0; j < 3; ++j) {
      ++it;
      for (int e = 0; e < 16; ++e) want[ix(e)] += e * i + j;
    }
    for (int j = 0; j < i; ++j) tri += j;
  }
  for (int e = 0; e < 16; ++e) CHECK(r[ix(e)] == want[ix(e)]);
  CHECK(r[16] == it);
  CHECK(r[17] == tri);
}

TEST_CASE("a tile first assigned inside a loop body is local to it") {
  auto k = tile::kernel("local", [](tl::ptr<float> out, tl::i32 n) {
    tl::tensor tmp;
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      tmp = tl::full<float>({16}, 2.0f);
      acc += tmp;
    });
    CHECK_FALSE(tmp.defined());  // not carried: it holds nothing after the loop
    tl::tensor w;
    tl::while_([&] { return tl::sum(acc) < 0.0f; }, [&] { w = acc; acc = acc + 1.0f; });
    CHECK_FALSE(w.defined());
    tl::store(out + tl::arange(0, 16), acc);
  });
  auto out = lt2::dev().alloc<float>(16);
  k[{1}](out, 3);
  CHECK(out.to_host()[5] == 6.0f);
}

TEST_CASE("while_ with carried scalars: Collatz steps per program") {
  auto k = tile::kernel("collatz", [](tl::ptr<std::int32_t> out) {
    auto pid = tl::program_id(0);
    auto x = pid + 1;
    auto steps = tl::constant<std::int32_t>(0);
    tl::while_([&] { return x != 1; }, [&] {
      x = tl::where(x % 2 == 0, x / 2, 3 * x + 1);
      steps = steps + 1;
    });
    tl::store(out + pid, steps);
  });
  auto out = lt2::dev().alloc<std::int32_t>(40);
  k[{40}](out);
  auto r = out.to_host();
  for (int i = 0; i < 40; ++i) {
    long x = i + 1;
    int s = 0;
    while (x != 1) x = x % 2 ? 3 * x + 1 : x / 2, ++s;
    CHECK(r[ix(i)] == s);
  }
}

TEST_CASE("while_ over tiles with a scalar condition: Collatz per element, zero iterations") {
  auto k = tile::kernel("collatz_tile", [](tl::ptr<std::int32_t> in, tl::ptr<std::int32_t> out) {
    auto offs = tl::arange(0, 64);
    auto x = tl::load(in + offs);
    auto steps = tl::zeros<std::int32_t>({64});
    auto rounds = tl::constant<std::int32_t>(0);
    tl::while_([&] { return tl::max(x, 0) > 1; }, [&] {
      auto active = x > 1;
      steps = steps + tl::cast<std::int32_t>(active);
      x = tl::where(active, tl::where(x % 2 == 0, x / 2, 3 * x + 1), x);
      rounds = rounds + 1;
    });
    tl::store(out + offs, steps);
    tl::store(out + 64, rounds);
  });
  auto d = lt2::dev();
  std::vector<std::int32_t> h(64);
  std::iota(h.begin(), h.end(), 1);
  h[10] = 97;
  auto out = d.alloc<std::int32_t>(65);
  k[{1}](d.upload(h), out);
  auto r = out.to_host();
  int most = 0;
  for (int i = 0; i < 64; ++i) {
    long x = h[ix(i)];
    int s = 0;
    while (x > 1) x = x % 2 ? 3 * x + 1 : x / 2, ++s;
    CHECK(r[ix(i)] == s);
    most = std::max(most, s);
  }
  CHECK(r[64] == most);
  // all ones: the condition is false at once and the tiles keep their initial values
  k[{1}](d.upload(std::vector<std::int32_t>(64, 1)), out);
  r = out.to_host();
  CHECK(std::all_of(r.begin(), r.end(), [](std::int32_t v) { return v == 0; }));
}

TEST_CASE("while_ binary search: lower_bound of each query in a sorted array") {
  auto k = tile::kernel("bsearch", [](tl::ptr<float> sorted, tl::i32 n, tl::ptr<float> queries, tl::ptr<std::int32_t> out) {
    auto offs = tl::arange(0, 32);
    auto q = tl::load(queries + offs);
    auto lo = tl::zeros<std::int32_t>({32});
    auto hi = tl::zeros<std::int32_t>({32}) + n;
    tl::while_([&] { return tl::max(hi - lo, 0) > 0; }, [&] {
      auto open = lo < hi;
      auto mid = (lo + hi) / 2;
      auto v = tl::load(sorted + mid, open, 0.0f);  // only where the range is open (mid < n)
      auto go_right = open && (v < q);
      lo = tl::where(go_right, mid + 1, lo);
      hi = tl::where(open && !go_right, mid, hi);
    });
    tl::store(out + offs, lo);
  });
  auto d = lt2::dev();
  auto hs = lt2::random_vec<float>(100, 5, -50, 50);
  std::sort(hs.begin(), hs.end());
  hs[40] = hs[41] = hs[42];  // duplicates
  auto hq = lt2::random_vec<float>(32, 6, -60, 60);
  hq[0] = hs[0];
  hq[1] = hs[41];
  hq[2] = hs[99];
  hq[3] = 1000.0f;
  hq[4] = -1000.0f;
  auto out = d.alloc<std::int32_t>(32);
  k[{1}](d.upload(hs), 100, d.upload(hq), out);
  auto r = out.to_host();
  for (int i = 0; i < 32; ++i) {
    CAPTURE(i);
    CHECK(r[ix(i)] == std::lower_bound(hs.begin(), hs.end(), hq[ix(i)]) - hs.begin());
  }
}

TEST_CASE("if_ on a runtime scalar: both branches assign, one assigns, both return a value") {
  auto k = tile::kernel("branches", [](tl::ptr<float> out, tl::i32 flag) {
    auto a = tl::full<float>({16}, 1.0f);
    auto b = tl::full<float>({16}, 10.0f);
    tl::if_(flag > 0, [&] { a = a + 1.0f; b = b * 2.0f; }, [&] { a = a - 1.0f; });
    tl::if_(flag > 5, [&] { b = b + 100.0f; });
    auto c = tl::if_(flag == 3, [&] { return a * 3.0f; }, [&] { return a * 5.0f; });
    tl::tensor both, one;  // no value before the if_
    tl::if_(flag % 2 == 0, [&] { both = b + 0.5f; one = b; }, [&] { both = b - 0.5f; });
    CHECK(both.defined());  // assigned in both branches: holds the taken one's value
    CHECK_FALSE(one.defined());  // assigned in one branch only: local to it
    auto s = tl::if_(flag, [&] { return tl::constant<std::int32_t>(1); }, [&] { return tl::constant<std::int32_t>(2); });
    tl::store(out + tl::arange(0, 16), a + b + c);
    tl::store(out + 16 + tl::arange(0, 16), both);
    tl::store(out + 32, tl::cast<float>(s));
  });
  auto d = lt2::dev();
  for (int flag : {-1, 0, 3, 4, 7}) {
    CAPTURE(flag);
    auto out = d.alloc<float>(33);
    k[{1}](out, flag);
    auto r = out.to_host();
    float a = flag > 0 ? 2.0f : 0.0f, b = flag > 0 ? 20.0f : 10.0f;
    if (flag > 5) b += 100.0f;
    const float c = flag == 3 ? a * 3 : a * 5;
    CHECK(r[7] == a + b + c);
    CHECK(r[16 + 7] == (flag % 2 == 0 ? b + 0.5f : b - 0.5f));
    CHECK(r[32] == (flag != 0 ? 1.0f : 2.0f));  // an integer condition: nonzero is true
  }
}

TEST_CASE("if_ on data, nested if_, if_ inside for_range and for_range inside if_") {
  auto k = tile::kernel("if_mix", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> out, tl::i32 n) {
    auto v = tl::load(x + tl::arange(0, 16));
    auto even = tl::constant<std::int32_t>(0), odd = tl::constant<std::int32_t>(0);
    tl::for_range(0, n, [&](tl::tensor i) {
      tl::if_(i % 2 == 0, [&] { even = even + i; }, [&] { odd = odd + i; });
    });
    auto sign = tl::constant<std::int32_t>(0);
    tl::if_(tl::sum(v, 0) > 0, [&] { sign = sign + 1; }, [&] {
      tl::if_(tl::sum(v, 0) < 0, [&] { sign = sign - 1; });
    });
    auto acc = tl::zeros<std::int32_t>({16});
    tl::if_(n > 4, [&] { tl::for_range(0, n, [&](tl::tensor i) { acc = acc + v * i; }); });
    tl::store(out, even);
    tl::store(out + 1, odd);
    tl::store(out + 2, sign);
    tl::store(out + 3 + tl::arange(0, 16), acc);
  });
  auto d = lt2::dev();
  for (int n : {0, 4, 11}) {
    for (int total : {-5, 0, 9}) {
      CAPTURE(n);
      CAPTURE(total);
      std::vector<std::int32_t> h(16, 0);
      h[3] = total - 2;
      h[9] = 2;
      auto out = d.alloc<std::int32_t>(19);
      k[{1}](d.upload(h), out, n);
      auto r = out.to_host();
      int even = 0, odd = 0;
      for (int i = 0; i < n; ++i) (i % 2 ? odd : even) += i;
      CHECK(r[0] == even);
      CHECK(r[1] == odd);
      CHECK(r[2] == (total > 0) - (total < 0));
      const int tri = n > 4 ? n * (n - 1) / 2 : 0;
      CHECK(r[3 + 3] == h[3] * tri);
      CHECK(r[3 + 9] == 2 * tri);
      CHECK(r[3 + 0] == 0);
    }
  }
}

namespace {
// device functions: plain C++ functions of tl values, one with a trace-time loop, one with a
// runtime loop, one taking a pointer
tl::tensor poly(const tl::tensor& x, int degree) {
  auto acc = tl::zeros_like(x);
  for (int i = 0; i <= degree; ++i) acc = acc * x + static_cast<float>(i + 1);
  return acc;
}
tl::tensor power(const tl::tensor& x, const tl::tensor& n) {
  auto r = tl::full_like(x, 1.0f);
  tl::for_range(0, n, [&](tl::tensor) { r = r * x; });
  return r;
}
tl::tensor load_block(tl::ptr<float> p, const tl::tensor& start) { return tl::load(p + start + tl::arange(0, 16)); }
float poly_ref(float v, int deg) {
  float a = 0;
  for (int i = 0; i <= deg; ++i) a = a * v + static_cast<float>(i + 1);
  return a;
}
}  // namespace

TEST_CASE("plain C++ loops unroll, trace-time ifs select, device functions are shared by kernels") {
  auto k1 = tile::kernel("poly1", [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"DEG"> DEG,
                                     tl::constexpr_<"NEG", bool> NEG) {
    auto v = load_block(x, tl::constant<std::int32_t>(0));
    auto p = poly(v, static_cast<int>(DEG));
    if (NEG) p = -p;  // a trace-time branch
    tl::store(out + tl::arange(0, 16), p);
  });
  auto k2 = tile::kernel("poly2", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto v = load_block(x, tl::constant<std::int32_t>(0));
    tl::store(out + tl::arange(0, 16), poly(v, 2) + power(v, n));
  });
  auto d = lt2::dev();
  std::vector<float> h(16);
  for (int i = 0; i < 16; ++i) h[ix(i)] = 0.5f * static_cast<float>(i) - 3;
  auto x = d.upload(h);
  auto out = d.alloc<float>(16);
  for (int deg : {0, 1, 3, 6})
    for (bool neg : {false, true}) {
      CAPTURE(deg);
      CAPTURE(neg);
      k1[{1}](x, out, "DEG"_c = deg, "NEG"_c = neg);
      auto r = out.to_host();
      for (int i = 0; i < 16; ++i) CHECK(r[ix(i)] == (neg ? -1.0f : 1.0f) * poly_ref(h[ix(i)], deg));
    }
  for (int n : {0, 3}) {
    k2[{1}](x, out, n);
    auto r = out.to_host();
    for (int i = 0; i < 16; ++i) {
      float pw = 1;
      for (int j = 0; j < n; ++j) pw *= h[ix(i)];
      CHECK(r[ix(i)] == poly_ref(h[ix(i)], 2) + pw);
    }
  }
  // the unrolled C++ loop leaves no runtime loop; the device function's for_range does
  CHECK(k1.ir(x, out, "DEG"_c = 3, "NEG"_c = true).find(" for %") == std::string::npos);
  CHECK(k2.ir(x, out, 3).find(" for %") != std::string::npos);
}

TEST_CASE("specialization: each meta-parameter set is traced once and gives its own result") {
  auto k = tile::kernel("spec", [](tl::ptr<std::int32_t> out, tl::i32 n, tl::constexpr_<"SCALE"> SCALE,
                                   tl::constexpr_<"SHIFT", bool> SHIFT, tl::constexpr_<"F", double> F) {
    auto v = tl::arange(0, 16) * SCALE + n;
    if (SHIFT) v = v << 1;
    tl::store(out + tl::arange(0, 16), v + static_cast<std::int32_t>(F * 10));
  });
  auto d = lt2::dev();
  auto out = d.alloc<std::int32_t>(16);
  auto run = [&](int n, int scale, bool shift, double f) {
    k[{1}](out, n, "SCALE"_c = scale, "SHIFT"_c = shift, "F"_c = f);
    return out.to_host()[5];
  };
  CHECK(k.core().traces() == 0);
  CHECK(run(3, 2, false, 0.5) == 5 * 2 + 3 + 5);
  CHECK(k.core().traces() == 1);
  CHECK(run(5, 2, false, 0.5) == 5 * 2 + 5 + 5);  // a new runtime value (same specialization)
  CHECK(k.core().traces() == 1);
  CHECK(run(3, 7, false, 0.5) == 5 * 7 + 3 + 5);
  CHECK(k.core().traces() == 2);
  CHECK(run(3, 7, true, 0.5) == (5 * 7 + 3) * 2 + 5);
  CHECK(k.core().traces() == 3);
  CHECK(run(3, 7, true, 1.5) == (5 * 7 + 3) * 2 + 15);
  CHECK(k.core().traces() == 4);
  CHECK(run(9, 2, false, 0.5) == 5 * 2 + 9 + 5);  // back to the first set: cached
  CHECK(run(3, 7, true, 0.5) == (5 * 7 + 3) * 2 + 5);
  CHECK(k.core().traces() == 4);
}

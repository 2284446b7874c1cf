// test/lang/test_reduce.cpp — reductions (sum, max, min, argmax, argmin, tl::reduce with one or
// several inputs) and scans (cumsum, cumprod, associative_scan) on every axis, against plain C++
// folds on the host.
//
// Tolerance: none. The interpreter's reduce is a sequential left fold along the axis (acc = x[0];
// acc = combine(acc, x[i])) and its scan is inclusive and sequential (from the end when
// reversed); a C++ loop in the kernel's element type (integers wrapping, f16/bf16 computed in
// float and rounded after every op) in the same order gives the very same bits, so every
// comparison here, float sums and products included, is exact.
#include <algorithm>
#include <array>
#include <functional>

#include "lang_test2.hpp"

namespace {
using lt2::ix;

// ---- sum / max / min / argmax / argmin of a [R, C] tile along AXIS, and of the whole tile -----
template <class T>
auto red2d = tile::kernel("red2d", [](tl::ptr<T> x, tl::ptr<T> vals, tl::ptr<std::int32_t> ids, tl::ptr<T> whole,
                                      tl::constexpr_<"R"> R, tl::constexpr_<"C"> C, tl::constexpr_<"AXIS"> AXIS) {
  using tl::_;
  using tl::newaxis;
  auto v = tl::load(x + tl::arange(0, R)(_, newaxis) * C + tl::arange(0, C)(newaxis, _));
  const int ax = static_cast<int>(AXIS);
  const std::int64_t n = AXIS == 0 ? C : R;
  auto o = tl::arange(0, n);
  // narrow integer sums come back in i32/u32; cast<T> wraps them to T like the host reference
  tl::store(vals + o, tl::cast<T>(tl::sum(v, ax)));
  tl::store(vals + n + o, tl::max(v, ax));
  tl::store(vals + 2 * n + o, tl::min(v, ax));
  tl::store(ids + o, tl::argmax(v, ax));
  tl::store(ids + n + o, tl::argmin(v, ax));
  tl::store(whole, tl::cast<T>(tl::sum(v)));
  tl::store(whole + 1, tl::max(v));
  tl::store(whole + 2, tl::min(v));
});

template <class T>
void check_red2d(int R, int C, int axis, const std::vector<T>& h) {
  CAPTURE(R);
  CAPTURE(C);
  CAPTURE(axis);
  auto d = lt2::dev();
  const int n = axis == 0 ? C : R, len = axis == 0 ? R : C;
  auto x = d.upload(h);
  auto vals = d.alloc<T>(ix(3 * n));
  auto ids = d.alloc<std::int32_t>(ix(2 * n));
  auto whole = d.alloc<T>(3);
  // 16 warps for the 256×256 tile: 128 elements a thread on the GPU instead of 512 (whose
  // straight-line code takes ptxas minutes for 64-bit types); other backends ignore num_warps
  red2d<T>[{1}](x, vals, ids, whole, "R"_c = R, "C"_c = C, "AXIS"_c = axis, "num_warps"_c = R * C >= 16384 ? 16 : 4);

  std::vector<T> want_v(ix(3 * n));
  std::vector<std::int32_t> want_i(ix(2 * n));
  std::vector<T> sums(ix(n));
  std::vector<std::vector<T>> terms(ix(n));
  for (int o = 0; o < n; ++o) {
    auto at = [&](int i) { return h[ix(axis == 0 ? i * C + o : o * C + i)]; };
    T s = at(0), mx = at(0), mn = at(0);
    int amax = 0, amin = 0;
    for (int i = 0; i < len; ++i) terms[ix(o)].push_back(at(i));
    for (int i = 1; i < len; ++i) {
      const T v = at(i);
      s = lt2::add(s, v);
      if (lt2::less(mx, v)) {  // strictly greater: ties keep the smallest index
        mx = v;
        amax = i;
      }
      if (lt2::less(v, mn)) {
        mn = v;
        amin = i;
      }
    }
    want_v[ix(o)] = sums[ix(o)] = s;
    want_v[ix(n + o)] = mx;
    want_v[ix(2 * n + o)] = mn;
    want_i[ix(o)] = amax;
    want_i[ix(n + o)] = amin;
  }
  T s = h[0], mx = h[0], mn = h[0];
  for (std::size_t i = 1; i < h.size(); ++i) {  // the whole tile folds in row-major order
    s = lt2::add(s, h[i]);
    if (lt2::less(mx, h[i])) mx = h[i];
    if (lt2::less(h[i], mn)) mn = h[i];
  }
  auto got_v = vals.to_host(), got_whole = whole.to_host();
  lt2::accept_sums(got_v, 0, sums, terms);  // float sums: any order's rounding (GPU: a tree)
  lt2::accept_sums(got_whole, 0, std::vector<T>{s}, {h});
  lt2::check_same(got_v, want_v, "sum, max, min along the axis");
  lt2::check_same(ids.to_host(), want_i, "argmax, argmin along the axis");
  lt2::check_same(got_whole, std::vector<T>{s, mx, mn}, "sum, max, min of the whole tile");
}

/// Test data: "wide" values (integers over the whole range, so sums wrap; floats in [-8, 8] with
/// full mantissas) or "ties" (small integers: many equal maxima and minima).
template <class T>
std::vector<T> data(std::size_t n, unsigned seed, bool ties) {
  if (ties) {
    auto small = lt2::random_vec<int>(n, seed, std::is_unsigned_v<T> ? 0 : -2, std::is_unsigned_v<T> ? 4 : 2);
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>(small[i]));
    return v;
  }
  if constexpr (std::is_integral_v<T>)
    return lt2::random_bits<T>(n, seed);
  else
    return lt2::random_vec<T>(n, seed, -8, 8);
}
}  // namespace

TEST_CASE_TEMPLATE("sum, max, min, argmax, argmin along both axes of 2-D tiles and of whole tiles", T, std::int8_t,
                   std::uint16_t, std::int32_t, std::int64_t, std::uint32_t, tile::half, tile::bfloat16, float,
                   double) {
  unsigned seed = 100;
  for (auto [R, C] : {std::pair{1, 1}, {1, 256}, {256, 1}, {2, 128}, {16, 16}, {4, 64}, {128, 8}, {256, 256}})
    for (bool ties : {false, true}) {
      CAPTURE(ties);
      auto h = data<T>(ix(R * C), seed++, ties);
      for (int axis = 0; axis < 2; ++axis) check_red2d<T>(R, C, axis, h);
    }
}

TEST_CASE("argmax/argmin tie-breaking picks the smallest index on every axis") {
  // all equal: index 0 everywhere; two equal maxima/minima in each row and column
  std::vector<float> flat(64, 1.5f);
  for (int axis = 0; axis < 2; ++axis) check_red2d<float>(8, 8, axis, flat);
  std::vector<std::int32_t> h(8 * 8, 0);
  for (int i = 0; i < 8; ++i) {
    h[ix(i * 8 + (i + 2) % 8)] = 7;  // row i: maxima at columns (i+2)%8 and (i+5)%8
    h[ix(i * 8 + (i + 5) % 8)] = 7;
    h[ix(i * 8 + (i + 3) % 8)] = -7;  // minima at (i+3)%8 and (i+6)%8
    h[ix(i * 8 + (i + 6) % 8)] = -7;
  }
  for (int axis = 0; axis < 2; ++axis) check_red2d<std::int32_t>(8, 8, axis, h);
  // spot check the rule itself, independently of the reference loop: row 0 has maxima at 2, 5
  auto k = tile::kernel("ties", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> out) {
    using tl::_;
    using tl::newaxis;
    auto v = tl::load(x + tl::arange(0, 8)(_, newaxis) * 8 + tl::arange(0, 8)(newaxis, _));
    tl::store(out + tl::arange(0, 8), tl::argmax(v, 1));
    tl::store(out + 8 + tl::arange(0, 8), tl::argmin(v, 1));
  });
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<std::int32_t>(16);
  k[{1}](x, out);
  auto r = out.to_host();
  CHECK(r[0] == 2);
  CHECK(r[1] == 3);  // row 1: maxima at 3 and 6
  CHECK(r[6] == 0);  // row 6: maxima at 0 and 3
  CHECK(r[8] == 3);  // row 0: minima at 3 and 6
  CHECK(r[8 + 2] == 0);  // row 2: minima at 5 and 0
}

TEST_CASE("argmax/argmin of rows with NaNs: the first NaN's index, the same in every thread") {
  // found by the random-program tester: with NaNs the GPU's tree combined to a different index
  // in each thread (a comparison with NaN is false either way round); a NaN now wins over every
  // number, and the first NaN over later ones, so any order of combining gives one answer
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> h(4 * 64);
  for (int i = 0; i < 256; ++i) h[ix(i)] = static_cast<float>((i * 37) % 11) - 5.0f;
  h[ix(0 * 64 + 40)] = nan;  // row 0: one NaN
  h[ix(1 * 64 + 7)] = nan, h[ix(1 * 64 + 3)] = -nan, h[ix(1 * 64 + 60)] = nan;  // row 1: the first at 3
  h[ix(2 * 64 + 0)] = inf, h[ix(2 * 64 + 63)] = -inf;  // row 2: no NaN
  for (int c = 0; c < 64; ++c) h[ix(3 * 64 + c)] = c % 2 ? nan : -inf;  // row 3: NaN at odd columns
  auto k = tile::kernel("arg_nan", [](tl::ptr<float> x, tl::ptr<std::int32_t> out) {
    using tl::_;
    using tl::newaxis;
    auto v = tl::load(x + tl::arange(0, 4)(_, newaxis) * 64 + tl::arange(0, 64)(newaxis, _));
    tl::store(out + tl::arange(0, 4), tl::argmax(v, 1));
    tl::store(out + 4 + tl::arange(0, 4), tl::argmin(v, 1));
    tl::store(out + 8 + tl::arange(0, 64), tl::broadcast_to(tl::argmax(tl::reshape(v, {256}), 0), {64}));  // every lane
  });
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<std::int32_t>(8 + 64);
  for (int warps : {1, 4}) {
    CAPTURE(warps);
    k[{1}](x, out, "num_warps"_c = warps);
    auto r = out.to_host();
    const std::vector<std::int32_t> want_max = {40, 3, 0, 1}, want_min = {40, 3, 63, 1};
    CHECK(std::vector<std::int32_t>(r.begin(), r.begin() + 4) == want_max);
    CHECK(std::vector<std::int32_t>(r.begin() + 4, r.begin() + 8) == want_min);
    CHECK(std::vector<std::int32_t>(r.begin() + 8, r.end()) == std::vector<std::int32_t>(64, 40));
  }
}

namespace {
// ---- 3-D tiles: every axis ----
template <class T>
auto red3d = tile::kernel("red3d", [](tl::ptr<T> x, tl::ptr<T> vals, tl::ptr<std::int32_t> ids, tl::constexpr_<"D0"> D0,
                                      tl::constexpr_<"D1"> D1, tl::constexpr_<"D2"> D2, tl::constexpr_<"AXIS"> AXIS) {
  using tl::_;
  using tl::newaxis;
  // (constexpr_ * constexpr_ is ambiguous between C++'s * and tl's: use the values)
  const std::int64_t d0 = D0, d1 = D1, d2 = D2;
  auto offs = tl::arange(0, d0)(_, newaxis, newaxis) * (d1 * d2) + tl::arange(0, d1)(newaxis, _, newaxis) * d2 +
              tl::arange(0, d2)(newaxis, newaxis, _);
  auto v = tl::load(x + offs);
  const int ax = static_cast<int>(AXIS);
  const std::int64_t n = d0 * d1 * d2 / (AXIS == 0 ? d0 : AXIS == 1 ? d1 : d2);
  auto flat = [n](const tl::tensor& t) { return tl::reshape(t, {n}); };
  auto o = tl::arange(0, n);
  tl::tensor s = tl::sum(v, ax);
  CHECK(s.shape().size() == 2);
  tl::store(vals + o, flat(s));
  tl::store(vals + n + o, flat(tl::max(v, ax)));
  tl::store(vals + 2 * n + o, flat(tl::min(v, ax)));
  tl::store(ids + o, flat(tl::argmax(v, ax)));
  tl::store(ids + n + o, flat(tl::argmin(v, ax)));
});
}  // namespace

TEST_CASE_TEMPLATE("reductions along axis 0, 1 and 2 of 3-D tiles", T, std::int32_t, float, tile::bfloat16) {
  auto d = lt2::dev();
  unsigned seed = 7;
  for (auto [D0, D1, D2] : {std::array{2, 4, 8}, {8, 1, 4}, {1, 16, 2}, {4, 4, 4}, {16, 8, 32}})
    for (bool ties : {false, true}) {
      const int dims[3] = {D0, D1, D2};
      auto h = data<T>(ix(D0 * D1 * D2), seed++, ties);
      auto x = d.upload(h);
      for (int axis = 0; axis < 3; ++axis) {
        CAPTURE(D0);
        CAPTURE(D1);
        CAPTURE(D2);
        CAPTURE(axis);
        CAPTURE(ties);
        const int n = D0 * D1 * D2 / dims[axis], len = dims[axis];
        auto vals = d.alloc<T>(ix(3 * n));
        auto ids = d.alloc<std::int32_t>(ix(2 * n));
        red3d<T>[{1}](x, vals, ids, "D0"_c = D0, "D1"_c = D1, "D2"_c = D2, "AXIS"_c = axis);
        std::vector<T> want_v(ix(3 * n));
        std::vector<std::int32_t> want_i(ix(2 * n));
        std::vector<T> sums;
        std::vector<std::vector<T>> terms;
        int o = 0;  // output position: the remaining two indices in row-major order
        for (int i = 0; i < D0; ++i)
          for (int j = 0; j < D1; ++j)
            for (int l = 0; l < D2; ++l) {
              const int q0[3] = {i, j, l};
              if (q0[axis] != 0) continue;
              auto at = [&](int t) {
                int q[3] = {i, j, l};
                q[axis] = t;
                return h[ix((q[0] * D1 + q[1]) * D2 + q[2])];
              };
              T s = at(0), mx = at(0), mn = at(0);
              int amax = 0, amin = 0;
              terms.emplace_back();
              for (int t = 0; t < len; ++t) terms.back().push_back(at(t));
              for (int t = 1; t < len; ++t) {
                s = lt2::add(s, at(t));
                if (lt2::less(mx, at(t))) mx = at(t), amax = t;
                if (lt2::less(at(t), mn)) mn = at(t), amin = t;
              }
              want_v[ix(o)] = s;
              sums.push_back(s);
              want_v[ix(n + o)] = mx;
              want_v[ix(2 * n + o)] = mn;
              want_i[ix(o)] = amax;
              want_i[ix(n + o)] = amin;
              ++o;
            }
        REQUIRE(o == n);
        auto got_v = vals.to_host();
        lt2::accept_sums(got_v, 0, sums, terms);
        lt2::check_same(got_v, want_v, "sum, max, min");
        lt2::check_same(ids.to_host(), want_i, "argmax, argmin");
      }
    }
}

TEST_CASE("negative axes count from the end") {
  auto k = tile::kernel("neg_axis", [](tl::ptr<float> x, tl::ptr<float> out, tl::ptr<std::int32_t> ids) {
    using tl::_;
    using tl::newaxis;
    auto v = tl::load(x + tl::arange(0, 4)(_, newaxis) * 8 + tl::arange(0, 8)(newaxis, _));
    tl::store(out + tl::arange(0, 4), tl::sum(v, -1));
    tl::store(out + 4 + tl::arange(0, 8), tl::max(v, -2));
    tl::store(ids + tl::arange(0, 4), tl::argmin(v, -1));
  });
  auto h = lt2::random_vec<float>(32, 3);
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<float>(12);
  auto ids = d.alloc<std::int32_t>(4);
  k[{1}](x, out, ids);
  auto r = out.to_host();
  auto ri = ids.to_host();
  for (int i = 0; i < 4; ++i) {
    float s = h[ix(i * 8)];
    int am = 0;
    for (int j = 1; j < 8; ++j) {
      s += h[ix(i * 8 + j)];
      if (h[ix(i * 8 + j)] < h[ix(i * 8 + am)]) am = j;
    }
    CHECK(lt2::sum_matches(r[ix(i)], s, std::vector<float>(h.begin() + i * 8, h.begin() + i * 8 + 8)));
    CHECK(ri[ix(i)] == am);
  }
  for (int j = 0; j < 8; ++j) {
    float m = h[ix(j)];
    for (int i = 1; i < 4; ++i) m = std::max(m, h[ix(i * 8 + j)]);
    CHECK(r[ix(4 + j)] == m);
  }
}

TEST_CASE("sums and cumsums of narrow integers accumulate in 32 bits") {
  auto k = tile::kernel("narrow", [](tl::ptr<std::int8_t> a, tl::ptr<std::int16_t> b, tl::ptr<std::uint8_t> c,
                                     tl::ptr<std::int32_t> out_i, tl::ptr<std::uint32_t> out_u, tl::ptr<std::int8_t> out_8) {
    auto offs = tl::arange(0, 64);
    auto va = tl::load(a + offs), vb = tl::load(b + offs), vc = tl::load(c + offs);
    auto sa = tl::sum(va, 0), sb = tl::sum(vb), sc = tl::sum(vc, 0);
    CHECK(sa.dtype() == tile::dtype::i32);
    CHECK(sb.dtype() == tile::dtype::i32);
    CHECK(sc.dtype() == tile::dtype::u32);
    tl::store(out_i, sa);  // a store needs the pointee's dtype: these fail to trace unless 32-bit
    tl::store(out_i + 1, sb);
    tl::store(out_u, sc);
    auto count = tl::sum(va > 0, 0);  // a mask sums to a count
    CHECK(tile::is_int(count.dtype()));
    CHECK(tile::bits(count.dtype()) == 32);
    tl::store(out_i + 2, tl::cast<std::int32_t>(count));
    auto ca = tl::cumsum(va, 0), cc = tl::cumsum(vc, 0);
    CHECK(ca.dtype() == tile::dtype::i32);
    CHECK(cc.dtype() == tile::dtype::u32);
    tl::store(out_i + 3 + offs, ca);
    tl::store(out_u + 1 + offs, cc);
    // (the dtype of max/min of i8 is left open: Triton widens it to i32, the values are the same)
    tl::store(out_8, tl::cast<std::int8_t>(tl::max(va, 0)));
    tl::store(out_8 + 1, tl::cast<std::int8_t>(tl::min(va, 0)));
  });
  auto ha = lt2::random_vec<std::int8_t>(64, 1, 60, 127);  // sum ≈ 6000: wraps in i8
  ha[5] = -128;
  auto hb = lt2::random_vec<std::int16_t>(64, 2, 20000, 32767);  // sum ≈ 1.7e6: wraps in i16
  auto hc = lt2::random_vec<std::uint8_t>(64, 3, 200, 255);  // sum ≈ 14700: wraps in u8
  auto d = lt2::dev();
  auto a = d.upload(ha);
  auto b = d.upload(hb);
  auto c = d.upload(hc);
  auto out_i = d.alloc<std::int32_t>(3 + 64);
  auto out_u = d.alloc<std::uint32_t>(1 + 64);
  auto out_8 = d.alloc<std::int8_t>(2);
  k[{1}](a, b, c, out_i, out_u, out_8);
  auto ri = out_i.to_host();
  auto ru = out_u.to_host();
  auto r8 = out_8.to_host();
  std::int32_t sa = 0, sb = 0, count = 0;
  std::uint32_t sc = 0;
  for (int i = 0; i < 64; ++i) {
    sa += ha[ix(i)];
    sb += hb[ix(i)];
    sc += hc[ix(i)];
    count += ha[ix(i)] > 0;
    CHECK(ri[ix(3 + i)] == sa);
    CHECK(ru[ix(1 + i)] == sc);
  }
  CHECK(sa > 127);
  CHECK(ri[0] == sa);
  CHECK(ri[1] == sb);
  CHECK(ru[0] == sc);
  CHECK(ri[2] == count);
  CHECK(static_cast<int>(r8[0]) == *std::max_element(ha.begin(), ha.end()));
  CHECK(static_cast<int>(r8[1]) == -128);
}

namespace {
// ---- masked loads with identity `other` values ----
template <class T>
auto masked = tile::kernel("masked", [](tl::ptr<T> x, tl::ptr<T> out, tl::ptr<std::int32_t> ids, tl::i32 nr, tl::i32 nc) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, 16), c = tl::arange(0, 16);
  auto ptrs = x + r(_, newaxis) * nc + c(newaxis, _);
  auto m = (r(_, newaxis) < nr) & (c(newaxis, _) < nc);
  tl::tensor lowest, highest;
  if constexpr (std::is_floating_point_v<T>) {
    lowest = -tl::inf<T>();
    highest = tl::inf<T>();
  } else {
    lowest = tl::constant<T>(std::numeric_limits<T>::min());
    highest = tl::constant<T>(std::numeric_limits<T>::max());
  }
  auto o = tl::arange(0, 16);
  tl::store(out + o, tl::sum(tl::load(ptrs, m, 0), 1));
  tl::store(out + 16 + o, tl::max(tl::load(ptrs, m, lowest), 1));
  tl::store(out + 32 + o, tl::min(tl::load(ptrs, m, highest), 0));
  tl::store(out + 48 + o, tl::reduce(tl::load(ptrs, m, 1), 0, [](tl::tensor a, tl::tensor b) { return a * b; }));
  tl::store(out + 64, tl::sum(tl::load(ptrs, m, 0)));
  tl::store(ids + o, tl::argmax(tl::load(ptrs, m, lowest), 1));
  tl::store(ids + 16 + o, tl::argmin(tl::load(ptrs, m, highest), 0));
});

template <class T>
void check_masked(int nr, int nc, unsigned seed) {
  CAPTURE(nr);
  CAPTURE(nc);
  // values in [-3, 3] (floats: non-integers near 1 in magnitude, so products stay finite)
  auto h = std::is_floating_point_v<T> ? lt2::random_vec<T>(ix(nr * nc), seed, 0.5, 1.5)
                                       : lt2::random_vec<T>(ix(nr * nc), seed, -3, 3);
  if constexpr (std::is_floating_point_v<T>)
    for (std::size_t i = 0; i < h.size(); i += 3) h[i] = -h[i];
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<T>(65);
  auto ids = d.alloc<std::int32_t>(32);
  masked<T>[{1}](x, out, ids, nr, nc);
  const T lowest = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  const T highest = std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  auto at = [&](int i, int j, T other) { return i < nr && j < nc ? h[ix(i * nc + j)] : other; };
  std::vector<T> want(65);
  std::vector<std::int32_t> want_i(32);
  T total = at(0, 0, 0);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      if (i || j) total = lt2::add(total, at(i, j, 0));
  for (int o = 0; o < 16; ++o) {
    T s = at(o, 0, 0), mx = at(o, 0, lowest), mn = at(0, o, highest), p = at(0, o, 1);
    int amax = 0, amin = 0;
    for (int t = 1; t < 16; ++t) {
      s = lt2::add(s, at(o, t, 0));
      if (at(o, t, lowest) > mx) mx = at(o, t, lowest), amax = t;
      if (at(t, o, highest) < mn) mn = at(t, o, highest), amin = t;
      p = lt2::mul(p, at(t, o, 1));
    }
    want[ix(o)] = s;
    want[ix(16 + o)] = mx;
    want[ix(32 + o)] = mn;
    want[ix(48 + o)] = p;
    want_i[ix(o)] = amax;
    want_i[ix(16 + o)] = amin;
  }
  want[64] = total;
  auto r = out.to_host();
  std::vector<T> sums(16), prods(16);
  std::vector<std::vector<T>> terms(16);
  for (int o = 0; o < 16; ++o) {
    sums[ix(o)] = want[ix(o)], prods[ix(o)] = want[ix(48 + o)];
    for (int t = 0; t < 16; ++t) terms[ix(o)].push_back(at(o, t, 0));
  }
  std::vector<T> all;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) all.push_back(at(i, j, 0));
  lt2::accept_sums(r, 0, sums, terms);  // float sums and products: any order (GPU: a tree)
  lt2::accept_sums(r, 64, std::vector<T>{total}, {all});
  lt2::accept_products(r, 48, prods, 16);
  lt2::check_same(r, want, "masked sum, max, min, product, total");
  lt2::check_same(ids.to_host(), want_i, "masked argmax, argmin");
  // rows (and columns) wholly masked off give the identities
  if (nr < 16) {
    CHECK(r[15] == T(0));
    CHECK(r[16 + 15] == lowest);
  }
  if (nc < 16) {
    CHECK(r[32 + 15] == highest);
    CHECK(r[48 + 15] == T(1));
  }
}
}  // namespace

TEST_CASE_TEMPLATE("masked inputs with identity `other` values", T, std::int32_t, float, double) {
  unsigned seed = 11;
  for (auto [nr, nc] : {std::pair{16, 16}, {5, 16}, {16, 9}, {3, 7}, {1, 1}, {1, 13}, {12, 1}})
    check_masked<T>(nr, nc, seed++);
}

namespace {
// ---- user combine functions ----
// KIND 0 product, 1 bitwise or, 2 max-abs, 3 a + b + 1 (a constant in the combine region),
// 4 2a + b (neither commutative nor associative: pins the fold order), 5 max through tl::if_
// (a combine region that is not elementwise: the interpreter folds position by position)
template <class T>
auto combine2d = tile::kernel("combine2d", [](tl::ptr<T> x, tl::ptr<T> out, tl::constexpr_<"AXIS"> AXIS,
                                              tl::constexpr_<"KIND"> KIND) {
  using tl::_;
  using tl::newaxis;
  auto v = tl::load(x + tl::arange(0, 8)(_, newaxis) * 16 + tl::arange(0, 16)(newaxis, _));
  const int ax = static_cast<int>(AXIS);
  std::function<tl::tensor(tl::tensor, tl::tensor)> fn;
  switch (KIND) {
    case 0: fn = [](tl::tensor a, tl::tensor b) { return a * b; }; break;
    case 1: fn = [](tl::tensor a, tl::tensor b) { return a | b; }; break;
    case 2: fn = [](tl::tensor a, tl::tensor b) { return tl::where(tl::abs(b) > tl::abs(a), b, a); }; break;
    case 3: fn = [](tl::tensor a, tl::tensor b) { return a + b + 1; }; break;
    case 4: fn = [](tl::tensor a, tl::tensor b) { return a * 2 + b; }; break;
    default:
      fn = [](tl::tensor a, tl::tensor b) { return tl::if_(b > a, [&] { return b; }, [&] { return a; }); };
  }
  tl::store(out + tl::arange(0, AXIS == 0 ? 16 : 8), tl::reduce(v, ax, fn));
});

template <class T>
T combine_ref(int kind, T a, T b) {
  switch (kind) {
    case 0: return lt2::mul(a, b);
    case 1:
      if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b);
      return a;
    case 2: {
      auto mag = [](T v) { return v < 0 ? -lt2::to_d(v) : lt2::to_d(v); };
      return mag(b) > mag(a) ? b : a;
    }
    case 3: return lt2::add(lt2::add(a, b), T(1));
    case 4: return lt2::add(lt2::mul(a, T(2)), b);
    default: return b > a ? b : a;
  }
}
}  // namespace

TEST_CASE_TEMPLATE("tl::reduce with user combine functions on both axes", T, std::int32_t, float) {
  auto d = lt2::dev();
  auto h = std::is_integral_v<T> ? lt2::random_vec<T>(128, 21, -9, 9) : lt2::random_vec<T>(128, 21, 0.5, 1.5);
  if constexpr (std::is_floating_point_v<T>)
    for (std::size_t i = 0; i < h.size(); i += 4) h[i] = -h[i];
  auto x = d.upload(h);
  for (int kind = 0; kind < 6; ++kind) {
    if (kind == 1 && !std::is_integral_v<T>) continue;
    // A GPU folds in a tree: 2a + b (kind 4) is neither associative nor commutative, and
    // max-abs (kind 2) picks between equal magnitudes of opposite sign (the integers here) by
    // position, so their results depend on the order the interpreter pins.
    if (!lt2::ordered_folds() && (kind == 4 || (kind == 2 && std::is_integral_v<T>))) continue;
    for (int axis = 0; axis < 2; ++axis) {
      CAPTURE(kind);
      CAPTURE(axis);
      const int n = axis == 0 ? 16 : 8, len = axis == 0 ? 8 : 16;
      auto out = d.alloc<T>(ix(n));
      combine2d<T>[{1}](x, out, "AXIS"_c = axis, "KIND"_c = kind);
      std::vector<T> want(ix(n));
      std::vector<std::vector<T>> terms(ix(n));  // kind 3: the values and len - 1 ones
      for (int o = 0; o < n; ++o) {
        auto at = [&](int i) { return h[ix(axis == 0 ? i * 16 + o : o * 16 + i)]; };
        T acc = at(0);
        terms[ix(o)].push_back(at(0));
        for (int i = 1; i < len; ++i) {
          acc = combine_ref(kind, acc, at(i));
          terms[ix(o)].push_back(at(i));
          terms[ix(o)].push_back(T(1));
        }
        want[ix(o)] = acc;
      }
      auto got = out.to_host();
      if (kind == 0) lt2::accept_products(got, 0, want, ix(len));
      if (kind == 3) lt2::accept_sums(got, 0, want, terms);
      lt2::check_same(got, want);
    }
  }
}

TEST_CASE("tl::reduce with two and three inputs") {
  auto k = tile::kernel("multi", [](tl::ptr<float> x, tl::ptr<float> vals, tl::ptr<std::int32_t> ids,
                                    tl::constexpr_<"AXIS"> AXIS) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 16), c = tl::arange(0, 32);
    auto v = tl::load(x + r(_, newaxis) * 32 + c(newaxis, _));
    const int ax = static_cast<int>(AXIS);
    auto idx = tl::broadcast_to(AXIS == 0 ? r(_, newaxis) : c(newaxis, _), {16, 32});
    // (value, index) of the minimum, first index on ties
    auto m = tl::reduce(std::array<tl::tensor, 2>{v, idx}, ax, [](std::array<tl::tensor, 2> a, std::array<tl::tensor, 2> b) {
      auto take_b = (b[0] < a[0]) || ((b[0] == a[0]) && (b[1] < a[1]));
      return std::array<tl::tensor, 2>{tl::where(take_b, b[0], a[0]), tl::where(take_b, b[1], a[1])};
    });
    // (sum, sum of squares, count of positives) in one pass
    auto ones = tl::cast<float>(v > 0.0f);
    auto s = tl::reduce(std::array<tl::tensor, 3>{v, v * v, ones}, ax, [](std::array<tl::tensor, 3> a, std::array<tl::tensor, 3> b) {
      return std::array<tl::tensor, 3>{a[0] + b[0], a[1] + b[1], a[2] + b[2]};
    });
    const std::int64_t n = AXIS == 0 ? 32 : 16;
    auto o = tl::arange(0, n);
    tl::store(vals + o, m[0]);
    tl::store(ids + o, m[1]);
    for (std::int64_t i = 0; i < 3; ++i) tl::store(vals + (i + 1) * n + o, s[static_cast<std::size_t>(i)]);
  });
  auto h = lt2::random_vec<float>(16 * 32, 8);
  for (std::size_t i = 0; i < h.size(); i += 5) h[i] = -1.0f;  // repeated minima: ties
  auto d = lt2::dev();
  auto x = d.upload(h);
  for (int axis = 0; axis < 2; ++axis) {
    CAPTURE(axis);
    const int n = axis == 0 ? 32 : 16, len = axis == 0 ? 16 : 32;
    auto vals = d.alloc<float>(ix(4 * n));
    auto ids = d.alloc<std::int32_t>(ix(n));
    k[{1}](x, vals, ids, "AXIS"_c = axis);
    std::vector<float> want(ix(4 * n));
    std::vector<std::int32_t> want_i(ix(n));
    for (int o = 0; o < n; ++o) {
      auto at = [&](int i) { return h[ix(axis == 0 ? i * 32 + o : o * 32 + i)]; };
      float mv = at(0), s = at(0), s2 = lt2::mul_f32(at(0), at(0)), cnt = at(0) > 0 ? 1.0f : 0.0f;
      int mi = 0;
      for (int i = 1; i < len; ++i) {
        if (at(i) < mv) mv = at(i), mi = i;
        s += at(i);
        s2 += lt2::mul_f32(at(i), at(i));
        cnt += at(i) > 0 ? 1.0f : 0.0f;
      }
      want[ix(o)] = mv;
      want_i[ix(o)] = mi;
      want[ix(n + o)] = s;
      want[ix(2 * n + o)] = s2;
      want[ix(3 * n + o)] = cnt;
    }
    auto got = vals.to_host();
    std::vector<float> sums(ix(n)), squares(ix(n));
    std::vector<std::vector<float>> terms(ix(n)), sq_terms(ix(n));
    for (int o = 0; o < n; ++o) {
      sums[ix(o)] = want[ix(n + o)], squares[ix(o)] = want[ix(2 * n + o)];
      for (int i = 0; i < len; ++i) {
        const float v = h[ix(axis == 0 ? i * 32 + o : o * 32 + i)];
        terms[ix(o)].push_back(v);
        sq_terms[ix(o)].push_back(lt2::mul_f32(v, v));
      }
    }
    lt2::accept_sums(got, ix(n), sums, terms);  // any order's rounding (GPU: a tree)
    lt2::accept_sums(got, ix(2 * n), squares, sq_terms);
    lt2::check_same(got, want, "min, sum, sum of squares, count");
    lt2::check_same(ids.to_host(), want_i, "index of the minimum");
  }
}

namespace {
// ---- scans ----
// KIND 0 cumsum, 1 cumprod, 2 running max (associative_scan), 3 2a + b (pins the order)
template <class T>
auto scan2d = tile::kernel("scan2d", [](tl::ptr<T> x, tl::ptr<T> out, tl::constexpr_<"R"> R, tl::constexpr_<"C"> C,
                                        tl::constexpr_<"AXIS"> AXIS, tl::constexpr_<"REV", bool> REV,
                                        tl::constexpr_<"KIND"> KIND) {
  using tl::_;
  using tl::newaxis;
  auto offs = tl::arange(0, R)(_, newaxis) * C + tl::arange(0, C)(newaxis, _);
  auto v = tl::load(x + offs);
  const int ax = static_cast<int>(AXIS);
  tl::tensor s;
  if (KIND == 0) s = tl::cast<T>(tl::cumsum(v, ax, REV));
  if (KIND == 1) s = tl::cumprod(v, ax, REV);
  if (KIND == 2) s = tl::associative_scan(v, ax, [](tl::tensor a, tl::tensor b) { return tl::maximum(a, b); }, REV);
  if (KIND == 3) s = tl::associative_scan(v, ax, [](tl::tensor a, tl::tensor b) { return a * 2 + b; }, REV);
  if (KIND == 4)  // a combine region with a runtime branch: folded position by position
    s = tl::associative_scan(v, ax, [](tl::tensor a, tl::tensor b) { return tl::if_(b > a, [&] { return b; }, [&] { return a; }); }, REV);
  CHECK(s.shape() == v.shape());
  tl::store(out + offs, s);
});

template <class T>
void check_scan(int R, int C, int axis, bool rev, int kind, const std::vector<T>& h) {
  CAPTURE(R);
  CAPTURE(C);
  CAPTURE(axis);
  CAPTURE(rev);
  CAPTURE(kind);
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<T>(h.size());
  scan2d<T>[{1}](x, out, "R"_c = R, "C"_c = C, "AXIS"_c = axis, "REV"_c = rev, "KIND"_c = kind);
  std::vector<T> want(h.size());
  const int n = axis == 0 ? C : R, len = axis == 0 ? R : C;
  for (int o = 0; o < n; ++o) {
    auto pos = [&](int i) { return ix(axis == 0 ? i * C + o : o * C + i); };
    T acc{};
    for (int t = 0; t < len; ++t) {
      const int i = rev ? len - 1 - t : t;
      const T v = h[pos(i)];
      if (t == 0)
        acc = v;
      else if (kind == 0)
        acc = lt2::add(acc, v);
      else if (kind == 1)
        acc = lt2::mul(acc, v);
      else if (kind == 2 || kind == 4)
        acc = lt2::less(acc, v) ? v : acc;
      else
        acc = lt2::add(lt2::mul(acc, T(2)), v);
      want[pos(i)] = acc;
    }
  }
  lt2::check_same(out.to_host(), want);
}
}  // namespace

TEST_CASE_TEMPLATE("cumsum, cumprod and associative_scan, forward and reverse, on each axis", T, std::int32_t,
                   std::int64_t, float, tile::half) {
  unsigned seed = 31;
  for (auto [R, C] : {std::pair{1, 8}, {8, 1}, {4, 8}, {16, 16}, {64, 32}, {2, 256}}) {
    // products of values in [0.5, 1.5] (floats) or [-2, 2] (integers, wrapping) stay meaningful
    auto h = std::is_integral_v<T> ? lt2::random_vec<T>(ix(R * C), seed++, -2, 2)
                                   : lt2::random_vec<T>(ix(R * C), seed++, 0.5, 1.5);
    for (int axis = 0; axis < 2; ++axis)
      for (bool rev : {false, true})
        for (int kind = 0; kind < 5; ++kind) {
          if (kind == 1 && lt2::is_half_like<T> && R * C > 64) continue;  // f16 products underflow
          check_scan<T>(R, C, axis, rev, kind, h);
        }
  }
}

TEST_CASE("cumsum along each axis of a 3-D tile") {
  auto k = tile::kernel("cumsum3d", [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"AXIS"> AXIS,
                                       tl::constexpr_<"REV", bool> REV) {
    using tl::_;
    using tl::newaxis;
    auto offs = tl::arange(0, 2)(_, newaxis, newaxis) * 32 + tl::arange(0, 4)(newaxis, _, newaxis) * 8 +
                tl::arange(0, 8)(newaxis, newaxis, _);
    tl::store(out + offs, tl::cumsum(tl::load(x + offs), static_cast<int>(AXIS), REV));
  });
  auto h = lt2::random_vec<float>(64, 12);
  auto d = lt2::dev();
  auto x = d.upload(h);
  const int dims[3] = {2, 4, 8}, strides[3] = {32, 8, 1};
  for (int axis = 0; axis < 3; ++axis)
    for (bool rev : {false, true}) {
      CAPTURE(axis);
      CAPTURE(rev);
      auto out = d.alloc<float>(64);
      k[{1}](x, out, "AXIS"_c = axis, "REV"_c = rev);
      std::vector<float> want(64);
      for (int e = 0; e < 64; ++e) {
        const int t = e / strides[axis] % dims[axis];
        if (t != 0) continue;  // e is the start of a line along the axis
        float acc = 0;
        for (int s = 0; s < dims[axis]; ++s) {
          const int i = rev ? dims[axis] - 1 - s : s;
          const int p = e + i * strides[axis];
          acc = s == 0 ? h[ix(p)] : acc + h[ix(p)];
          want[ix(p)] = acc;
        }
      }
      lt2::check_same(out.to_host(), want);
    }
}

TEST_CASE("a two-input associative_scan carries a running argmax, forward and reverse, on both axes") {
  auto k = tile::kernel("scan2", [](tl::ptr<float> x, tl::ptr<float> vals, tl::ptr<std::int32_t> ids,
                                    tl::constexpr_<"AXIS"> AXIS, tl::constexpr_<"REV", bool> REV) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 8), c = tl::arange(0, 32);
    auto offs = r(_, newaxis) * 32 + c(newaxis, _);
    auto v = tl::load(x + offs);
    auto idx = tl::broadcast_to(AXIS == 0 ? r(_, newaxis) : c(newaxis, _), {8, 32});
    auto s = tl::associative_scan(std::array<tl::tensor, 2>{v, idx}, static_cast<int>(AXIS),
                                  [](std::array<tl::tensor, 2> a, std::array<tl::tensor, 2> b) {
                                    auto take_b = b[0] > a[0];
                                    return std::array<tl::tensor, 2>{tl::where(take_b, b[0], a[0]),
                                                                     tl::where(take_b, b[1], a[1])};
                                  },
                                  REV);
    tl::store(vals + offs, s[0]);
    tl::store(ids + offs, s[1]);
  });
  auto h = lt2::random_vec<float>(256, 4, -3, 3);
  for (std::size_t i = 0; i < h.size(); i += 7) h[i] = 2.5f;  // repeated values
  auto d = lt2::dev();
  auto x = d.upload(h);
  for (int axis = 0; axis < 2; ++axis)
    for (bool rev : {false, true}) {
      CAPTURE(axis);
      CAPTURE(rev);
      auto vals = d.alloc<float>(256);
      auto ids = d.alloc<std::int32_t>(256);
      k[{1}](x, vals, ids, "AXIS"_c = axis, "REV"_c = rev);
      std::vector<float> want(256);
      std::vector<std::int32_t> want_i(256);
      const int n = axis == 0 ? 32 : 8, len = axis == 0 ? 8 : 32;
      for (int o = 0; o < n; ++o) {
        auto pos = [&](int i) { return ix(axis == 0 ? i * 32 + o : o * 32 + i); };
        float best = 0;
        int bi = 0;
        for (int t = 0; t < len; ++t) {
          const int i = rev ? len - 1 - t : t;
          if (t == 0 || h[pos(i)] > best) best = h[pos(i)], bi = i;
          want[pos(i)] = best;
          want_i[pos(i)] = bi;
        }
      }
      lt2::check_same(vals.to_host(), want, "running max");
      lt2::check_same(ids.to_host(), want_i, "its index");
    }
}

TEST_CASE("combine functions that read outer values; reductions of masks; reductions inside a runtime loop") {
  auto k = tile::kernel("outer", [](tl::ptr<float> x, tl::ptr<float> out, tl::ptr<std::int32_t> flags, tl::f32 w,
                                    tl::i32 n_blocks) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 4), c = tl::arange(0, 16);
    auto v = tl::load(x + r(_, newaxis) * 16 + c(newaxis, _));
    // a runtime scalar argument inside the combine function: acc * w + b
    tl::store(out + r, tl::reduce(v, 1, [&](tl::tensor a, tl::tensor b) { return a * w + b; }));
    // any / all of a mask
    auto pos = v > 0.0f;
    tl::store(flags + r, tl::cast<std::int32_t>(tl::max(pos, 1)));
    tl::store(flags + 4 + r, tl::cast<std::int32_t>(tl::min(pos, 1)));
    // running row maxima and sums over column blocks of a [4, 16 * n_blocks] matrix
    auto m = tl::full<float>({4}, -tl::inf<float>());
    auto s = tl::zeros<float>({4});
    tl::for_range(0, n_blocks, [&](tl::tensor b) {
      auto blk = tl::load(x + 64 + r(_, newaxis) * (16 * n_blocks) + b * 16 + c(newaxis, _));
      m = tl::maximum(m, tl::max(blk, 1));
      s = s + tl::sum(blk, 1);
    });
    tl::store(out + 4 + r, m);
    tl::store(out + 8 + r, s);
  });
  const int nb = 3;
  auto h = lt2::random_vec<float>(64 + 4 * 16 * nb, 17, -2, 2);
  for (int j = 0; j < 16; ++j) {
    h[ix(16 + j)] = std::abs(h[ix(16 + j)]) + 0.5f;  // row 1 all positive
    h[ix(32 + j)] = -std::abs(h[ix(32 + j)]) - 0.5f;  // row 2 all negative
  }
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<float>(12);
  auto flags = d.alloc<std::int32_t>(8);
  const float w = 0.75f;
  k[{1}](x, out, flags, w, nb);
  auto ro = out.to_host();
  auto rf = flags.to_host();
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    float acc = h[ix(i * 16)];
    bool any = false, all = true;
    for (int j = 0; j < 16; ++j) {
      if (j) acc = lt2::mul_f32(acc, w) + h[ix(i * 16 + j)];
      any = any || h[ix(i * 16 + j)] > 0;
      all = all && h[ix(i * 16 + j)] > 0;
    }
    // acc * w + b is not associative: its value pins the sequential fold, which a GPU's tree
    // does not follow (there the result must only be finite, for some order)
    if (lt2::ordered_folds())
      CHECK(ro[ix(i)] == acc);
    else
      CHECK(std::isfinite(ro[ix(i)]));
    CHECK(rf[ix(i)] == static_cast<int>(any));
    CHECK(rf[ix(4 + i)] == static_cast<int>(all));
    float m = -std::numeric_limits<float>::infinity(), s = 0;
    std::vector<float> terms;
    for (int b = 0; b < nb; ++b) {
      for (int j = 0; j < 16; ++j) terms.push_back(h[ix(64 + i * 16 * nb + b * 16 + j)]);
      float bm = h[ix(64 + i * 16 * nb + b * 16)], bs = bm;
      for (int j = 1; j < 16; ++j) {
        const float v = h[ix(64 + i * 16 * nb + b * 16 + j)];
        bm = std::max(bm, v);
        bs += v;
      }
      m = std::max(m, bm);
      s += bs;
    }
    CHECK(ro[ix(4 + i)] == m);
    CHECK(lt2::sum_matches(ro[ix(8 + i)], s, terms));
  }
  CHECK(rf[1] == 1);
  CHECK(rf[4 + 1] == 1);
  CHECK(rf[2] == 0);
}

namespace {
// ---- long rows: the GPU backend scans them in parallel (in the thread, across lanes with
// shuffles, across warps through shared memory); other backends sequentially ----
template <class T>
auto long_scan = tile::kernel("long_scan", [](tl::ptr<T> x, tl::ptr<T> sums, tl::ptr<T> maxes, tl::ptr<std::int32_t> ids,
                                              tl::constexpr_<"R"> R, tl::constexpr_<"C"> C, tl::constexpr_<"AXIS"> AXIS,
                                              tl::constexpr_<"REV", bool> REV) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, R), c = tl::arange(0, C);
  auto offs = r(_, newaxis) * C + c(newaxis, _);
  auto v = tl::load(x + offs);
  const int ax = static_cast<int>(AXIS);
  tl::store(sums + offs, tl::cast<T>(tl::cumsum(v, ax, REV)));
  tl::store(maxes + offs, tl::associative_scan(v, ax, [](tl::tensor a, tl::tensor b) { return tl::maximum(a, b); }, REV));
  auto idx = tl::broadcast_to(AXIS == 0 ? r(_, newaxis) : c(newaxis, _), {static_cast<std::int64_t>(R), static_cast<std::int64_t>(C)});
  auto s = tl::associative_scan(std::array<tl::tensor, 2>{v, idx}, ax,  // running argmax, first index on ties
                                [](std::array<tl::tensor, 2> a, std::array<tl::tensor, 2> b) {
                                  auto take_b = b[0] > a[0];
                                  return std::array<tl::tensor, 2>{tl::where(take_b, b[0], a[0]), tl::where(take_b, b[1], a[1])};
                                },
                                REV);
  tl::store(ids + offs, s[1]);
});

template <class T>
void check_long_scan(int R, int C, int axis, bool rev, int warps) {
  CAPTURE(R);
  CAPTURE(C);
  CAPTURE(axis);
  CAPTURE(rev);
  CAPTURE(warps);
  auto d = lt2::dev();
  auto h = std::is_integral_v<T> ? lt2::random_vec<T>(ix(R * C), 77, -50, 50) : lt2::random_vec<T>(ix(R * C), 77, -4, 4);
  auto x = d.upload(h);
  auto sums = d.alloc<T>(h.size()), maxes = d.alloc<T>(h.size());
  auto ids = d.alloc<std::int32_t>(h.size());
  long_scan<T>[{1}](x, sums, maxes, ids, "R"_c = R, "C"_c = C, "AXIS"_c = axis, "REV"_c = rev, "num_warps"_c = warps);
  std::vector<T> want_s(h.size()), want_m(h.size());
  std::vector<std::int32_t> want_i(h.size());
  std::vector<double> exact(h.size()), mag(h.size());
  const int n = axis == 0 ? C : R, len = axis == 0 ? R : C;
  for (int o = 0; o < n; ++o) {
    auto pos = [&](int i) { return ix(axis == 0 ? i * C + o : o * C + i); };
    T s{}, m{};
    int mi = 0;
    double e = 0, a = 0;
    for (int t = 0; t < len; ++t) {
      const int i = rev ? len - 1 - t : t;
      const T v = h[pos(i)];
      s = t == 0 ? v : lt2::add(s, v);
      if (t == 0 || lt2::less(m, v)) m = v, mi = i;
      e += lt2::to_d(v), a += std::fabs(lt2::to_d(v));
      want_s[pos(i)] = s, want_m[pos(i)] = m, want_i[pos(i)] = mi;
      exact[pos(i)] = e, mag[pos(i)] = double(t) * 0x1p-23 * a;  // (t terms added: any order's bound)
    }
  }
  auto got_s = sums.to_host();
  if (!lt2::ordered_folds() && !std::is_integral_v<T>)
    for (std::size_t i = 0; i < got_s.size(); ++i)
      if (std::fabs(lt2::to_d(got_s[i]) - exact[i]) <= mag[i]) got_s[i] = want_s[i];
  lt2::check_same(got_s, want_s, "cumsum");
  lt2::check_same(maxes.to_host(), want_m, "running max");
  lt2::check_same(ids.to_host(), want_i, "running argmax");
}
}  // namespace

TEST_CASE_TEMPLATE("scans of long rows (4096, 2048 elements) forward and reverse, 4 and 8 warps", T, std::int32_t, float) {
  for (int warps : {4, 8})
    for (bool rev : {false, true}) {
      check_long_scan<T>(1, 4096, 1, rev, warps);
      check_long_scan<T>(4, 2048, 1, rev, warps);
      check_long_scan<T>(2048, 2, 0, rev, warps);
    }
}

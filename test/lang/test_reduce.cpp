// test/lang/test_reduce.cpp — reductions and scans on each axis against sequential C++ folds.
#include <algorithm>

#include "lang_test2.hpp"

namespace {
// out[i] = reduce over axis of a [R, C] tile; kind: 0 sum, 1 max, 2 min, 3 argmax, 4 argmin
template <class T>
auto reduce2d = tile::kernel("reduce2d", [](tl::ptr<T> x, tl::ptr<T> out, tl::ptr<std::int32_t> idx,
                                            tl::constexpr_<"R"> R, tl::constexpr_<"C"> C,
                                            tl::constexpr_<"AXIS"> AXIS, tl::constexpr_<"KIND"> KIND) {
  using tl::_;
  using tl::newaxis;
  auto r = tl::arange(0, R), c = tl::arange(0, C);
  auto v = tl::load(x + r(_, newaxis) * C + c(newaxis, _));
  auto n_out = AXIS == 0 ? C : R;
  auto o = tl::arange(0, n_out);
  if (KIND == 0) tl::store(out + o, tl::cast<T>(tl::sum(v, static_cast<int>(AXIS))));
  if (KIND == 1) tl::store(out + o, tl::max(v, static_cast<int>(AXIS)));
  if (KIND == 2) tl::store(out + o, tl::min(v, static_cast<int>(AXIS)));
  if (KIND == 3) tl::store(idx + o, tl::argmax(v, static_cast<int>(AXIS)));
  if (KIND == 4) tl::store(idx + o, tl::argmin(v, static_cast<int>(AXIS)));
});

template <class T>
void check_reduce(int R, int C, int axis, int kind, unsigned seed) {
  CAPTURE(R);
  CAPTURE(C);
  CAPTURE(axis);
  CAPTURE(kind);
  auto h = lt2::random_vec<T>(static_cast<std::size_t>(R * C), seed, -8, 8);
  auto d = lt2::dev();
  auto x = d.upload(h);
  int n_out = axis == 0 ? C : R, n_in = axis == 0 ? R : C;
  auto out = d.alloc<T>(static_cast<std::size_t>(n_out));
  auto idx = d.alloc<std::int32_t>(static_cast<std::size_t>(n_out));
  reduce2d<T>[{1}](x, out, idx, "R"_c = R, "C"_c = C, "AXIS"_c = axis, "KIND"_c = kind);
  auto got = out.to_host();
  auto gi = idx.to_host();
  for (int o = 0; o < n_out; ++o) {
    auto at = [&](int i) { return h[static_cast<std::size_t>(axis == 0 ? i * C + o : o * C + i)]; };
    T acc = at(0);
    int best = 0;
    for (int i = 1; i < n_in; ++i) {
      T v = at(i);
      if (kind == 0) acc = static_cast<T>(acc + v);
      if (kind == 1 && v > acc) acc = v;
      if (kind == 2 && v < acc) acc = v;
      if (kind == 3 && v > at(best)) best = i;
      if (kind == 4 && v < at(best)) best = i;
    }
    if (kind <= 2) CHECK(static_cast<double>(got[static_cast<std::size_t>(o)]) == static_cast<double>(acc));
    else CHECK(gi[static_cast<std::size_t>(o)] == best);
  }
}
}  // namespace

TEST_CASE_TEMPLATE("sum/max/min/argmax/argmin on both axes", T, std::int32_t, std::int64_t, std::uint32_t, float, double) {
  unsigned seed = 1;
  for (auto [R, C] : {std::pair{1, 16}, {16, 1}, {4, 8}, {32, 16}, {2, 256}})
    for (int axis = 0; axis < 2; ++axis)
      for (int kind = 0; kind < 5; ++kind)
        if (!(std::is_unsigned_v<T> && kind == 0)) check_reduce<T>(R, C, axis, kind, seed++);
}

TEST_CASE("argmax ties resolve to the smallest index; sums of i8 accumulate in i32") {
  auto k = tile::kernel("ties", [](tl::ptr<std::int8_t> x, tl::ptr<std::int32_t> out) {
    auto v = tl::load(x + tl::arange(0, 64));
    tl::store(out, tl::argmax(v, 0));
    tl::store(out + 1, tl::argmin(v, 0));
    auto s = tl::sum(v, 0);
    tl::static_assert_(s.dtype() == tile::dtype::i32, "i8 sums accumulate in i32");
    tl::store(out + 2, s);
  });
  std::vector<std::int8_t> h(64, 100);
  h[7] = 120;
  h[40] = 120;
  h[3] = -5;
  h[50] = -5;
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<std::int32_t>(3);
  k[{1}](x, out);
  auto r = out.to_host();
  CHECK(r[0] == 7);
  CHECK(r[1] == 3);
  CHECK(r[2] == 100 * 60 + 240 - 10);  // would wrap in i8
}

TEST_CASE("3-D reductions on each axis, whole-tile reductions") {
  auto k = tile::kernel("red3d", [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"AXIS"> AXIS) {
    using tl::_;
    using tl::newaxis;
    auto a = tl::arange(0, 2), b = tl::arange(0, 4), c = tl::arange(0, 8);
    auto offs = a(_, newaxis, newaxis) * 32 + b(newaxis, _, newaxis) * 8 + c(newaxis, newaxis, _);
    auto v = tl::load(x + offs);
    auto s = tl::sum(v, static_cast<int>(AXIS));
    auto sh = s.shape();
    auto flat = tl::reshape(s, {sh[0] * sh[1]});
    tl::store(out + tl::arange(0, sh[0] * sh[1]), flat);
    tl::store(out + 32, tl::sum(v));
    tl::store(out + 33, tl::max(v));
  });
  std::vector<float> h(64);
  for (int i = 0; i < 64; ++i) h[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) - 2.0f;
  auto d = lt2::dev();
  auto x = d.upload(h);
  int dims[3] = {2, 4, 8};
  for (int axis = 0; axis < 3; ++axis) {
    auto out = d.alloc<float>(34);
    k[{1}](x, out, "AXIS"_c = axis);
    auto r = out.to_host();
    std::vector<float> want;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 8; ++l) {
          int idx3[3] = {i, j, l};
          if (idx3[axis] != 0) continue;
          float s = 0;
          for (int t = 0; t < dims[axis]; ++t) {
            int q[3] = {i, j, l};
            q[axis] = t;
            s += h[static_cast<std::size_t>(q[0] * 32 + q[1] * 8 + q[2])];
          }
          want.push_back(s);
        }
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(r[i] == want[i]);
    float total = 0;
    for (float v : h) total += v;
    CHECK(r[32] == total);
    CHECK(r[33] == 4.0f);
  }
}

TEST_CASE("user combine functions: product, bitwise or, max-abs, value+index") {
  auto k = tile::kernel("combine", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> out) {
    auto v = tl::load(x + tl::arange(0, 16));
    tl::store(out, tl::reduce(v, 0, [](tl::tensor a, tl::tensor b) { return a * b; }));
    tl::store(out + 1, tl::reduce(v, 0, [](tl::tensor a, tl::tensor b) { return a | b; }));
    tl::store(out + 2, tl::reduce(v, 0, [](tl::tensor a, tl::tensor b) {
      return tl::where(tl::abs(a) >= tl::abs(b), a, b);
    }));
    auto idx = tl::arange(0, 16);
    auto r = tl::reduce(std::array<tl::tensor, 2>{v, idx}, 0, [](std::array<tl::tensor, 2> a, std::array<tl::tensor, 2> b) {
      auto take_b = b[0] < a[0];  // minimum value, first index on ties
      return std::array<tl::tensor, 2>{tl::where(take_b, b[0], a[0]), tl::where(take_b, b[1], a[1])};
    });
    tl::store(out + 3, r[0]);
    tl::store(out + 4, r[1]);
  });
  std::vector<std::int32_t> h{3, -1, 2, 1, 1, 1, -9, 1, 1, 2, 1, 1, 1, 1, 5, -9};
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<std::int32_t>(5);
  k[{1}](x, out);
  auto r = out.to_host();
  std::int32_t prod = 1, orv = 0;
  for (auto v : h) prod *= v, orv |= v;
  CHECK(r[0] == prod);
  CHECK(r[1] == orv);
  CHECK(r[2] == -9);
  CHECK(r[3] == -9);
  CHECK(r[4] == 6);
}

TEST_CASE("cumsum, cumprod and associative_scan forward and reverse on each axis") {
  auto k = tile::kernel("scans", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> out, tl::constexpr_<"AXIS"> AXIS,
                                    tl::constexpr_<"REV", bool> REV, tl::constexpr_<"KIND"> KIND) {
    using tl::_;
    using tl::newaxis;
    auto offs = tl::arange(0, 4)(_, newaxis) * 8 + tl::arange(0, 8)(newaxis, _);
    auto v = tl::load(x + offs);
    int ax = static_cast<int>(AXIS);
    tl::tensor s;
    if (KIND == 0) s = tl::cumsum(v, ax, REV);
    if (KIND == 1) s = tl::cumprod(v, ax, REV);
    if (KIND == 2) s = tl::associative_scan(v, ax, [](tl::tensor a, tl::tensor b) { return tl::maximum(a, b); }, REV);
    tl::store(out + offs, s);
  });
  auto h = lt2::random_vec<std::int32_t>(32, 9, -3, 3);
  auto d = lt2::dev();
  auto x = d.upload(h);
  for (int axis = 0; axis < 2; ++axis)
    for (bool rev : {false, true})
      for (int kind = 0; kind < 3; ++kind) {
        CAPTURE(axis);
        CAPTURE(rev);
        CAPTURE(kind);
        auto out = d.alloc<std::int32_t>(32);
        k[{1}](x, out, "AXIS"_c = axis, "REV"_c = rev, "KIND"_c = kind);
        auto r = out.to_host();
        int n = axis == 0 ? 4 : 8, m = axis == 0 ? 8 : 4;
        for (int o = 0; o < m; ++o) {
          auto at = [&](int i) { return static_cast<std::size_t>(axis == 0 ? i * 8 + o : o * 8 + i); };
          std::int32_t acc = 0;
          for (int t = 0; t < n; ++t) {
            int i = rev ? n - 1 - t : t;
            std::int32_t v = h[at(i)];
            acc = t == 0 ? v : kind == 0 ? acc + v : kind == 1 ? acc * v : std::max(acc, v);
            CHECK(r[at(i)] == acc);
          }
        }
      }
}

TEST_CASE("a two-input scan carries a running argmax") {
  auto k = tile::kernel("scan2", [](tl::ptr<float> x, tl::ptr<std::int32_t> out) {
    auto v = tl::load(x + tl::arange(0, 32));
    auto r = tl::associative_scan(std::array<tl::tensor, 2>{v, tl::arange(0, 32)}, 0,
                                  [](std::array<tl::tensor, 2> a, std::array<tl::tensor, 2> b) {
                                    auto take_b = b[0] > a[0];
                                    return std::array<tl::tensor, 2>{tl::where(take_b, b[0], a[0]), tl::where(take_b, b[1], a[1])};
                                  });
    tl::store(out + tl::arange(0, 32), r[1]);
  });
  auto h = lt2::random_vec<float>(32, 4);
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<std::int32_t>(32);
  k[{1}](x, out);
  auto r = out.to_host();
  int best = 0;
  for (int i = 0; i < 32; ++i) {
    if (h[static_cast<std::size_t>(i)] > h[static_cast<std::size_t>(best)]) best = i;
    CHECK(r[static_cast<std::size_t>(i)] == best);
  }
}

TEST_CASE("masked reductions with identity values") {
  auto k = tile::kernel("masked_sum", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 64);
    auto v = tl::load(x + offs, offs < n, 0.0f);
    auto m = tl::load(x + offs, offs < n, -tl::inf<float>());
    tl::store(out, tl::sum(v, 0));
    tl::store(out + 1, tl::max(m, 0));
  });
  std::vector<float> h(64);
  for (int i = 0; i < 64; ++i) h[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<float>(2);
  k[{1}](x.view(0, 20), out, 20);
  auto r = out.to_host();
  CHECK(r[0] == 190.0f);
  CHECK(r[1] == 19.0f);
}

// test/lang/test_shape.cpp — shape ops end to end: expand_dims (incl. negative axes),
// x(_, newaxis) / x(newaxis, _) indexing, broadcast_to, reshape (row-major order), trans and
// permute on 2-D and 3-D tiles, join/split, arange with a non-zero start, full / zeros /
// zeros_like / full_like / constant / inf of every dtype. Shapes are recorded while tracing and
// values are checked through stores.
#include "lang_test.hpp"

using namespace lt;

namespace {
std::string shape_str(const tl::shape_t& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}
/// Trace-and-run a kernel that may not trace: true if it throws a tile::error.
template <class K, class... A>
bool fails(const K& k, A&&... args) {
  return throws_tile_error([&] { k[{1}](std::forward<A>(args)...); });
}
}  // namespace

TEST_CASE("shape: expand_dims and x(_, newaxis)") {
  std::vector<tl::shape_t> shapes;
  auto k = tile::kernel("expand", [&shapes](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> o1, tl::ptr<std::int32_t> o2,
                                            tl::ptr<std::int32_t> o3, tl::ptr<std::int32_t> o4) {
    auto v = tl::load(x + tl::arange(0, 8));
    auto a = tl::expand_dims(v, 0);   // [1, 8]
    auto b = tl::expand_dims(v, 1);   // [8, 1]
    auto c = tl::expand_dims(v, -1);  // [8, 1]
    auto d = tl::expand_dims(v, -2);  // [1, 8]
    auto e = v(tl::_, tl::newaxis);   // [8, 1]
    auto f = v(tl::newaxis, tl::_);   // [1, 8]
    for (auto* t : {&a, &b, &c, &d, &e, &f}) shapes.push_back(t->shape());
    // values: a row tile minus a column tile gives out[i][j] = x[j] - x[i]
    auto offs = offsets_2d(8, 8);
    tl::store(o1 + offs, a - b);
    tl::store(o2 + offs, d - c);
    tl::store(o3 + offs, f - e);
    tl::store(o4 + offsets_2d(8, 1), c);
  });
  hvec<std::int32_t> hx{3, 1, 4, 1, 5, 9, 2, 6};
  auto x = upload<std::int32_t>(hx);
  auto o1 = dev().alloc<std::int32_t>(64), o2 = dev().alloc<std::int32_t>(64), o3 = dev().alloc<std::int32_t>(64);
  auto o4 = dev().alloc<std::int32_t>(8);
  REQUIRE(run([&] { k[{1}](x, o1, o2, o3, o4); }));
  REQUIRE(shapes.size() == 6);
  const tl::shape_t row{1, 8}, col{8, 1};
  CHECK(shapes[0] == row);
  CHECK(shapes[1] == col);
  CHECK(shapes[2] == col);
  CHECK(shapes[3] == row);
  CHECK(shapes[4] == col);
  CHECK(shapes[5] == row);
  std::vector<std::int32_t> want;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) want.push_back(hx[static_cast<std::size_t>(j)] - hx[static_cast<std::size_t>(i)]);
  check_equal(o1.to_host(), want, "expand_dims(x, 0) - expand_dims(x, 1)");
  check_equal(o2.to_host(), want, "expand_dims(x, -2) - expand_dims(x, -1)");
  check_equal(o3.to_host(), want, "x(newaxis, _) - x(_, newaxis)");
  check_equal(o4.to_host(), std::vector<std::int32_t>(hx), "an [8,1] tile stored");
}

TEST_CASE("shape: expand_dims and indexing on 2-D tiles") {
  std::vector<tl::shape_t> shapes;
  auto k = tile::kernel("expand2", [&shapes](tl::ptr<float> x, tl::ptr<float> o1, tl::ptr<float> o2, tl::ptr<float> o3) {
    auto v = tl::load(x + offsets_2d(4, 8));  // [4, 8]
    auto a = tl::expand_dims(v, 0);           // [1, 4, 8]
    auto b = tl::expand_dims(v, 1);           // [4, 1, 8]
    auto c = tl::expand_dims(v, 2);           // [4, 8, 1]
    auto d = tl::expand_dims(v, -1);          // [4, 8, 1]
    auto e = tl::expand_dims(v, -3);          // [1, 4, 8]
    auto f = v(tl::_, tl::newaxis, tl::_);    // [4, 1, 8]
    auto g = v(tl::newaxis, tl::_, tl::_);    // [1, 4, 8]
    auto h = v(tl::_, tl::_, tl::newaxis);    // [4, 8, 1]
    auto i = v(tl::_, tl::_);                 // unchanged
    for (auto* t : {&a, &b, &c, &d, &e, &f, &g, &h, &i}) shapes.push_back(t->shape());
    tl::store(o1 + offsets_3d(4, 8, 2), d + tl::zeros<float>({4, 8, 2}));  // each value twice
    tl::store(o2 + offsets_3d(4, 2, 8), f + tl::zeros<float>({4, 2, 8}));  // each row twice
    tl::store(o3 + offsets_3d(1, 4, 8), g);
  });
  auto hx = gen<float>(32, 1, false, false);
  auto x = upload<float>(hx);
  auto o1 = dev().alloc<float>(64), o2 = dev().alloc<float>(64), o3 = dev().alloc<float>(32);
  REQUIRE(run([&] { k[{1}](x, o1, o2, o3); }));
  const std::vector<tl::shape_t> want_shapes{{1, 4, 8}, {4, 1, 8}, {4, 8, 1}, {4, 8, 1}, {1, 4, 8},
                                             {4, 1, 8}, {1, 4, 8}, {4, 8, 1}, {4, 8}};
  REQUIRE(shapes.size() == want_shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) CHECK_MESSAGE(shapes[i] == want_shapes[i], i << ": " << shape_str(shapes[i]));
  std::vector<float> w1, w2;
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t c = 0; c < 8; ++c) w1.insert(w1.end(), 2, hx[r * 8 + c]);
    for (int rep = 0; rep < 2; ++rep) w2.insert(w2.end(), hx.begin() + static_cast<std::ptrdiff_t>(r * 8), hx.begin() + static_cast<std::ptrdiff_t>(r * 8 + 8));
  }
  check_equal(o1.to_host(), w1, "expand_dims(x, -1) broadcast along the new axis");
  check_equal(o2.to_host(), w2, "x(_, newaxis, _) broadcast along the new axis");
  check_equal(o3.to_host(), std::vector<float>(hx), "x(newaxis, _, _)");
  SUBCASE("bad axes and index counts are trace errors") {
    auto out = dev().alloc<float>(32);
    auto k1 = tile::kernel("bad_expand", [](tl::ptr<float> p) { (void)tl::expand_dims(tl::load(p + offsets_2d(4, 8)), 3); });
    auto k2 = tile::kernel("bad_expand_neg", [](tl::ptr<float> p) { (void)tl::expand_dims(tl::load(p + offsets_2d(4, 8)), -4); });
    auto k3 = tile::kernel("bad_index", [](tl::ptr<float> p) { (void)tl::load(p + offsets_2d(4, 8))(tl::_, tl::newaxis); });
    CHECK(fails(k1, out));
    CHECK(fails(k2, out));
    CHECK(fails(k3, out));
  }
}

TEST_CASE("shape: broadcast_to") {
  std::vector<tl::shape_t> shapes;
  auto k = tile::kernel("bcast_to", [&shapes](tl::ptr<std::int16_t> x, tl::ptr<std::int16_t> o1, tl::ptr<std::int16_t> o2,
                                              tl::ptr<std::int16_t> o3, tl::ptr<std::int16_t> o4, tl::ptr<std::int16_t> o5) {
    auto row = tl::load(x + tl::arange(0, 8));
    auto a = tl::broadcast_to(row(tl::newaxis, tl::_), {4, 8});
    auto b = tl::broadcast_to(row, {4, 8});
    auto c = tl::broadcast_to(tl::load(x + 3), {16});
    auto col = tl::load(x + tl::arange(0, 4));
    auto d = tl::broadcast_to(col(tl::_, tl::newaxis), {4, 8});
    auto e = tl::broadcast_to(tl::reshape(row, {2, 1, 4}), {2, 8, 4});
    for (auto* t : {&a, &b, &c, &d, &e}) shapes.push_back(t->shape());
    tl::store(o1 + offsets_2d(4, 8), a);
    tl::store(o2 + offsets_2d(4, 8), b);
    tl::store(o3 + tl::arange(0, 16), c);
    tl::store(o4 + offsets_2d(4, 8), d);
    tl::store(o5 + offsets_3d(2, 8, 4), e);
  });
  hvec<std::int16_t> hx{10, 11, 12, 13, 14, 15, 16, 17};
  auto x = upload<std::int16_t>(hx);
  auto o1 = dev().alloc<std::int16_t>(32), o2 = dev().alloc<std::int16_t>(32), o3 = dev().alloc<std::int16_t>(16),
       o4 = dev().alloc<std::int16_t>(32), o5 = dev().alloc<std::int16_t>(64);
  REQUIRE(run([&] { k[{1}](x, o1, o2, o3, o4, o5); }));
  const std::vector<tl::shape_t> ws{{4, 8}, {4, 8}, {16}, {4, 8}, {2, 8, 4}};
  CHECK(shapes == ws);
  std::vector<std::int16_t> w1, w4, w5;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 8; ++j) {
      w1.push_back(hx[static_cast<std::size_t>(j)]);
      w4.push_back(hx[static_cast<std::size_t>(i)]);
    }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 8; ++j)
      for (int l = 0; l < 4; ++l) w5.push_back(hx[static_cast<std::size_t>(i * 4 + l)]);
  check_equal(o1.to_host(), w1, "[1,8] -> [4,8]");
  check_equal(o2.to_host(), w1, "[8] -> [4,8]");
  check_equal(o3.to_host(), std::vector<std::int16_t>(16, 13), "scalar -> [16]");
  check_equal(o4.to_host(), w4, "[4,1] -> [4,8]");
  check_equal(o5.to_host(), w5, "[2,1,4] -> [2,8,4]");
  SUBCASE("incompatible targets are trace errors") {
    auto out = dev().alloc<std::int16_t>(16);
    auto k1 = tile::kernel("bad_bcast1", [](tl::ptr<std::int16_t> p) { (void)tl::broadcast_to(tl::load(p + tl::arange(0, 4)), {8}); });
    auto k2 = tile::kernel("bad_bcast2", [](tl::ptr<std::int16_t> p) { (void)tl::broadcast_to(tl::load(p + offsets_2d(2, 8)), {8}); });
    auto k3 = tile::kernel("bad_bcast3", [](tl::ptr<std::int16_t> p) { (void)tl::broadcast_to(tl::load(p + tl::arange(0, 4)), {4, 3}); });
    CHECK(fails(k1, out));
    CHECK(fails(k2, out));
    CHECK(fails(k3, out));
  }
}

TEST_CASE("shape: reshape keeps row-major order") {
  std::vector<tl::shape_t> shapes;
  auto k = tile::kernel("reshape", [&shapes](tl::ptr<float> x, tl::ptr<float> o1, tl::ptr<float> o2, tl::ptr<float> o3,
                                             tl::ptr<float> o4) {
    auto v = tl::load(x + tl::arange(0, 32));
    auto a = tl::reshape(v, {4, 8});
    auto b = tl::reshape(a, {8, 4});
    auto c = tl::reshape(b, {2, 4, 4});
    auto d = tl::reshape(c, {32});
    for (auto* t : {&a, &b, &c, &d}) shapes.push_back(t->shape());
    tl::store(o1 + offsets_2d(4, 8), a);
    tl::store(o2 + offsets_2d(8, 4), b);
    tl::store(o3 + offsets_3d(2, 4, 4), c);
    tl::store(o4 + tl::arange(0, 32), d);
  });
  auto hx = gen<float>(32, 2, false, false);
  auto x = upload<float>(hx);
  auto o1 = dev().alloc<float>(32), o2 = dev().alloc<float>(32), o3 = dev().alloc<float>(32), o4 = dev().alloc<float>(32);
  REQUIRE(run([&] { k[{1}](x, o1, o2, o3, o4); }));
  const std::vector<tl::shape_t> ws{{4, 8}, {8, 4}, {2, 4, 4}, {32}};
  CHECK(shapes == ws);
  // row-major: element (i, j) of the [4, 8] view is x[i * 8 + j], so storing it row-major is a copy
  const std::vector<float> want(hx);
  check_equal(o1.to_host(), want, "[32] -> [4,8]");
  check_equal(o2.to_host(), want, "-> [8,4]");
  check_equal(o3.to_host(), want, "-> [2,4,4]");
  check_equal(o4.to_host(), want, "-> [32]");
  SUBCASE("reshape after a transpose reads the transposed order") {
    auto kt = tile::kernel("reshape_t", [](tl::ptr<float> xx, tl::ptr<float> out) {
      auto a = tl::reshape(tl::load(xx + tl::arange(0, 32)), {4, 8});
      tl::store(out + tl::arange(0, 32), tl::reshape(tl::trans(a), {32}));
    });
    auto out = dev().alloc<float>(32);
    REQUIRE(run([&] { kt[{1}](x, out); }));
    std::vector<float> w;
    for (std::size_t j = 0; j < 8; ++j)
      for (std::size_t i = 0; i < 4; ++i) w.push_back(hx[i * 8 + j]);
    check_equal(out.to_host(), w, "reshape(trans(reshape(x, [4,8])), [32])");
  }
  SUBCASE("a different element count is a trace error") {
    auto kb = tile::kernel("bad_reshape", [](tl::ptr<float> p) { (void)tl::reshape(tl::load(p + tl::arange(0, 32)), {4, 4}); });
    auto out = dev().alloc<float>(32);
    CHECK(fails(kb, out));
  }
}

TEST_CASE("shape: trans and permute") {
  SUBCASE("2-D") {
    std::vector<tl::shape_t> shapes;
    auto k = tile::kernel("trans2", [&shapes](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> o1, tl::ptr<std::int32_t> o2,
                                              tl::ptr<std::int32_t> o3) {
      auto v = tl::load(x + offsets_2d(4, 16));
      auto t = tl::trans(v);
      auto p = tl::permute(v, {1, 0});
      auto id = tl::permute(v, {0, 1});
      shapes = {t.shape(), p.shape(), id.shape()};
      tl::store(o1 + offsets_2d(16, 4), t);
      tl::store(o2 + offsets_2d(16, 4), p);
      tl::store(o3 + offsets_2d(4, 16), tl::trans(t));
    });
    auto hx = gen<std::int32_t>(64, 3);
    auto x = upload<std::int32_t>(hx);
    auto o1 = dev().alloc<std::int32_t>(64), o2 = dev().alloc<std::int32_t>(64), o3 = dev().alloc<std::int32_t>(64);
    REQUIRE(run([&] { k[{1}](x, o1, o2, o3); }));
    const std::vector<tl::shape_t> ws{{16, 4}, {16, 4}, {4, 16}};
    CHECK(shapes == ws);
    std::vector<std::int32_t> w;
    for (std::size_t j = 0; j < 16; ++j)
      for (std::size_t i = 0; i < 4; ++i) w.push_back(hx[i * 16 + j]);
    check_equal(o1.to_host(), w, "trans");
    check_equal(o2.to_host(), w, "permute {1, 0}");
    check_equal(o3.to_host(), std::vector<std::int32_t>(hx), "trans(trans(x))");
  }
  SUBCASE("3-D: every permutation of [2, 4, 8]") {
    const std::int64_t dims[3] = {2, 4, 8};
    auto hx = gen<double>(64, 4, false, false);
    auto x = upload<double>(hx);
    std::vector<int> order{0, 1, 2};
    do {
      std::string name = "order " + std::to_string(order[0]) + std::to_string(order[1]) + std::to_string(order[2]);
      INFO(name);
      const std::int64_t r0 = dims[order[0]], r1 = dims[order[1]], r2 = dims[order[2]];
      tl::shape_t got_shape;
      auto k = tile::kernel("permute3", [&got_shape, order, r0, r1, r2](tl::ptr<double> xx, tl::ptr<double> out) {
        auto v = tl::load(xx + offsets_3d(2, 4, 8));
        auto p = tl::permute(v, order);
        got_shape = p.shape();
        tl::store(out + offsets_3d(r0, r1, r2), p);
      });
      auto out = dev().alloc<double>(64);
      if (!run([&] { k[{1}](x, out); }, name)) continue;
      CHECK(got_shape == tl::shape_t{r0, r1, r2});
      std::vector<double> w;
      std::int64_t idx[3];
      for (idx[0] = 0; idx[0] < r0; ++idx[0])
        for (idx[1] = 0; idx[1] < r1; ++idx[1])
          for (idx[2] = 0; idx[2] < r2; ++idx[2]) {
            std::int64_t in[3];
            for (int a = 0; a < 3; ++a) in[order[static_cast<std::size_t>(a)]] = idx[a];  // result axis a is input axis order[a]
            w.push_back(hx[static_cast<std::size_t>(in[0] * 32 + in[1] * 8 + in[2])]);
          }
      check_equal(out.to_host(), w, name);
    } while (std::next_permutation(order.begin(), order.end()));
  }
  SUBCASE("3-D trans reverses the axes") {
    auto k = tile::kernel("trans3", [](tl::ptr<std::int8_t> xx, tl::ptr<std::int8_t> out) {
      tl::store(out + offsets_3d(8, 4, 2), tl::trans(tl::load(xx + offsets_3d(2, 4, 8))));
    });
    auto hx = gen<std::int8_t>(64, 5);
    auto x = upload<std::int8_t>(hx);
    auto out = dev().alloc<std::int8_t>(64);
    REQUIRE(run([&] { k[{1}](x, out); }));
    std::vector<std::int8_t> w;
    for (std::size_t c = 0; c < 8; ++c)
      for (std::size_t b = 0; b < 4; ++b)
        for (std::size_t a = 0; a < 2; ++a) w.push_back(hx[a * 32 + b * 8 + c]);
    check_equal(out.to_host(), w, "trans of [2,4,8]");
  }
  SUBCASE("an order that is not a permutation is a trace error") {
    auto out = dev().alloc<float>(32);
    auto k1 = tile::kernel("bad_perm1", [](tl::ptr<float> p) { (void)tl::permute(tl::load(p + offsets_2d(4, 8)), {0, 0}); });
    auto k2 = tile::kernel("bad_perm2", [](tl::ptr<float> p) { (void)tl::permute(tl::load(p + offsets_2d(4, 8)), {0, 1, 2}); });
    auto k3 = tile::kernel("bad_perm3", [](tl::ptr<float> p) { (void)tl::permute(tl::load(p + offsets_2d(4, 8)), {1, 2}); });
    CHECK(fails(k1, out));
    CHECK(fails(k2, out));
    CHECK(fails(k3, out));
  }
}

TEST_CASE("shape: join and split") {
  SUBCASE("join puts a in [..., 0] and b in [..., 1]; split undoes it") {
    std::vector<tl::shape_t> shapes;
    auto k = tile::kernel("join", [&shapes](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> j, tl::ptr<float> sa,
                                            tl::ptr<float> sb) {
      auto offs = tl::arange(0, 8);
      auto x = tl::load(a + offs), y = tl::load(b + offs);
      auto z = tl::join(x, y);
      auto [p, q] = tl::split(z);
      shapes = {z.shape(), p.shape(), q.shape()};
      tl::store(j + offsets_2d(8, 2), z);
      tl::store(sa + offs, p);
      tl::store(sb + offs, q);
    });
    auto ha = gen<float>(8, 6), hb = gen<float>(8, 7);
    auto a = upload<float>(ha), b = upload<float>(hb);
    auto j = dev().alloc<float>(16), sa = dev().alloc<float>(8), sb = dev().alloc<float>(8);
    REQUIRE(run([&] { k[{1}](a, b, j, sa, sb); }));
    const std::vector<tl::shape_t> ws{{8, 2}, {8}, {8}};
    CHECK(shapes == ws);
    std::vector<float> w;
    for (std::size_t i = 0; i < 8; ++i) {
      w.push_back(ha[i]);
      w.push_back(hb[i]);
    }
    check_equal(j.to_host(), w, "join");
    check_equal(sa.to_host(), std::vector<float>(ha), "split first");
    check_equal(sb.to_host(), std::vector<float>(hb), "split second");
  }
  SUBCASE("2-D join, promotion, scalars") {
    std::vector<tl::shape_t> shapes;
    auto k = tile::kernel("join2", [&shapes](tl::ptr<std::int8_t> a, tl::ptr<float> b, tl::ptr<float> j, tl::ptr<float> js) {
      auto offs = offsets_2d(4, 8);
      auto z = tl::join(tl::load(a + offs), tl::load(b + offs));  // i8 with f32 -> f32
      auto s = tl::join(tl::load(b), tl::load(b + 1));          // two scalars -> [2]
      shapes = {z.shape(), s.shape()};
      tl::store(j + offsets_3d(4, 8, 2), z);
      tl::store(js + tl::arange(0, 2), s);
    });
    auto ha = gen<std::int8_t>(32, 8);
    auto hb = gen<float>(32, 9, false, false);
    auto a = upload<std::int8_t>(ha);
    auto b = upload<float>(hb);
    auto j = dev().alloc<float>(64), js = dev().alloc<float>(2);
    REQUIRE(run([&] { k[{1}](a, b, j, js); }));
    const std::vector<tl::shape_t> ws{{4, 8, 2}, {2}};
    CHECK(shapes == ws);
    std::vector<float> w;
    for (std::size_t i = 0; i < 32; ++i) {
      w.push_back(static_cast<float>(ha[i]));
      w.push_back(hb[i]);
    }
    check_equal(j.to_host(), w, "join of [4,8] tiles");
    check_equal(js.to_host(), std::vector<float>{hb[0], hb[1]}, "join of scalars");
  }
  SUBCASE("split of a trans'd tile, and split needs a last axis of 2") {
    auto k = tile::kernel("split_t", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> even, tl::ptr<std::int32_t> odd) {
      auto v = tl::reshape(tl::load(x + tl::arange(0, 16)), {8, 2});  // pairs (x[2i], x[2i+1])
      auto [e, o] = tl::split(v);
      tl::store(even + tl::arange(0, 8), e);
      tl::store(odd + tl::arange(0, 8), o);
    });
    hvec<std::int32_t> hx(16);
    for (int i = 0; i < 16; ++i) hx[static_cast<std::size_t>(i)] = i * i;
    auto x = upload<std::int32_t>(hx);
    auto even = dev().alloc<std::int32_t>(8), odd = dev().alloc<std::int32_t>(8);
    REQUIRE(run([&] { k[{1}](x, even, odd); }));
    check_equal(even.to_host(), std::vector<std::int32_t>{0, 4, 16, 36, 64, 100, 144, 196}, "even elements");
    check_equal(odd.to_host(), std::vector<std::int32_t>{1, 9, 25, 49, 81, 121, 169, 225}, "odd elements");
    auto kb = tile::kernel("bad_split", [](tl::ptr<std::int32_t> p) { (void)tl::split(tl::load(p + offsets_2d(2, 4))); });
    auto out = dev().alloc<std::int32_t>(8);
    CHECK(fails(kb, out));
  }
  SUBCASE("the halves of a [2] tile are scalars: a condition, a stored value, an operand") {
    // found by the random-program tester: the CPU backend gave the if_ a null condition and the
    // NVIDIA layout pass asked for the layout of a scalar
    auto k = tile::kernel("split_scalars", [](tl::ptr<std::int64_t> x, tl::ptr<std::int64_t> out) {
      auto v = tl::load(x + offsets_2d(2, 8));
      auto [a, b] = tl::split(tl::argmax(v, 1));  // a [2] tile: two scalars
      tl::tensor acc = tl::zeros<std::int64_t>({8});
      tl::if_(a > 0, [&] { acc = acc + 100; });
      tl::store(out + tl::arange(0, 8), acc + b);
      tl::store(out + 8, tl::cast<std::int64_t>(a * 10 + b));
    });
    hvec<std::int64_t> hx(16);
    for (int i = 0; i < 16; ++i) hx[static_cast<std::size_t>(i)] = (i * 7) % 5;  // argmax: row 0 at 2, row 1 at 4
    auto x = upload<std::int64_t>(hx);
    auto out = dev().alloc<std::int64_t>(9);
    REQUIRE(run([&] { k[{1}](x, out); }));
    check_equal(out.to_host(), std::vector<std::int64_t>{104, 104, 104, 104, 104, 104, 104, 104, 24}, "split into scalars");
  }
}

TEST_CASE("shape: arange") {
  struct range {
    std::int64_t lo, hi;
  };
  const range ranges[] = {{0, 1}, {0, 16}, {5, 13}, {-4, 4}, {1024, 2048}, {-2147483647 - 1, -2147483647 + 7}, {7, 8}};
  for (auto r : ranges) {
    INFO("arange(" << r.lo << ", " << r.hi << ")");
    const std::int64_t n = r.hi - r.lo;
    tl::shape_t shape;
    dtype dt{};
    auto k = tile::kernel("arange", [&shape, &dt, r, n](tl::ptr<std::int32_t> out) {
      auto a = tl::arange(r.lo, r.hi);
      shape = a.shape();
      dt = a.dtype();
      tl::store(out + tl::arange(0, n), a);
    });
    auto out = dev().alloc<std::int32_t>(static_cast<std::size_t>(n));
    if (!run([&] { k[{1}](out); })) continue;
    CHECK(shape == tl::shape_t{n});
    CHECK(dt == dtype::i32);
    std::vector<std::int32_t> w;
    for (std::int64_t i = r.lo; i < r.hi; ++i) w.push_back(static_cast<std::int32_t>(i));
    check_equal(out.to_host(), w, "arange values");
  }
  SUBCASE("lengths that are not powers of two, empty and reversed ranges are trace errors") {
    auto out = dev().alloc<std::int32_t>(8);
    const range bad[] = {{0, 6}, {5, 5}, {8, 0}, {3, 6}, {0, std::int64_t{1} << 32}};
    for (auto r : bad) {
      INFO("arange(" << r.lo << ", " << r.hi << ")");
      auto k = tile::kernel("bad_arange", [r](tl::ptr<std::int32_t>) { (void)tl::arange(r.lo, r.hi); });
      CHECK(fails(k, out));
    }
  }
}

namespace {
template <class T>
void check_full() {
  using H = host_t<T>;
  // a value every dtype holds exactly
  H v;
  if constexpr (std::is_same_v<T, bool>)
    v = 1;
  else if constexpr (is_fp<T>)
    v = conv<T>(1.5f);
  else
    v = static_cast<T>(5);
  dtype dts[6] = {};
  tl::shape_t shapes[6];
  auto k = tile::kernel("full", [&dts, &shapes](tl::ptr<T> x, tl::ptr<T> o1, tl::ptr<T> o2, tl::ptr<T> o3, tl::ptr<T> o4,
                                                tl::ptr<T> o5, tl::ptr<T> o6) {
    auto offs = offsets_2d(4, 4);
    auto xv = tl::load(x + offs);
    tl::tensor vals[6];
    if constexpr (std::is_same_v<T, bool>)
      vals[0] = tl::full<T>({4, 4}, true);
    else if constexpr (is_fp<T>)
      vals[0] = tl::full<T>({4, 4}, 1.5);
    else
      vals[0] = tl::full<T>({4, 4}, 5);
    vals[1] = tl::zeros<T>({4, 4});
    vals[2] = tl::zeros({4, 4}, tile::dtype_of<T>);
    vals[3] = tl::zeros_like(xv);
    vals[4] = tl::full_like(xv, 1);
    vals[5] = tl::constant<T>(1) + tl::zeros<T>({4, 4});
    for (int i = 0; i < 6; ++i) {
      dts[i] = vals[i].dtype();
      shapes[i] = vals[i].shape();
    }
    tl::store(o1 + offs, vals[0]);
    tl::store(o2 + offs, vals[1]);
    tl::store(o3 + offs, vals[2]);
    tl::store(o4 + offs, vals[3]);
    tl::store(o5 + offs, vals[4]);
    tl::store(o6 + offs, vals[5]);
  });
  auto x = upload<T>(gen<T>(16, 10));
  tile::buffer<T> o[6];
  for (auto& b : o) b = filled<T>(16, conv<T>(7));
  INFO(tname<T>());
  if (!run([&] { k[{1}](x, o[0], o[1], o[2], o[3], o[4], o[5]); })) return;
  for (int i = 0; i < 6; ++i) {
    CHECK_MESSAGE(dts[i] == tile::dtype_of<T>, i << ": " << tile::name(dts[i]));
    CHECK(shapes[i] == tl::shape_t{4, 4});
  }
  const H one = static_cast<H>(conv<T>(1));
  const H zero = static_cast<H>(conv<T>(0));
  check_equal(download(o[0]), hvec<T>(16, v), "full");
  check_equal(download(o[1]), hvec<T>(16, zero), "zeros<T>");
  check_equal(download(o[2]), hvec<T>(16, zero), "zeros(shape, dtype)");
  check_equal(download(o[3]), hvec<T>(16, zero), "zeros_like");
  check_equal(download(o[4]), hvec<T>(16, one), "full_like(x, 1)");
  if constexpr (!std::is_same_v<T, bool>) check_equal(download(o[5]), hvec<T>(16, one), "constant<T>(1) + zeros");
}
}  // namespace

TEST_CASE_TEMPLATE("shape: full, zeros, zeros_like, full_like, constant of every dtype", T, bool, std::int8_t, std::int16_t,
                   std::int32_t, std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, lt::half,
                   lt::bfloat16, float, double) {
  check_full<T>();
}

TEST_CASE("shape: full with a value that needs the dtype; inf; bad shapes") {
  auto k = tile::kernel("full_vals", [](tl::ptr<half> h, tl::ptr<std::uint8_t> u, tl::ptr<float> f, tl::ptr<bfloat16> b,
                                        tl::ptr<double> d) {
    tl::store(h + tl::arange(0, 4), tl::full<half>({4}, 0.1));
    tl::store(u + tl::arange(0, 4), tl::full<std::uint8_t>({4}, 255));
    tl::store(f + tl::arange(0, 4), tl::full<tl::f32>({4}, 3) / 2);  // an f32 tile: 1.5, not 1
    tl::store(b + tl::arange(0, 4), tl::inf<bfloat16>() + tl::zeros<bfloat16>({4}));
    tl::store(d + tl::arange(0, 4), -tl::inf<double>() + tl::full<double>({4}, 0.1));
  });
  auto h = dev().alloc<half>(4);
  auto u = dev().alloc<std::uint8_t>(4);
  auto f = dev().alloc<float>(4);
  auto b = dev().alloc<bfloat16>(4);
  auto d = dev().alloc<double>(4);
  REQUIRE(run([&] { k[{1}](h, u, f, b, d); }));
  check_equal(download(h), hvec<half>(4, half(0.1f)), "full<f16>(0.1)");
  check_equal(u.to_host(), std::vector<std::uint8_t>(4, 255), "full<u8>(255)");
  check_equal(f.to_host(), std::vector<float>(4, 1.5f), "full<tl::f32>(3) / 2");
  check_equal(download(b), hvec<bfloat16>(4, bfloat16(std::numeric_limits<float>::infinity())), "inf<bf16>");
  check_equal(d.to_host(), std::vector<double>(4, -std::numeric_limits<double>::infinity()), "-inf<f64> + 0.1");
  SUBCASE("shapes that are not powers of two, and values that do not fit, are trace errors") {
    auto out = dev().alloc<float>(8);
    auto k1 = tile::kernel("bad_full1", [](tl::ptr<float> p) { tl::store(p + tl::arange(0, 4), tl::full<float>({3}, 0)); });
    auto k2 = tile::kernel("bad_full2", [](tl::ptr<float> p) { (void)p; (void)tl::zeros<float>({4, 6}); });
    auto k3 = tile::kernel("bad_full3", [](tl::ptr<float> p) { (void)p; (void)tl::full<std::int8_t>({4}, 1000); });
    CHECK(fails(k1, out));
    CHECK(fails(k2, out));
    CHECK(fails(k3, out));
  }
}

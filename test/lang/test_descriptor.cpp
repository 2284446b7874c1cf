// test/lang/test_descriptor.cpp — tl::make_tensor_descriptor: blocks loaded and stored by
// element coordinates against a C++ reference — edges and negative coordinates (zeros read,
// nothing written), ranks 1 to 3, i64 strides, a transposed view through strides — and the
// mistakes a kernel can make with one (each a trace error naming this file). The TMA matmul built
// from descriptor loads is in test_dot.cpp.
#include <tuple>

#include "lang_test2.hpp"

namespace {
using lt2::ix;

template <class F>
bool throws_tile_error(F&& f, std::string* message) {
  try {
    f();
  } catch (const tile::error& e) {
    *message = e.what();
    return true;
  }
  return false;
}

// out[R, C] (row-major) = the block of x at (r0, c0) through a descriptor of x as [rows, cols]
// with strides (sr, sc); then that block is stored through a descriptor of y at (r0, c0)
auto copy2d = tile::kernel("desc_copy2d", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 rows, tl::i32 cols,
                                             tl::i32 sr, tl::i32 sc, tl::i32 r0, tl::i32 c0, tl::constexpr_<"R"> R,
                                             tl::constexpr_<"C"> C) {
  using tl::_;
  using tl::newaxis;
  auto xd = tl::make_tensor_descriptor(x, {rows, cols}, {sr, sc}, {R, C});
  auto block = xd.load({r0, c0});
  auto i = tl::arange(0, R), j = tl::arange(0, C);
  tl::store(out + i(_, newaxis) * C + j(newaxis, _), block);
  auto yd = tl::make_tensor_descriptor(y, {rows, cols}, {cols, 1}, {R, C});
  yd.store({r0, c0}, block + 1.0f);
});

void check_copy2d(int rows, int cols, bool transposed, int r0, int c0, int R, int C) {
  CAPTURE(rows);
  CAPTURE(cols);
  CAPTURE(transposed);
  CAPTURE(r0);
  CAPTURE(c0);
  auto hx = lt2::random_vec<float>(ix(rows * cols), 5, -2, 2);
  // element (r, c) at r * cols + c, or (transposed) at c * rows + r
  std::vector<float> stored(hx.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) stored[ix(transposed ? c * rows + r : r * cols + c)] = hx[ix(r * cols + c)];
  auto d = lt2::dev();
  auto x = d.upload(stored);
  std::vector<float> hy(hx.size(), -7.0f);
  auto y = d.upload(hy);
  auto out = d.alloc<float>(ix(R * C));
  copy2d[{1}](x, y, out, rows, cols, transposed ? 1 : cols, transposed ? rows : 1, r0, c0, "R"_c = R, "C"_c = C);
  std::vector<float> want(ix(R * C), 0.0f);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      const int r = r0 + i, c = c0 + j;
      if (r >= 0 && r < rows && c >= 0 && c < cols) {
        want[ix(i * C + j)] = hx[ix(r * cols + c)];
        hy[ix(r * cols + c)] = hx[ix(r * cols + c)] + 1.0f;
      }
    }
  lt2::check_same(out.to_host(), want, "the loaded block");
  lt2::check_same(y.to_host(), hy, "y after the block store (nothing written outside the shape)");
}

auto rank1 = tile::kernel("desc_rank1", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> out, tl::i64 n, tl::i32 at,
                                           tl::constexpr_<"B"> B) {
  auto xd = tl::make_tensor_descriptor(x, {n}, {tl::constant<std::int64_t>(1)}, {B});
  tl::store(out + tl::arange(0, B), xd.load({at}));
});

// a [2, 4, 8] block of a [3, 5, 9] tensor stored with an i64 stride, at (1, 2, 3)
auto rank3 = tile::kernel("desc_rank3", [](tl::ptr<tile::half> x, tl::ptr<tile::half> out, tl::i64 s0) {
  auto xd = tl::make_tensor_descriptor(x, {3, 5, 9}, {s0, 9, 1}, {2, 4, 8});
  auto b = xd.load({1, 2, 3});
  auto od = tl::make_tensor_descriptor(out, {2, 4, 8}, {32, 8, 1}, {2, 4, 8});
  od.store({0, 0, 0}, b);
});
}  // namespace

TEST_CASE("tensor descriptors: 2-D blocks at the edges and beyond read zeros and write nothing there") {
  check_copy2d(50, 70, false, 0, 0, 16, 32);     // inside
  check_copy2d(50, 70, false, 40, 48, 16, 32);   // past the bottom-right corner
  check_copy2d(50, 70, false, -5, -20, 16, 32);  // negative coordinates
  check_copy2d(50, 70, false, 60, 0, 16, 32);    // wholly outside: all zeros
  check_copy2d(33, 47, true, 20, 30, 16, 32);    // a transposed view: strides (1, rows)
}

TEST_CASE("tensor descriptors: rank 1 with 64-bit extents and strides, rank 3") {
  auto hx = lt2::random_vec<std::int32_t>(100, 7, -1000, 1000);
  auto d = lt2::dev();
  auto x = d.upload(hx);
  auto out = d.alloc<std::int32_t>(32);
  rank1[{1}](x, out, std::int64_t{100}, 80, "B"_c = 32);
  std::vector<std::int32_t> want(32, 0);
  for (int i = 0; i < 20; ++i) want[ix(i)] = hx[ix(80 + i)];
  lt2::check_same(out.to_host(), want, "x[80 .. 111] with zeros past 100");

  const std::int64_t s0 = 48;  // rows of 45 elements padded to 48
  auto h3 = lt2::random_vec<tile::half>(ix(3 * s0), 9, -1, 1);
  auto x3 = d.upload(h3);
  auto o3 = d.alloc<tile::half>(64);
  rank3[{1}](x3, o3, s0);
  std::vector<tile::half> w3(64, tile::half(0.0f));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 8; ++k) {
        const int a = 1 + i, b = 2 + j, c = 3 + k;
        if (a < 3 && b < 5 && c < 9) w3[ix(i * 32 + j * 8 + k)] = h3[ix(a * s0 + b * 9 + c)];
      }
  lt2::check_same(o3.to_host(), w3, "the [2, 4, 8] block at (1, 2, 3)");
}

TEST_CASE("tensor descriptors: mistakes are trace errors naming the kernel's line") {
  auto expect_error = [](auto body, const std::string& what, const std::string& says) {
    INFO(what);
    auto k = tile::kernel("desc_error", [body](tl::ptr<float> p, tl::i32 n) { body(p, n); });
    auto a = lt2::dev().alloc<float>(16);
    std::string msg;
    CHECK_MESSAGE(throws_tile_error([&] { k[{1}](a, 16); }, &msg), what << " should not trace");
    CHECK_MESSAGE(msg.find("test_descriptor.cpp") != std::string::npos, msg);
    CHECK_MESSAGE(msg.find(says) != std::string::npos, msg);
  };
  expect_error([](tl::tensor p, tl::tensor n) { (void)tl::make_tensor_descriptor(p, {n}, {1}, {12}).load({0}); }, "block 12",
               "power-of-two");
  expect_error([](tl::tensor p, tl::tensor n) { (void)tl::make_tensor_descriptor(p, {n, n}, {1}, {4, 4}); }, "one stride for two axes",
               "1 strides");
  expect_error([](tl::tensor p, tl::tensor n) { (void)tl::make_tensor_descriptor(p, {n}, {1}, {4}).load({0, 0}); },
               "two offsets for one axis", "2 offsets");
  expect_error([](tl::tensor, tl::tensor n) { (void)tl::make_tensor_descriptor(n, {n}, {1}, {4}); }, "an integer base", "pointer");
  expect_error([](tl::tensor p, tl::tensor n) { (void)tl::make_tensor_descriptor(p, {n}, {0.5f}, {4}); }, "a float stride",
               "integer scalar");
  expect_error([](tl::tensor p, tl::tensor n) { (void)tl::make_tensor_descriptor(p, {n}, {1}, {4}).load({n + tl::arange(0, 4)}); },
               "a tile offset", "integer scalar");
  expect_error([](tl::tensor p, tl::tensor n) {
    tl::make_tensor_descriptor(p, {n}, {1}, {4}).store({0}, tl::zeros<float>({8}));
  }, "a block of the wrong shape", "cannot broadcast");
}

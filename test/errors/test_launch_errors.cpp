// test/errors/test_launch_errors.cpp — bad launches (checked at run time through the dynamic
// launch API, and at compile time through the typed one) and faults found by the interpreter.
#include "error_test.hpp"

using namespace tile::literals;
using errtest::expect_error;

namespace {
auto copy = tile::kernel("copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(dst + offs, tl::load(src + offs, offs < n), offs < n);
});
using copy_t = decltype(copy);

// Compile-time checks of typed launches: the same rules the static_asserts enforce.
using fbuf = tile::buffer<float>;
using ibuf = tile::buffer<std::int32_t>;
using block_t = decltype("BLOCK"_c = 1);
using blck_t = decltype("BLCK"_c = 1);
static_assert(copy_t::launchable<fbuf&, fbuf&, int, block_t>);
static_assert(copy_t::launchable<fbuf&, tile::buffer_view<float>, long, block_t, decltype("num_warps"_c = 4)>);
static_assert(!copy_t::launchable<fbuf&, fbuf&, int, blck_t>);       // misspelt meta-parameter
static_assert(!copy_t::launchable<fbuf&, fbuf&, int>);               // missing meta-parameter
static_assert(!copy_t::launchable<fbuf&, fbuf&, block_t>);           // too few arguments
static_assert(!copy_t::launchable<fbuf&, fbuf&, int, int, block_t>); // too many
static_assert(!copy_t::launchable<ibuf&, fbuf&, int, block_t>);      // wrong buffer type
static_assert(!copy_t::launchable<fbuf&, fbuf&, double, block_t>);   // float for an int scalar
static_assert(!copy_t::launchable<fbuf&, fbuf&, fbuf&, block_t>);    // buffer for a scalar
}  // namespace

TEST_CASE("wrong number of launch arguments") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64), b = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, b}, {{"BLOCK", 64}}); };
  expect_error(f, {{"launched with 2 runtime arguments, the kernel takes 3"}, line, "copy"});
}

TEST_CASE("buffer of the wrong element type") {
  auto dev = errtest::interp();
  auto a = dev.alloc<std::int32_t>(64);
  auto b = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, b, 64}, {{"BLOCK", 64}}); };
  expect_error(f, {{"argument 0 (tl::ptr<f32>)", "buffer of f32", "buffer of i32"}, line, "copy"});
}

TEST_CASE("a buffer where a number is expected") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, a}, {{"BLOCK", 64}}); };
  expect_error(f, {{"argument 2 (tl::i32)", "needs a number, got a buffer"}, line, "copy"});
}

TEST_CASE("a float where an integer is expected") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 2.5}, {{"BLOCK", 64}}); };
  expect_error(f, {{"argument 2 (tl::i32)", "needs an integer"}, line, "copy"});
}

TEST_CASE("integer argument out of range") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{1}](a, a, 1LL << 40, "BLOCK"_c = 64); };
  expect_error(f, {{"1099511627776 does not fit in i32"}, line, "copy"});
}

TEST_CASE("unknown meta-parameter at run time") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLCK", 64}}); };
  expect_error(f, {{"unknown meta-parameter 'BLCK'", "the kernel's are: BLOCK"}, line, "copy"});
}

TEST_CASE("missing meta-parameter at run time") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}); };
  expect_error(f, {{"missing meta-parameter 'BLOCK'"}, line, "copy"});
}

TEST_CASE("meta-parameter given twice") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLOCK", 64}, {"BLOCK", 32}}); };
  expect_error(f, {{"'BLOCK' given twice"}, line, "copy"});
}

TEST_CASE("meta-parameter of the wrong kind") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLOCK", 1.5}}); };
  expect_error(f, {{"'BLOCK' is an integer, got a float"}, line, "copy"});
}

TEST_CASE("bad num_warps") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "num_warps"_c = 3); };
  expect_error(f, {{"num_warps must be a power of two"}, line, "copy"});
}

TEST_CASE("grid extent out of range") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{-1}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(f, {{"grid extent x = -1"}, line, "copy"});
  line = __LINE__; auto g = [&] { copy[{1, 70000}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(g, {{"grid extent y = 70000", "65535"}, line, "copy"});
}

TEST_CASE("grid function asks for an unknown meta-parameter") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  auto grid = [](const tile::meta& m) { return tile::grid3{m["BLOCK_SIZE"]}; };
  int line = __LINE__; auto f = [&] { copy[grid](a, a, 64, "BLOCK"_c = 64); };
  expect_error(f, {{"no meta-parameter named 'BLOCK_SIZE'"}, line, ""});
}

namespace {
int oob_line = 0;
auto oob_load = tile::kernel("oob_load", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 shift) {
  auto offs = tl::arange(0, 128) + shift;
  oob_line = __LINE__; auto v = tl::load(src + offs);
  tl::store(dst + tl::arange(0, 128), v);
});
auto oob_store = tile::kernel("oob_store", [](tl::ptr<float> dst, tl::i32 n) {
  auto offs = tl::program_id(0) * 64 + tl::arange(0, 64);
  oob_line = __LINE__; tl::store(dst + offs, 1.0f, offs < n);
});
auto oob_atomic = tile::kernel("oob_atomic", [](tl::ptr<int> dst) {
  oob_line = __LINE__; tl::atomic_add(dst + tl::arange(0, 64), 1);
});
}  // namespace

TEST_CASE("out-of-bounds load past the end") {
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(100), dst = dev.alloc<float>(128);
  auto f = [&] { oob_load[{1}](src, dst, 0); };
  expect_error(f, {{"out-of-bounds load", "program (0, 0, 0)", "element [100]", "past the end of argument 0",
                    "100 elements"}, 0, "oob_load"});
  try { f(); } catch (const tile::error& e) { CHECK(e.where().line == static_cast<std::uint32_t>(oob_line)); }
}

TEST_CASE("out-of-bounds load before the start") {
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(1000), dst = dev.alloc<float>(128);
  auto f = [&] { oob_load[{1}](src, dst, -3); };
  expect_error(f, {{"out-of-bounds load", "element [0]", "before the start of argument 0"}, 0, "oob_load"});
  try { f(); } catch (const tile::error& e) { CHECK(e.where().line == static_cast<std::uint32_t>(oob_line)); }
}

TEST_CASE("out-of-bounds store from a later program") {
  auto dev = errtest::interp();
  auto dst = dev.alloc<float>(100);
  auto f = [&] { oob_store[{2}](dst, 200); };  // the mask trusts n = 200 but the buffer has 100
  expect_error(f, {{"out-of-bounds store", "program (1, 0, 0)", "element [36]", "argument 0"}, 0, "oob_store"});
  try { f(); } catch (const tile::error& e) { CHECK(e.where().line == static_cast<std::uint32_t>(oob_line)); }
  // with the right bound the same kernel runs
  oob_store[{2}](dst, 100);
  auto h = dst.to_host();
  CHECK(h[99] == 1.0f);
}

TEST_CASE("out-of-bounds atomic") {
  auto dev = errtest::interp();
  auto dst = dev.alloc<int>(32);
  auto f = [&] { oob_atomic[{1}](dst); };
  expect_error(f, {{"out-of-bounds atomic", "element [32]"}, 0, "oob_atomic"});
}

TEST_CASE("a view restricts what a kernel may touch") {
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(1000), dst = dev.alloc<float>(128);
  auto f = [&] { oob_load[{1}](src.view(0, 64), dst, 0); };
  expect_error(f, {{"out-of-bounds load", "element [64]", "64 elements"}, 0, "oob_load"});
}

TEST_CASE("device_assert failing names its line and the program") {
  int line = 0;
  auto k = tile::kernel("asserting", [&line](tl::ptr<float> x) {
    auto v = tl::load(x + tl::arange(0, 16));
    line = __LINE__; tl::device_assert(v < 10.0f, "values must stay below 10");
  });
  auto dev = errtest::interp();
  std::vector<float> h(16, 1.0f);
  h[5] = 11.0f;
  auto x = dev.upload(h);
  expect_error([&] { k[{1}](x); }, {{"device_assert failed", "values must stay below 10", "element [5]"}, line, "asserting"});
}

TEST_CASE("a for_range with a non-positive step fails at run time") {
  int line = 0;
  auto k = tile::kernel("bad_step", [&line](tl::ptr<float> x, tl::i32 step) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, 10, step, [&](tl::tensor) { acc += 1.0f; });
    tl::store(x + tl::arange(0, 16), acc);
  });
  auto x = errtest::interp().alloc<float>(16);
  expect_error([&] { k[{1}](x, 0); }, {{"step must be positive"}, line, "bad_step"});
  k[{1}](x, 2);
  CHECK(x.to_host()[0] == 5.0f);
}

TEST_CASE("buffer helpers report misuse") {
  auto dev = errtest::interp();
  auto b = dev.alloc<float>(8);
  int line = __LINE__; auto f = [&] { b.copy_from(std::vector<float>(9)); };
  expect_error(f, {{"copy_from", "9 elements", "8"}, line, ""});
  line = __LINE__; auto g = [&] { (void)b.view(4, 8); };
  expect_error(g, {{"exceeds the buffer's 8 elements"}, line, ""});
  expect_error([] { (void)tile::device::get("nope"); }, {{"backend 'nope' is not available", "unknown backend"}, 0, ""});
}

// test/errors/test_launch_errors.cpp — bad launches (checked at run time through the dynamic
// launch API, and at compile time through the typed one), faults the interpreter finds while
// running (out-of-bounds accesses, device_assert), misuse of buffers and devices; and that a
// kernel keeps working after each of them.
#include "error_test.hpp"
#include "../../samples/attention_kernels.hpp"
#include "../requires.hpp"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <regex>
#include <thread>

using namespace tile::literals;
using errtest::expect_error;

namespace {
auto copy = tile::kernel("copy", [](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(dst + offs, tl::load(src + offs, offs < n), offs < n);
});
auto count = tile::kernel("count", [](tl::ptr<std::int32_t> counts, tl::i32 n) {
  auto offs = tl::arange(0, 16);
  tl::atomic_add(counts + offs, 1, offs < n);
});
using copy_t = decltype(copy);
using count_t = decltype(count);

// ---- compile-time checks of typed launches (the same cases as compile_fail/) ----------------
using fbuf = tile::buffer<float>;
using ibuf = tile::buffer<std::int32_t>;
using fview = tile::buffer_view<float>;
using block_t = decltype("BLOCK"_c = 1);
using blck_t = decltype("BLCK"_c = 1);
static_assert(copy_t::launchable<fbuf&, fbuf&, int, block_t>);
static_assert(copy_t::launchable<const fbuf&, fview, long, block_t, decltype("num_warps"_c = 4)>);
static_assert(copy_t::launchable<fbuf, fbuf, std::uint8_t, block_t>);
static_assert(!copy_t::launchable<fbuf&, fbuf&, int, blck_t>);                 // misspelt_meta.cpp
static_assert(!copy_t::launchable<fbuf&, fbuf&, int, block_t, blck_t>);        // an extra, unknown one
static_assert(!copy_t::launchable<fbuf&, fbuf&, int>);                         // missing_meta.cpp
static_assert(!copy_t::launchable<fbuf&, fbuf&, block_t>);                     // wrong_count.cpp
static_assert(!copy_t::launchable<fbuf&, fbuf&, int, int, block_t>);           // too_many.cpp
static_assert(!count_t::launchable<fbuf&, int>);                               // wrong_buffer_type.cpp
static_assert(!copy_t::launchable<ibuf&, fbuf&, int, block_t>);
static_assert(!copy_t::launchable<fbuf&, fbuf&, double, block_t>);             // float_for_int.cpp
static_assert(!copy_t::launchable<fbuf&, fbuf&, bool, block_t>);
static_assert(!copy_t::launchable<fbuf&, fbuf&, fbuf&, block_t>);              // buffer_for_scalar.cpp
static_assert(!copy_t::launchable<fbuf&, int, int, block_t>);                  // a number for a pointer
static_assert(!copy_t::launchable<float*, fbuf&, int, block_t>);               // a host pointer
static_assert(count_t::launchable<ibuf&, std::int64_t>);
// bad_param_type.cpp: a parameter that is not tl::ptr / tl scalar / tl::constexpr_
[[maybe_unused]] constexpr auto bad_params = [](tl::ptr<float>, int) {};
[[maybe_unused]] constexpr auto good_params = [](tl::ptr<float>, tl::i32, tl::constexpr_<"B">) {};
template <class Params>
struct params_valid;
template <class... P>
struct params_valid<std::tuple<P...>> : std::bool_constant<(tile::detail::param_traits<P>::valid && ...)> {};
static_assert(!params_valid<tile::detail::fn_sig<decltype(bad_params)>::params>::value);
static_assert(params_valid<tile::detail::fn_sig<decltype(good_params)>::params>::value);

std::string hex(std::uint64_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, a);
  return buf;
}
}  // namespace

// ---- dynamic launches: arguments ------------------------------------------------------------

TEST_CASE("dynamic launch: wrong number of arguments") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64), b = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, b}, {{"BLOCK", 64}}); };
  expect_error(f, {"launched with 2 runtime arguments, the kernel takes 3"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, b, 64, 64}, {{"BLOCK", 64}}); };
  expect_error(g, {"launched with 4 runtime arguments, the kernel takes 3"}, "copy", line);
}

TEST_CASE("dynamic launch: a float buffer for tl::ptr<i32>") {
  auto dev = errtest::interp();
  auto f32 = dev.alloc<float>(16);
  int line = __LINE__; auto f = [&] { count.launch({1}, {f32, 16}); };
  expect_error(f, {"argument 0 (tl::ptr<i32>)", "needs a buffer of i32, got a buffer of f32"}, "count", line);
  // and the other way round, through a view
  auto i32 = dev.alloc<std::int32_t>(64);
  line = __LINE__; auto g = [&] { copy.launch({1}, {i32.view(0, 8), f32, 8}, {{"BLOCK", 16}}); };
  expect_error(g, {"argument 0 (tl::ptr<f32>)", "needs a buffer of f32, got a buffer of i32"}, "copy", line);
}

TEST_CASE("dynamic launch: a buffer for a scalar, a number for a pointer") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, a}, {{"BLOCK", 64}}); };
  expect_error(f, {"argument 2 (tl::i32)", "needs a number, got a buffer"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, 7, 64}, {{"BLOCK", 64}}); };
  expect_error(g, {"argument 1 (tl::ptr<f32>)", "needs a tile::buffer<f32>, got a number"}, "copy", line);
}

TEST_CASE("dynamic launch: a float or a bool for an integer scalar") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 2.5}, {{"BLOCK", 64}}); };
  expect_error(f, {"argument 2 (tl::i32)", "needs an integer"}, "copy", line);
  // the typed launch refuses a bool for tl::i32 at compile time; the dynamic one must refuse it too
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, a, true}, {{"BLOCK", 64}}); };
  expect_error(g, {"argument 2 (tl::i32)", "bool"}, "copy", line);
}

TEST_CASE("integer argument out of range for tl::i32") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{1}](a, a, 1LL << 40, "BLOCK"_c = 64); };
  expect_error(f, {"argument 2 (tl::i32)", "the value 1099511627776 does not fit in i32"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, a, 1LL << 40}, {{"BLOCK", 64}}); };
  expect_error(g, {"argument 2 (tl::i32)", "1099511627776 does not fit in i32"}, "copy", line);
  line = __LINE__; auto h = [&] { copy[{1}](a, a, -(1LL << 31) - 1, "BLOCK"_c = 64); };
  expect_error(h, {"-2147483649 does not fit in i32"}, "copy", line);
  line = __LINE__; auto u = [&] { copy[{1}](a, a, 4294967295u, "BLOCK"_c = 64); };
  expect_error(u, {"4294967295 does not fit in i32"}, "copy", line);
}

TEST_CASE("the largest unsigned 64-bit value is not -1") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  const std::uint64_t big = ~std::uint64_t{0};
  int line = __LINE__; auto f = [&] { copy[{1}](a, a, big, "BLOCK"_c = 64); };
  expect_error(f, {"18446744073709551615 does not fit in i32"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, a, big}, {{"BLOCK", 64}}); };
  expect_error(g, {"18446744073709551615 does not fit in i32"}, "copy", line);
}

TEST_CASE("an empty buffer for a pointer") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  tile::buffer<float> none;
  int line = __LINE__; auto f = [&] { copy[{1}](none, a, 64, "BLOCK"_c = 64); };
  expect_error(f, {"argument 0 (tl::ptr<f32>) is an empty buffer"}, "copy", line);
}

// ---- meta-parameters and launch options -----------------------------------------------------

TEST_CASE("unknown meta-parameter at run time") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLCK", 64}}); };
  expect_error(f, {"unknown meta-parameter 'BLCK'", "the kernel's are: BLOCK"}, "copy", line);
  line = __LINE__; auto g = [&] { count.launch({1}, {dev.alloc<std::int32_t>(16), 16}, {{"BLOCK", 64}}); };
  expect_error(g, {"unknown meta-parameter 'BLOCK'", "none"}, "count", line);
}

TEST_CASE("missing meta-parameter at run time") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}); };
  expect_error(f, {"missing meta-parameter 'BLOCK'"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, a, 64}, {{"num_warps", 4}}); };
  expect_error(g, {"missing meta-parameter 'BLOCK'"}, "copy", line);
}

TEST_CASE("meta-parameter given twice") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLOCK", 64}, {"BLOCK", 32}}); };
  expect_error(f, {"meta-parameter 'BLOCK' given twice"}, "copy", line);
  line = __LINE__; auto g = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "BLOCK"_c = 64); };
  expect_error(g, {"meta-parameter 'BLOCK' given twice"}, "copy", line);
}

TEST_CASE("meta-parameter of the wrong kind") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy.launch({1}, {a, a, 64}, {{"BLOCK", 1.5}}); };
  expect_error(f, {"meta-parameter 'BLOCK' is an integer, got a float"}, "copy", line);
  line = __LINE__; auto g = [&] { copy.launch({1}, {a, a, 64}, {{"BLOCK", true}}); };
  expect_error(g, {"meta-parameter 'BLOCK' is an integer, got a bool"}, "copy", line);
}

TEST_CASE("a bool for a float meta-parameter") {
  auto k = tile::kernel("scale_by", [](tl::ptr<float> out, tl::constexpr_<"SCALE", double> SCALE) {
    tl::store(out + tl::arange(0, 16), tl::full<float>({16}, SCALE));
  });
  auto out = errtest::interp().alloc<float>(16);
  int line = __LINE__; auto f = [&] { k[{1}](out, "SCALE"_c = true); };
  expect_error(f, {"meta-parameter 'SCALE'", "bool"}, "scale_by", line);
  line = __LINE__; auto g = [&] { k.launch({1}, {out}, {{"SCALE", false}}); };
  expect_error(g, {"meta-parameter 'SCALE'", "bool"}, "scale_by", line);
  k[{1}](out, "SCALE"_c = 2);  // an integer is a fine float
  CHECK(out.to_host()[15] == 2.0f);
}

TEST_CASE("bad num_warps") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "num_warps"_c = 3); };
  expect_error(f, {"num_warps must be a power of two up to 32, got 3"}, "copy", line);
  line = __LINE__; auto g = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "num_warps"_c = 64); };
  expect_error(g, {"num_warps must be a power of two up to 32, got 64"}, "copy", line);
  line = __LINE__; auto h = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "num_warps"_c = 0); };
  expect_error(h, {"num_warps must be a positive integer"}, "copy", line);
  line = __LINE__; auto e = [&] { copy[{1}](a, a, 64, "BLOCK"_c = 64, "enable_fp_fusion"_c = 1); };
  expect_error(e, {"enable_fp_fusion must be a bool"}, "copy", line);
  copy[{1}](a, a, 64, "BLOCK"_c = 64, "enable_fp_fusion"_c = false);  // accepted (and ignored) by every backend
}

// ---- grids ----------------------------------------------------------------------------------

TEST_CASE("grid extent out of range") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  int line = __LINE__; auto f = [&] { copy[{-1}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(f, {"grid extent x = -1", "outside [0, 2147483647]"}, "copy", line);
  line = __LINE__; auto g = [&] { copy[{1, 70000}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(g, {"grid extent y = 70000", "outside [0, 65535]"}, "copy", line);
  line = __LINE__; auto h = [&] { copy[{1, 1, 65536}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(h, {"grid extent z = 65536", "outside [0, 65535]"}, "copy", line);
  line = __LINE__; auto x = [&] { copy[{std::int64_t{1} << 31}](a, a, 64, "BLOCK"_c = 64); };
  expect_error(x, {"grid extent x = 2147483648"}, "copy", line);
  auto neg = [](const tile::meta&) { return tile::grid3{2, -3, 1}; };
  line = __LINE__; auto y = [&] { copy[neg](a, a, 64, "BLOCK"_c = 64); };
  expect_error(y, {"grid extent y = -3"}, "copy", line);
}

TEST_CASE("a grid function asks for an unknown meta-parameter") {
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(64);
  auto grid = [](const tile::meta& m) { return tile::grid3{m["BLOCK_SIZE"]}; };
  int line = __LINE__; auto f = [&] { copy[grid](a, a, 64, "BLOCK"_c = 64); };
  expect_error(f, {"grid function", "no meta-parameter named 'BLOCK_SIZE'"}, "copy", line);
}

TEST_CASE("a grid function reads a float meta-parameter as an integer") {
  auto k = tile::kernel("scaled", [](tl::ptr<float> out, tl::constexpr_<"SCALE", double> SCALE) {
    tl::store(out + tl::arange(0, 16), tl::full<float>({16}, SCALE));
  });
  auto out = errtest::interp().alloc<float>(16);
  auto grid = [](const tile::meta& m) { return tile::grid3{m["SCALE"]}; };
  int line = __LINE__; auto f = [&] { k[grid](out, "SCALE"_c = 1.5); };
  expect_error(f, {"meta-parameter 'SCALE' is a float", "get_float"}, "scaled", line);
  auto by_float = [](const tile::meta& m) { return tile::grid3{static_cast<std::int64_t>(m.get_float("SCALE"))}; };
  k[by_float](out, "SCALE"_c = 1.5);
  CHECK(out.to_host()[0] == 1.5f);
}

// ---- faults found by the interpreter --------------------------------------------------------

TEST_CASE("out-of-bounds load past the end, then a good launch") {
  int line = 0;
  auto k = tile::kernel("oob_load", [&line](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 n) {
    auto offs = tl::program_id(0) * 128 + tl::arange(0, 128);
    line = __LINE__; auto v = tl::load(src + offs, offs < n);
    tl::store(dst + offs, v, offs < n);
  });
  auto dev = errtest::interp();
  auto dst = dev.alloc<float>(1024);
  std::vector<float> h(1000);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  auto src = dev.upload(h);
  // n = 1024 trusts a buffer of 1024 elements: only program 7 reads past the end, from element 104
  expect_error([&] { k[{8}](src, dst, 1024); },
                        {"out-of-bounds load: program (7, 0, 0), element [104] (of f32[128]) reads 4 bytes at " +
                             hex(src.address() + 4000) +
                             ", 0 bytes past the end of argument 0 (ptr<f32>, 1000 elements)"},
                        "oob_load", line);
  k[{8}](src, dst, 1000);
  auto out = dst.to_host();
  CHECK(out[999] == 999.0f);
  CHECK(out[1000] == 0.0f);
}

TEST_CASE("out-of-bounds load before the start (a negative offset)") {
  int line = 0;
  auto k = tile::kernel("oob_neg", [&line](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 shift) {
    auto offs = tl::arange(0, 128);
    line = __LINE__; auto v = tl::load(src + offs + shift);
    tl::store(dst + offs, v);
  });
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(1000), dst = dev.alloc<float>(128);
  expect_error([&] { k[{1}](src, dst, -3); },
               {"out-of-bounds load: program (0, 0, 0), element [0] (of f32[128]) reads 4 bytes at " +
                    hex(src.address() - 12) + ", 12 bytes before the start of argument 0 (ptr<f32>, 1000 elements)"},
               "oob_neg", line);
  k[{1}](src, dst, 3);  // runs fine after the failure (a specialization of its own: 3 is not negative)
  CHECK(k.core().traces() == 2);
}

TEST_CASE("out-of-bounds store from a later program") {
  int line = 0;
  auto k = tile::kernel("oob_store", [&line](tl::ptr<float> dst, tl::i32 n) {
    auto offs = tl::program_id(0) * 64 + tl::arange(0, 64);
    line = __LINE__; tl::store(dst + offs, 1.0f, offs < n);
  });
  auto dev = errtest::interp();
  auto dst = dev.alloc<float>(100);
  expect_error([&] { k[{2}](dst, 200); },
               {"out-of-bounds store: program (1, 0, 0), element [36] (of f32[64]) writes 4 bytes at " +
                    hex(dst.address() + 400) + ", 0 bytes past the end of argument 0 (ptr<f32>, 100 elements)"},
               "oob_store", line);
  k[{2}](dst, 100);
  CHECK(dst.to_host() == std::vector<float>(100, 1.0f));
}

TEST_CASE("out-of-bounds scalar store, and an address far from every buffer") {
  int line = 0;
  auto k = tile::kernel("oob_scalar", [&line](tl::ptr<float> dst, tl::i32 at) {
    line = __LINE__; tl::store(dst + at, 1.0f);
  });
  auto dst = errtest::interp().alloc<float>(64);
  expect_error([&] { k[{1}](dst, 100); },
               {"out-of-bounds store: program (0, 0, 0), scalar (f32) writes 4 bytes at " + hex(dst.address() + 400) +
                    ", 144 bytes past the end of argument 0 (ptr<f32>, 64 elements)"},
               "oob_scalar", line);
  expect_error([&] { k[{1}](dst, 1 << 28); }, {"out-of-bounds store", "not inside any buffer passed to the kernel"},
               "oob_scalar", line);
  k[{1}](dst, 63);
  CHECK(dst.to_host()[63] == 1.0f);
}

TEST_CASE("out-of-bounds atomic writes nothing") {
  int line = 0;
  auto k = tile::kernel("oob_atomic", [&line](tl::ptr<std::int32_t> dst) {
    line = __LINE__; tl::atomic_add(dst + tl::arange(0, 64), 1);
  });
  auto dst = errtest::interp().alloc<std::int32_t>(32);
  expect_error([&] { k[{1}](dst); },
               {"out-of-bounds atomic: program (0, 0, 0), element [32] (of i32[64]) writes 4 bytes at " +
                    hex(dst.address() + 128) + ", 0 bytes past the end of argument 0 (ptr<i32>, 32 elements)"},
               "oob_atomic", line);
  CHECK(dst.to_host() == std::vector<std::int32_t>(32, 0));  // all lanes are checked first
}

TEST_CASE("an out-of-bounds load inside a loop names the load's line") {
  int line = 0;
  auto k = tile::kernel("oob_loop", [&line](tl::ptr<float> src, tl::ptr<float> dst, tl::i32 tiles) {
    auto acc = tl::zeros<float>({32});
    tl::for_range(0, tiles, [&](tl::tensor t) {
      line = __LINE__; acc += tl::load(src + t * 32 + tl::arange(0, 32));
    });
    tl::store(dst + tl::arange(0, 32), acc);
  });
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(100), dst = dev.alloc<float>(32);
  expect_error([&] { k[{1}](src, dst, 4); },
               {"out-of-bounds load: program (0, 0, 0), element [4] (of f32[32])", "argument 0 (ptr<f32>, 100 elements)"},
               "oob_loop", line);
  k[{1}](src, dst, 3);
}

TEST_CASE("a view restricts what a kernel may touch") {
  auto dev = errtest::interp();
  auto src = dev.alloc<float>(1000), dst = dev.alloc<float>(128);
  int line = 0;
  auto k = tile::kernel("view_load", [&line](tl::ptr<float> s, tl::ptr<float> d) {
    auto offs = tl::arange(0, 128);
    line = __LINE__; tl::store(d + offs, tl::load(s + offs));
  });
  expect_error([&] { k[{1}](src.view(0, 64), dst); },
               {"out-of-bounds load", "element [64]", "0 bytes past the end of argument 0 (ptr<f32>, 64 elements)"},
               "view_load", line);
  expect_error([&] { k[{1}](src.view(936, 64), dst); },
               {"out-of-bounds load", "element [64]", "argument 0 (ptr<f32>, 64 elements)"}, "view_load", line);
  k[{1}](src.view(500, 128), dst);
}

TEST_CASE("device_assert failing names its line, the program and the element") {
  int line = 0;
  auto k = tile::kernel("asserting", [&line](tl::ptr<float> x) {
    auto v = tl::load(x + tl::program_id(0) * 16 + tl::arange(0, 16));
    line = __LINE__; tl::device_assert(v < 10.0f, "values must stay below 10");
  });
  auto dev = errtest::interp();
  std::vector<float> h(32, 1.0f);
  h[16 + 5] = 11.0f;
  auto x = dev.upload(h);
  expect_error([&] { k[{2}](x); },
               {"device_assert failed: values must stay below 10 (program (1, 0, 0), element [5])"}, "asserting",
               line);
  h[16 + 5] = 9.0f;
  x.copy_from(h);
  k[{2}](x);
}

TEST_CASE("a for_range with a non-positive step fails at run time") {
  int line = 0;
  auto k = tile::kernel("bad_step", [&line](tl::ptr<float> x, tl::i32 step) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, 10, step, [&](tl::tensor) { acc += 1.0f; });
    tl::store(x + tl::arange(0, 16), acc);
  });
  auto x = errtest::interp().alloc<float>(16);
  expect_error([&] { k[{1}](x, 0); }, {"for_range step must be positive, got 0"}, "bad_step", line);
  expect_error([&] { k[{1}](x, -2); }, {"for_range step must be positive, got -2"}, "bad_step", line);
  k[{1}](x, 2);
  CHECK(x.to_host()[0] == 5.0f);
}

// ---- recovery -------------------------------------------------------------------------------

TEST_CASE("after each kind of error the same kernel launches correctly") {
  auto dev = errtest::interp();
  std::vector<float> h(256);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i) * 0.5f;
  auto src = dev.upload(h);
  auto dst = dev.alloc<float>(256);
  auto good = [&] {
    dst.fill_zero();
    copy[{4}](src, dst, 256, "BLOCK"_c = 64);
    CHECK(dst.to_host() == h);
  };
  auto i32 = dev.alloc<std::int32_t>(256);
  CHECK_THROWS_AS(copy.launch({4}, {i32, dst, 256}, {{"BLOCK", 64}}), tile::error);
  good();
  CHECK_THROWS_AS(copy.launch({4}, {src, dst, 256}, {{"BLCK", 64}}), tile::error);
  good();
  CHECK_THROWS_AS(copy[{4}](src, dst, 256, "BLOCK"_c = 48), tile::error);  // arange(0, 48) fails to trace
  good();
  CHECK_THROWS_AS(copy[{8}](src, dst, 512, "BLOCK"_c = 64), tile::error);  // out of bounds
  good();
  CHECK_THROWS_AS((copy[{1, 100000}](src, dst, 256, "BLOCK"_c = 64)), tile::error);
  good();
  CHECK_THROWS_AS(copy[{4}](src, dst, 256, "BLOCK"_c = 48), tile::error);  // still an error, not cached
}

TEST_CASE("eight threads tracing a failing kernel at once all get the error") {
  std::atomic<int> line{0};
  auto k = tile::kernel("racy_failure", [&line](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    line = __LINE__; auto offs = tl::arange(0, BLOCK);
    tl::store(out + offs, 1.0f);
  });
  auto out = errtest::interp().alloc<float>(64);
  std::atomic<bool> go{false};
  std::atomic<int> errors{0}, other{0};
  std::vector<std::string> messages(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      try {
        k[{1}](out, "BLOCK"_c = 24);
      } catch (const tile::error& e) {
        ++errors;
        messages[i] = e.what();
      } catch (...) {
        ++other;
      }
    });
  go = true;
  for (auto& t : threads) t.join();
  CHECK(errors == 8);
  CHECK(other == 0);
  for (auto& m : messages) {
    INFO(m);
    CHECK(errtest::contains(m, "kernel 'racy_failure': arange(0, 24): the length 24 must be a power of two"));
    CHECK(errtest::contains(m, ":" + std::to_string(line.load()) + ": error:"));
  }
  k[{1}](out, "BLOCK"_c = 32);
  CHECK(out.to_host()[31] == 1.0f);
}

// ---- buffers and devices --------------------------------------------------------------------

TEST_CASE("buffer misuse names the caller's line") {
  auto dev = errtest::interp();
  auto b = dev.alloc<float>(8);
  int line = __LINE__; auto f = [&] { b.copy_from(std::vector<float>(9)); };
  expect_error(f, {"copy_from", "9 elements", "the buffer 8"}, "", line);
  line = __LINE__; auto g = [&] { (void)b.view(4, 8); };
  expect_error(g, {"buffer view [4, 12) exceeds the buffer's 8 elements"}, "", line);
  line = __LINE__; auto h = [&] { (void)b.view(9, 0); };
  expect_error(h, {"buffer view [9, 9) exceeds the buffer's 8 elements"}, "", line);
  line = __LINE__; auto o = [&] { (void)b.view(SIZE_MAX, 2); };  // offset + count wraps around
  expect_error(o, {"exceeds the buffer's 8 elements"}, "", line);
}

TEST_CASE("an unknown backend") {
  const int none = -1;
  expect_error([] { (void)tile::device::get("nope"); },
               {"backend 'nope' is not available", "unknown backend 'nope'", "known: ", "interpreter"}, "", none);
  expect_error([] { (void)tile::device::get("interpreter", 1); }, {"device interpreter:1 does not exist"}, "", none);
}

// ---- what a kernel cannot take: fused attention (samples/attention_kernels.hpp) ----------------

TEST_CASE("fused attention: a head dimension that is not a power of two, and blocks over the SM's shared memory, "
          "fail at the launch naming the kernel, the line and the limit" * tiletest::needs_null) {
  auto attn = make_attn_fwd<tile::half>("attn_fwd_f16");
  auto dev = tile::device::get("null");  // (sm_90a: 227 KiB of shared memory a block)
  const int H = 2, N = 256;
  int launch_line = 0;
  auto run = [&](int D, int BM, int BN, int warps) {
    const std::size_t n = std::size_t(H) * N * D;
    auto q = dev.alloc<tile::half>(n), o = dev.alloc<tile::half>(n);
    auto m = dev.alloc<float>(std::size_t(H) * N);
    launch_line = __LINE__ + 1;  // (the launch: where a launch's errors point)
    attn[{tile::cdiv(N, BM), H}](q, q, q, 0.1f, m, o, H * N * D, N * D, D, H * N * D, N * D, D, H * N * D, N * D, D,
                                 H * N * D, N * D, D, H, N, "HEAD_DIM"_c = D, "BLOCK_M"_c = BM, "BLOCK_N"_c = BN,
                                 "STAGE"_c = 1, "num_warps"_c = warps);
  };
  // D = 48: the arange over the head dimension, at its line in the kernel
  try {
    run(48, 64, 32, 4);
    FAIL_CHECK("D = 48 launched");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "attn_fwd_f16");
    CHECK(std::string(e.message()).find("arange(0, 48): the length 48 must be a power of two") != std::string::npos);
    CHECK(e.where().known());
    CHECK(std::string(e.where().file).ends_with("attention_kernels.hpp"));
  }
  // D = 256 with 256 x 256 blocks: Q and K's tiles alone are 256 KiB
  auto big = [&] { run(256, 256, 256, 8); };
  expect_error(big, {"the kernel needs 262144 bytes of shared memory per block", "sm_90a allows at most 232448 (227 KiB)"},
               "attn_fwd_f16", launch_line);
  run(64, 64, 32, 4);  // and the kernel still launches where it fits
}

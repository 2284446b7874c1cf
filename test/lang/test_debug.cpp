// test/lang/test_debug.cpp — tl::device_print / device_print_hex (the interpreter's exact line
// format), tl::device_assert (passing; failing with the message, the program, the element and the
// user's file:line), tl::static_assert_ (a trace-time error at the user's line) and the hints
// multiple_of / max_contiguous (accepted, results unchanged).
//
// The interpreter prints one line per element of each operand, written whole:
//   "pid (x, y, z) idx (i, j) <prefix><value>"   ("idx ()" for scalars; with several operands
//   "<prefix>(operand k) <value>"); floats in the fewest %g digits that read back to the same
//   value of the dtype, integral ones below 1e16 in full ("65504", "-0"); hex and pointers as
//   the raw bits, 0x and the dtype's width in digits.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include "lang_test2.hpp"

namespace {
using lt2::ix;

/// Everything written to std::cout while `f` runs (restored on exceptions too).
std::string capture_cout(const std::function<void()>& f) {
  std::stringstream ss;
  std::streambuf* old = std::cout.rdbuf(ss.rdbuf());
  try {
    f();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return ss.str();
}

std::vector<std::string> sorted_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::string file_name(const char* path) {
  std::string p = path;
  auto s = p.find_last_of("/\\");
  return s == std::string::npos ? p : p.substr(s + 1);
}

int g_line = 0;  // the source line of the last traced device_assert / static_assert_

}  // namespace

// On a GPU a failing device_assert or a bad loop step traps, and the CUDA context is lost (as
// with Triton), and device_print goes to the process's stdout from the device, which these tests
// cannot capture: such tests run on the host backends only (tiletest::needs_host_backend; the
// GPU's fatal path: see the note in docs/GPU.md) and are reported as skipped on the cuda backend.

TEST_CASE("device_print: integers, 1-D and 2-D indices, scalars, several operands, no operands" * tiletest::needs_host_backend) {
  auto k = tile::kernel("printer", [](tl::ptr<std::int32_t> x, tl::ptr<float> f, tl::i32 n) {
    using tl::_;
    using tl::newaxis;
    auto v = tl::load(x + tl::arange(0, 4));
    tl::device_print("v = ", v);
    auto m = tl::load(f + tl::arange(0, 2)(_, newaxis) * 2 + tl::arange(0, 2)(newaxis, _));
    tl::device_print("f: ", m);
    tl::device_print("n=", n);
    tl::device_print("both ", tl::arange(0, 2) + 1, tl::constant<float>(0.5));
    tl::device_print("hello");
    tl::device_print("", v > 0);
    tl::device_print("t ", tl::reshape(tl::arange(0, 4), {2, 1, 2}));
    tl::if_(n < 0, [&] { tl::device_print("never printed ", n); });  // a branch not taken
  });
  auto d = lt2::dev();
  auto x = d.upload(std::vector<std::int32_t>{5, -1, 7, 255});
  auto f = d.upload(std::vector<float>{0.1f, 1.5f, -2.0f, 1e20f});
  const std::string out = capture_cout([&] { k[{1}](x, f, 42); });
  const std::string want =
      "pid (0, 0, 0) idx (0) v = 5\n"
      "pid (0, 0, 0) idx (1) v = -1\n"
      "pid (0, 0, 0) idx (2) v = 7\n"
      "pid (0, 0, 0) idx (3) v = 255\n"
      "pid (0, 0, 0) idx (0, 0) f: 0.1\n"
      "pid (0, 0, 0) idx (0, 1) f: 1.5\n"
      "pid (0, 0, 0) idx (1, 0) f: -2\n"
      "pid (0, 0, 0) idx (1, 1) f: 1e+20\n"
      "pid (0, 0, 0) idx () n=42\n"
      "pid (0, 0, 0) idx (0) both (operand 0) 1\n"
      "pid (0, 0, 0) idx (1) both (operand 0) 2\n"
      "pid (0, 0, 0) idx () both (operand 1) 0.5\n"
      "pid (0, 0, 0) hello\n"
      "pid (0, 0, 0) idx (0) 1\n"
      "pid (0, 0, 0) idx (1) 0\n"
      "pid (0, 0, 0) idx (2) 1\n"
      "pid (0, 0, 0) idx (3) 1\n"
      "pid (0, 0, 0) idx (0, 0, 0) t 0\n"
      "pid (0, 0, 0) idx (0, 0, 1) t 1\n"
      "pid (0, 0, 0) idx (1, 0, 0) t 2\n"
      "pid (0, 0, 0) idx (1, 0, 1) t 3\n";
  CHECK(out == want);
}

TEST_CASE("device_print: floats in the fewest digits that read back, integral ones in full, every element type" * tiletest::needs_host_backend) {
  auto k = tile::kernel("print_types", [](tl::ptr<float> f, tl::ptr<double> g, tl::ptr<tile::half> h,
                                          tl::ptr<tile::bfloat16> b, tl::ptr<std::int8_t> i8, tl::ptr<std::uint8_t> u8,
                                          tl::ptr<std::int64_t> i64, tl::ptr<std::uint64_t> u64) {
    auto r = tl::arange(0, 4);
    tl::device_print("f32 ", tl::load(f + r));
    tl::device_print("f32 ", tl::load(f + 4 + r));
    tl::device_print("f64 ", tl::load(g + r));
    tl::device_print("f64 ", tl::load(g + 4 + r));
    tl::device_print("f16 ", tl::load(h + r));
    tl::device_print("bf16 ", tl::load(b + r));
    tl::device_print("i8 ", tl::load(i8 + r));
    tl::device_print("u8 ", tl::load(u8 + r));
    tl::device_print("i64 ", tl::load(i64 + tl::arange(0, 2)));
    tl::device_print("u64 ", tl::load(u64 + tl::arange(0, 2)));
  });
  auto d = lt2::dev();
  const float inf = std::numeric_limits<float>::infinity();
  auto f = d.upload(std::vector<float>{inf, -inf, std::numeric_limits<float>::quiet_NaN(), 3.4028235e38f,
                                       1.4e-45f, 16777216.0f, 0.3f, -0.0f});
  auto g = d.upload(std::vector<double>{0.1, 1.0 / 3, 1e300, 123456789.125, 1e15, 4503599627370497.0, 1.5e16, -2.0});
  auto h = d.upload(std::vector<tile::half>{0.1f, 65504.0f, -0.5f, 6.0e-8f});
  auto b = d.upload(std::vector<tile::bfloat16>{3.14159f, 1.0f, -256.0f, 1e30f});
  auto i8 = d.upload(std::vector<std::int8_t>{-1, 127, -128, 0});
  auto u8 = d.upload(std::vector<std::uint8_t>{255, 0, 128, 7});
  auto i64 = d.upload(std::vector<std::int64_t>{-9000000000000000000LL, 1LL << 40});
  auto u64 = d.upload(std::vector<std::uint64_t>{~0ull, 5});
  const std::string out = capture_cout([&] { k[{1}](f, g, h, b, i8, u8, i64, u64); });
  auto line = [](const char* idx, const char* prefix, const char* value) {
    return std::string("pid (0, 0, 0) idx (") + idx + ") " + prefix + value + "\n";
  };
  std::string want;
  const char* f32a[] = {"inf", "-inf", "nan", "3.4028235e+38"};
  const char* f32b[] = {"1e-45", "16777216", "0.3", "-0"};
  const char* f64[] = {"0.1", "0.3333333333333333", "1e+300", "123456789.125"};
  // integral values below 1e16 print in full, larger ones in the fewest %g digits
  const char* f64b[] = {"1000000000000000", "4503599627370497", "1.5e+16", "-2"};
  const char* f16[] = {"0.1", "65504", "-0.5", "6e-08"};
  const char* bf16[] = {"3.14", "1", "-256", "1e+30"};
  const char* s8[] = {"-1", "127", "-128", "0"};
  const char* su8[] = {"255", "0", "128", "7"};
  const char* idx4[] = {"0", "1", "2", "3"};
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "f32 ", f32a[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "f32 ", f32b[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "f64 ", f64[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "f64 ", f64b[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "f16 ", f16[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "bf16 ", bf16[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "i8 ", s8[i]);
  for (int i = 0; i < 4; ++i) want += line(idx4[i], "u8 ", su8[i]);
  want += line("0", "i64 ", "-9000000000000000000") + line("1", "i64 ", "1099511627776");
  want += line("0", "u64 ", "18446744073709551615") + line("1", "u64 ", "5");
  CHECK(out == want);
}

TEST_CASE("device_print_hex: the raw bits, the dtype's width in hex digits; pointers print as addresses" * tiletest::needs_host_backend) {
  auto k = tile::kernel("print_hex", [](tl::ptr<float> f, tl::ptr<std::int32_t> i) {
    tl::device_print_hex("i32 ", tl::load(i + tl::arange(0, 2)));
    tl::device_print_hex("i8 ", tl::cast<std::int8_t>(tl::load(i + tl::arange(0, 2))));
    tl::device_print_hex("i16 ", tl::cast<std::int16_t>(tl::load(i + 1)));
    tl::device_print_hex("i64 ", tl::cast<std::int64_t>(tl::load(i + 1)));
    tl::device_print_hex("u8 ", tl::cast<std::uint8_t>(tl::load(i)));
    tl::device_print_hex("f32 ", tl::load(f));
    tl::device_print_hex("f16 ", tl::cast<tile::half>(tl::load(f)));
    tl::device_print_hex("bf16 ", tl::cast<tile::bfloat16>(tl::load(f)));
    tl::device_print_hex("i1 ", tl::load(i) < 0);
    tl::device_print("p ", f + tl::arange(0, 2));
  });
  auto d = lt2::dev();
  auto f = d.upload(std::vector<float>{1.0f});
  auto i = d.upload(std::vector<std::int32_t>{-1, 5});
  const std::string out = capture_cout([&] { k[{1}](f, i); });
  char p0[32], p1[32];
  std::snprintf(p0, sizeof p0, "0x%016" PRIx64, f.address());
  std::snprintf(p1, sizeof p1, "0x%016" PRIx64, f.address() + 4);
  const std::string want = std::string() +
                           "pid (0, 0, 0) idx (0) i32 0xffffffff\n"
                           "pid (0, 0, 0) idx (1) i32 0x00000005\n"
                           "pid (0, 0, 0) idx (0) i8 0xff\n"
                           "pid (0, 0, 0) idx (1) i8 0x05\n"
                           "pid (0, 0, 0) idx () i16 0x0005\n"
                           "pid (0, 0, 0) idx () i64 0x0000000000000005\n"
                           "pid (0, 0, 0) idx () u8 0xff\n"
                           "pid (0, 0, 0) idx () f32 0x3f800000\n"
                           "pid (0, 0, 0) idx () f16 0x3c00\n"
                           "pid (0, 0, 0) idx () bf16 0x3f80\n"
                           "pid (0, 0, 0) idx () i1 0x1\n"
                           "pid (0, 0, 0) idx (0) p " + p0 + "\n"
                           "pid (0, 0, 0) idx (1) p " + p1 + "\n";
  CHECK(out == want);
}

TEST_CASE("device_print: every program of a 3-D grid prints whole lines; prints in a loop run each iteration" * tiletest::needs_host_backend) {
  auto k = tile::kernel("print_grid", [](tl::ptr<std::int32_t> out) {
    auto id = tl::program_id(0) + 10 * tl::program_id(1) + 100 * tl::program_id(2);
    tl::device_print("id ", id + tl::arange(0, 2) * 1000);
    tl::store(out + id, id);
  });
  std::vector<std::string> want;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        for (int e = 0; e < 2; ++e)
          want.push_back("pid (" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ") idx (" +
                         std::to_string(e) + ") id " + std::to_string(x + 10 * y + 100 * z + 1000 * e));
  std::sort(want.begin(), want.end());
  auto out = lt2::dev().alloc<std::int32_t>(200);
  const std::string text = capture_cout([&] { k[{4, 3, 2}](out); });
  CHECK(sorted_lines(text) == want);

  auto loop = tile::kernel("print_loop", [](tl::i32 n) {
    auto acc = tl::constant<std::int32_t>(1);
    tl::for_range(0, n, [&](tl::tensor i) {
      acc = acc * 3;
      tl::device_print("it ", i, acc);
    });
  });
  const std::string text2 = capture_cout([&] { loop[{1}](3); });
  CHECK(text2 ==
        "pid (0, 0, 0) idx () it (operand 0) 0\npid (0, 0, 0) idx () it (operand 1) 3\n"
        "pid (0, 0, 0) idx () it (operand 0) 1\npid (0, 0, 0) idx () it (operand 1) 9\n"
        "pid (0, 0, 0) idx () it (operand 0) 2\npid (0, 0, 0) idx () it (operand 1) 27\n");
}

TEST_CASE("device_assert passes silently when the condition holds everywhere") {
  auto k = tile::kernel("assert_ok", [](tl::ptr<float> x, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    auto v = tl::load(x + offs);
    tl::device_assert(v >= 0.0f, "non-negative");
    tl::device_assert(n > 0, "n positive");
    tl::device_assert((offs >= n) || (v > 0.5f));  // no message
    tl::if_(n < 0, [&] { tl::device_assert(n > 1000, "in a branch not taken"); });
    tl::store(x + offs, v + 1.0f);
  });
  auto x = lt2::dev().upload(std::vector<float>(16, 1.0f));
  std::string out;
  CHECK_NOTHROW(out = capture_cout([&] { k[{1}](x, 16); }));
  CHECK(out.empty());
  CHECK(x.to_host()[0] == 2.0f);
}

TEST_CASE("a failing device_assert is a tile::error naming the message, program, element and file:line" * tiletest::needs_host_backend) {
  auto k = tile::kernel("asserter", [](tl::ptr<std::int32_t> x, tl::constexpr_<"RANK"> RANK) {
    using tl::_;
    using tl::newaxis;
    if (RANK == 1) {
      auto v = tl::load(x + tl::arange(0, 8));
      tl::device_assert(v < 3, "v must stay below 3"); g_line = __LINE__;
    } else if (RANK == 2) {
      auto v = tl::load(x + tl::arange(0, 2)(_, newaxis) * 4 + tl::arange(0, 4)(newaxis, _));
      tl::device_assert(v < 3, "2-D check"); g_line = __LINE__;
    } else {
      auto v = tl::load(x + tl::program_id(0));
      tl::device_assert(v < 3, "scalar check"); g_line = __LINE__;
    }
  });
  auto d = lt2::dev();
  // elements 5 and 6 fail: the first one is reported
  auto x = d.upload(std::vector<std::int32_t>{0, 1, 2, 0, 1, 9, 3, 0});
  for (int rank : {1, 2, 3}) {
    CAPTURE(rank);
    g_line = 0;
    std::string what;
    try {
      k[{rank == 3 ? 8 : 1}](x, "RANK"_c = rank);
    } catch (const tile::error& e) {
      what = e.what();
      CHECK(e.where().line == static_cast<std::uint32_t>(g_line));
      CHECK(e.kernel() == "asserter");
    }
    INFO(what);
    REQUIRE(g_line != 0);
    CHECK(lt2::contains(what, file_name(__FILE__) + ":" + std::to_string(g_line) + ":"));
    CHECK(lt2::contains(what, "asserter"));
    if (rank == 1) {
      CHECK(lt2::contains(what, "device_assert failed: v must stay below 3"));
      CHECK(lt2::contains(what, "program (0, 0, 0)"));
      CHECK(lt2::contains(what, "element [5]"));
    } else if (rank == 2) {
      CHECK(lt2::contains(what, "device_assert failed: 2-D check"));
      CHECK(lt2::contains(what, "element [1, 1]"));
    } else {
      // one program per element: program 5 or 6 fails (whichever runs first); no element index
      CHECK(lt2::contains(what, "device_assert failed: scalar check"));
      CHECK((lt2::contains(what, "program (5, 0, 0)") || lt2::contains(what, "program (6, 0, 0)")));
      CHECK_FALSE(lt2::contains(what, "element"));
    }
  }
  // the kernel is not poisoned: passing data launches fine
  CHECK_NOTHROW(k[{1}](d.upload(std::vector<std::int32_t>(8, 1)), "RANK"_c = 1));
}

TEST_CASE("a device_assert inside a runtime loop fails at the iteration that breaks it" * tiletest::needs_host_backend) {
  auto k = tile::kernel("assert_loop", [](tl::ptr<std::int32_t> out, tl::i32 n, tl::i32 limit) {
    auto acc = tl::constant<std::int32_t>(0);
    tl::for_range(0, n, [&](tl::tensor i) {
      acc = acc + i;
      tl::device_assert(acc <= limit, "running sum over the limit");
      tl::store(out + i, acc);
    });
  });
  auto d = lt2::dev();
  auto out = d.upload(std::vector<std::int32_t>(10, -1));
  CHECK_THROWS_WITH_AS(k[{1}](out, 10, 6), doctest::Contains("running sum over the limit"), tile::error);
  auto r = out.to_host();
  // iterations 0..3 (sums 0, 1, 3, 6) stored; iteration 4 (sum 10) failed before its store
  CHECK(r == std::vector<std::int32_t>{0, 1, 3, 6, -1, -1, -1, -1, -1, -1});
  CHECK_NOTHROW(k[{1}](out, 10, 100));
  CHECK(out.to_host()[9] == 45);
}

TEST_CASE("static_assert_ fails the trace at its file:line; a true one is silent") {
  auto k = tile::kernel("static_check", [](tl::ptr<float> x, tl::constexpr_<"BLOCK"> BLOCK) {
    auto v = tl::load(x + tl::arange(0, BLOCK));
    tl::static_assert_(v.dtype() == tile::dtype::f32, "f32 expected");
    g_line = __LINE__; tl::static_assert_(BLOCK % 32 == 0, "BLOCK must be a multiple of 32");
    tl::store(x + tl::arange(0, BLOCK), v * 2.0f);
  });
  auto d = lt2::dev();
  auto x = d.upload(std::vector<float>(64, 1.0f));
  g_line = 0;
  std::string what;
  try {
    k[{1}](x, "BLOCK"_c = 16);
  } catch (const tile::error& e) {
    what = e.what();
    CHECK(e.where().line == static_cast<std::uint32_t>(g_line));
  }
  INFO(what);
  REQUIRE(g_line != 0);
  CHECK(lt2::contains(what, "BLOCK must be a multiple of 32"));
  CHECK(lt2::contains(what, file_name(__FILE__) + ":" + std::to_string(g_line) + ":"));
  CHECK(x.to_host()[0] == 1.0f);  // nothing ran
  k[{1}](x, "BLOCK"_c = 64);
  CHECK(x.to_host()[63] == 2.0f);
  CHECK_THROWS_AS(k[{1}](x, "BLOCK"_c = 8), tile::error);  // failing again, not cached as a success
}

TEST_CASE("hints multiple_of and max_contiguous are accepted and do not change results") {
  auto k = tile::kernel("hinted", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK,
                                     tl::constexpr_<"HINT", bool> HINT) {
    auto start = tl::program_id(0) * BLOCK;
    auto offs = start + tl::arange(0, BLOCK);
    auto xp = x + offs;
    auto limit = n + 0;
    if (HINT) {
      offs = tl::max_contiguous(tl::multiple_of(offs, 16), 16);
      start = tl::multiple_of(start, 16);
      xp = tl::multiple_of(xp, 16);
      limit = tl::multiple_of(limit, 4);
    }
    auto mask = offs < limit;
    tl::store(out + offs, tl::load(xp, mask, -1.0f) * 2.0f + tl::cast<float>(start), mask);
  });
  std::vector<float> h(64);
  for (int i = 0; i < 64; ++i) h[ix(i)] = static_cast<float>(i);
  auto d = lt2::dev();
  auto x = d.upload(h);
  for (bool hint : {false, true}) {
    CAPTURE(hint);
    auto out = d.upload(std::vector<float>(64, 0.5f));
    k[{4}](x, out, 52, "BLOCK"_c = 16, "HINT"_c = hint);
    auto r = out.to_host();
    for (int i = 0; i < 64; ++i) CHECK(r[ix(i)] == (i < 52 ? 2.0f * static_cast<float>(i) + static_cast<float>(i / 16 * 16) : 0.5f));
  }
}

// test/lang/test_debug.cpp — device_print, device_assert, static_assert_, hints.
#include <iostream>
#include <sstream>

#include "lang_test2.hpp"

namespace {
struct capture_cout {
  std::stringstream ss;
  std::streambuf* old;
  capture_cout() : old(std::cout.rdbuf(ss.rdbuf())) {}
  ~capture_cout() { std::cout.rdbuf(old); }
};
}  // namespace

TEST_CASE("device_print prints one line per element with program id and index") {
  auto k = tile::kernel("printer", [](tl::ptr<std::int32_t> x) {
    auto v = tl::load(x + tl::arange(0, 4));
    tl::device_print("v = ", v);
    tl::device_print_hex("h = ", v);
  });
  auto x = lt2::dev().upload(std::vector<std::int32_t>{5, -1, 7, 255});
  std::string out;
  {
    capture_cout c;
    k[{2}](x);
    out = c.ss.str();
  }
  INFO(out);
  CHECK(out.find("pid (0, 0, 0) idx (0) v = 5\n") != std::string::npos);
  CHECK(out.find("pid (1, 0, 0) idx (3) v = 255\n") != std::string::npos);
  CHECK(out.find("pid (0, 0, 0) idx (1) v = -1\n") != std::string::npos);
  CHECK(out.find("idx (1) h = 0xffffffff\n") != std::string::npos);
  CHECK(std::count(out.begin(), out.end(), '\n') == 16);
}

TEST_CASE("device_assert passes silently when the condition holds") {
  auto k = tile::kernel("assert_ok", [](tl::ptr<float> x) {
    auto v = tl::load(x + tl::arange(0, 16));
    tl::device_assert(v >= 0.0f, "non-negative");
    tl::store(x + tl::arange(0, 16), v + 1.0f);
  });
  auto x = lt2::dev().upload(std::vector<float>(16, 1.0f));
  k[{1}](x);
  CHECK(x.to_host()[0] == 2.0f);
}

TEST_CASE("hints are accepted and change nothing") {
  auto k = tile::kernel("hinted", [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::max_contiguous(tl::multiple_of(tl::program_id(0) * BLOCK + tl::arange(0, BLOCK), 16), 16);
    tl::store(out + offs, tl::load(x + offs) * 2.0f);
  });
  std::vector<float> h(64);
  for (int i = 0; i < 64; ++i) h[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto d = lt2::dev();
  auto x = d.upload(h);
  auto out = d.alloc<float>(64);
  k[{4}](x, out, "BLOCK"_c = 16);
  auto r = out.to_host();
  for (int i = 0; i < 64; ++i) CHECK(r[static_cast<std::size_t>(i)] == 2.0f * static_cast<float>(i));
  CHECK(k.ir(x, out, "BLOCK"_c = 16).find("hint") != std::string::npos);
}

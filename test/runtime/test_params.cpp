// test/runtime/test_params.cpp — launches whose arguments come from a parameter struct adapted
// with Boost.Hana (<tile/runtime/params.hpp>): the same results as the positional launch, one
// trace for both, a struct beside positional arguments, an adapted struct the program cannot
// change, the autotuner's launches, and the launch's line in errors. Wrong members do not compile:
// test/errors/compile_fail/param_struct_*.cpp.
#include <doctest/doctest.h>

#include <tile/tile.hpp>
#include <vector>

#include "../requires.hpp"

using namespace tile::literals;

namespace {

auto axpy = tile::kernel("axpy", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::f32 a, tl::i32 n,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + offs, a * tl::load(x + offs, m) + tl::load(y + offs, m), m);
});

/// The kernel's runtime arguments as an engine keeps them.
struct axpy_args {
  BOOST_HANA_DEFINE_STRUCT(axpy_args, (tile::buffer<float>, x), (tile::buffer<float>, y), (tile::buffer<float>, out),
                           (float, a), (int, n));
};

}  // namespace

/// A struct the program does not own (a third-party header's): adapted from outside.
namespace engine {
struct vectors {
  tile::buffer<float> x, y, out;
};
}  // namespace engine
BOOST_HANA_ADAPT_STRUCT(engine::vectors, x, y, out);

namespace {

std::vector<float> iota(int n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("a parameter struct launches as its members would, positionally") {
  for (const char* backend : {"interpreter", "cpu"}) {
    CAPTURE(backend);
    if (!tiletest::backend_missing(backend).empty()) continue;  // a build without LLVM has no cpu backend
    auto dev = tile::device::get(backend);
    const int n = 1000;
    auto hx = iota(n, 1.0f), hy = iota(n, 0.5f);
    axpy_args args{dev.upload(hx), dev.upload(hy), dev.alloc<float>(n), 2.0f, n};
    axpy[{tile::cdiv(n, 256)}](args, "BLOCK"_c = 256);
    auto got = args.out.to_host();
    for (int i = 0; i < n; ++i) CHECK(got[static_cast<std::size_t>(i)] == 2.0f * hx[static_cast<std::size_t>(i)] + hy[static_cast<std::size_t>(i)]);
    // the positional launch of the same specialization: no second trace
    const auto traces = axpy.core().traces();
    auto out2 = dev.alloc<float>(n);
    axpy[{tile::cdiv(n, 256)}](args.x, args.y, out2, 2.0f, n, "BLOCK"_c = 256);
    CHECK(axpy.core().traces() == traces);
    CHECK(out2.to_host() == got);
    // a const struct launches too
    const axpy_args& c = args;
    axpy[{tile::cdiv(n, 256)}](c, "BLOCK"_c = 256);
  }
}

TEST_CASE("a parameter struct beside positional arguments, an adapted struct, an autotuned launch") {
  auto dev = tile::device::get("interpreter");
  const int n = 300;
  auto hx = iota(n, 1.0f), hy = iota(n, -1.0f);
  engine::vectors v{dev.upload(hx), dev.upload(hy), dev.alloc<float>(n)};
  axpy[{tile::cdiv(n, 128)}](v, 3.0f, n, "BLOCK"_c = 128);  // x, y, out from the struct; a and n after it
  auto got = v.out.to_host();
  for (int i = 0; i < n; ++i) CHECK(got[static_cast<std::size_t>(i)] == 3.0f * hx[static_cast<std::size_t>(i)] + hy[static_cast<std::size_t>(i)]);
  auto tuned = tile::autotune(axpy, {.configs = {tile::config({{"BLOCK", 64}}), tile::config({{"BLOCK", 128}})}});
  auto grid = [=](const tile::meta& m) { return tile::grid3{tile::cdiv(n, m["BLOCK"])}; };
  axpy_args args{v.x, v.y, dev.alloc<float>(n), 3.0f, n};
  tuned[grid](args);
  CHECK(args.out.to_host() == got);
}

TEST_CASE("a launch from a parameter struct names the launch's line in its errors") {
  auto dev = tile::device::get("interpreter");
  axpy_args args{dev.alloc<float>(16), dev.alloc<float>(16), dev.alloc<float>(16), 1.0f, 16};
  const int line = __LINE__ + 2;
  try {
    axpy[{-1}](args, "BLOCK"_c = 16);
    FAIL_CHECK("a grid of -1 launched");
  } catch (const tile::error& e) {
    CHECK(e.kernel() == "axpy");
    CHECK(e.where().line == static_cast<std::uint32_t>(line));
    CHECK(std::string(e.message()).find("grid extent x = -1") != std::string::npos);
  }
}

// test/lang/test_control.cpp — runtime loops and branches with loop-carried tiles, trace-time
// control flow, device functions and specialization.
#include "lang_test2.hpp"

TEST_CASE("for_range carries accumulators, pointer tiles and scalars") {
  auto k = tile::kernel("carry", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n_blocks, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    auto ptrs = x + offs;
    auto acc = tl::zeros<float>({BLOCK});
    auto count = tl::constant<std::int32_t>(0);
    auto last = tl::zeros<float>({BLOCK});
    tl::for_range(0, n_blocks, [&](tl::tensor) {
      auto v = tl::load(ptrs);
      acc += v;
      last = v;
      ptrs += BLOCK;
      count = count + 1;
    });
    tl::store(out + offs, acc);
    tl::store(out + BLOCK + offs, last);
    tl::store(out + 2 * BLOCK, tl::cast<float>(count));
  });
  auto d = lt2::dev();
  std::vector<float> h(5 * 16);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  auto x = d.upload(h);
  for (int nb : {0, 1, 5}) {
    CAPTURE(nb);
    auto out = d.alloc<float>(33);
    k[{1}](x, out, nb, "BLOCK"_c = 16);
    auto r = out.to_host();
    for (int j = 0; j < 16; ++j) {
      float s = 0;
      for (int b = 0; b < nb; ++b) s += h[static_cast<std::size_t>(b * 16 + j)];
      CHECK(r[static_cast<std::size_t>(j)] == s);
      CHECK(r[static_cast<std::size_t>(16 + j)] == (nb ? h[static_cast<std::size_t>((nb - 1) * 16 + j)] : 0.0f));
    }
    CHECK(r[32] == static_cast<float>(nb));
  }
}

TEST_CASE("for_range with a step, runtime bounds and nesting") {
  auto k = tile::kernel("nested", [](tl::ptr<std::int32_t> out, tl::i32 lo, tl::i32 hi, tl::i32 step, tl::i32 inner) {
    auto total = tl::zeros<std::int32_t>({16});
    auto iters = tl::constant<std::int32_t>(0);
    tl::for_range(lo, hi, step, [&](tl::tensor i) {
      tl::for_range(0, inner, [&](tl::tensor j) {
        total += tl::arange(0, 16) * i + j;
        iters = iters + 1;
      });
    });
    tl::store(out + tl::arange(0, 16), total);
    tl::store(out + 16, iters);
  });
  auto out = lt2::dev().alloc<std::int32_t>(17);
  k[{1}](out, 3, 20, 4, 3);
  auto r = out.to_host();
  int it = 0;
  std::vector<int> want(16, 0);
  for (int i = 3; i < 20; i += 4)
    for (int j = 0; j < 3; ++j) {
      ++it;
      for (int e = 0; e < 16; ++e) want[static_cast<std::size_t>(e)] += e * i + j;
    }
  for (int e = 0; e < 16; ++e) CHECK(r[static_cast<std::size_t>(e)] == want[static_cast<std::size_t>(e)]);
  CHECK(r[16] == it);
}

TEST_CASE("a tile first assigned inside a loop body stays local to it") {
  auto k = tile::kernel("local", [](tl::ptr<float> out, tl::i32 n) {
    tl::tensor tmp;
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      tmp = tl::full<float>({16}, 2.0f);
      acc += tmp;
    });
    CHECK_FALSE(tmp.defined());
    tl::store(out + tl::arange(0, 16), acc);
  });
  auto out = lt2::dev().alloc<float>(16);
  k[{1}](out, 3);
  CHECK(out.to_host()[5] == 6.0f);
}

TEST_CASE("while_ loops with carried scalars: Collatz steps per program") {
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
  auto out = lt2::dev().alloc<std::int32_t>(30);
  k[{30}](out);
  auto r = out.to_host();
  for (int i = 0; i < 30; ++i) {
    long x = i + 1;
    int s = 0;
    while (x != 1) x = x % 2 ? 3 * x + 1 : x / 2, ++s;
    CHECK(r[static_cast<std::size_t>(i)] == s);
  }
}

TEST_CASE("if_ assigns tiles in one or both branches and returns values") {
  auto k = tile::kernel("branches", [](tl::ptr<float> out, tl::i32 flag) {
    auto a = tl::full<float>({16}, 1.0f);
    auto b = tl::full<float>({16}, 10.0f);
    tl::if_(flag > 0, [&] { a = a + 1.0f; b = b * 2.0f; }, [&] { a = a - 1.0f; });
    tl::if_(flag > 5, [&] { b = b + 100.0f; });
    auto c = tl::if_(flag == 3, [&] { return a * 3.0f; }, [&] { return a * 5.0f; });
    tl::store(out + tl::arange(0, 16), a + b + c);
  });
  auto d = lt2::dev();
  for (int flag : {-1, 3, 7}) {
    CAPTURE(flag);
    auto out = d.alloc<float>(16);
    k[{1}](out, flag);
    float a = flag > 0 ? 2.0f : 0.0f, b = flag > 0 ? 20.0f : 10.0f;
    if (flag > 5) b += 100.0f;
    float c = flag == 3 ? a * 3 : a * 5;
    CHECK(out.to_host()[7] == a + b + c);
  }
}

TEST_CASE("if_ inside for_range") {
  auto k = tile::kernel("if_in_for", [](tl::ptr<std::int32_t> out, tl::i32 n) {
    auto even = tl::constant<std::int32_t>(0), odd = tl::constant<std::int32_t>(0);
    tl::for_range(0, n, [&](tl::tensor i) {
      tl::if_(i % 2 == 0, [&] { even = even + i; }, [&] { odd = odd + i; });
    });
    tl::store(out, even);
    tl::store(out + 1, odd);
  });
  auto out = lt2::dev().alloc<std::int32_t>(2);
  k[{1}](out, 11);
  auto r = out.to_host();
  CHECK(r[0] == 0 + 2 + 4 + 6 + 8 + 10);
  CHECK(r[1] == 1 + 3 + 5 + 7 + 9);
}

namespace {
tl::tensor poly(const tl::tensor& x, int degree) {  // a device function with a trace-time loop
  auto acc = tl::zeros_like(x);
  for (int i = 0; i <= degree; ++i) acc = acc * x + static_cast<float>(i + 1);
  return acc;
}
}  // namespace

TEST_CASE("trace-time loops unroll, trace-time ifs select, device functions are shared") {
  auto k1 = tile::kernel("poly1", [](tl::ptr<float> x, tl::ptr<float> out, tl::constexpr_<"DEG"> DEG,
                                     tl::constexpr_<"NEG", bool> NEG) {
    auto v = tl::load(x + tl::arange(0, 16));
    auto p = poly(v, static_cast<int>(DEG));
    if (NEG) p = -p;
    tl::store(out + tl::arange(0, 16), p);
  });
  auto k2 = tile::kernel("poly2", [](tl::ptr<float> x, tl::ptr<float> out) {
    auto v = tl::load(x + tl::arange(0, 16));
    tl::store(out + tl::arange(0, 16), poly(v, 2) + poly(v, 0));
  });
  auto d = lt2::dev();
  std::vector<float> h(16);
  for (int i = 0; i < 16; ++i) h[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i) - 3;
  auto x = d.upload(h);
  auto out = d.alloc<float>(16);
  auto ref = [](float v, int deg) {
    float a = 0;
    for (int i = 0; i <= deg; ++i) a = a * v + static_cast<float>(i + 1);
    return a;
  };
  k1[{1}](x, out, "DEG"_c = 3, "NEG"_c = true);
  CHECK(out.to_host()[4] == -ref(h[4], 3));
  k1[{1}](x, out, "DEG"_c = 1, "NEG"_c = false);
  CHECK(out.to_host()[9] == ref(h[9], 1));
  CHECK(k1.core().traces() == 2);
  k2[{1}](x, out);
  CHECK(out.to_host()[2] == ref(h[2], 2) + ref(h[2], 0));
  // the unrolled loop leaves no runtime loop in the IR
  CHECK(k1.ir(x, out, "DEG"_c = 3, "NEG"_c = true).find("for ") == std::string::npos);
}

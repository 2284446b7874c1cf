// test/lang/test_memory.cpp — loads, stores and atomics end to end: masks at the edges (n not a
// multiple of the block, n < block, n = 0 with grid 0 and with grid 1 fully masked), `other`
// values, 2-D pointer tiles with strides, scalar loads/stores, buffer views, i1 storage, every
// dtype round trip, and atomics from many programs (add, max, min, xchg, and/or/xor, cas).
//
// Buffers are allocated with exactly the elements a kernel may touch, so a lane that escapes its
// mask is an out-of-bounds access the interpreter reports; where a masked-off lane would still
// be in bounds, the buffer holds sentinels that must survive.
#include <numeric>
#include <set>

#include "lang_test.hpp"

using namespace lt;

// ---- masks ----------------------------------------------------------------------------------
namespace {
/// Only the interpreter checks every memory access (compiled backends, like GPUs, do not): the
/// tests of out-of-bounds errors need it and are reported as skipped on the other backends.
constexpr tiletest::needs needs_memory_checks{"needs the interpreter's memory checks", []() -> std::string {
  const std::string b = lt::dev().backend();
  return b == "interpreter" ? "" : "the tests run on the " + b + " backend: only the interpreter checks memory accesses";
}};
}  // namespace

TEST_CASE("memory: masked loads and stores at the edges") {
  auto k = tile::kernel("copy_plus_one", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(y + offs, tl::load(x + offs, m) + 1.f, m);
  });
  SUBCASE("n = 1 … 1000, blocks of 16 and 128") {
  for (int block : {16, 128}) {
    for (int n : {1, 15, 16, 17, 100, 128, 129, 1000}) {
      INFO("n = " << n << ", BLOCK = " << block);
      auto hx = gen<float>(static_cast<std::size_t>(n), 1, false, false);
      auto x = upload<float>(hx);                                 // exactly n: a stray load is out of bounds
      auto y = filled<float>(static_cast<std::size_t>(n + 200), -7.f);  // sentinels after n
      if (!run([&] { k[{tile::cdiv(n, block)}](x, y, n, "BLOCK"_c = block); })) continue;
      std::vector<float> want(static_cast<std::size_t>(n + 200), -7.f);
      for (int i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = hx[static_cast<std::size_t>(i)] + 1.f;
      check_equal(download(y), want, "y = x + 1, sentinels intact");
    }
  }
  }
  SUBCASE("n = 0: grid 0 runs nothing, grid 1 is fully masked") {
    auto x = dev().alloc<float>(0);
    auto y = filled<float>(16, -7.f);
    REQUIRE(run([&] { k[{0}](x, y, 0, "BLOCK"_c = 16); }, "grid 0"));
    check_equal(download(y), std::vector<float>(16, -7.f), "grid 0");
    REQUIRE(run([&] { k[{1}](x, y, 0, "BLOCK"_c = 16); }, "grid 1, n = 0"));
    check_equal(download(y), std::vector<float>(16, -7.f), "grid 1, fully masked");
  }
}

TEST_CASE("memory: an unmasked access past the end is an error naming the line" * needs_memory_checks) {
  auto bad = tile::kernel("unmasked", [](tl::ptr<float> x, tl::ptr<float> y) {
    auto offs = tl::arange(0, 16);
    tl::store(y + offs, tl::load(x + offs));
  });
  auto x = dev().alloc<float>(10), y = filled<float>(16, -7.f);
  std::string msg;
  CHECK(throws_tile_error([&] { bad[{1}](x, y); }, &msg));
  CHECK_MESSAGE(msg.find("test_memory.cpp") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("out-of-bounds") != std::string::npos, msg);
  check_equal(download(y), std::vector<float>(16, -7.f), "nothing stored after a failed load");
  auto x2 = filled<float>(16, 1.f), y2 = filled<float>(15, -7.f);
  CHECK(throws_tile_error([&] { bad[{1}](x2, y2); }, &msg));
  CHECK_MESSAGE(msg.find("test_memory.cpp") != std::string::npos, msg);
  // interpreter.cpp: all lanes are checked before any is accessed
  check_equal(download(y2), std::vector<float>(15, -7.f), "no lane of an out-of-bounds store is written");
}

TEST_CASE("memory: load with `other`") {
  const int n = 20, block = 32;
  SUBCASE("literal other takes the pointee's dtype") {
    auto hx = gen<float>(n, 2, false, false);
    auto got = [&] {
      auto k = tile::kernel("other_lit", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 nn, tl::constexpr_<"BLOCK"> BLOCK) {
        auto offs = tl::arange(0, BLOCK);
        tl::store(y + offs, tl::load(x + offs, offs < nn, -7));
      });
      auto x = upload<float>(hx);
      auto y = dev().alloc<float>(block);
      REQUIRE(run([&] { k[{1}](x, y, n, "BLOCK"_c = block); }));
      return download(y);
    }();
    std::vector<float> want(block, -7.f);
    std::copy(hx.begin(), hx.end(), want.begin());
    check_equal(got, want, "load(x, offs < n, -7)");
  }
  SUBCASE("tile other (i32 tile converted to f16), u8 255, i1 true, no other (0 on the interpreter)") {
    auto k = tile::kernel("other_tile", [](tl::ptr<half> h, tl::ptr<std::uint8_t> u, tl::ptr<bool> b, tl::ptr<std::int64_t> l,
                                           tl::ptr<half> oh, tl::ptr<std::uint8_t> ou, tl::ptr<bool> ob, tl::ptr<std::int64_t> ol,
                                           tl::i32 nn) {
      auto offs = tl::arange(0, 32);
      auto m = offs < nn;
      tl::store(oh + offs, tl::load(h + offs, m, offs * 2));
      tl::store(ou + offs, tl::load(u + offs, m, 255));
      tl::store(ob + offs, tl::load(b + offs, m, true));
      tl::store(ol + offs, tl::load(l + offs, m));
    });
    auto hh = gen<half>(n, 3, false, false);
    auto hu = gen<std::uint8_t>(n, 4);
    auto hb = gen<bool>(n, 5);
    auto hl = gen<std::int64_t>(n, 6);
    auto bh = upload<half>(hh);
    auto bu = upload<std::uint8_t>(hu);
    auto bb = upload<bool>(hb);
    auto bl = upload<std::int64_t>(hl);
    auto oh = dev().alloc<half>(block);
    auto ou = dev().alloc<std::uint8_t>(block);
    auto ob = dev().alloc<bool>(block);
    auto ol = filled<std::int64_t>(block, 99);
    REQUIRE(run([&] { k[{1}](bh, bu, bb, bl, oh, ou, ob, ol, n); }));
    std::vector<half> wh(hh);
    std::vector<std::uint8_t> wu(hu), wb(hb);
    std::vector<std::int64_t> wl(hl);
    for (int i = n; i < block; ++i) {
      wh.push_back(half(static_cast<float>(i * 2)));
      wu.push_back(255);
      wb.push_back(1);
      wl.push_back(0);
    }
    check_equal(download(oh), wh, "f16 load, other = offs * 2");
    check_equal(download(ou), wu, "u8 load, other = 255");
    check_equal(download(ob), wb, "i1 load, other = true");
    check_equal(download(ol), wl, "i64 load, no other");
  }
  SUBCASE("`other` without a mask is a trace error") {
    auto k = tile::kernel("other_no_mask", [](tl::ptr<float> x) {
      auto offs = tl::arange(0, 4);
      tl::store(x + offs, tl::load(x + offs, {}, 1.0));
    });
    auto x = dev().alloc<float>(4);
    CHECK(throws_tile_error([&] { k[{1}](x); }));
  }
  SUBCASE("cache, eviction and volatile hints do not change values") {
    auto k = tile::kernel("hints", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> y) {
      auto offs = tl::arange(0, 16);
      auto m = offs < 10;
      auto v = tl::load(x + offs, m, 5, tl::cache::cg, tl::eviction::first, true);
      tl::store(y + offs, v, {}, tl::cache::cv, tl::eviction::last);
    });
    auto hx = gen<std::int32_t>(10, 7);
    auto x = upload<std::int32_t>(hx);
    auto y = dev().alloc<std::int32_t>(16);
    REQUIRE(run([&] { k[{1}](x, y); }));
    std::vector<std::int32_t> want(hx);
    want.resize(16, 5);
    check_equal(y.to_host(), want, "hinted load/store");
  }
}

// ---- 2-D pointer tiles ------------------------------------------------------------------------
TEST_CASE("memory: 2-D tiles of pointers with strides") {
  auto k = tile::kernel("strided_copy", [](tl::ptr<const float> in, tl::ptr<float> out, tl::i32 M, tl::i32 N,
                                           tl::i32 s_in_m, tl::i32 s_in_n, tl::i32 s_out_m, tl::i32 s_out_n,
                                           tl::constexpr_<"BM"> BM, tl::constexpr_<"BN"> BN) {
    auto rm = tl::program_id(0) * BM + tl::arange(0, BM);
    auto rn = tl::program_id(1) * BN + tl::arange(0, BN);
    auto mask = (rm(tl::_, tl::newaxis) < M) & (rn(tl::newaxis, tl::_) < N);
    auto x = tl::load(in + rm(tl::_, tl::newaxis) * s_in_m + rn(tl::newaxis, tl::_) * s_in_n, mask);
    tl::store(out + rm(tl::_, tl::newaxis) * s_out_m + rn(tl::newaxis, tl::_) * s_out_n, x, mask);
  });
  const std::pair<int, int> shapes[] = {{5, 7}, {16, 16}, {33, 17}, {1, 40}, {40, 1}, {8, 32}};
  for (auto [M, N] : shapes) {
    INFO("M = " << M << ", N = " << N);
    const std::size_t mn = static_cast<std::size_t>(M * N);
    auto a = gen<float>(mn, 8, false, false);
    auto in = upload<float>(a);
    {  // row major -> column major
      auto out = filled<float>(mn, -1.f);
      if (run([&] { k[{tile::cdiv(M, 8), tile::cdiv(N, 16)}](in, out, M, N, N, 1, 1, M, "BM"_c = 8, "BN"_c = 16); })) {
        std::vector<float> want(mn);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) want[static_cast<std::size_t>(j * M + i)] = a[static_cast<std::size_t>(i * N + j)];
        check_equal(download(out), want, "transposed copy");
      }
    }
    {  // column major -> row major with a padded leading dimension
      const int ld = N + 3;
      auto out = filled<float>(static_cast<std::size_t>(M * ld), -1.f);
      if (run([&] { k[{tile::cdiv(M, 16), tile::cdiv(N, 8)}](in, out, M, N, 1, M, ld, 1, "BM"_c = 16, "BN"_c = 8); })) {
        std::vector<float> want(static_cast<std::size_t>(M * ld), -1.f);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) want[static_cast<std::size_t>(i * ld + j)] = a[static_cast<std::size_t>(j * M + i)];
        check_equal(download(out), want, "column major in, padded row major out");
      }
    }
  }
}

// ---- scalars ----------------------------------------------------------------------------------
TEST_CASE("memory: scalar loads and stores") {
  SUBCASE("scalar pointer arithmetic, scalar masks") {
    auto k = tile::kernel("scalars", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> y) {
      auto v = tl::load(x + 3);
      tl::store(y, v * 2);
      auto first = tl::load(x);
      tl::store(y + 1, first, first > 0);       // scalar mask, false: not stored
      tl::store(y + 2, first, first < 0);       // true: stored
      tl::store(y + 3, tl::load(x + 1, first > 0, 42));  // masked-off scalar load gives other
      tl::store(y + 4, 17);                     // a literal takes the pointee's dtype
      auto p = y + 6;
      p = p - 1;                                // pointer - int
      tl::store(p, tl::load(x + 2) + 1);
    });
    auto x = upload<std::int32_t>(hvec<std::int32_t>{-5, 10, 20, 30});
    auto y = filled<std::int32_t>(6, -1);
    REQUIRE(run([&] { k[{1}](x, y); }));
    check_equal(y.to_host(), std::vector<std::int32_t>{60, -1, -5, 42, 17, 21}, "scalar ops");
  }
  SUBCASE("one scalar store per program: program_id and num_programs") {
    auto k = tile::kernel("pids", [](tl::ptr<std::int32_t> out, tl::ptr<std::int32_t> nprog) {
      auto pid = tl::program_id(0) + tl::program_id(1) * tl::num_programs(0);
      tl::store(out + pid, pid * 10 + tl::program_id(2));
      tl::store(nprog + pid, tl::num_programs(0) * 10000 + tl::num_programs(1) * 100 + tl::num_programs(2));
    });
    auto out = filled<std::int32_t>(37 * 3, -1);
    auto np = filled<std::int32_t>(37 * 3, -1);
    REQUIRE(run([&] { k[{37, 3, 1}](out, np); }));
    std::vector<std::int32_t> want(37 * 3), wnp(37 * 3, 370301);
    for (int i = 0; i < 37 * 3; ++i) want[static_cast<std::size_t>(i)] = i * 10;
    check_equal(out.to_host(), want, "out[pid] = pid * 10");
    check_equal(np.to_host(), wnp, "num_programs");
    // grid z
    auto np2 = filled<std::int32_t>(4, -1);
    auto kz = tile::kernel("pid_z", [](tl::ptr<std::int32_t> o) { tl::store(o + tl::program_id(2), tl::program_id(2) + 100 * tl::num_programs(2)); });
    REQUIRE(run([&] { kz[{1, 1, 4}](np2); }));
    check_equal(np2.to_host(), std::vector<std::int32_t>{400, 401, 402, 403}, "program_id(2)");
  }
  SUBCASE("a scalar stored through a tile of pointers broadcasts") {
    auto k = tile::kernel("bcast_store", [](tl::ptr<double> out, tl::ptr<double> v) {
      tl::store(out + tl::arange(0, 8), tl::load(v));
      tl::store(out + 8 + tl::arange(0, 8), 2.5);
    });
    auto out = dev().alloc<double>(16);
    auto v = upload<double>(hvec<double>{0.1});
    REQUIRE(run([&] { k[{1}](out, v); }));
    std::vector<double> want(8, 0.1);
    want.resize(16, 2.5);
    check_equal(out.to_host(), want, "broadcast stores");
  }
  SUBCASE("a stored value must have the pointee's dtype (literals adapt)") {
    auto k = tile::kernel("bad_store", [](tl::ptr<half> out, tl::ptr<float> in) { tl::store(out, tl::load(in)); });
    auto out = dev().alloc<half>(1);
    auto in = dev().alloc<float>(1);
    std::string msg;
    CHECK(throws_tile_error([&] { k[{1}](out, in); }, &msg));
    CHECK_MESSAGE(msg.find("test_memory.cpp") != std::string::npos, msg);
    auto k2 = tile::kernel("lit_store", [](tl::ptr<half> o, tl::ptr<std::uint8_t> u, tl::ptr<std::int64_t> l) {
      tl::store(o, 1.5);
      tl::store(u, 255);
      tl::store(l, std::int64_t{1} << 40);
    });
    auto u = dev().alloc<std::uint8_t>(1);
    auto l = dev().alloc<std::int64_t>(1);
    REQUIRE(run([&] { k2[{1}](out, u, l); }));
    CHECK(static_cast<float>(download(out)[0]) == 1.5f);
    CHECK(u.to_host()[0] == 255);
    CHECK(l.to_host()[0] == (std::int64_t{1} << 40));
  }
}

// ---- buffer views ---------------------------------------------------------------------------------
namespace {
auto fill_view_kernel() {
  return tile::kernel("fill_view", [](tl::ptr<float> out, tl::ptr<const float> in, tl::i32 n) {
    auto offs = tl::arange(0, 32);
    auto m = offs < n;
    tl::store(out + offs, tl::load(in + offs, m) * 2.f, m);
  });
}
tile::buffer<float> iota_buffer() {
  std::vector<float> host(64);
  std::iota(host.begin(), host.end(), 0.f);
  return upload<float>(host);
}
}  // namespace

TEST_CASE("memory: buffer views as arguments") {
  auto k = fill_view_kernel();
  auto buf = iota_buffer();
  auto dst = filled<float>(64, -1.f);
  SUBCASE("reads and writes land at the view's offset") {
    REQUIRE(run([&] { k[{1}](dst.view(16, 20), buf.view(40, 20), 20); }));
    std::vector<float> want(64, -1.f);
    for (int i = 0; i < 20; ++i) want[static_cast<std::size_t>(16 + i)] = static_cast<float>(40 + i) * 2.f;
    check_equal(download(dst), want, "dst[16:36] = 2 * buf[40:60]");
  }
  SUBCASE("a view past the buffer's end is a host error") {
    CHECK_THROWS_AS((void)buf.view(60, 5), tile::error);
  }
}

TEST_CASE("memory: accesses through a buffer view are checked against the view, not the buffer" *
          needs_memory_checks) {
  auto k = fill_view_kernel();
  auto buf = iota_buffer();
  auto dst = filled<float>(64, -1.f);
  std::string msg;
  CHECK(throws_tile_error([&] { k[{1}](dst.view(0, 10), buf.view(0, 32), 20); }, &msg));  // writes 20 into 10
  CHECK_MESSAGE(msg.find("test_memory.cpp") != std::string::npos, msg);
  CHECK(throws_tile_error([&] { k[{1}](dst.view(0, 32), buf.view(50, 14), 20); }));  // reads 20 from 14
}

TEST_CASE("memory: a pointer derived from one argument may not reach into another argument's buffer" *
          needs_memory_checks) {
  auto buf = iota_buffer();
  // x and y are adjacent views of one buffer: x + 16 … x + 31 is inside y's memory, but x's
  // pointer was derived from x, whose buffer has 16 elements.
  auto over = tile::kernel("read_over", [](tl::ptr<float> out, tl::ptr<const float> x, tl::ptr<const float> y) {
    auto offs = tl::arange(0, 32);
    tl::store(out + offs, tl::load(x + offs) + tl::load(y + offs % 16));
  });
  auto out = filled<float>(32, 0.f);
  std::string msg;
  CHECK(throws_tile_error([&] { over[{1}](out, buf.view(0, 16), buf.view(16, 16)); }, &msg));
  CHECK_MESSAGE(msg.find("test_memory.cpp") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("although the pointer was derived from argument 1") != std::string::npos, msg);
  CHECK_MESSAGE(msg.find("element [16]") != std::string::npos, msg);
  REQUIRE(run([&] { over[{1}](out, buf.view(0, 32), buf.view(16, 16)); }, "x covers all 32 elements"));
}

TEST_CASE("memory: a load after a store sees it when two arguments share memory (and not when they don't)") {
  // The store and the load use different layouts' threads (the load reads the tile reversed):
  // on a GPU another thread wrote the element. The compiled backends may skip the ordering only
  // for arguments the launch found disjoint (ir::ArgInfo::noalias).
  auto k = tile::kernel("store_then_load", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> r,
                                              tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    tl::store(a + offs, tl::cast<float>(offs) * 3.f);
    tl::store(r + offs, tl::load(b + (BLOCK - 1 - offs)));
  });
  auto looped = tile::kernel("store_then_load_loop", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> r, tl::i32 n,
                                                        tl::constexpr_<"BLOCK"> BLOCK) {
    tl::for_range(0, n, BLOCK, [&](tl::tensor off) {
      auto offs = off + tl::arange(0, BLOCK);
      tl::store(a + offs, tl::cast<float>(offs) * 3.f);
      tl::store(r + offs, tl::load(b + (off + BLOCK - 1 - tl::arange(0, BLOCK))));
    });
  });
  constexpr int n = 1024;
  std::vector<float> want_same(n), want_apart(n), seq(n);
  for (int i = 0; i < n; ++i) {
    seq[static_cast<std::size_t>(i)] = static_cast<float>(i) + 0.5f;
    want_same[static_cast<std::size_t>(i)] = static_cast<float>(n - 1 - i) * 3.f;
    want_apart[static_cast<std::size_t>(i)] = static_cast<float>(n - 1 - i) + 0.5f;
  }
  for (int warps : {1, 4, 8}) {
    INFO("num_warps = " << warps);
    auto a = upload<float>(seq), b = upload<float>(seq), r = filled<float>(n, -1.f);
    REQUIRE(run([&] { k[{1}](a, a, r, "BLOCK"_c = n, "num_warps"_c = warps); }));
    check_equal(download(r), want_same, "a and b the same buffer: the load sees the store");
    REQUIRE(run([&] { k[{1}](a, b, r, "BLOCK"_c = n, "num_warps"_c = warps); }));
    check_equal(download(r), want_apart, "a and b apart: b as it was");
    auto big = upload<float>(std::vector<float>(2 * n, 0.f));
    REQUIRE(run([&] { k[{1}](big.view(0, n), big.view(0, n), r, "BLOCK"_c = n, "num_warps"_c = warps); }));
    check_equal(download(r), want_same, "two views of the same elements");
    // a loop whose iterations store through one argument and load through the other
    auto c = upload<float>(seq);
    std::vector<float> want_loop(n);
    for (int blk = 0; blk < n; blk += 256)
      for (int i = 0; i < 256; ++i) want_loop[static_cast<std::size_t>(blk + i)] = static_cast<float>(blk + 255 - i) * 3.f;
    REQUIRE(run([&] { looped[{1}](c, c, r, n, "BLOCK"_c = 256, "num_warps"_c = warps); }));
    check_equal(download(r), want_loop, "loop: a and b the same buffer");
  }
}

// ---- i1 storage and dtype round trips --------------------------------------------------------------
TEST_CASE("memory: i1 storage") {
  auto k = tile::kernel("bools", [](tl::ptr<std::int32_t> x, tl::ptr<bool> flags, tl::ptr<std::int32_t> out, tl::i32 n) {
    auto offs = tl::arange(0, 64);
    auto m = offs < n;
    auto v = tl::load(x + offs, m);
    tl::store(flags + offs, v > 0, m);
    auto f = tl::load(flags + offs, m, false);
    tl::store(out + offs, tl::where(f, v, -1), f);  // a loaded i1 tile as a mask
  });
  const int n = 50;
  auto hx = gen<std::int32_t>(n, 9);
  auto x = upload<std::int32_t>(hx);
  auto flags = filled<bool>(n, 0);
  auto out = filled<std::int32_t>(n, 0);
  REQUIRE(run([&] { k[{1}](x, flags, out, n); }));
  std::vector<std::uint8_t> wf;
  std::vector<std::int32_t> wo;
  for (auto v : hx) {
    wf.push_back(v > 0);
    wo.push_back(v > 0 ? v : 0);
  }
  check_equal(download(flags), wf, "stored i1 bytes are 0 or 1");
  check_equal(out.to_host(), wo, "i1 mask from memory");
}

TEST_CASE("memory: i1 in memory is one byte; any nonzero byte reads as 1") {
  auto k = tile::kernel("i1_bytes", [](tl::ptr<bool> b, tl::ptr<std::int32_t> as_int, tl::ptr<bool> negated,
                                       tl::ptr<std::int32_t> selected) {
    auto offs = tl::arange(0, 8);
    auto v = tl::load(b + offs);
    tl::store(as_int + offs, tl::cast<std::int32_t>(v));
    tl::store(negated + offs, !v);
    tl::store(selected + offs, tl::where(v, offs, -1));
  });
  const std::uint8_t raw[8] = {0, 1, 2, 0xff, 0x80, 0, 0x10, 1};
  auto b = dev().alloc<bool>(8);
  tile::detail::copy_to_device(*b.allocation(), 0, raw, 8);  // bytes a C++ bool never holds
  auto as_int = dev().alloc<std::int32_t>(8), selected = dev().alloc<std::int32_t>(8);
  auto negated = dev().alloc<bool>(8);
  REQUIRE(run([&] { k[{1}](b, as_int, negated, selected); }));
  check_equal(as_int.to_host(), std::vector<std::int32_t>{0, 1, 1, 1, 1, 0, 1, 1}, "cast<i32>(i1 loaded from bytes)");
  check_equal(download(negated), std::vector<std::uint8_t>{1, 0, 0, 0, 0, 1, 0, 0}, "!x (stored bytes are 0 or 1)");
  check_equal(selected.to_host(), std::vector<std::int32_t>{-1, 1, 2, 3, 4, -1, 6, 7}, "where(x, offs, -1)");
}

TEST_CASE_TEMPLATE("memory: round trip of every dtype (bit exact)", T, bool, std::int8_t, std::int16_t, std::int32_t,
                   std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t, lt::half, lt::bfloat16,
                   float, double) {
  const std::size_t n = 77;
  auto h = gen<T>(n, 10);
  if constexpr (is_fp<T>) {  // NaN payloads and signed zeros must survive a load/store
    const std::uint64_t pats[] = {0x7fc00001u, 0xffc00123u, 0x80000000u, 0x7f800001u};
    for (std::size_t i = 0; i < 4; ++i) {
      if constexpr (sizeof(T) == 2)
        h[i].bits = static_cast<std::uint16_t>(i == 3 ? 0x7d01u : pats[i] >> 16);
      else if constexpr (sizeof(T) == 4)
        h[i] = std::bit_cast<float>(static_cast<std::uint32_t>(pats[i]));
      else
        h[i] = std::bit_cast<double>(pats[i] << 32 | 0x1234u);
    }
  }
  auto k = tile::kernel("roundtrip", [](tl::ptr<T> x, tl::ptr<T> y, tl::i32 nn, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < nn;
    tl::store(y + offs, tl::load(x + offs, m), m);
  });
  auto x = upload<T>(h);
  auto y = dev().alloc<T>(n);
  REQUIRE(run([&] { k[{tile::cdiv(n, 16)}](x, y, static_cast<int>(n), "BLOCK"_c = 16); }));
  auto got = download(y);
  REQUIRE(got.size() == n);
  // elements 0..3 of a float type are NaNs with payloads, -0 and a signaling NaN: checked apart
  const std::size_t first = is_fp<T> ? 4 : 0;
  std::size_t bad = 0;
  for (std::size_t i = first; i < n; ++i) bad += std::memcmp(&got[i], &h[i], sizeof(host_t<T>)) != 0;
  CHECK_MESSAGE(bad == 0, tname<T>() << ": " << bad << " elements changed bits");
  for (std::size_t i = 0; i < first; ++i)
    CHECK_MESSAGE(std::memcmp(&got[i], &h[i], sizeof(host_t<T>)) == 0,
                  tname<T>() << " [" << i << "]: a copy changed the bits of " << show(h[i]) << " to " << show(got[i]));
}

// ---- atomics ----------------------------------------------------------------------------------------
namespace {

/// Every lane of every program adds `inc` to one counter; the old values are stored.
template <class T>
void check_atomic_add_counter(host_t<T> inc, int grid, int block) {
  auto k = tile::kernel("counter", [](tl::ptr<T> counter, tl::ptr<T> old, tl::scalar<T> v, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto o = tl::atomic_add(counter + tl::zeros<std::int32_t>({BLOCK}), v);
    tl::store(old + offs, o);
  });
  const std::size_t total = static_cast<std::size_t>(grid) * static_cast<std::size_t>(block);
  auto counter = filled<T>(1, host_t<T>{});
  auto old = dev().alloc<T>(total);
  INFO(tname<T>() << ": " << total << " atomic adds");
  if (!run([&] { k[{grid}](counter, old, inc, "BLOCK"_c = block); })) return;
  double want = to_double(inc) * static_cast<double>(total);
  CHECK(to_double(download(counter)[0]) == want);
  auto o = download(old);
  std::vector<double> seen;
  for (auto v : o) seen.push_back(to_double(v));
  std::vector<double> expect;
  for (std::size_t i = 0; i < total; ++i) expect.push_back(to_double(inc) * static_cast<double>(i));
  std::sort(seen.begin(), seen.end());
  std::sort(expect.begin(), expect.end());
  std::size_t bad = seen.size() == expect.size() ? 0 : total;
  for (std::size_t i = 0; i < seen.size() && i < expect.size(); ++i) bad += seen[i] != expect[i];
  CHECK_MESSAGE(bad == 0, "the old values are not 0, inc, 2 inc, ... (" << bad << " off)");
}

}  // namespace

TEST_CASE("memory: atomic_add from many programs to one counter") {
  check_atomic_add_counter<std::int32_t>(1, 64, 32);
  check_atomic_add_counter<std::uint32_t>(3, 16, 16);
  check_atomic_add_counter<std::int64_t>(std::int64_t{1} << 33, 16, 16);
  check_atomic_add_counter<std::uint64_t>(5, 8, 32);
  check_atomic_add_counter<float>(0.5f, 64, 32);   // 2048 * 0.5: every partial sum is exact
  check_atomic_add_counter<double>(0.25, 16, 16);
  check_atomic_add_counter<half>(half(0.5f), 8, 32);  // partial sums up to 128 are exact in f16
  SUBCASE("negative increments") { check_atomic_add_counter<std::int32_t>(-2, 8, 16); }
}

TEST_CASE("memory: atomic_add to distinct addresses, masked, returning old values") {
  auto k = tile::kernel("masked_add", [](tl::ptr<std::int32_t> p, tl::ptr<std::int32_t> v, tl::ptr<std::int32_t> old,
                                         tl::i32 n) {
    auto offs = tl::arange(0, 64);
    auto m = (offs < n) & (offs % 3 == 0);
    auto o = tl::atomic_add(p + offs, tl::load(v + offs, offs < n), m);
    tl::store(old + offs, o);  // masked-off lanes return 0 (interpreter.cpp)
  });
  const int n = 50;
  auto init = gen<std::int32_t>(n, 11), vals = gen<std::int32_t>(n, 12);
  auto p = upload<std::int32_t>(init);
  auto v = upload<std::int32_t>(vals);
  auto old = filled<std::int32_t>(64, 12345);
  REQUIRE(run([&] { k[{1}](p, v, old, n); }));
  std::vector<std::int32_t> wp(init), wo(64, 0);
  for (int i = 0; i < n; ++i)
    if (i % 3 == 0) {
      wp[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(static_cast<std::uint32_t>(init[static_cast<std::size_t>(i)]) +
                                                                  static_cast<std::uint32_t>(vals[static_cast<std::size_t>(i)]));
      wo[static_cast<std::size_t>(i)] = init[static_cast<std::size_t>(i)];
    }
  check_equal(p.to_host(), wp, "memory after a masked atomic_add (wraps)");
  check_equal(old.to_host(), wo, "old values of the active lanes");
}

namespace {

/// Every lane contributes vals[i] to slot i % slots with atomic_max and atomic_min.
template <class T>
void check_atomic_minmax(const hvec<T>& vals, int slots, host_t<T> init_max, host_t<T> init_min) {
  const int n = static_cast<int>(vals.size());
  auto k = tile::kernel("minmax", [](tl::ptr<T> v, tl::ptr<T> mx, tl::ptr<T> mn, tl::ptr<T> old_mx, tl::i32 nn,
                                     tl::i32 nslots, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < nn;
    auto x = tl::load(v + offs, m);
    auto o = tl::atomic_max(mx + offs % nslots, x, m);
    tl::atomic_min(mn + offs % nslots, x, m);
    tl::store(old_mx + offs, o, m);
  });
  auto bv = upload<T>(vals);
  auto mx = filled<T>(static_cast<std::size_t>(slots), init_max);
  auto mn = filled<T>(static_cast<std::size_t>(slots), init_min);
  auto old = dev().alloc<T>(vals.size());
  INFO(tname<T>() << ", " << slots << " slots");
  if (!run([&] { k[{tile::cdiv(n, 16)}](bv, mx, mn, old, n, slots, "BLOCK"_c = 16); })) return;
  std::vector<T> wmx(static_cast<std::size_t>(slots), init_max), wmn(static_cast<std::size_t>(slots), init_min);
  auto less = [](T x, T y) {
    if constexpr (is_fp<T>)
      return to_double(x) < to_double(y);
    else
      return x < y;
  };
  for (int i = 0; i < n; ++i) {
    T v = vals[static_cast<std::size_t>(i)];
    auto& a = wmx[static_cast<std::size_t>(i % slots)];
    auto& b = wmn[static_cast<std::size_t>(i % slots)];
    if (less(a, v)) a = v;
    if (less(v, b)) b = v;
  }
  check_equal(download(mx), wmx, "atomic_max " + tname<T>());
  check_equal(download(mn), wmn, "atomic_min " + tname<T>());
  // each old value is one the slot held: never above the final maximum, at least the initial one
  auto o = download(old);
  std::size_t bad = 0;
  for (int i = 0; i < n && o.size() == vals.size(); ++i) {
    double ov = to_double(o[static_cast<std::size_t>(i)]);
    bad += ov > to_double(wmx[static_cast<std::size_t>(i % slots)]) || ov < to_double(init_max);
  }
  CHECK_MESSAGE(bad == 0, bad << " old values of atomic_max out of range");
}

}  // namespace

TEST_CASE("memory: atomic_max / atomic_min") {
  SUBCASE("i32 with negatives") {
    check_atomic_minmax<std::int32_t>(gen<std::int32_t>(200, 13), 1, std::numeric_limits<std::int32_t>::min(),
                                      std::numeric_limits<std::int32_t>::max());
    check_atomic_minmax<std::int32_t>(hvec<std::int32_t>{-5, -3, -9, -4, -1000, -2}, 2, -100, 100);
  }
  SUBCASE("i64") { check_atomic_minmax<std::int64_t>(gen<std::int64_t>(100, 14), 3, 0, 0); }
  SUBCASE("u32: unsigned order (0xffffffff is the largest)") {
    check_atomic_minmax<std::uint32_t>(hvec<std::uint32_t>{5, 0xffffffffu, 0x80000000u, 7, 0x7fffffffu, 1}, 1, 0, 0xfffffff0u);
    check_atomic_minmax<std::uint32_t>(gen<std::uint32_t>(100, 15), 4, 0, 0xffffffffu);
  }
  SUBCASE("u64") { check_atomic_minmax<std::uint64_t>(gen<std::uint64_t>(100, 16), 2, 0, ~0ull); }
  SUBCASE("f32 with negatives: float order, not the bits' integer order") {
    check_atomic_minmax<float>(hvec<float>{-1.5f, -2.5f, -0.25f, -100.f, -3.f}, 1, -1000.f, 1000.f);
    check_atomic_minmax<float>(hvec<float>{-1.5f, 2.5f, -0.25f, 100.f, -300.f, 0.f}, 1, -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::infinity());
    check_atomic_minmax<float>(gen<float>(200, 17, false, false), 5, -1e30f, 1e30f);
  }
  SUBCASE("f64") { check_atomic_minmax<double>(gen<double>(100, 18, false, false), 3, -1e300, 1e300); }
}

TEST_CASE("memory: atomic_xchg") {
  auto k = tile::kernel("xchg", [](tl::ptr<std::int32_t> slot, tl::ptr<std::int32_t> old, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(old + offs, tl::atomic_xchg(slot + tl::zeros<std::int32_t>({BLOCK}), offs + 1));
  });
  const int grid = 16, block = 16, total = grid * block;
  auto slot = filled<std::int32_t>(1, 0);
  auto old = dev().alloc<std::int32_t>(total);
  REQUIRE(run([&] { k[{grid}](slot, old, "BLOCK"_c = block); }));
  // the old values and the final value are each of 0 (initial), 1 .. total exactly once
  auto o = old.to_host();
  o.push_back(slot.to_host()[0]);
  std::sort(o.begin(), o.end());
  std::vector<std::int32_t> want(static_cast<std::size_t>(total + 1));
  std::iota(want.begin(), want.end(), 0);
  check_equal(o, want, "old values + final value form a permutation");
  SUBCASE("f32 xchg on distinct addresses") {
    auto kf = tile::kernel("xchg_f", [](tl::ptr<float> p, tl::ptr<float> old_f) {
      auto offs = tl::arange(0, 8);
      tl::store(old_f + offs, tl::atomic_xchg(p + offs, offs * 0.5f));
    });
    auto p = upload<float>(hvec<float>{-1, -2, -3, -4, -5, -6, -7, -8});
    auto of = dev().alloc<float>(8);
    REQUIRE(run([&] { kf[{1}](p, of); }));
    check_equal(p.to_host(), std::vector<float>{0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f}, "new values");
    check_equal(of.to_host(), std::vector<float>{-1, -2, -3, -4, -5, -6, -7, -8}, "old values");
  }
}

namespace {
template <class T>
void check_atomic_bits() {
  constexpr int bits = static_cast<int>(sizeof(T) * 8);
  auto k = tile::kernel("bits", [](tl::ptr<T> orw, tl::ptr<T> andw, tl::ptr<T> xorw, tl::ptr<T> old_or, tl::ptr<T> x) {
    auto pid = tl::program_id(0);
    auto bit = tl::cast<T>(1) << tl::cast<T>(pid);
    tl::store(old_or + pid, tl::atomic_or(orw, bit));
    tl::atomic_and(andw, ~bit);
    tl::atomic_xor(xorw + tl::zeros<std::int32_t>({16}), tl::load(x + pid * 16 + tl::arange(0, 16)));
  });
  auto orw = filled<T>(1, 0);
  auto andw = filled<T>(1, static_cast<T>(~T{0}));
  auto xorw = filled<T>(1, static_cast<T>(0x5a));
  auto old = dev().alloc<T>(bits);
  auto hx = gen<T>(static_cast<std::size_t>(bits) * 16, 19);
  auto x = upload<T>(hx);
  INFO(tname<T>());
  if (!run([&] { k[{bits}](orw, andw, xorw, old, x); })) return;
  CHECK(orw.to_host()[0] == static_cast<T>(~T{0}));
  CHECK(andw.to_host()[0] == T{0});
  T want_x = static_cast<T>(0x5a);
  for (T v : hx) want_x = static_cast<T>(want_x ^ v);
  CHECK(xorw.to_host()[0] == want_x);
  auto o = old.to_host();
  std::size_t bad = 0;
  for (int p = 0; p < bits; ++p) bad += (o[static_cast<std::size_t>(p)] >> p) & 1u;  // nobody set my bit before me
  CHECK_MESSAGE(bad == 0, bad << " programs saw their own bit already set");
}
}  // namespace

TEST_CASE("memory: atomic_and / atomic_or / atomic_xor") {
  SUBCASE("every program sets, clears and toggles bits of one word") {
    check_atomic_bits<std::uint32_t>();
    check_atomic_bits<std::int32_t>();
    check_atomic_bits<std::uint64_t>();
    check_atomic_bits<std::int64_t>();
  }
  SUBCASE("masked, on distinct addresses, returning old values") {
    auto k = tile::kernel("bits_masked", [](tl::ptr<std::uint32_t> p, tl::ptr<std::uint32_t> old) {
      auto offs = tl::arange(0, 16);
      auto m = offs < 10;
      tl::store(old + offs, tl::atomic_or(p + offs, 0xf0u, m), m);
      tl::atomic_and(p + offs, 0x3cu, offs >= 5);
      tl::atomic_xor(p + offs, 1u, offs % 2 == 1);
    });
    hvec<std::uint32_t> init(16);
    for (std::uint32_t i = 0; i < 16; ++i) init[i] = i * 0x01010101u;
    auto p = upload<std::uint32_t>(init);
    auto old = filled<std::uint32_t>(16, 0xdeadu);
    REQUIRE(run([&] { k[{1}](p, old); }));
    std::vector<std::uint32_t> want(init), wold(16, 0xdeadu);
    for (std::uint32_t i = 0; i < 16; ++i) {
      if (i < 10) {
        wold[i] = want[i];
        want[i] |= 0xf0u;
      }
      if (i >= 5) want[i] &= 0x3cu;
      if (i % 2 == 1) want[i] ^= 1u;
    }
    check_equal(p.to_host(), want, "memory");
    check_equal(old.to_host(), wold, "old values");
  }
  SUBCASE("unsupported dtypes are trace errors") {
    CHECK(throws_tile_error([&] {
      auto k = tile::kernel("bad_and", [](tl::ptr<float> p) { tl::atomic_and(p, 1.f); });
      auto b = dev().alloc<float>(1);
      k[{1}](b);
    }));
    CHECK(throws_tile_error([&] {
      auto k = tile::kernel("bad_add8", [](tl::ptr<std::int8_t> p) { tl::atomic_add(p, 1); });
      auto b = dev().alloc<std::int8_t>(1);
      k[{1}](b);
    }));
  }
}

TEST_CASE("memory: atomic_cas") {
  SUBCASE("the first program to set the flag wins") {
    auto k = tile::kernel("flag", [](tl::ptr<std::int32_t> flag, tl::ptr<std::int32_t> seen) {
      auto pid = tl::program_id(0);
      tl::store(seen + pid, tl::atomic_cas(flag, 0, pid + 1));
    });
    const int grid = 50;
    auto flag = filled<std::int32_t>(1, 0);
    auto seen = filled<std::int32_t>(grid, -1);
    REQUIRE(run([&] { k[{grid}](flag, seen); }));
    auto s = seen.to_host();
    std::int32_t f = flag.to_host()[0];
    int winners = 0, winner = -1;
    for (int p = 0; p < grid; ++p)
      if (s[static_cast<std::size_t>(p)] == 0) {
        ++winners;
        winner = p;
      }
    CHECK(winners == 1);
    CHECK(f == winner + 1);
    std::size_t bad = 0;
    for (int p = 0; p < grid; ++p) bad += p != winner && s[static_cast<std::size_t>(p)] != f;
    CHECK_MESSAGE(bad == 0, "losers must see the winner's value");
  }
  SUBCASE("a counter incremented by CAS retry loops") {
    auto k = tile::kernel("cas_counter", [](tl::ptr<std::int32_t> c, tl::ptr<std::int32_t> got) {
      tl::tensor cur = tl::constant<std::int32_t>(0);  // a guess: a failed CAS returns the real value
      tl::tensor done = tl::constant<bool>(false);
      tl::while_([&] { return !done; },
                 [&] {
                   auto old = tl::atomic_cas(c, cur, cur + 1);
                   done = old == cur;
                   cur = old;
                 });
      tl::store(got + tl::program_id(0), cur);
    });
    const int grid = 64;
    auto c = filled<std::int32_t>(1, 0);
    auto got = filled<std::int32_t>(grid, -1);
    REQUIRE(run([&] { k[{grid}](c, got); }));
    CHECK(c.to_host()[0] == grid);
    auto g = got.to_host();
    std::sort(g.begin(), g.end());
    std::vector<std::int32_t> want(grid);
    std::iota(want.begin(), want.end(), 0);
    check_equal(g, want, "each program incremented from a distinct value");
  }
  SUBCASE("tiles of pointers: swap where equal (i64, f32)") {
    auto k = tile::kernel("cas_tile", [](tl::ptr<std::int64_t> p, tl::ptr<std::int64_t> cmp, tl::ptr<std::int64_t> old,
                                         tl::ptr<float> pf, tl::ptr<float> oldf) {
      auto offs = tl::arange(0, 16);
      tl::store(old + offs, tl::atomic_cas(p + offs, tl::load(cmp + offs), tl::cast<std::int64_t>(offs) + 1000));
      tl::store(oldf + offs, tl::atomic_cas(pf + offs, 2.5, offs * 1.f));
    });
    hvec<std::int64_t> init(16), cmp(16);
    hvec<float> initf(16);
    for (std::size_t i = 0; i < 16; ++i) {
      init[i] = static_cast<std::int64_t>(i) * 3 - 20;
      cmp[i] = i % 2 ? init[i] : init[i] + 1;
      initf[i] = i % 3 ? 2.5f : -2.5f;
    }
    auto p = upload<std::int64_t>(init), bc = upload<std::int64_t>(cmp);
    auto old = dev().alloc<std::int64_t>(16);
    auto pf = upload<float>(initf);
    auto oldf = dev().alloc<float>(16);
    REQUIRE(run([&] { k[{1}](p, bc, old, pf, oldf); }));
    std::vector<std::int64_t> want(init);
    std::vector<float> wantf(initf);
    for (std::size_t i = 0; i < 16; ++i) {
      if (i % 2) want[i] = 1000 + static_cast<std::int64_t>(i);
      if (i % 3) wantf[i] = static_cast<float>(i);
    }
    check_equal(p.to_host(), want, "i64 memory after cas");
    check_equal(old.to_host(), std::vector<std::int64_t>(init), "i64 old values");
    check_equal(pf.to_host(), wantf, "f32 memory after cas");
    check_equal(oldf.to_host(), std::vector<float>(initf), "f32 old values");
  }
}

TEST_CASE("memory: scalar arguments of every kind reach the kernel with their dtype") {
  auto k = tile::kernel("scalar_args", [](tl::ptr<std::uint64_t> pu, tl::ptr<bfloat16> pb, tl::ptr<std::int8_t> pc,
                                          tl::ptr<half> ph, tl::ptr<bool> pf, tl::ptr<double> pd, tl::u64 u, tl::bf16 b,
                                          tl::i8 c, tl::f16 h, tl::i1 flag, tl::f64 d) {
    tl::store(pu, u);
    tl::store(pu + 1, u + 1);  // wraps in u64
    tl::store(pb, b);
    tl::store(pc, c);
    tl::store(pc + 1, c * 2);  // wraps in i8
    tl::store(ph, h);
    tl::store(pf, flag);
    tl::store(pf + 1, !flag);
    tl::store(pd, d);
  });
  auto pu = dev().alloc<std::uint64_t>(2);
  auto pb = dev().alloc<bfloat16>(1);
  auto pc = dev().alloc<std::int8_t>(2);
  auto ph = dev().alloc<half>(1);
  auto pf = dev().alloc<bool>(2);
  auto pd = dev().alloc<double>(1);
  // a double given for an f16/bf16 parameter is rounded to it; 0.1 for f64 stays exact
  REQUIRE(run([&] { k[{1}](pu, pb, pc, ph, pf, pd, ~0ull, 1.00390625, std::int8_t{-100}, 0.1, true, 0.1); }));
  check_equal(pu.to_host(), std::vector<std::uint64_t>{~0ull, 0}, "u64 argument 2^64 - 1");
  check_equal(download(pb), hvec<bfloat16>{bfloat16(1.00390625f)}, "bf16 argument (1 + 2^-8 rounds to 1)");
  check_equal(pc.to_host(), std::vector<std::int8_t>{-100, 56}, "i8 argument");
  check_equal(download(ph), hvec<half>{half(0.1f)}, "f16 argument 0.1");
  check_equal(download(pf), std::vector<std::uint8_t>{1, 0}, "i1 argument");
  check_equal(pd.to_host(), std::vector<double>{0.1}, "f64 argument");
}

TEST_CASE("memory: pointer comparisons and pointer differences in masks") {
  auto k = tile::kernel("ptr_cmp", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n) {
    auto p = x + tl::arange(0, 16);
    auto end = x + n;
    auto m = p < end;  // compares addresses
    tl::store(y + tl::arange(0, 16), tl::load(p, m, -1.f) * 2.f, (p >= x) & (p != x + 3));
  });
  auto hx = gen<float>(10, 20, false, false);
  auto x = upload<float>(hx);
  auto y = filled<float>(16, 5.f);
  REQUIRE(run([&] { k[{1}](x, y, 10); }));
  std::vector<float> want(16);
  for (std::size_t i = 0; i < 16; ++i) want[i] = i == 3 ? 5.f : (i < 10 ? hx[i] * 2.f : -2.f);
  check_equal(y.to_host(), want, "masks from pointer comparisons");
}

TEST_CASE("memory: float atomics: NaN operands, f16 rounding, CAS compares bits") {
  SUBCASE("atomic_max/min on floats are maxNum/minNum (a NaN operand is ignored)") {
    auto k = tile::kernel("nan_minmax", [](tl::ptr<float> mx, tl::ptr<float> mn, tl::ptr<float> v) {
      auto offs = tl::arange(0, 4);
      auto x = tl::load(v + offs);
      tl::atomic_max(mx + offs, x);
      tl::atomic_min(mn + offs, x);
    });
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto mx = upload<float>(hvec<float>{1.f, nan, nan, -5.f});
    auto mn = upload<float>(hvec<float>{1.f, nan, nan, -5.f});
    auto v = upload<float>(hvec<float>{nan, 3.f, nan, -7.f});
    REQUIRE(run([&] { k[{1}](mx, mn, v); }));
    check_equal(mx.to_host(), std::vector<float>{1.f, 3.f, nan, -5.f}, "atomic_max");
    check_equal(mn.to_host(), std::vector<float>{1.f, 3.f, nan, -7.f}, "atomic_min");
  }
  SUBCASE("f16 atomic_add rounds each sum to f16") {
    auto k = tile::kernel("f16_add", [](tl::ptr<half> p, tl::ptr<half> old) {
      tl::store(old + tl::arange(0, 4), tl::atomic_add(p + tl::zeros<std::int32_t>({4}), 1.0));
    });
    auto p = upload<half>(hvec<half>{half(2048.f)});
    auto old = dev().alloc<half>(4);
    REQUIRE(run([&] { k[{1}](p, old); }));
    check_equal(download(p), hvec<half>{half(2048.f)}, "2048 + 1 + 1 + 1 + 1 in f16");  // 2049 rounds to 2048
    check_equal(download(old), hvec<half>(4, half(2048.f)), "old values");
  }
  SUBCASE("atomic_cas on floats compares bits (-0 is not +0, a NaN matches itself)") {
    auto k = tile::kernel("cas_bits", [](tl::ptr<float> p, tl::ptr<float> cmp, tl::ptr<float> old) {
      auto offs = tl::arange(0, 4);
      tl::store(old + offs, tl::atomic_cas(p + offs, tl::load(cmp + offs), tl::full<float>({4}, 9.f)));
    });
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto p = upload<float>(hvec<float>{-0.f, 0.f, nan, 1.f});
    auto cmp = upload<float>(hvec<float>{0.f, 0.f, nan, 1.f});
    auto old = dev().alloc<float>(4);
    REQUIRE(run([&] { k[{1}](p, cmp, old); }));
    auto got = p.to_host();
    REQUIRE(got.size() == 4);
    CHECK_MESSAGE(std::bit_cast<std::uint32_t>(got[0]) == 0x80000000u, "-0 was swapped although its bits differ from +0");
    CHECK(got[1] == 9.f);
    CHECK_MESSAGE(got[2] == 9.f, "a NaN with the same bits as cmp is swapped");
    CHECK(got[3] == 9.f);
  }
}

TEST_CASE("memory: a program's loads and stores of one buffer in program order, whole tiles at a time") {
  // found by the random-program tester on the GPU: a tile loaded through one arrangement of
  // pointers and then overwritten through another (another thread's elements) read some values
  // already overwritten; and a load after a store whose value was rearranged for it read the
  // old values. The interpreter loads and stores whole tiles: every backend must agree.
  auto k = tile::kernel("order", [](tl::ptr<std::int32_t> x, tl::ptr<std::int32_t> before, tl::ptr<std::int32_t> after) {
    using tl::_;
    using tl::newaxis;
    auto r = tl::arange(0, 32), c = tl::arange(0, 32);
    auto row_major = r(_, newaxis) * 32 + c(newaxis, _);
    auto col_major = r(_, newaxis) + c(newaxis, _) * 32;
    auto old = tl::load(x + col_major);                         // read column by column
    tl::store(x + row_major, tl::full<std::int32_t>({32, 32}, 7));  // overwritten row by row
    tl::store(before + row_major, old);
    auto v = tl::load(x + col_major) + row_major;              // a value rearranged for a store,
    tl::store(x + row_major, v);                               // then read back at once
    tl::store(after + row_major, tl::load(x + row_major));
  });
  hvec<std::int32_t> hx(1024);
  for (int i = 0; i < 1024; ++i) hx[static_cast<std::size_t>(i)] = 1000 + i;
  auto x = upload<std::int32_t>(hx);
  auto before = dev().alloc<std::int32_t>(1024), after = dev().alloc<std::int32_t>(1024);
  for (int warps : {1, 4, 8}) {
    CAPTURE(warps);
    x.copy_from(hx);
    REQUIRE(run([&] { k[{1}](x, before, after, "num_warps"_c = warps); }));
    std::vector<std::int32_t> want_before(1024), want_after(1024);
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 32; ++j) {
        want_before[static_cast<std::size_t>(i * 32 + j)] = 1000 + j * 32 + i;  // element (i, j) of the column-major read
        want_after[static_cast<std::size_t>(i * 32 + j)] = 7 + i * 32 + j;
      }
    check_equal(before.to_host(), want_before, "the values loaded before the store");
    check_equal(after.to_host(), want_after, "the values loaded after the store");
  }
}

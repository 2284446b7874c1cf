// test/runtime/test_runtime.cpp — the host side: devices, buffers, specialization and the trace
// cache, grids, launches from many threads, TILE_DUMP_IR.
#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <tile/tile.hpp>
#include <vector>

using namespace tile::literals;

namespace {
tile::device interp() { return tile::device::get("interpreter"); }

auto fill = tile::kernel("fill", [](tl::ptr<float> out, tl::i32 n, tl::f32 value, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::full<float>({BLOCK}, value), offs < n);
});
}  // namespace

TEST_CASE("the interpreter is a backend and TILE_BACKEND picks it") {
  bool found = false;
  for (auto& b : tile::device::backends())
    if (b.name == "interpreter") found = b.available;
  CHECK(found);
  CHECK(interp().name() == "interpreter");
  CHECK(tile::device::best().backend() == "interpreter");  // the test environment sets TILE_BACKEND
  CHECK(interp() == tile::device::get("interpreter"));     // one device object per backend
}

TEST_CASE("buffers: upload, download, views, fill, shared handles") {
  auto dev = interp();
  std::vector<float> h{1, 2, 3, 4, 5};
  auto b = dev.upload(h);
  CHECK(b.size() == 5);
  CHECK(b.bytes() == 20);
  CHECK(b.to_host() == h);
  auto alias = b;  // copies share memory
  alias.copy_from(std::vector<float>{9, 8, 7, 6, 5});
  CHECK(b.to_host()[0] == 9);
  b.fill_zero();
  CHECK(alias.to_host() == std::vector<float>(5, 0.0f));
  CHECK(b.address() % 64 == 0);
  auto v = b.view(2, 3);
  CHECK(v.address() == b.address() + 8);
  auto empty = dev.alloc<float>(0);
  CHECK(empty.to_host().empty());
}

TEST_CASE("fill kernel with scalar arguments of each kind") {
  auto dev = interp();
  auto out = dev.alloc<float>(100);
  fill[{tile::cdiv(100, 32)}](out, 100, 2.5f, "BLOCK"_c = 32);
  CHECK(out.to_host() == std::vector<float>(100, 2.5f));
  fill[{4}](out, 100u, 7, "BLOCK"_c = 32);  // unsigned and int host values convert
  CHECK(out.to_host()[99] == 7.0f);
}

TEST_CASE("specialization: one trace per distinct specialization") {
  auto k = tile::kernel("spec", [](tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::arange(0, BLOCK);
    tl::store(out + offs, tl::cast<float>(offs * n), offs < BLOCK);
  });
  auto dev = interp();
  auto out = dev.alloc<float>(256);
  CHECK(k.core().traces() == 0);
  k[{1}](out, 3, "BLOCK"_c = 64);
  CHECK(k.core().traces() == 1);
  k[{1}](out, 5, "BLOCK"_c = 64);  // 3 and 5: same class (not 1, not divisible by 16)
  CHECK(k.core().traces() == 1);
  CHECK(out.to_host()[10] == 50.0f);
  k[{1}](out, 5, "BLOCK"_c = 128);  // new meta value
  CHECK(k.core().traces() == 2);
  k[{1}](out, 1, "BLOCK"_c = 128);  // an integer equal to 1 specializes
  CHECK(k.core().traces() == 3);
  CHECK(out.to_host()[100] == 100.0f);
  k[{1}](out, 32, "BLOCK"_c = 128);  // divisible by 16
  CHECK(k.core().traces() == 4);
  k[{1}](out, 48, "BLOCK"_c = 128);
  CHECK(k.core().traces() == 4);
  k[{1}](out.view(1, 200), 48, "BLOCK"_c = 128);  // pointer no longer 16-byte aligned
  CHECK(k.core().traces() == 5);
  k[{1}](out, 48, "BLOCK"_c = 128, "num_warps"_c = 8);  // launch options are part of the key
  CHECK(k.core().traces() == 6);
}

TEST_CASE("the IR shows the specialization") {
  auto k = tile::kernel("spec_ir", [](tl::ptr<float> out, tl::i32 n) { tl::store(out + tl::arange(0, 16), tl::cast<float>(n)); });
  auto dev = interp();
  auto out = dev.alloc<float>(64);
  std::string aligned = k.ir(out, 7);
  INFO(aligned);
  CHECK(aligned.find("kernel @spec_ir") != std::string::npos);
  CHECK(aligned.find("{div=16}") != std::string::npos);
  std::string one = k.ir(out.view(1, 32), 1);
  INFO(one);
  CHECK(one.find("{div=16}") == std::string::npos);
  CHECK(one.find("constant 1") != std::string::npos);
}

TEST_CASE("grids of one, two and three dimensions") {
  auto k = tile::kernel("ids", [](tl::ptr<std::int32_t> out) {
    auto x = tl::program_id(0), y = tl::program_id(1), z = tl::program_id(2);
    auto nx = tl::num_programs(0), ny = tl::num_programs(1), nz = tl::num_programs(2);
    auto linear = (z * ny + y) * nx + x;
    auto slot = out + linear * 4;
    tl::store(slot, x);
    tl::store(slot + 1, y);
    tl::store(slot + 2, z);
    tl::store(slot + 3, nx * ny * nz);
  });
  auto dev = interp();
  for (auto g : {tile::grid3{5, 1, 1}, tile::grid3{3, 4, 1}, tile::grid3{2, 3, 4}}) {
    std::int64_t n = g.x * g.y * g.z;
    auto out = dev.alloc<std::int32_t>(static_cast<std::size_t>(n * 4));
    k[g](out);
    auto h = out.to_host();
    for (std::int64_t z = 0; z < g.z; ++z)
      for (std::int64_t y = 0; y < g.y; ++y)
        for (std::int64_t x = 0; x < g.x; ++x) {
          auto i = static_cast<std::size_t>(((z * g.y + y) * g.x + x) * 4);
          CHECK(h[i] == x);
          CHECK(h[i + 1] == y);
          CHECK(h[i + 2] == z);
          CHECK(h[i + 3] == n);
        }
  }
  auto out = dev.alloc<std::int32_t>(8);
  k[{2, 1}](out);  // braces with two extents
  CHECK(out.to_host()[3] == 2);
}

TEST_CASE("a grid computed from the meta-parameters; an empty grid runs nothing") {
  auto dev = interp();
  auto out = dev.alloc<float>(1000);
  int calls = 0;
  auto grid = [&](const tile::meta& m) {
    ++calls;
    CHECK(m.has("BLOCK"));
    CHECK_FALSE(m.has("OTHER"));
    return tile::grid3{tile::cdiv(1000, m["BLOCK"])};
  };
  fill[grid](out, 1000, 1.0f, "BLOCK"_c = 128);
  CHECK(calls == 1);
  CHECK(out.to_host()[999] == 1.0f);
  fill[{0}](out, 1000, 5.0f, "BLOCK"_c = 128);
  CHECK(out.to_host()[0] == 1.0f);
}

TEST_CASE("16 threads launching a kernel never launched before trace it once") {
  auto k = tile::kernel("racy", [](tl::ptr<float> out, tl::f32 v, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, tl::full<float>({BLOCK}, v) + tl::cast<float>(offs));
  });
  auto dev = interp();
  std::vector<tile::buffer<float>> outs;
  for (int i = 0; i < 16; ++i) outs.push_back(dev.alloc<float>(256));
  std::atomic<int> go{0};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      try {
        k[{4}](outs[static_cast<std::size_t>(i)], static_cast<float>(i), "BLOCK"_c = 64);
      } catch (...) {
        ++failures;
      }
    });
  go = 1;
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(k.core().traces() == 1);
  for (int i = 0; i < 16; ++i) {
    auto h = outs[static_cast<std::size_t>(i)].to_host();
    for (int j = 0; j < 256; j += 17) CHECK(h[static_cast<std::size_t>(j)] == static_cast<float>(i + j));
  }
}

TEST_CASE("8 threads launching 8 specializations") {
  auto k = tile::kernel("specs", [](tl::ptr<std::int32_t> out, tl::constexpr_<"V"> V) {
    tl::store(out + tl::arange(0, 16), tl::full<std::int32_t>({16}, V));
  });
  auto dev = interp();
  std::vector<tile::buffer<std::int32_t>> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(dev.alloc<std::int32_t>(16));
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 3; ++rep) k[{1}](outs[static_cast<std::size_t>(i)], "V"_c = i * 10);
    });
  for (auto& t : threads) t.join();
  CHECK(k.core().traces() == 8);
  for (int i = 0; i < 8; ++i) CHECK(outs[static_cast<std::size_t>(i)].to_host()[15] == i * 10);
}

TEST_CASE("a dynamic launch runs like a typed one") {
  auto dev = interp();
  auto out = dev.alloc<float>(64);
  fill.launch({2}, {out, 64, 3.0f}, {{"BLOCK", 32}});
  CHECK(out.to_host()[63] == 3.0f);
}

TEST_CASE("TILE_DUMP_IR=1 prints the IR after tracing and after each pass") {
  const char* child = std::getenv("DUMP_IR_CHILD");
  REQUIRE(child != nullptr);
  std::string cmd = std::string("TILE_DUMP_IR=1 TILE_BACKEND=interpreter ") + child + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p)) out += buf.data();
  int rc = pclose(p);
  INFO(out);
  CHECK(rc == 0);
  for (const char* pass : {"trace", "constant_fold", "cse", "dce"})
    CHECK(out.find(std::string("// ----- IR after ") + pass + " (kernel dump_me) ----- //") != std::string::npos);
  CHECK(out.find("kernel @dump_me") != std::string::npos);
  CHECK(out.find("child OK") != std::string::npos);
  // without the switch, nothing is printed
  FILE* q = popen((std::string("TILE_BACKEND=interpreter ") + child + " 2>&1").c_str(), "r");
  REQUIRE(q != nullptr);
  std::string quiet;
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), q)) quiet += buf.data();
  pclose(q);
  CHECK(quiet == "child OK\n");
}

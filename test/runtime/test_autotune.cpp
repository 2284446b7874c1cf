// test/runtime/test_autotune.cpp — the autotuner (tile::autotune): it picks the truly fastest
// config (planted costs, and real work), re-tunes only for a new key value, remembers its choice
// on disk (a second autotuner — and a second process — tunes nothing), prunes, skips configs that
// fail, and leaves buffers the kernel accumulates into as a single launch would (reset_to_zero,
// restore_value). Runs on the test environment's backend (host clock) and on the GPU machine
// with TILE_BACKEND=cuda (CUDA events).
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <tile/tile.hpp>

#include "../requires.hpp"

using namespace tile::literals;
namespace fs = std::filesystem;

namespace {

/// TILE_CACHE_DIR pointed at a fresh directory for the test's lifetime.
struct temp_cache {
  std::string dir;
  std::string old;
  bool had_old = false;
  explicit temp_cache(const std::string& tag) {
    dir = (fs::temp_directory_path() / ("tile-autotune-" + std::to_string(getpid()) + "-" + tag)).string();
    fs::remove_all(dir);
    if (const char* o = std::getenv("TILE_CACHE_DIR")) old = o, had_old = true;
    setenv("TILE_CACHE_DIR", dir.c_str(), 1);
  }
  ~temp_cache() {
    if (had_old)
      setenv("TILE_CACHE_DIR", old.c_str(), 1);
    else
      unsetenv("TILE_CACHE_DIR");
    fs::remove_all(dir);
  }
};

auto scale = tile::kernel("at_scale", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(y + offs, tl::load(x + offs, m) * 2.0f, m);
});
auto grid_of = [](std::int64_t n) {
  return [n](const tile::meta& m) { return tile::grid3{tile::cdiv(n, m["BLOCK"])}; };
};
void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

// Planted host-side costs are invisible to CUDA events: on the cuda backend, see the real-work case.
TEST_CASE("autotune: picks the config whose planted cost is lowest, whatever its position" *
          tiletest::needs_host_backend) {
  temp_cache cache("planted");
  auto dev = tile::device::best();
  const std::int64_t n = 1000;
  auto x = dev.upload(std::vector<float>(n, 1.5f));
  auto y = dev.alloc<float>(n);
  for (int fastest : {0, 1, 2}) {
    CAPTURE(fastest);
    std::vector<tile::config> cfgs;
    for (int i = 0; i < 3; ++i) {
      // the same kernel work (BLOCK) for every config, so only the planted cost tells them apart:
      // ms in the pre-hook (timed, as Triton's is), far above a launch's noise even under ASan
      const int cost = i == fastest ? 0 : 10 + 5 * i;
      cfgs.emplace_back(std::vector<tile::named>{{"BLOCK", 128}}, 1 << i, 3, [cost] {
        if (cost) sleep_ms(cost);
      });
    }
    auto tuned = tile::autotune(scale, {.configs = cfgs, .key = {"n"}, .arg_names = {"x", "y", "n"},
                                        .warmup_ms = 1, .rep_ms = 10, .disk_cache = false});
    tuned[grid_of(n)](x, y, n);
    REQUIRE(tuned.last_config());
    CHECK(tuned.last_config()->str() == cfgs[static_cast<std::size_t>(fastest)].str());
    auto t = tuned.last_timings();
    REQUIRE(t.size() == 3);
    for (int i = 0; i < 3; ++i)
      if (i != fastest) CHECK(t[static_cast<std::size_t>(i)] > t[static_cast<std::size_t>(fastest)] + 5.0);
    if (dev.computes()) CHECK(y.to_host()[999] == 3.0f);
  }
}

TEST_CASE("autotune: picks the config that does the least work, tunes once per key value") {
  temp_cache cache("work");
  // REPS rounds of arithmetic per element: the config with REPS = 1 is truly the fastest
  auto busy = tile::kernel("busy", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK,
                                      tl::constexpr_<"REPS"> REPS) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    auto v = tl::load(x + offs, m);
    auto acc = v;
    tl::for_range(0, REPS, [&](tl::tensor) { acc = acc * 0.5f + 0.5f; });
    tl::store(y + offs, acc, m);
  });
  auto dev = tile::device::best();
  const bool gpu = dev.backend() == "cuda";
  const std::int64_t n = gpu ? (1 << 22) : 4096;
  const int heavy = gpu ? 2000 : 4000;  // far apart even on a loaded machine (the GPU run's 16 tests at once)
  auto x = dev.upload(std::vector<float>(static_cast<std::size_t>(n), 1.0f));
  auto y = dev.alloc<float>(static_cast<std::size_t>(n));
  std::vector<tile::config> cfgs = {tile::config({{"BLOCK", 256}, {"REPS", heavy}}),
                                    tile::config({{"BLOCK", 256}, {"REPS", 1}}),
                                    tile::config({{"BLOCK", 256}, {"REPS", heavy / 4}})};
  auto tuned = tile::autotune(busy, {.configs = cfgs, .key = {2}, .warmup_ms = 1, .rep_ms = 20});
  tuned[grid_of(n)](x, y, n);
  CHECK(tuned.last_config()->str() == "BLOCK: 256, REPS: 1, num_warps: 4, num_stages: 3");
  CHECK(tuned.stats().tunings == 1);
  CHECK(tuned.stats().configs_timed == 3);
  tuned[grid_of(n)](x, y, n);  // the same key: no tuning
  CHECK(tuned.stats().tunings == 1);
  tuned[grid_of(n / 2)](x, y, n / 2);  // a new key value: tuned again
  CHECK(tuned.stats().tunings == 2);
  if (dev.computes()) CHECK(y.to_host()[0] == 1.0f);  // 1 * 0.5 + 0.5

  // a second autotuner (as in a new process) finds the choice on disk and times nothing
  auto again = tile::autotune(busy, {.configs = cfgs, .key = {2}, .warmup_ms = 1, .rep_ms = 20});
  again[grid_of(n)](x, y, n);
  CHECK(again.stats().tunings == 0);
  CHECK(again.stats().disk_hits == 1);
  CHECK(again.stats().configs_timed == 0);
  CHECK(again.last_config()->str() == "BLOCK: 256, REPS: 1, num_warps: 4, num_stages: 3");
  // … but a changed config list is tuned afresh
  auto changed = tile::autotune(busy, {.configs = {cfgs[0], cfgs[1]}, .key = {2}, .warmup_ms = 1, .rep_ms = 20});
  changed[grid_of(n)](x, y, n);
  CHECK(changed.stats().tunings == 1);
}

TEST_CASE("autotune: a new process reuses the choice on disk") {
  const char* child = std::getenv("SERVICES_CHILD");
  REQUIRE_MESSAGE(child != nullptr, "SERVICES_CHILD must name the services_child executable");
  temp_cache cache("process");
  auto run = [&] {
    FILE* p = popen((std::string(child) + " autotune 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    CHECK(pclose(p) == 0);
    return out;
  };
  const std::string first = run(), second = run();
  INFO(first << second);
  CHECK(first.find("tunings=1 disk_hits=0") != std::string::npos);
  CHECK(second.find("tunings=0 disk_hits=1") != std::string::npos);
  // the same choice
  CHECK(first.substr(first.find("best=")) == second.substr(second.find("best=")));
}

TEST_CASE("autotune: reset_to_zero and restore_value leave the outputs of one launch") {
  temp_cache cache("restore");
  auto dev = tile::device::best();
  // accumulates into its output: acc += x (plain read-modify-write) and hits += 1 (atomics)
  auto accum = tile::kernel("accum", [](tl::ptr<float> x, tl::ptr<float> acc, tl::ptr<int> hits, tl::i32 n,
                                        tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(acc + offs, tl::load(acc + offs, m) + tl::load(x + offs, m), m);
    tl::atomic_add(hits + tl::zeros<int>({BLOCK}), tl::full<int>({BLOCK}, 1), m);
  });
  const std::int64_t n = 512;
  auto x = dev.upload(std::vector<float>(n, 1.0f));
  auto acc = dev.upload(std::vector<float>(n, 10.0f));
  auto hits = dev.upload(std::vector<int>{0});
  auto tuned = tile::autotune(accum, {.configs = {tile::config({{"BLOCK", 128}}), tile::config({{"BLOCK", 256}}, 8)},
                                      .key = {"n"},
                                      .arg_names = {"x", "acc", "hits", "n"},
                                      .reset_to_zero = {"hits"},
                                      .restore_value = {"acc"},
                                      .warmup_ms = 1,
                                      .rep_ms = 5,
                                      .disk_cache = false});
  tuned[grid_of(n)](x, acc, hits, n);
  CHECK(tuned.stats().configs_timed == 2);
  if (dev.computes()) {
    auto a = acc.to_host();
    CHECK(a[0] == 11.0f);  // restored after the trials, then one real launch
    CHECK(a[static_cast<std::size_t>(n - 1)] == 11.0f);
    CHECK(hits.to_host()[0] == n);  // zeroed after the trials, then one real launch
  }
}

TEST_CASE("autotune: pruning by a hook and by a performance model") {
  temp_cache cache("prune");
  auto dev = tile::device::best();
  const std::int64_t n = 1024;
  auto x = dev.upload(std::vector<float>(n, 1.0f));
  auto y = dev.alloc<float>(n);
  std::vector<tile::config> cfgs;
  for (int b : {32, 64, 128, 256, 512}) cfgs.emplace_back(std::vector<tile::named>{{"BLOCK", b}});
  int early_calls = 0;
  auto tuned = tile::autotune(
      scale, {.configs = cfgs,
              .key = {"n"},
              .arg_names = {"x", "y", "n"},
              .prune_configs_by = {.early_config_prune =
                                       [&](const std::vector<tile::config>& c, const tile::key_values& k) {
                                         ++early_calls;
                                         CHECK(k.str() == "n=1024");
                                         return std::vector<tile::config>(c.begin() + 1, c.end());  // drop BLOCK 32
                                       },
                                   .perf_model = [](const tile::config& c,
                                                    const tile::key_values&) { return -double(c.metas[0].value.i); },
                                   .top_k = 2},
              .warmup_ms = 1,
              .rep_ms = 5,
              .disk_cache = false});
  tuned[grid_of(n)](x, y, n);
  CHECK(early_calls == 1);
  CHECK(tuned.stats().configs_timed == 2);  // BLOCK 512 and 256: the model's two best
  auto t = tuned.last_timings();
  CHECK(std::isinf(t[0]));
  CHECK(std::isinf(t[1]));
  CHECK(std::isinf(t[2]));
  CHECK(!std::isinf(t[3]));
  CHECK(!std::isinf(t[4]));
  const std::string chosen = tuned.last_config()->str();
  CHECK((chosen.starts_with("BLOCK: 256") || chosen.starts_with("BLOCK: 512")));
}

TEST_CASE("autotune: a config that fails is skipped; when all fail the error names the launch") {
  temp_cache cache("fail");
  auto dev = tile::device::best();
  const std::int64_t n = 256;
  auto x = dev.upload(std::vector<float>(n, 1.0f));
  auto y = dev.alloc<float>(n);
  // BLOCK 100 is no power of two: tracing fails (tl::arange)
  auto tuned = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 100}}), tile::config({{"BLOCK", 128}})},
                                      .key = {"n"},
                                      .arg_names = {"x", "y", "n"},
                                      .warmup_ms = 1,
                                      .rep_ms = 5,
                                      .verbose = true,
                                      .disk_cache = false});
  tuned[grid_of(n)](x, y, n);
  CHECK(tuned.last_config()->str() == "BLOCK: 128, num_warps: 4, num_stages: 3");
  CHECK(std::isinf(tuned.last_timings()[0]));

  auto broken = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 100}}), tile::config({{"BLOCK", 300}})},
                                       .key = {"n"},
                                       .arg_names = {"x", "y", "n"},
                                       .disk_cache = false});
  const unsigned line = __LINE__ + 2;
  try {
    broken[grid_of(n)](x, y, n);
    FAIL("expected every config to fail");
  } catch (const tile::error& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.find("every config failed") != std::string::npos);
    CHECK(m.find("test_autotune.cpp:" + std::to_string(line)) != std::string::npos);
    CHECK(m.find("at_scale") != std::string::npos);
  }
}

TEST_CASE("autotune: bad keys and conflicting meta-parameters are errors naming the launch") {
  auto dev = tile::device::best();
  auto x = dev.alloc<float>(64), y = dev.alloc<float>(64);
  auto no_names = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 64}}), tile::config({{"BLOCK", 32}})},
                                         .key = {"n"}, .disk_cache = false});
  try {
    no_names[{1}](x, y, 64);
    FAIL("expected an error");
  } catch (const tile::error& e) {
    CHECK(std::string(e.what()).find("no argument named 'n'") != std::string::npos);
    CHECK(std::string(e.what()).find("test_autotune.cpp") != std::string::npos);
  }
  // a name past the runtime arguments (arg_names copied with a meta-parameter's name)
  auto past = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 64}}), tile::config({{"BLOCK", 32}})},
                                     .key = {"BLOCK"}, .arg_names = {"x", "y", "n", "BLOCK"}, .disk_cache = false});
  CHECK_THROWS_WITH_AS(past[{1}](x, y, 64), doctest::Contains("the kernel takes 3 runtime arguments"), tile::error);
  auto twice = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 64}}), tile::config({{"BLOCK", 32}})},
                                      .key = {2}, .disk_cache = false});
  CHECK_THROWS_WITH_AS(twice[{1}](x, y, 64, "BLOCK"_c = 64), doctest::Contains("given at the launch and by config"),
                       tile::error);
  CHECK_THROWS_WITH_AS(tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 64}}, 3)}}),
                       doctest::Contains("num_warps must be a power of two"), tile::error);
}

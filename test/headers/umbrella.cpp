// test/headers: <tile/tile.hpp> alone brings every public facility. This translation unit
// includes nothing else from tile and uses each host-side service the README presents —
// kernels and devices (parameter structs too), tile::testing (do_bench, quantile, perf_report-style sweeps),
// tile::autotune and tile::prof — so a facility the umbrella header stops bringing fails the
// build of test_headers; main() runs it (on the interpreter) so each is also linked and works.
#include <tile/tile.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

using namespace tile::literals;

int umbrella_failures() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::printf("umbrella: FAILED %s\n", what);
      ++failures;
    }
  };

  // kernels, devices, buffers, tl::
  auto scale = tile::kernel("umbrella_scale", [](tl::ptr<float> x, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(x + offs, tl::load(x + offs, offs < n) * 2.0f, offs < n);
  });
  auto dev = tile::device::get("interpreter");
  auto x = dev.upload(std::vector<float>(16, 1.0f));
  scale[{1}](x, 16, "BLOCK"_c = 16);
  check(x.to_host() == std::vector<float>(16, 2.0f), "a launch from the umbrella header");

  // a parameter struct (Boost.Hana: the umbrella header brings tile/runtime/params.hpp)
  struct scale_args {
    BOOST_HANA_DEFINE_STRUCT(scale_args, (tile::buffer<float>, x), (int, n));
  };
  scale_args sa{x, 16};
  scale[{1}](sa, "BLOCK"_c = 16);
  check(x.to_host() == std::vector<float>(16, 4.0f), "a launch from a parameter struct");

  // tile::testing: do_bench, its statistics and timers, a sweep
  check(tile::testing::quantile({1, 2, 3, 4}, 0.5) == 2.5, "tile::testing::quantile");
  auto timer = tile::testing::make_timer(dev);
  tile::testing::bench_result r =
      tile::testing::do_bench([&] { scale[{1}](x, 16, "BLOCK"_c = 16); }, 0.1, 0.5, {0.5}, timer.get());
  check(r.reps >= 1 && r.quantiles.size() == 1 && r.median_ms >= 0, "tile::testing::do_bench");
  std::ostringstream table;
  tile::testing::benchmark b{.name = "umbrella", .x_name = "N", .x_vals = {1, 2}, .line_vals = {"a", "b"}};
  tile::testing::report rep = tile::testing::run(
      b, [](double n, const std::string& p) { return p == "a" ? n : 2 * n; },
      {.print_table = true, .write_csv = false, .write_plot = false, .out = &table});
  check(rep.at(1, "b") == 4 && table.str().find("umbrella") != std::string::npos, "tile::testing::run");

  // tile::autotune
  auto tuned = tile::autotune(scale, {.configs = {tile::config({{"BLOCK", 16}}), tile::config({{"BLOCK", 32}})},
                                      .key = {"n"},
                                      .arg_names = {"x", "n"},
                                      .warmup_ms = 0.1,
                                      .rep_ms = 0.5,
                                      .disk_cache = false});
  tuned[{1}](x, 16);
  check(tuned.last_config().has_value(), "tile::autotune");

  // tile::prof
  int s = tile::prof::start("umbrella", {.hatchet = false, .chrome_trace = false});
  {
    tile::prof::scope sc("umbrella");
    scale[{1}](x, 16, "BLOCK"_c = 16);
  }
  check(tile::prof::hatchet_json(s).find("umbrella_scale") != std::string::npos, "tile::prof records the launch");
  tile::prof::finalize(s);
  return failures;
}

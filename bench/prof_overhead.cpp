// bench/prof_overhead.cpp — what profiling costs the launching thread (the target: a
// session active at most 2x the host time of the same launches without one; Proton's own slides
// cite about 20x). An already compiled tiny kernel (grid 1, a 128-element tile) is launched
// 10,240 times per provider — 40 batches of 256, the providers interleaved batch by batch, the
// device synchronized before each batch (untimed) — and the host's steady clock times each
// batch; the value is the median over batches of batch time / 256, in µs per launch:
//   off             no session, no hook (the launch path's one relaxed atomic load)
//   hook            a launch hook installed (enter and exit callbacks), no session
//   session         a tile::prof session active, the launches inside a scope, kernels timed as
//                   the session does by default ("auto": CUPTI where it opens, else CUDA events;
//                   host clock on the host backends)
//   session events  the same with CUDA events forced (cuda backend only)
// and, after the launches, the time finalize() takes to read 10,240 kernel times and write the
// files (not part of the launches' cost). Runs on tile::device::best() (the cuda backend on the
// GPU machine).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "bench.hpp"

using namespace tile::literals;

auto tiny = tile::kernel("prof_tiny", [](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  tl::store(out + offs, tl::cast<float>(offs));
});

namespace {
constexpr int kBatch = 256, kBatches = 40;
using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
}  // namespace

int main() {
  try {
    auto dev = tile::device::best();
    std::printf("prof_overhead on %s\n", dev.name().c_str());
    const bool cuda = dev.backend() == "cuda";
    auto out = dev.alloc<float>(128);
    auto launch = [&] { tiny[{1}](out, "BLOCK"_c = 128); };
    launch();  // compiled before anything is timed
    dev.synchronize();
    const auto dir = std::filesystem::temp_directory_path() / "tile-prof-overhead";
    std::filesystem::create_directories(dir);

    struct provider {
      std::string name;
      std::function<void()> begin, end;  // around each batch (untimed)
      std::vector<double> us;
    };
    int hook_calls = 0;
    int hook = -1, sess = -1;
    std::vector<provider> ps;
    ps.push_back({"off", [] {}, [] {}, {}});
    ps.push_back({"hook",
                  [&] { hook = tile::prof::add_launch_hook([&](const tile::prof::launch_info&) { ++hook_calls; },
                                                           [&](const tile::prof::launch_info&) { ++hook_calls; }); },
                  [&] { tile::prof::remove_launch_hook(hook); }, {}});
    const int s_auto = tile::prof::start((dir / "auto").string());
    tile::prof::deactivate(s_auto);
    int s_events = -1;
    if (cuda) {
      s_events = tile::prof::start((dir / "events").string(), {.device_timer = "events"});
      tile::prof::deactivate(s_events);
    }
    ps.push_back({"session", [&] { tile::prof::activate(sess = s_auto); }, [&] { tile::prof::deactivate(sess); }, {}});
    if (cuda)
      ps.push_back({"session events", [&] { tile::prof::activate(sess = s_events); },
                    [&] { tile::prof::deactivate(sess); }, {}});

    for (int b = 0; b < kBatches; ++b)
      for (auto& p : ps) {
        dev.synchronize();
        p.begin();
        tile::prof::scope sc("batch");
        const auto t0 = clock_type::now();
        for (int i = 0; i < kBatch; ++i) launch();
        const auto t1 = clock_type::now();
        p.end();
        p.us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kBatch);
      }
    dev.synchronize();
    const double off = median(ps[0].us);
    std::printf("\nprof-overhead (µs per launch, median of %d batches of %d launches):\n", kBatches, kBatch);
    std::printf("%-16s %10s %10s\n", "provider", "µs/launch", "/ off");
    for (auto& p : ps) std::printf("%-16s %10.3f %10.3f\n", p.name.c_str(), median(p.us), median(p.us) / off);
    std::printf("session timer: %s%s\n", tile::prof::timer_of(s_auto).c_str(),
                cuda ? (", events session: " + tile::prof::timer_of(s_events)).c_str() : "");
    std::printf("hook calls: %d (2 per launch)\n", hook_calls);
    for (int s : {s_auto, s_events}) {
      if (s < 0) continue;
      const auto t0 = clock_type::now();
      auto paths = tile::prof::finalize(s);
      const double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      std::printf("finalize %s: %.1f ms for %d launches (%s)\n", s == s_auto ? "session" : "session events", ms,
                  kBatches * kBatch, paths.empty() ? "" : paths[0].c_str());
    }
    std::printf("target: session <= 2x off\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "prof_overhead: %s\n", e.what());
    return 1;
  }
}

// bench/gpu_autotune.cpp — autotuning the matmul tutorial kernel (bench::make_matmul; f16 in,
// f32 accumulate) over the 6 configs Triton's tutorial lists first, M = N = K = 2048, on the cuda
// backend, from a cold cache: a fresh TILE_CACHE_DIR, so every config is traced, compiled
// (LLVM, ptxas) and timed — the compiles in parallel on the host's cores while the GPU times the
// configs already compiled. Then the same with a second autotuner in this process (the choice
// and the chosen kernel's cubin come from the disk cache), and in a new process (this program
// run again with --warm and the same TILE_CACHE_DIR). Wall times of the first launch, which is
// where the tuning happens. bench/triton/autotune.py times Triton's autotuner on the same
// kernel, configs and shape. The target: well under Triton's 4.7 s cold, and nothing
// tuned again in a new process.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "gpu.hpp"
#include "kernels.hpp"

using namespace tile::literals;
using tile::half;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr int kM = 2048;

std::vector<tile::config> tutorial_configs() {
  auto c = [](int bm, int bn, int bk, int warps, int stages) {
    return tile::config({{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}, {"GROUP_M", 8}}, warps, stages);
  };
  return {c(128, 256, 64, 8, 3), c(64, 256, 32, 4, 4), c(128, 128, 32, 4, 4),
          c(128, 64, 32, 4, 4),  c(64, 128, 32, 4, 4), c(128, 32, 32, 4, 4)};
}

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

/// One autotuned first launch: its wall time, stats and the chosen config.
struct tuned_run {
  double first_launch_ms = 0;
  tile::autotune_stats stats;
  std::string best;
  std::vector<double> timings;
};

tuned_run run_once(const tile::device& dev, bool verbose) {
  static auto mm = bench::make_matmul();
  const std::size_t n = std::size_t(kM) * kM;
  auto a = dev.upload(std::vector<half>(n, half(0.5f))), b = dev.upload(std::vector<half>(n, half(0.25f)));
  auto c = dev.alloc<half>(n);
  dev.synchronize();
  auto tuned = tile::autotune(mm, {.configs = tutorial_configs(),
                                   .key = {"M", "N", "K"},
                                   .arg_names = {"a", "b", "c", "M", "N", "K", "sam", "sak", "sbk", "sbn", "scm", "scn"},
                                   .verbose = verbose});
  auto grid = [](const tile::meta& m) { return tile::grid3{tile::cdiv(kM, m["BLOCK_M"]) * tile::cdiv(kM, m["BLOCK_N"])}; };
  const auto t0 = clock_type::now();
  tuned[grid](a, b, c, kM, kM, kM, kM, 1, kM, 1, kM, 1);
  dev.synchronize();
  tuned_run r;
  r.first_launch_ms = ms_since(t0);
  r.stats = tuned.stats();
  r.best = tuned.last_config()->str();
  r.timings = tuned.last_timings();
  const float got = float(c.to_host()[12345]);
  const float want = 0.5f * 0.25f * kM;
  if (std::abs(got - want) > 0.5f) {
    std::fprintf(stderr, "gpu_autotune: wrong result %g, want %g\n", double(got), double(want));
    std::exit(1);
  }
  return r;
}
}  // namespace

int main(int argc, char** argv) {
  const bool warm = argc > 1 && std::string(argv[1]) == "--warm";
  std::filesystem::path dir;
  if (!warm) {
    dir = std::filesystem::temp_directory_path() / ("tile-autotune-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    setenv("TILE_CACHE_DIR", dir.c_str(), 1);  // before anything compiles: a cold cache
  }
  auto dev = bench::gpu::cuda_device(warm ? "gpu_autotune --warm" : "gpu_autotune");
  if (!dev) return 0;
  if (warm) {
    auto r = run_once(*dev, false);
    std::printf("WARM %.1f %zu %zu %s\n", r.first_launch_ms, r.stats.tunings, r.stats.disk_hits, r.best.c_str());
    return 0;
  }
  auto cold = run_once(*dev, true);
  auto again = run_once(*dev, false);
  // a new process with the same cache directory
  double proc_ms = -1;
  std::string proc_line;
  {
    const auto t0 = clock_type::now();
    FILE* p = popen(("\"" + std::string(argv[0]) + "\" --warm 2>&1").c_str(), "r");
    char buf[1024];
    while (p && std::fgets(buf, sizeof buf, p))
      if (std::string(buf).rfind("WARM ", 0) == 0) proc_line = buf;
    if (p) pclose(p);
    proc_ms = ms_since(t0);
  }
  const auto cfgs = tutorial_configs();
  std::printf("\ngpu-autotune: matmul %dx%dx%d f16, 6 configs, cold cache (%s)\n", kM, kM, kM, dir.c_str());
  std::printf("%-62s %10s %10s\n", "config", "median ms", "TFLOP/s");
  for (std::size_t i = 0; i < cfgs.size(); ++i) {
    const double ms = cold.timings[i];
    std::printf("%-62s %10.4f %10.2f\n", cfgs[i].str().c_str(), ms, 2.0 * kM * kM * double(kM) / (ms * 1e-3) / 1e12);
  }
  std::printf("best: %s\n", cold.best.c_str());
  std::printf("%-44s %12s %8s %10s\n", "run", "first launch", "tunings", "disk hits");
  std::printf("%-44s %9.1f ms %8zu %10zu\n", "cold (compile 6 in parallel + time 6)", cold.first_launch_ms,
              cold.stats.tunings, cold.stats.disk_hits);
  std::printf("%-44s %9.1f ms %8zu %10zu\n", "second autotuner, same process", again.first_launch_ms,
              again.stats.tunings, again.stats.disk_hits);
  std::printf("new process (its own line: WARM ms tunings disk_hits best): %s", proc_line.empty() ? "(none)\n" : proc_line.c_str());
  std::printf("new process, whole run incl. CUDA start-up: %.1f ms\n", proc_ms);
  std::filesystem::remove_all(dir);
  return 0;
}

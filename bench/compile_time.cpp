// bench/compile_time.cpp — how long the cpu backend takes to get each sample kernel running:
//   cold compile    the wall time of the first launch of a fresh kernel object (trace,
//                   canonicalize, lower to LLVM, O3, machine code, ORC load, run) with
//                   TILE_CACHE=0, so nothing is served from a cache; median of 3 fresh objects;
//   warm-cache load the same first launch in a fresh process (this program re-executed with
//                   --warm) whose TILE_CACHE_DIR a previous child (--populate) filled: trace,
//                   canonicalize, read the object from disk, ORC load, run; median of 3 processes;
//                   tile::jit::stats() must show one more disk hit and no compile for it;
//   launch          the second launch of the same object (what the kernel itself costs here, so
//                   it can be told apart from the compile; the samples' sizes).
// Both are measured after one unrelated warm-up launch, so the once-per-process costs (LLVM's
// initialization, creating the ORC JIT, the thread pool) are excluded; they get rows of their own.
// The kernels are those of samples 01-06 with the samples' meta-parameters (sample 06 has two).
// Targets (the issue): vector add cold < 50 ms, matmul cold < 300 ms, warm-cache load < 2 ms.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "bench.hpp"
#include "jit/compile.hpp"
#include "kernels.hpp"  // tile::jit::stats() (internal)

using namespace tile::literals;
using tile::half;

// ---- the sample kernels; each make_* call returns a fresh object (nothing traced yet) -------
// (warm-up, vector add, softmax, layer norm: kernels.hpp)
using bench::make_add;
using bench::make_layer_norm;
using bench::make_softmax;
using bench::make_warmup;
auto make_matmul() { return bench::make_matmul_t<half>(); }  // f16 in and out, f32 accumulation, ACTIVATION
auto make_dropout() {
  return tile::kernel("dropout", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::f32 p, tl::i32 seed,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto mask = offs < n;
    auto xv = tl::load(x + offs, mask);
    tl::store(out + offs, tl::where(tl::rand(seed, offs) > p, xv / (1.0f - p), 0.0f), mask);
  });
}
tl::tensor silu(const tl::tensor& x) {  // sample 06's device function
  auto xf = tl::cast<float>(x);
  return xf * tl::sigmoid(xf);
}
auto make_silu() {
  return tile::kernel("silu", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    tl::store(out + offs, silu(tl::load(x + offs, offs < n)), offs < n);
  });
}
auto make_silu_and_mul() {
  return tile::kernel("silu_and_mul", [](tl::ptr<float> gate, tl::ptr<float> up, tl::ptr<float> out, tl::i32 n,
                                         tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto mask = offs < n;
    tl::store(out + offs, silu(tl::load(gate + offs, mask)) * tl::load(up + offs, mask), mask);
  });
}

// ---- timing ------------------------------------------------------------------------------------
double wall_ms(const std::function<void()>& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// One kernel: name, and "make a fresh object, launch it twice" returning both launches' ms.
struct kernel_case {
  std::string name;
  std::function<std::pair<double, double>()> fresh_launches;
};

template <class Make, class Launch>
std::function<std::pair<double, double>()> fresh(const tile::device& dev, Make make, Launch launch) {
  return [dev, make, launch] {
    auto k = make();
    auto once = [&] {
      return wall_ms([&] {
        launch(k);
        dev.synchronize();
      });
    };
    const double first = once();
    return std::pair{first, once()};
  };
}

/// The samples' problems (sizes and meta-parameters), inputs allocated up front.
std::vector<kernel_case> cases(const tile::device& dev) {
  auto f = [&](std::size_t n) { return dev.alloc<float>(n); };
  auto h = [&](std::size_t n) { return dev.alloc<half>(n); };
  const int n1 = 98432, rows = 123, cols = 781, M = 200, N = 136, K = 152, ln_rows = 64, ln_n = 1000, n6 = 5000;
  auto x = f(n1), y = f(n1), out = f(n1), sx = f(rows * cols), sy = f(rows * cols);
  auto a = h(M * K), b = h(K * N), c = h(M * N), lx = h(ln_rows * ln_n), ly = h(ln_rows * ln_n), lw = h(ln_n),
       lb = h(ln_n);
  auto mean = f(ln_rows), rstd = f(ln_rows);
  return {
      {"01 vector add",
       fresh(dev, make_add, [=](auto& k) { k[{tile::cdiv(n1, 1024)}](x, y, out, n1, "BLOCK"_c = 1024); })},
      {"02 fused softmax",
       fresh(dev, make_softmax, [=](auto& k) { k[{rows}](sy, sx, cols, cols, "BLOCK"_c = 1024); })},
      {"03 matmul", fresh(dev, make_matmul, [=](auto& k) {
         k[{tile::cdiv(M, 64) * tile::cdiv(N, 64)}](a, b, c, M, N, K, K, 1, N, 1, N, 1, "BLOCK_M"_c = 64,
                                                    "BLOCK_N"_c = 64, "BLOCK_K"_c = 32, "GROUP_M"_c = 8,
                                                    "ACTIVATION"_c = true);
       })},
      {"04 dropout", fresh(dev, make_dropout, [=](auto& k) {
         k[{tile::cdiv(10000, 1024)}](x, out, 10000, 0.5f, 123, "BLOCK"_c = 1024);
       })},
      {"05 layer norm", fresh(dev, make_layer_norm, [=](auto& k) {
         k[{ln_rows}](lx, ly, lw, lb, mean, rstd, ln_n, ln_n, 1e-5f, "BLOCK"_c = 256);
       })},
      {"06 silu", fresh(dev, make_silu, [=](auto& k) { k[{tile::cdiv(n6, 512)}](x, out, n6, "BLOCK"_c = 512); })},
      {"06 silu_and_mul",
       fresh(dev, make_silu_and_mul, [=](auto& k) { k[{tile::cdiv(n6, 256)}](x, y, out, n6, "BLOCK"_c = 256); })},
  };
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// ---- a child process: --populate fills the disk cache, --warm measures loads from it -----------
// Prints "R <name>|<first launch ms>|<ok>" lines; ok: stats show a disk hit and no compile.
int child(bool measure) {
  double dev_ms = 0;
  std::optional<tile::device> dev;
  dev_ms = wall_ms([&] { dev = tile::device::get("cpu"); });
  auto buf = dev->alloc<float>(4096);
  auto warmup = make_warmup();
  const double warm_ms = wall_ms([&] {
    warmup[{4}](buf, 4096, "BLOCK"_c = 1024);
    dev->synchronize();
  });
  std::printf("R device::get|%.4f|1\nR warm-up|%.4f|1\n", dev_ms, warm_ms);
  for (auto& k : cases(*dev)) {
    const auto s0 = tile::jit::stats();
    const double ms = k.fresh_launches().first;
    const auto s1 = tile::jit::stats();
    const bool ok =
        measure ? s1.disk_hits == s0.disk_hits + 1 && s1.compiled == s0.compiled : s1.compiled > s0.compiled;
    std::printf("R %s|%.4f|%d\n", k.name.c_str(), ms, ok ? 1 : 0);
  }
  return 0;
}

/// Runs this program again with `arg`; its "R" lines as name -> (ms, ok).
std::map<std::string, std::pair<double, bool>> run_child(const std::string& arg) {
  std::string cmd = "'";  // (built with append: "'" + string trips GCC 12's -Wrestrict at -O3)
  cmd.append(std::filesystem::read_symlink("/proc/self/exe").string()).append("' ").append(arg);
  std::map<std::string, std::pair<double, bool>> out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    std::string s(line);
    if (!s.starts_with("R ")) continue;
    const auto a = s.find('|'), b = s.rfind('|');
    if (a == std::string::npos || a == b) continue;
    out[s.substr(2, a - 2)] = {std::stod(s.substr(a + 1, b - a - 1)), s[b + 1] == '1'};
  }
  if (pclose(p) != 0) std::fprintf(stderr, "compile_time: child '%s' failed\n", arg.c_str());
  return out;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--populate" || mode == "--warm") return child(mode == "--warm");

  // Cold: no cache at all. The env registry reads getenv at every compile, so this takes effect.
  setenv("TILE_CACHE", "0", 1);
  std::optional<tile::device> dev;
  const double dev_ms = wall_ms([&] { dev = bench::cpu_device(); });
  if (!dev) return 0;
  auto buf = dev->alloc<float>(4096);
  auto warm_once = [&] {
    auto k = make_warmup();
    return wall_ms([&] {
      k[{4}](buf, 4096, "BLOCK"_c = 1024);
      dev->synchronize();
    });
  };
  const double first_ms = warm_once();  // LLVM init, ORC JIT, thread pool, and one compile
  std::vector<double> later_warmup;
  for (int i = 0; i < 3; ++i) later_warmup.push_back(warm_once());

  auto all = cases(*dev);
  std::vector<double> cold(all.size()), launch(all.size());
  std::string stats_notes;
  for (std::size_t i = 0; i < all.size(); ++i) {
    std::vector<double> firsts, seconds;
    for (int r = 0; r < 3; ++r) {
      const auto s0 = tile::jit::stats();
      auto [t1, t2] = all[i].fresh_launches();
      const auto s1 = tile::jit::stats();
      if (s1.compiled != s0.compiled + 1 || s1.disk_hits != s0.disk_hits || s1.memory_hits != s0.memory_hits)
        stats_notes += "  " + all[i].name + ": a cold launch was not exactly one compile\n";
      firsts.push_back(t1), seconds.push_back(t2);
    }
    cold[i] = median(firsts), launch[i] = median(seconds);
  }

  // Warm disk cache: one child fills a private directory, three children load from it.
  const char* base = std::getenv("TILE_CACHE_DIR");
  const auto dir = std::filesystem::path(base && *base ? base : std::filesystem::temp_directory_path().string()) /
                   "compile_time-bench";
  std::filesystem::remove_all(dir);
  setenv("TILE_CACHE", "1", 1);
  setenv("TILE_CACHE_DIR", dir.c_str(), 1);
  run_child("--populate");
  std::map<std::string, std::vector<double>> warm;
  std::map<std::string, bool> warm_ok;
  for (int r = 0; r < 3; ++r)
    for (auto& [name, v] : run_child("--warm")) {
      warm[name].push_back(v.first);
      warm_ok[name] = (warm_ok.contains(name) ? warm_ok[name] : true) && v.second;
    }
  auto warm_ms = [&](const std::string& name) { return warm.contains(name) ? median(warm[name]) : NAN; };

  // The table: one-time rows, then one row per kernel.
  auto fmt = [](double v) {
    char s[32];
    std::snprintf(s, sizeof s, "%.2f", v);
    return std::isnan(v) ? std::string("-") : std::string(s);
  };
  std::vector<std::vector<std::string>> rows = {
      {"-", "one-time: device::get(\"cpu\")", fmt(dev_ms), fmt(warm_ms("device::get")), "-"},
      {"-", "one-time: first launch in process (warm-up kernel)", fmt(first_ms), fmt(warm_ms("warm-up")), "-"},
      {"-", "warm-up kernel again (fresh object)", fmt(median(later_warmup)), "-", "-"},
  };
  bool all_ok = true;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool ok = warm_ok.contains(all[i].name) && warm_ok[all[i].name];
    all_ok = all_ok && ok;
    rows.push_back({std::to_string(i + 1), all[i].name, fmt(cold[i]), fmt(warm_ms(all[i].name)) + (ok ? "" : " (!)"),
                    fmt(launch[i])});
  }
  std::printf("compile-time (cpu backend; ms, medians of 3):\n%s",
              tile::testing::format_table({"#", "kernel", "cold compile", "warm-cache load", "launch"}, rows).c_str());
  std::printf("one-time costs of a process's first launch ≈ %.1f ms (its first launch − a later cold compile of the"
              " same kernel)\n", first_ms - median(later_warmup));
  if (!stats_notes.empty()) std::printf("stats anomalies:\n%s", stats_notes.c_str());
  std::printf("warm-cache loads %s (tile::jit::stats: one more disk hit and no compile per kernel)\n",
              all_ok ? "verified" : "NOT verified for the rows marked (!)");

  // Targets from the issue.
  double worst_warm = 0;
  for (auto& k : all) worst_warm = std::max(worst_warm, warm_ms(k.name));
  std::printf("targets (issue): vector add cold %.1f ms < 50: %s; matmul cold %.1f ms < 300: %s; "
              "warm-cache load max %.2f ms < 2: %s\n",
              cold[0], cold[0] < 50 ? "met" : "MISSED", cold[2], cold[2] < 300 ? "met" : "MISSED", worst_warm,
              worst_warm < 2 ? "met" : "MISSED");

  // CSV + SVG (x: the kernel's # in the table above).
  std::vector<double> xs;
  for (std::size_t i = 0; i < all.size(); ++i) xs.push_back(double(i + 1));
  auto b = bench::sweep("compile-time", "kernel #", xs, {"cold compile", "warm-cache load", "launch"}, {}, "ms");
  b.y_log = true;
  tile::testing::report_options opt;
  opt.print_table = false;
  auto r = tile::testing::run(b, [&](double x, const std::string& provider) {
    const std::size_t i = std::size_t(x) - 1;
    return provider == "cold compile" ? cold[i] : provider == "launch" ? launch[i] : warm_ms(all[i].name);
  }, opt);
  std::printf("wrote %s and %s\n", r.csv_path.c_str(), r.svg_path.c_str());
  return 0;
}

// bench/triton_kernels.hpp — Triton's own compiled kernels, timed in the C++ benches' process.
// bench/triton/_export_kernels.py DIR writes DIR/NAME.cubin and DIR/NAME.meta for the shapes the
// benches sweep (run-all runs it first and sets TILE_TRITON_KERNELS=DIR). A bench loads one with
// triton_kernel::find and launches it through tile's CUDA driver: the same stream, the same
// timer and the same L2 flush as tile's kernel. `bench::gpu::interleaved` (gpu.hpp) then times
// them in alternating rounds, so that clocks drifting during a run, the process and the timing
// code are the same for both columns: the cross-process comparison (C++ bench, then the Triton
// script) spreads by up to ±7 % at these small kernels, this one by much less. A kernel whose
// launch the bench builds by name (the matmul) lists its arguments in the .meta (`args`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu.hpp"

namespace bench::gpu {

/// One kernel Triton compiled (a cubin, its function, warps, dynamic shared memory and parameter
/// count), loaded on a tile cuda device.
class triton_kernel {
 public:
  /// NAME from $TILE_TRITON_KERNELS, or nullopt after printing why (the variable unset, the
  /// files missing). Throws tile::error when the cubin does not load.
  static std::optional<triton_kernel> find(const tile::device& dev, const std::string& name) {
    const char* dir = std::getenv("TILE_TRITON_KERNELS");
    if (!dir || !*dir) return std::nullopt;
    const std::string base = std::string(dir) + "/" + name;
    std::ifstream meta(base + ".meta"), cubin(base + ".cubin", std::ios::binary);
    if (!meta || !cubin) {
      std::printf("  (no Triton kernel %s in %s: bench/triton/_export_kernels.py writes them)\n", name.c_str(), dir);
      return std::nullopt;
    }
    tile::drivers::cuda_module_source src;
    src.fmt = tile::drivers::cuda_module_source::format::cubin;
    src.image.assign(std::istreambuf_iterator<char>(cubin), {});
    src.kernel = "triton " + name;
    int params = -1;
    std::vector<std::string> args;
    for (std::string key; meta >> key;) {
      if (key == "entry") meta >> src.entry;
      else if (key == "num_warps") meta >> src.num_warps;
      else if (key == "shared") meta >> src.shared_bytes;
      else if (key == "params") meta >> params;
      else if (key == "args") {  // the user's arguments the compiled function kept, by name
        std::string line;
        std::getline(meta, line);
        std::istringstream names(line);
        for (std::string a; names >> a;) args.push_back(a);
      }
      else meta.ignore(1 << 20, '\n');
    }
    if (src.entry.empty() || params < 0) {
      std::printf("  (%s.meta names no entry or parameter count)\n", base.c_str());
      return std::nullopt;
    }
    triton_kernel k;
    k.drv_ = &driver(dev);
    k.params_ = params;
    k.args_ = std::move(args);
    k.module_ = k.drv_->load_module(src);
    return k;
  }

  /// Launches grid × 1 × 1 programs with the user's arguments (Triton's hidden scratch pointers,
  /// the parameters after them, are null: _export_kernels.py checks that they are unused).
  void launch(std::uint32_t grid, std::vector<tile::drivers::kernel_arg> args) const {
    launch(tile::grid3{grid, 1, 1}, std::move(args));
  }
  /// The same on a grid of grid.x × grid.y × grid.z programs (the attention kernels').
  void launch(tile::grid3 grid, std::vector<tile::drivers::kernel_arg> args) const {
    while (static_cast<int>(args.size()) < params_) args.push_back(pointer_arg(0, 0));
    tile::drivers::launch_config cfg;
    cfg.grid[0] = static_cast<std::uint32_t>(grid.x);
    cfg.grid[1] = static_cast<std::uint32_t>(grid.y);
    cfg.grid[2] = static_cast<std::uint32_t>(grid.z);
    cfg.num_warps = module_->num_warps;
    cfg.kernel = module_->kernel;
    drv_->launch(*module_, cfg, args);
  }

  int num_regs() const { return module_->num_regs; }
  /// The names of the user's arguments the function takes, in order (the .meta's `args` line;
  /// empty when it has none).
  const std::vector<std::string>& args() const { return args_; }

  template <class T>
  static tile::drivers::kernel_arg arg(const tile::buffer<T>& b) {
    return pointer_arg(b.address(), b.bytes());
  }
  static tile::drivers::kernel_arg arg(std::int32_t v) {
    tile::drivers::kernel_arg a;
    a.k = tile::drivers::kernel_arg::kind::integer, a.t = tile::dtype::i32, a.i = v;
    return a;
  }
  static tile::drivers::kernel_arg arg(float v) {
    tile::drivers::kernel_arg a;
    a.k = tile::drivers::kernel_arg::kind::floating, a.t = tile::dtype::f32, a.f = v;
    return a;
  }

 private:
  static tile::drivers::kernel_arg pointer_arg(std::uint64_t addr, std::uint64_t bytes) {
    tile::drivers::kernel_arg a;
    a.k = tile::drivers::kernel_arg::kind::pointer, a.t = tile::dtype::u8, a.addr = addr, a.extent_bytes = bytes;
    return a;
  }
  tile::drivers::cuda_driver* drv_ = nullptr;
  int params_ = 0;
  std::vector<std::string> args_;
  std::shared_ptr<tile::drivers::cuda_module> module_;
};

/// Registers per thread of a module tile compiled for the cuda backend (0 for another backend).
inline int registers(const std::shared_ptr<const tile::drivers::module>& m) {
  const auto* cm = dynamic_cast<const tile::drivers::cuda_module*>(m.get());
  return cm ? cm->num_regs : 0;
}

/// The fastest of Triton's kernels NAME-wW, W in `warps` (_export_kernels.py writes them: the
/// tutorial's kernel at each num_warps), each timed once by do_bench as triton.autotune would:
/// the kernel and its W, or nullopt when none was exported. `launch(k)` launches kernel k.
inline std::optional<std::pair<triton_kernel, int>> fastest_triton(const tile::device& dev, const std::string& name,
                                                                   const std::vector<int>& warps,
                                                                   const std::function<void(const triton_kernel&)>& launch,
                                                                   tile::testing::timer* t) {
  std::optional<std::pair<triton_kernel, int>> best;
  double best_ms = 0;
  for (int w : warps) {
    auto k = triton_kernel::find(dev, name + "-w" + std::to_string(w));
    if (!k) continue;
    const double ms = median_ms([&] { launch(*k); }, t);
    if (!best || ms < best_ms) best.emplace(std::move(*k), w), best_ms = ms;
  }
  return best;
}

/// Two kernels of an interleaved_result compared per round: p's speedup over q, named `label`.
struct pairing {
  std::size_t p, q;
  std::string label;
};

/// The line a bench prints per shape after its table: each pair's per-round speedup, median and
/// range (above 1: the first is faster), then the registers of the kernels named in `registers`:
/// "  N = 2048: per round, median (range): tile / Triton 1.003 (0.988 ... 1.060), …; registers tile 32, Triton 32".
inline std::string rounds_line(std::int64_t n, const interleaved_result& r, const std::vector<pairing>& pairs,
                               const std::string& registers) {
  std::string line = "  N = " + std::to_string(n) + ": per round, median (range):";
  char buf[64];
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto [lo, hi] = r.speedup_range(pairs[k].p, pairs[k].q);
    std::snprintf(buf, sizeof buf, " %.3f (%.3f ... %.3f)", r.paired_speedup(pairs[k].p, pairs[k].q), lo, hi);
    line += (k ? ", " : " ") + pairs[k].label + buf;
  }
  return line + "; registers " + registers;
}

}  // namespace bench::gpu

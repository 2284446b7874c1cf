// src/drivers/null/null_driver.cpp — layer: drivers (null). See null_driver.hpp.
#include "drivers/null/null_driver.hpp"

#include <algorithm>
#include <span>

namespace tile::drivers {

std::uint32_t max_dynamic_shared_bytes(int sm) {
  constexpr std::uint32_t KiB = 1024;
  if (sm >= 120) return 99 * KiB;               // consumer Blackwell
  if (sm >= 90) return 227 * KiB;               // Hopper, datacenter Blackwell (sm_100, sm_103)
  if (sm == 80 || sm == 87) return 163 * KiB;   // A100, Orin
  if (sm == 86 || sm == 89) return 99 * KiB;    // consumer Ampere, Ada
  if (sm == 75) return 64 * KiB;
  if (sm == 70 || sm == 72) return 96 * KiB;
  return 48 * KiB;
}

null_limits null_limits_for(int sm, std::string arch) {
  null_limits l;
  l.arch = std::move(arch);
  l.max_dynamic_shared = max_dynamic_shared_bytes(sm);
  return l;
}

namespace {

std::string grid_str(const std::uint32_t g[3]) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) + ")";
}

class null_driver final : public host_memory_driver {
 public:
  explicit null_driver(null_limits l) : limits_(std::move(l)) {}
  std::string name() const override { return "null (" + limits_.arch + ")"; }

  void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) override {
    check_launch(m, cfg);
    packed_args unused;
    check_args(m, cfg, args, unused);
    // Checked: nothing runs on a null device.
  }
  /// The arguments checked as a launch checks them, packed as CUDA packs them (its host cost).
  bool pack(const module& m, const launch_config& cfg, std::span<const kernel_arg> args,
            packed_args& out) const override {
    if (args.size() > packed_args::capacity) return false;
    check_args(m, cfg, args, out);
    return true;
  }
  void launch_packed(const module& m, const launch_config& cfg, const packed_args& args) override {
    (void)args;
    check_launch(m, cfg);
  }

 private:
  const null_module& checked_module(const module& m, const launch_config& cfg) const {
    if (m.made_by != module::backend::null)
      throw tile::error("the null driver was given a module compiled for another backend", cfg.where, std::string(cfg.kernel));
    return static_cast<const null_module&>(m);
  }
  void check_args(const module& m, const launch_config& cfg, std::span<const kernel_arg> args, packed_args& out) const {
    const null_module& mod = checked_module(m, cfg);
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i].k == kernel_arg::kind::pointer && args[i].addr == 0)
        throw tile::error(describe_arg(i, args[i]) + " is a null pointer", cfg.where,
                          std::string(cfg.kernel.empty() ? std::string_view(mod.kernel) : cfg.kernel));
      if (i < packed_args::capacity)
        out.slots[i] = args[i].k == kernel_arg::kind::pointer ? args[i].addr : static_cast<std::uint64_t>(args[i].i);
    }
    out.n = std::min(args.size(), packed_args::capacity);
  }
  void check_launch(const module& m, const launch_config& cfg) const {
    const null_module* mod = &checked_module(m, cfg);
    const std::string_view kernel = cfg.kernel.empty() ? std::string_view(mod->kernel) : cfg.kernel;
    auto fail = [&](const std::string& msg) { throw tile::error(msg, cfg.where, std::string(kernel)); };
    for (int d = 0; d < 3; ++d)
      if (cfg.grid[d] > limits_.max_grid[d])
        fail("grid " + grid_str(cfg.grid) + ": extent " + std::string(1, "xyz"[d]) + " = " + std::to_string(cfg.grid[d]) +
             " is more than " + limits_.arch + " allows (" + std::to_string(limits_.max_grid[d]) + ")");
    const int warps = mod->num_warps;  // what the code was compiled for (cfg.num_warps asked for it)
    if (warps < 1 || static_cast<long long>(warps) * 32 > limits_.max_threads_per_block)
      fail("num_warps = " + std::to_string(warps) + " is " + std::to_string(32LL * warps) +
           " threads per block; " + limits_.arch + " allows " + std::to_string(limits_.max_threads_per_block));
    if (mod->shared_bytes > limits_.max_dynamic_shared)
      fail("the kernel needs " + std::to_string(mod->shared_bytes) + " bytes of shared memory per block; " +
           limits_.arch + " allows at most " + std::to_string(limits_.max_dynamic_shared) + " (" +
           std::to_string(limits_.max_dynamic_shared / 1024) + " KiB)");
  }

  null_limits limits_;
};

}  // namespace

std::unique_ptr<driver> make_null_driver(null_limits limits) { return std::make_unique<null_driver>(std::move(limits)); }

}  // namespace tile::drivers

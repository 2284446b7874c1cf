// tile/runtime/autotune.hpp — layer: runtime (public). The autotuner, Triton's @triton.autotune
// for C++ kernels: a kernel, the configs to choose from and a key; on the first launch for a new
// key value every config is benchmarked and the fastest kept — in memory and in the on-disk cache
// ($TILE_CACHE_DIR), so a new process tunes nothing it has tuned before.
//
//   auto mm = tile::autotune(matmul, {
//       .configs = {tile::config({{"BLOCK_M", 128}, {"BLOCK_N", 256}, {"BLOCK_K", 64}}, 8, 3),
//                   tile::config({{"BLOCK_M", 64}, {"BLOCK_N", 256}, {"BLOCK_K", 32}}, 4, 4)},
//       .key = {"M", "N", "K"},
//       .arg_names = {"a", "b", "c", "M", "N", "K"}});    // the runtime arguments' names, in order
//   mm[grid](a, b, c, M, N, K);                             // meta-parameters come from the config
//
// Configs compile in parallel on the host's cores while the device times the ones ready (a config
// that fails to compile or launch — too much shared memory, too many registers — is skipped, as
// Triton skips OutOfResources). Timing is tile::testing::do_bench with the device's timer (CUDA
// events on the GPU), median of the repetitions. `reset_to_zero` zeroes the named buffers before
// every trial and `restore_value` puts the named buffers back as they were after each config, for
// kernels that accumulate into their outputs; the chosen config's real launch then runs on the
// restored buffers. TILE_AUTOTUNE_VERBOSE=1 (or .verbose) prints each config and its time as it
// goes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tile/runtime/kernel.hpp"

namespace tile {

/// One candidate: meta-parameter values, num_warps, num_stages and an optional pre-hook (run
/// before each of this config's trials and each launch with it: Triton's Config.pre_hook).
struct config {
  std::vector<named> metas;
  int num_warps = 4;
  int num_stages = 3;
  std::function<void()> pre_hook{};

  config() = default;
  config(std::vector<named> m, int warps = 4, int stages = 3, std::function<void()> hook = {})
      : metas(std::move(m)), num_warps(warps), num_stages(stages), pre_hook(std::move(hook)) {}
  /// "BLOCK_M: 128, BLOCK_N: 256, num_warps: 8, num_stages: 3" (Triton's Config.__str__).
  std::string str() const;
};

/// A launch argument named by its position among the runtime arguments or by its name in
/// autotune_options::arg_names.
struct arg_ref {
  std::string name;
  int index = -1;
  arg_ref(const char* n) : name(n) {}         // NOLINT: "M"
  arg_ref(std::string n) : name(std::move(n)) {}  // NOLINT
  arg_ref(int i) : index(i) {}                // NOLINT: 3
};

/// The key's values at a launch, in key order (integers and floats as numbers; buffers by their
/// element type), as the pruning hooks see them.
struct key_values {
  std::vector<std::string> names;
  std::vector<double> values;
  std::string str() const;  // "M=4096, N=4096, K=4096"
};

struct prune_options {
  /// Drops configs before any is timed (Triton's early_config_prune).
  std::function<std::vector<config>(const std::vector<config>&, const key_values&)> early_config_prune{};
  /// A performance model: estimated time of a config (smaller is better) …
  std::function<double(const config&, const key_values&)> perf_model{};
  /// … of which only the top_k best are timed (0: all).
  std::size_t top_k = 0;
};

struct autotune_options {
  std::vector<config> configs{};
  std::vector<arg_ref> key{};            // the arguments whose values select a config
  std::vector<std::string> arg_names{};  // names of the runtime arguments, in order (for key by name)
  prune_options prune_configs_by{};
  std::vector<arg_ref> reset_to_zero{};  // buffers zeroed before every trial
  std::vector<arg_ref> restore_value{};  // buffers restored after each config's trials
  double warmup_ms = 25, rep_ms = 100;   // do_bench's budgets per config
  bool verbose = false;                  // also: TILE_AUTOTUNE_VERBOSE=1
  bool disk_cache = true;                // remember choices in $TILE_CACHE_DIR (TILE_CACHE=0 turns it off)
};

/// What the autotuner did so far (for tests and tools).
struct autotune_stats {
  std::size_t tunings = 0;     // key values benchmarked in this process
  std::size_t disk_hits = 0;   // key values whose choice came from the disk cache
  std::size_t configs_timed = 0;
  std::size_t shipped = 0;     // key values whose choice came with kernels built ahead of time (tile::aot)
  double last_tuning_ms = 0;   // wall time of the last tuning
};

namespace detail {

/// The non-template core (src/runtime/autotune.cpp).
class autotuner_core {
 public:
  autotuner_core(const kernel_core& k, autotune_options opt, src_loc defined_at);
  /// Launches with the config chosen for these arguments' key, tuning first if need be.
  void launch(const launch_grid& grid, std::span<const launch_arg> args, std::span<const meta_value> user_metas,
              src_loc loc) const;
  /// The config of the last launch (nullopt before the first).
  std::optional<config> last_config() const;
  /// Per config: the median time of its last tuning in ms (infinity: failed), in configs order.
  std::vector<double> last_timings() const;
  autotune_stats stats() const;
  const autotune_options& options() const;
  /// What tile::aot::builder::tune keeps: the config these arguments' key chooses (tuned now on
  /// their device, or the choice already made), that launch traced, and the choice as an archive
  /// stores it (`target`: the device's best archive target; empty for one that has none).
  struct build_choice {
    traced_launch launch;
    std::string tuning, target, config;
  };
  build_choice choose_for_build(const launch_grid& grid, std::span<const launch_arg> args,
                                std::span<const meta_value> user_metas, src_loc loc) const;

 private:
  struct state;
  std::shared_ptr<state> s_;
};

}  // namespace detail

template <class F>
class autotuned_kernel;

template <class F>
class bound_autotuned {
 public:
  bound_autotuned(const autotuned_kernel<F>& k, launch_grid g) : k_(k), g_(std::move(g)) {}
  template <class... A>
  void operator()(A&&... args) const;

 private:
  const autotuned_kernel<F>& k_;
  launch_grid g_;
};

template <class F>
class autotuned_kernel {
 public:
  autotuned_kernel(const kernel_t<F>& k, autotune_options opt, src_loc defined_at)
      : kernel_(k), core_(k.core(), std::move(opt), defined_at) {}

  /// Bind a grid (usually a function of the meta-parameters: the config decides the block sizes).
  bound_autotuned<F> operator[](launch_grid g) const { return {*this, std::move(g)}; }

  /// The config the last launch ran with (nullopt before the first launch).
  std::optional<config> last_config() const { return core_.last_config(); }
  std::vector<double> last_timings() const { return core_.last_timings(); }
  autotune_stats stats() const { return core_.stats(); }
  const kernel_t<F>& kernel() const { return kernel_; }
  /// The choice for these arguments, tuned on their device now if need be (tile::aot::builder::tune).
  template <class... A>
  detail::autotuner_core::build_choice choose_for_build(const launch_grid& g, A&&... args) const {
    check<A...>();
    auto [rt, metas] = kernel_t<F>::collect(args...);
    return core_.choose_for_build(g, std::span(rt.data(), kernel_t<F>::sig::runtime_count), metas, g.loc);
  }

 private:
  friend class bound_autotuned<F>;
  template <class... A>
  static constexpr void check() {
    using C = detail::launch_check<typename kernel_t<F>::params, A...>;
    static_assert(C::count_ok, "wrong number of runtime arguments for this kernel");
    static_assert(C::types_ok, "an argument does not match its kernel parameter");
    static_assert(C::names_known, "unknown meta-parameter at this launch (misspelt?)");
    // meta-parameters not given here come from the configs (checked when the kernel is traced)
  }
  const kernel_t<F>& kernel_;
  detail::autotuner_core core_;
};

template <class F>
template <class... A>
void bound_autotuned<F>::operator()(A&&... args) const {
  if constexpr (detail::has_param_struct<A...>) {  // a parameter struct's members in its place
    kernel_t<F>::template check_struct<A...>();
    std::apply([this](auto&&... flat) { (*this)(flat...); }, std::tuple_cat(detail::launch_args_of(args)...));
  } else {
    autotuned_kernel<F>::template check<A...>();
    auto [rt, metas] = kernel_t<F>::collect(args...);
    k_.core_.launch(g_, std::span(rt.data(), kernel_t<F>::sig::runtime_count), metas, g_.loc);
  }
}

/// Wraps `k` (which must outlive the result) in an autotuner.
template <class F>
autotuned_kernel<F> autotune(const kernel_t<F>& k, autotune_options opt,
                             std::source_location l = std::source_location::current()) {
  return autotuned_kernel<F>(k, std::move(opt), l);
}

}  // namespace tile

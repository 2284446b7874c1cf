// src/runtime/autotune.cpp — layer: runtime. The autotuner (include/tile/runtime/autotune.hpp):
// the key of a launch, pruning, compiling every config in parallel while the device times the
// ones ready, resetting and restoring the buffers a kernel accumulates into, and remembering the
// choice in memory and in the on-disk cache.
//
// The disk entry's key is everything that decides the choice: the kernel's name and the
// structural hash of the IR its first config traces to (an edited kernel is tuned again), the
// device, every config's text, the key's values, the launch's own meta-parameters and the
// library's version. Its payload is the chosen config's text, which is looked up among the
// configs on load (a config list that changed misses).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "aot/catalog.hpp"
#include "jit/disk_cache.hpp"
#include "runtime/device_impl.hpp"
#include "support/build_id.hpp"
#include "support/env.hpp"
#include "tile/runtime/autotune.hpp"
#include "tile/runtime/testing.hpp"

namespace tile {

namespace {
std::string meta_text(const detail::meta_value& v) {
  switch (v.k) {
    case detail::meta_value::kind::boolean: return v.i ? "True" : "False";
    case detail::meta_value::kind::floating: {
      std::ostringstream o;
      o << v.f;
      return o.str();
    }
    case detail::meta_value::kind::integer: return std::to_string(v.i);
  }
  return "";
}
std::string number_text(double v) {  // every launch builds its key with this: no stream
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf, static_cast<std::size_t>(std::max(n, 0)));
}
}  // namespace

std::string config::str() const {
  std::string out;
  for (const auto& m : metas) out += m.name + ": " + meta_text(m.value) + ", ";
  out += "num_warps: " + std::to_string(num_warps) + ", num_stages: " + std::to_string(num_stages);
  return out;
}

std::string key_values::str() const {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i] + "=" + number_text(values[i]);
  return out;
}

namespace detail {

struct autotuner_core::state {
  state(const kernel_core& k, autotune_options o, src_loc at) : kernel(k), opt(std::move(o)), defined_at(at) {}
  kernel_core kernel;
  autotune_options opt;
  src_loc defined_at;
  std::mutex mu;                        // one tuning at a time; guards everything below
  std::map<std::string, std::size_t> chosen;  // key text -> index into opt.configs
  /// The launch path's lookup: the key's raw bits (binary_key) -> the config and the launch's
  /// meta-parameters merged with it, so a launch of a tuned key formats and merges nothing. (The
  /// user's meta names are the kernel's compile-time names: they outlive the entry.)
  struct fast_entry {
    std::size_t index;
    std::vector<meta_value> metas;
  };
  std::unordered_map<std::string, fast_entry> fast;
  std::vector<std::size_t> key_index;  // the key's runtime-argument indices, resolved at the first launch
  std::vector<double> last_timings;
  autotune_stats stats;
  std::size_t last = static_cast<std::size_t>(-1);  // the config of the last launch

  /// Runtime argument index of `r` (by position or by name); throws naming the launch.
  std::size_t index_of(const arg_ref& r, std::size_t n_args, src_loc loc) const {
    if (r.index >= 0) {
      if (static_cast<std::size_t>(r.index) >= n_args)
        fail("autotune: argument index " + std::to_string(r.index) + " is out of range (the kernel takes " +
                 std::to_string(n_args) + " runtime arguments)", loc);
      return static_cast<std::size_t>(r.index);
    }
    auto it = std::find(opt.arg_names.begin(), opt.arg_names.end(), r.name);
    if (it == opt.arg_names.end())
      fail("autotune: no argument named '" + r.name + "' (autotune_options::arg_names " +
               (opt.arg_names.empty() ? std::string("is empty: name the runtime arguments there, or use indices")
                                      : "has " + std::to_string(opt.arg_names.size()) + " names") + ")", loc);
    const auto i = static_cast<std::size_t>(it - opt.arg_names.begin());
    if (i >= n_args)
      fail("autotune: '" + r.name + "' is name " + std::to_string(i) + " of arg_names, but the kernel takes " +
               std::to_string(n_args) + " runtime arguments (meta-parameters are not named there)", loc);
    return i;
  }
  [[noreturn]] void fail(const std::string& m, src_loc loc) const { throw tile::error(m, loc, kernel.name()); }

  key_values key_of(std::span<const launch_arg> args, src_loc loc) const {
    key_values k;
    for (const auto& r : opt.key) {
      const std::size_t i = index_of(r, args.size(), loc);
      const launch_arg& a = args[i];
      k.names.push_back(r.index >= 0 ? "arg" + std::to_string(i) : r.name);
      switch (a.k) {
        case launch_arg::kind::integer: k.values.push_back(static_cast<double>(a.i)); break;
        case launch_arg::kind::floating: k.values.push_back(a.f); break;
        case launch_arg::kind::pointer: k.values.push_back(static_cast<double>(static_cast<int>(a.t))); break;
      }
    }
    return k;
  }

  /// The launch's own meta-parameters plus the config's (a name in both is an error).
  std::vector<meta_value> merged(const config& c, std::span<const meta_value> user, src_loc loc) const {
    std::vector<meta_value> out(user.begin(), user.end());
    for (const auto& m : c.metas) {
      for (const auto& u : user)
        if (u.name == m.name)
          fail("autotune: meta-parameter '" + m.name + "' is given at the launch and by config {" + c.str() + "}", loc);
      meta_value v = m.value;
      v.name = m.name;  // points into the config, which outlives the launch
      out.push_back(v);
    }
    for (const auto& u : user)
      if (u.name == "num_warps" || u.name == "num_stages")
        fail("autotune: " + std::string(u.name) + " comes from the configs, not the launch", loc);
    meta_value w;
    w.name = "num_warps", w.i = c.num_warps;
    meta_value st;
    st.name = "num_stages", st.i = c.num_stages;
    out.push_back(w);
    out.push_back(st);
    return out;
  }

  std::string key_text(const key_values& k, std::span<const meta_value> user, std::span<const launch_arg> args) const {
    // the device is part of the key: one kernel tuned on two devices keeps two choices
    std::string t = k.str();
    for (const auto& a : args)
      if (a.k == launch_arg::kind::pointer && a.alloc) {
        t += "; on " + a.alloc->dev->name();
        break;
      }
    for (const auto& u : user) t += "; " + std::string(u.name) + "=" + meta_text(u);
    return t;
  }

  /// What a choice shipped in an archive depends on (no device: the archive names its target).
  std::string tuning_text(const key_values& k, std::span<const meta_value> user) const {
    std::string t = "configs ";
    for (const auto& c : opt.configs) t += "{" + c.str() + "}";
    t += "; key " + k.str();
    for (const auto& u : user) t += "; " + std::string(u.name) + "=" + meta_text(u);
    return t;
  }

  /// The key's values, the device and the launch's meta-parameters as raw bytes.
  std::string binary_key(std::span<const launch_arg> args, std::span<const meta_value> user, src_loc loc) {
    if (key_index.size() != opt.key.size()) {
      key_index.clear();
      for (const auto& r : opt.key) key_index.push_back(index_of(r, args.size(), loc));
    }
    std::string k;
    k.reserve(16 * (key_index.size() + user.size()) + 8);
    auto put = [&k](const auto& v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
    for (std::size_t i : key_index) {
      const launch_arg& a = args[i];
      put(a.k);
      if (a.k == launch_arg::kind::floating) put(a.f);
      else if (a.k == launch_arg::kind::integer) put(a.i);
      else put(a.t);
    }
    for (const auto& a : args)
      if (a.k == launch_arg::kind::pointer && a.alloc) {
        put(a.alloc->dev.get());
        break;
      }
    for (const auto& u : user) {
      k.append(u.name);
      k.push_back('\0');
      put(u.k), put(u.i), put(u.f);
    }
    return k;
  }

  std::size_t choose(const launch_grid& grid, std::span<const launch_arg> args, std::span<const meta_value> user,
                     src_loc loc);
  std::size_t tune(const launch_grid& grid, std::span<const launch_arg> args, std::span<const meta_value> user,
                   const key_values& key, src_loc loc);
};

namespace {

bool verbose(const autotune_options& o) { return o.verbose || tile::env::enabled("TILE_AUTOTUNE_VERBOSE"); }

std::shared_ptr<device_impl> device_of(std::span<const launch_arg> args) {
  for (const auto& a : args)
    if (a.k == launch_arg::kind::pointer && a.alloc) return a.alloc->dev;
  return nullptr;
}

jit::disk_cache* tuning_cache() {
  static std::mutex mu;
  static std::unique_ptr<jit::disk_cache> cache;
  std::lock_guard l(mu);
  if (!cache) cache = std::make_unique<jit::disk_cache>(tile::env::get("TILE_CACHE_DIR"));
  return cache.get();
}

/// A buffer's bytes kept on the host, to put back after each config (restore_value).
struct saved_buffer {
  const launch_arg* arg;
  std::vector<unsigned char> bytes;
};

}  // namespace

std::size_t autotuner_core::state::choose(const launch_grid& grid, std::span<const launch_arg> args,
                                          std::span<const meta_value> user, src_loc loc) {
  if (opt.configs.empty()) fail("autotune: no configs to choose from", loc);
  if (opt.configs.size() == 1) return 0;
  const key_values key = key_of(args, loc);
  const std::string text = key_text(key, user, args);
  if (auto it = chosen.find(text); it != chosen.end()) return it->second;

  // a choice made when the program's kernels were built ahead of time (tile::aot::builder::tune)
  if (aot::any()) {
    const auto dev = device_of(args);
    if (dev && !dev->aot_targets().empty())
      if (const std::string* c = aot::find_choice(kernel.name(), tuning_text(key, user), dev->aot_targets().front()))
        for (std::size_t i = 0; i < opt.configs.size(); ++i)
          if (opt.configs[i].str() == *c) {
            ++stats.shipped;
            if (verbose(opt))
              std::fprintf(stderr, "tile: autotune %s [%s]: {%s} chosen when its kernels were built\n",
                           kernel.name().c_str(), text.c_str(), c->c_str());
            chosen.emplace(text, i);
            return i;
          }
  }

  // the disk cache
  const bool use_disk = opt.disk_cache && tile::env::enabled("TILE_CACHE");
  std::optional<jit::cache_key> ck;
  if (use_disk) {
    auto dev = device_of(args);
    std::string configs;
    for (const auto& c : opt.configs) configs += "{" + c.str() + "}";
    ck.emplace();
    ck->kernel = kernel.name();
    // the IR of the first config that traces (one that does not is skipped by the tuning too)
    bool hashed = false;
    for (const auto& c : opt.configs) {
      try {
        ck->ir_hash = kernel.ir_hash(args, merged(c, user, loc), loc);
        hashed = true;
        break;
      } catch (const tile::error&) {
      }
    }
    if (!hashed) ck.reset();  // nothing traces: tune() reports every config's error
    if (ck) ck->target = "autotune;" + (dev ? dev->name() : std::string("best"));
    if (ck) {
      ck->options = configs + ";key " + text;
      ck->version = support::build_id();
    }
    if (auto payload = ck ? tuning_cache()->load(*ck, "tune") : std::nullopt) {
      for (std::size_t i = 0; i < opt.configs.size(); ++i)
        if (opt.configs[i].str() == *payload) {
          ++stats.disk_hits;
          if (verbose(opt))
            std::fprintf(stderr, "tile: autotune %s [%s]: {%s} from the disk cache\n", kernel.name().c_str(),
                         text.c_str(), payload->c_str());
          chosen.emplace(text, i);
          return i;
        }
    }
  }
  const std::size_t best = tune(grid, args, user, key, loc);
  chosen.emplace(text, best);
  if (ck) tuning_cache()->store(*ck, opt.configs[best].str(), "tune");
  return best;
}

std::size_t autotuner_core::state::tune(const launch_grid& grid, std::span<const launch_arg> args,
                                        std::span<const meta_value> user, const key_values& key, src_loc loc) {
  if (const auto dev = device_of(args); dev && dev->driver().capturing())
    fail("autotune: [" + key.str() + "] has no choice yet, and timing the configs needs them to run, which " +
             "cannot happen while the stream is being captured into a CUDA graph; launch it once before the " +
             "capture (the choice is kept, and in the disk cache) or ship the choice with the kernels built " +
             "ahead of time (tile::aot::builder::tune)",
         loc);
  const auto t0 = std::chrono::steady_clock::now();
  const bool talk = verbose(opt);
  // pruning
  std::vector<std::size_t> cand;
  {
    std::vector<config> kept = opt.configs;
    if (opt.prune_configs_by.early_config_prune) kept = opt.prune_configs_by.early_config_prune(kept, key);
    if (opt.prune_configs_by.perf_model && opt.prune_configs_by.top_k > 0 && kept.size() > opt.prune_configs_by.top_k) {
      std::vector<std::pair<double, std::size_t>> est;
      for (std::size_t i = 0; i < kept.size(); ++i) est.emplace_back(opt.prune_configs_by.perf_model(kept[i], key), i);
      std::sort(est.begin(), est.end());  // (estimate, index) pairs: ties keep the configs' order
      std::vector<config> top;
      for (std::size_t i = 0; i < opt.prune_configs_by.top_k; ++i) top.push_back(kept[est[i].second]);
      kept = std::move(top);
    }
    for (const auto& k : kept) {  // back to indices into opt.configs (pruning hooks return copies)
      std::size_t found = opt.configs.size();
      for (std::size_t i = 0; i < opt.configs.size(); ++i)
        if (opt.configs[i].str() == k.str() && std::find(cand.begin(), cand.end(), i) == cand.end()) {
          found = i;
          break;
        }
      if (found == opt.configs.size())
        fail("autotune: the pruning hook returned config {" + k.str() + "}, which is not one of the configs", loc);
      cand.push_back(found);
    }
    if (cand.empty()) fail("autotune: pruning left no config for [" + key.str() + "]", loc);
  }
  std::vector<std::vector<meta_value>> metas(opt.configs.size());
  for (std::size_t i : cand) metas[i] = merged(opt.configs[i], user, loc);

  // compile every candidate on the host's cores; time them in order as they become ready
  std::vector<std::promise<std::string>> compiled(opt.configs.size());  // "" or the error
  std::vector<std::future<std::string>> ready;
  for (auto& p : compiled) ready.push_back(p.get_future());
  std::atomic<std::size_t> next{0};
  const std::size_t n_threads = std::min<std::size_t>(cand.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (std::size_t t = 0; t < n_threads; ++t)
    workers.emplace_back([&] {
      for (std::size_t j; (j = next.fetch_add(1)) < cand.size();) {
        const std::size_t i = cand[j];
        try {
          (void)kernel.module(args, metas[i], loc);
          compiled[i].set_value("");
        } catch (const std::exception& e) {
          compiled[i].set_value(e.what());
        }
      }
    });
  struct joiner {
    std::vector<std::thread>& w;
    ~joiner() {
      for (auto& t : w) t.join();
    }
  } join_workers{workers};

  auto dev_impl = device_of(args);
  if (!dev_impl) dev_impl = tile::device::best().impl();
  const tile::device dev(dev_impl);
  auto timer = testing::make_timer(dev);
  auto& drv = dev_impl->driver();

  std::vector<saved_buffer> saved;
  for (const auto& r : opt.restore_value) {
    const launch_arg& a = args[index_of(r, args.size(), loc)];
    if (a.k != launch_arg::kind::pointer) fail("autotune: restore_value names a number, not a buffer", loc);
    saved.push_back({&a, std::vector<unsigned char>(a.bytes)});
    if (a.bytes) drv.copy_to_host(saved.back().bytes.data(), a.addr, a.bytes);
  }
  std::vector<const launch_arg*> zeroed;
  for (const auto& r : opt.reset_to_zero) {
    const launch_arg& a = args[index_of(r, args.size(), loc)];
    if (a.k != launch_arg::kind::pointer) fail("autotune: reset_to_zero names a number, not a buffer", loc);
    zeroed.push_back(&a);
  }
  auto restore = [&] {
    for (auto& s : saved)
      if (!s.bytes.empty()) drv.copy_to_device(s.arg->addr, s.bytes.data(), s.bytes.size());
  };

  if (talk)
    std::fprintf(stderr, "tile: autotune %s [%s]: timing %zu of %zu configs on %s\n", kernel.name().c_str(),
                 key.str().c_str(), cand.size(), opt.configs.size(), dev.name().c_str());
  last_timings.assign(opt.configs.size(), std::numeric_limits<double>::infinity());
  std::size_t best = opt.configs.size();
  std::string failures;
  for (std::size_t j = 0; j < cand.size(); ++j) {
    const std::size_t i = cand[j];
    const config& c = opt.configs[i];
    std::string err = ready[i].get();
    double ms = std::numeric_limits<double>::infinity();
    if (err.empty()) {
      try {
        auto call = [&] {
          for (const auto* z : zeroed)
            if (z->bytes) drv.fill(z->addr, 0, z->bytes);
          if (c.pre_hook) c.pre_hook();
          kernel.launch(grid, args, metas[i], loc);
        };
        ms = testing::do_bench(call, opt.warmup_ms, opt.rep_ms, {}, timer.get()).median_ms;
        ++stats.configs_timed;
      } catch (const std::exception& e) {
        err = e.what();
      }
      restore();
    }
    last_timings[i] = ms;
    if (!err.empty()) failures += "\n  {" + c.str() + "}: " + err;
    if (talk) {
      if (err.empty())
        std::fprintf(stderr, "tile: autotune %s   [%zu/%zu] {%s}: %.4f ms\n", kernel.name().c_str(), j + 1, cand.size(),
                     c.str().c_str(), ms);
      else
        std::fprintf(stderr, "tile: autotune %s   [%zu/%zu] {%s}: skipped (%s)\n", kernel.name().c_str(), j + 1,
                     cand.size(), c.str().c_str(), err.c_str());
    }
    if (err.empty() && (best == opt.configs.size() || ms < last_timings[best])) best = i;
  }
  // reset_to_zero buffers start the real launch at zero, as its caller left them for it
  for (const auto* z : zeroed)
    if (z->bytes) drv.fill(z->addr, 0, z->bytes);
  if (best == opt.configs.size()) fail("autotune: every config failed for [" + key.str() + "]:" + failures, loc);
  ++stats.tunings;
  stats.last_tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (talk)
    std::fprintf(stderr, "tile: autotune %s [%s]: best {%s} %.4f ms (tuned in %.1f ms)\n", kernel.name().c_str(),
                 key.str().c_str(), opt.configs[best].str().c_str(), last_timings[best], stats.last_tuning_ms);
  return best;
}

autotuner_core::autotuner_core(const kernel_core& k, autotune_options opt, src_loc defined_at)
    : s_(std::make_shared<state>(k, std::move(opt), defined_at)) {
  for (const auto& c : s_->opt.configs)
    if (c.num_warps < 1 || c.num_warps > 32 || (c.num_warps & (c.num_warps - 1)))
      throw tile::error("autotune: config {" + c.str() + "}: num_warps must be a power of two up to 32", defined_at,
                        k.name());
}

void autotuner_core::launch(const launch_grid& grid, std::span<const launch_arg> args,
                            std::span<const meta_value> user, src_loc loc) const {
  const state::fast_entry* e = nullptr;
  {
    std::lock_guard lock(s_->mu);
    std::string bk = s_->binary_key(args, user, loc);
    auto it = s_->fast.find(bk);
    if (it == s_->fast.end()) {
      const std::size_t i = s_->choose(grid, args, user, loc);
      it = s_->fast.emplace(std::move(bk), state::fast_entry{i, s_->merged(s_->opt.configs[i], user, loc)}).first;
    }
    e = &it->second;  // entries are never erased: the pointer stays valid after the lock
    s_->last = e->index;
  }
  const config& c = s_->opt.configs[e->index];
  if (c.pre_hook) c.pre_hook();
  s_->kernel.launch(grid, args, e->metas, loc);
}

std::optional<config> autotuner_core::last_config() const {
  std::lock_guard lock(s_->mu);
  if (s_->last >= s_->opt.configs.size()) return std::nullopt;
  return s_->opt.configs[s_->last];
}

std::vector<double> autotuner_core::last_timings() const {
  std::lock_guard lock(s_->mu);
  return s_->last_timings;
}

autotune_stats autotuner_core::stats() const {
  std::lock_guard lock(s_->mu);
  return s_->stats;
}

const autotune_options& autotuner_core::options() const { return s_->opt; }

autotuner_core::build_choice autotuner_core::choose_for_build(const launch_grid& grid, std::span<const launch_arg> args,
                                                              std::span<const meta_value> user, src_loc loc) const {
  std::lock_guard lock(s_->mu);
  const std::size_t i = s_->choose(grid, args, user, loc);
  const std::vector<meta_value> metas = s_->merged(s_->opt.configs[i], user, loc);
  build_choice out;
  out.launch = s_->kernel.trace_launch(args, metas, loc);
  out.tuning = s_->tuning_text(s_->key_of(args, loc), user);
  const auto dev = device_of(args);
  if (dev && !dev->aot_targets().empty()) out.target = dev->aot_targets().front();
  out.config = s_->opt.configs[i].str();
  return out;
}

}  // namespace detail
}  // namespace tile

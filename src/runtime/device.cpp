// src/runtime/device.cpp — layer: runtime. Backend enumeration and selection (TILE_BACKEND),
// buffers' memory operations, the compile every backend's kernels pass through
// (TILE_PTXAS_CHECK).
#include <mutex>

#include "aot/catalog.hpp"
#include "aot/device_targets.hpp"
#include "drivers/cpu/cpu_module.hpp"
#include "drivers/cuda/cuda_driver.hpp"
#include "drivers/interpreter/interpreter_driver.hpp"
#ifdef TILE_HAVE_LLVM
#include "drivers/null/null_driver.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/compile.hpp"
#include "jit/ptxas.hpp"
#include "targets/cpu/cpu_target.hpp"
#include "targets/nvptx/nvptx_arch.hpp"
#endif
#include "runtime/device_impl.hpp"
#include "transforms/lower_descriptor_loads.hpp"
#include "transforms/pipeline.hpp"
#include "support/env.hpp"

namespace tile {

namespace {
struct backend_entry {
  const char* name;
  std::shared_ptr<detail::device_impl> (*make)(std::string& why_not);
  bool explicit_only = false;  // never picked by device::best() unless TILE_BACKEND names it
};

std::shared_ptr<detail::device_impl> make_interpreter(std::string&) {
  return std::make_shared<detail::device_impl>("interpreter", "interpreter", drivers::make_interpreter_driver(),
                                               drivers::make_interpreter_module);
}

#ifdef TILE_HAVE_LLVM
constexpr bool kCompiles = true;
#else
constexpr bool kCompiles = false;  // libtile_rt: prebuilt kernels only (src/aot)
/// Without a compiler a backend is there only for the archives' kernels.
detail::device_impl::compile_fn no_compiler() {
  return [](std::shared_ptr<const ir::Function> fn) -> std::unique_ptr<drivers::module> {
    throw tile::error("internal error: no compiler in this library", {}, fn->name);
  };
}
#endif

/// The archive targets a device takes prebuilt kernels for. Without a compiler, every one it
/// runs (best first); with one, only its own best target's (and that arch's PTX): what runs
/// here but is built for an older CPU level or GPU arch is compiled afresh for this one instead.
std::vector<std::string> usable_prebuilt(const std::vector<std::string>& runs) {
  if (!kCompiles || runs.empty()) return runs;
  std::vector<std::string> out{runs.front()};
  if (runs.front().rfind("sm_", 0) == 0)
    for (const auto& t : runs)
      if (t == "ptx:" + runs.front()) out.push_back(t);
  return out;
}

std::shared_ptr<detail::device_impl> make_cpu(std::string& why) {
  const std::vector<std::string> targets = aot::cpu_targets();
  try {
#ifdef TILE_HAVE_LLVM
    const auto& h = targets::cpu::host();
    auto d = std::make_shared<detail::device_impl>("cpu (" + h.cpu + ", " + h.triple + ")", "cpu", drivers::make_cpu_driver(),
                                                   jit::compile_cpu);
#else
    if (!aot::has_target(targets)) {
      why = "this library has no compiler (libtile_rt), and no archive linked or loaded has kernels for this CPU";
      return nullptr;
    }
    auto d = std::make_shared<detail::device_impl>("cpu (" + (targets.empty() ? std::string("?") : targets.front().substr(4)) + ")",
                                                   "cpu", drivers::make_cpu_driver(), no_compiler());
#endif
    d->with_aot(usable_prebuilt(targets), kCompiles);
    return d;
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

// An NVIDIA GPU (device 0) through the CUDA driver API, opened with dlopen; unavailable, with
// the driver's reason, where there is none.
std::shared_ptr<detail::device_impl> make_cuda(std::string& why) {
  try {
    auto drv = drivers::make_cuda_driver(0, why);
    if (!drv) return nullptr;
    auto* cd = static_cast<drivers::cuda_driver*>(drv.get());
    const std::string name = "cuda (" + cd->info().describe() + ")";
    std::vector<std::string> targets = aot::cuda_targets(cd->info().cc_major, cd->info().cc_minor);
#ifdef TILE_HAVE_LLVM
    auto d = std::make_shared<detail::device_impl>(
        name, "cuda", std::move(drv), [cd](std::shared_ptr<const ir::Function> fn) { return jit::compile_cuda(std::move(fn), *cd); });
#else
    if (!aot::has_target(targets)) {
      why = "this library has no compiler (libtile_rt), and no archive linked or loaded has kernels for " + name;
      return nullptr;
    }
    auto d = std::make_shared<detail::device_impl>(name, "cuda", std::move(drv), no_compiler());
#endif
    d->with_aot(usable_prebuilt(targets), kCompiles);
    return d;
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}

#ifdef TILE_HAVE_LLVM

// Compile-only: the NVIDIA compile path for TILE_TARGET (default sm_90a), launches checked
// against its limits, nothing run (drivers/null/null_driver.hpp).
constexpr const char* kDefaultNullTarget = "sm_90a";

std::string null_target() {
  std::string t = env::get("TILE_TARGET");
  return t.empty() ? kDefaultNullTarget : t;
}

std::shared_ptr<detail::device_impl> make_null(std::string& why) {
  const std::string t = null_target();
  targets::nvptx::arch a;
  try {
    a = targets::nvptx::parse_arch(t);
  } catch (const tile::error& e) {
    why = "TILE_TARGET=" + t + ": " + e.message();
    return nullptr;
  }
  const std::string arch = a.name();
  return std::make_shared<detail::device_impl>(
      "null (" + arch + ")", "null", drivers::make_null_driver(drivers::null_limits_for(a.sm, arch)),
      [a](std::shared_ptr<const ir::Function> fn) { return jit::compile_null(*fn, a); }, /*computes=*/false);
}
#endif

// In order of preference (best first); compiled backends join this table as they land.
const backend_entry kBackends[] = {
    {"cuda", make_cuda},
    {"cpu", make_cpu},
    {"interpreter", make_interpreter},
#ifdef TILE_HAVE_LLVM
    {"null", make_null, /*explicit_only=*/true},
#endif
};

std::string known_backends() {
  std::string s;
  for (auto& b : kBackends) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

std::shared_ptr<detail::device_impl> open(std::string_view name, std::string& why) {
  static std::mutex mu;
  // Never destroyed (as the CUDA API table is not): a device outlives every static object that
  // may still hold its buffers at exit; the process's end releases what it holds.
  static auto& opened = *new std::vector<std::pair<std::string, std::shared_ptr<detail::device_impl>>>;
  std::lock_guard lock(mu);
  // The null device is one per TILE_TARGET: a program (a test) may change the target.
  std::string key(name);
#ifdef TILE_HAVE_LLVM
  if (name == "null") key += "|" + null_target();
#endif
  for (auto& [n, d] : opened)
    if (n == key) return d;
  for (auto& b : kBackends)
    if (b.name == name) {
      auto d = b.make(why);
      if (d) opened.emplace_back(key, d);
      return d;
    }
  why = "unknown backend '" + std::string(name) + "' (known: " + known_backends() + ")";
  return nullptr;
}
}  // namespace

device device::get(std::string_view backend, int index) {
  if (index != 0)
    throw tile::error("device " + std::string(backend) + ":" + std::to_string(index) + " does not exist (the " +
                      std::string(backend) + " backend has one device)");
  std::string why;
  auto d = open(backend, why);
  if (!d) throw tile::error("backend '" + std::string(backend) + "' is not available: " + why);
  return device(d);
}

device device::best() {
  std::string forced = env::get("TILE_BACKEND");
  if (!forced.empty()) return get(forced);
  for (auto& b : kBackends) {
    if (b.explicit_only) continue;
    std::string why;
    if (auto d = open(b.name, why)) return device(d);
  }
  throw tile::error("no backend is available");
}

std::vector<device::backend_status> device::backends() {
  std::vector<backend_status> out;
  for (auto& b : kBackends) {
    std::string why;
    auto d = open(b.name, why);
    out.push_back({b.name, d != nullptr, why});
  }
  return out;
}

std::string device::name() const { return impl_->name(); }
std::string device::backend() const { return impl_->backend(); }
bool device::computes() const { return impl_->computes(); }
namespace {
/// The driver's wait; an error that names no line is given the caller's.
void synchronize_at(drivers::driver& drv, std::source_location where) {
  try {
    drv.synchronize();
  } catch (const tile::error& e) {
    if (e.where().known()) throw;
    throw tile::error(e.message(), where, e.kernel());
  }
}
}  // namespace
void device::synchronize(std::source_location where) const { synchronize_at(impl_->driver(), where); }
void stream::synchronize(std::source_location where) const { synchronize_at(dev_->driver(), where); }
void device::set_native_stream(void* native, std::source_location where) const {
  try {
    impl_->driver().set_native_stream(native);
  } catch (const tile::error& e) {
    throw tile::error("set_native_stream on " + name() + ": " + e.message(), where);
  }
}
void* device::native_stream() const { return impl_->driver().native_stream(); }
bool device::capturing() const { return impl_->driver().capturing(); }

namespace detail {
std::unique_ptr<drivers::module> device_impl::compile(std::shared_ptr<const ir::Function> fn) const {
  // descriptor loads: the NVIDIA pipeline (cuda, null) decides which the TMA copies and rewrites
  // the rest; every other backend runs them as the masked loads they mean
  std::shared_ptr<const ir::Function> run = fn;
  if (backend_ != "cuda" && backend_ != "null" && transforms::has_descriptor_loads(*fn)) {
    auto c = ir::clone(*fn);
    transforms::lower_descriptor_loads(*c);
    auto options = transforms::PassManager::Options::from_env();
    options.dump_ir = false;  // (the traced kernel was dumped; this is its rewrite)
    transforms::canonicalize(*c, options);
    run = std::move(c);
  }
  auto m = compile_(run);  // the backend's own errors first
#ifdef TILE_HAVE_LLVM
  jit::ptxas_check(*fn);
#else
  if (const std::string want = env::get("TILE_PTXAS_CHECK"); !want.empty() && want != "0" && want != "off")
    throw tile::error("TILE_PTXAS_CHECK=" + want + " needs tile built with LLVM (the NVIDIA compiler)", {}, fn->name);
#endif
  return m;
}

allocation::allocation(std::shared_ptr<device_impl> d, std::size_t n) : dev(std::move(d)), bytes(n) {
  addr = dev->driver().alloc(n);
}
allocation::allocation(std::shared_ptr<device_impl> d, std::uint64_t a, std::size_t n, std::source_location where)
    : dev(std::move(d)), addr(a), bytes(n), owned(false) {
  try {
    dev->driver().check_foreign(a, n);
  } catch (const tile::error& e) {
    throw tile::error("device::adopt on " + dev->name() + ": " + e.message(), where);
  }
}
allocation::~allocation() {
  if (owned) dev->driver().free(addr);
}

void copy_to_device(const allocation& a, std::size_t offset, const void* src, std::size_t bytes) {
  a.dev->driver().copy_to_device(a.addr + offset, src, bytes);
}
void copy_to_host(const allocation& a, std::size_t offset, void* dst, std::size_t bytes) {
  a.dev->driver().copy_to_host(dst, a.addr + offset, bytes);
}
void read_to_host(const allocation& a, std::size_t offset, void* dst, std::size_t bytes, std::source_location where) {
  if (a.dev->driver().capturing())
    throw tile::error("to_host() on " + a.dev->name() +
                          " while its stream is being captured into a CUDA graph: the copy would run when the graph "
                          "runs, into a vector returned now; use buffer::copy_to with host memory that outlives "
                          "the graph",
                      where);
  copy_to_host(a, offset, dst, bytes);
}
void fill_bytes(const allocation& a, std::size_t offset, unsigned char value, std::size_t bytes) {
  a.dev->driver().fill(a.addr + offset, value, bytes);
}
}  // namespace detail

}  // namespace tile

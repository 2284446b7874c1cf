// src/runtime/device.cpp — layer: runtime. Backend enumeration and selection (TILE_BACKEND),
// buffers' memory operations.
#include <mutex>

#include "drivers/interpreter/interpreter_driver.hpp"
#ifdef TILE_HAVE_LLVM
#include "drivers/cpu/cpu_module.hpp"
#include "jit/compile.hpp"
#include "targets/cpu/cpu_target.hpp"
#endif
#include "runtime/device_impl.hpp"
#include "support/env.hpp"

namespace tile {

namespace {
struct backend_entry {
  const char* name;
  std::shared_ptr<detail::device_impl> (*make)(std::string& why_not);
};

std::shared_ptr<detail::device_impl> make_interpreter(std::string&) {
  return std::make_shared<detail::device_impl>("interpreter", "interpreter", drivers::make_interpreter_driver(),
                                               drivers::make_interpreter_module);
}

#ifdef TILE_HAVE_LLVM
std::shared_ptr<detail::device_impl> make_cpu(std::string& why) {
  try {
    const auto& h = targets::cpu::host();
    return std::make_shared<detail::device_impl>("cpu (" + h.cpu + ", " + h.triple + ")", "cpu", drivers::make_cpu_driver(),
                                                 jit::compile_cpu);
  } catch (const std::exception& e) {
    why = e.what();
    return nullptr;
  }
}
#endif

// In order of preference (best first); compiled backends join this table as they land.
const backend_entry kBackends[] = {
#ifdef TILE_HAVE_LLVM
    {"cpu", make_cpu},
#endif
    {"interpreter", make_interpreter},
};

std::string known_backends() {
  std::string s;
  for (auto& b : kBackends) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

std::shared_ptr<detail::device_impl> open(std::string_view name, std::string& why) {
  static std::mutex mu;
  static std::vector<std::pair<std::string, std::shared_ptr<detail::device_impl>>> opened;
  std::lock_guard lock(mu);
  for (auto& [n, d] : opened)
    if (n == name) return d;
  for (auto& b : kBackends)
    if (b.name == name) {
      auto d = b.make(why);
      if (d) opened.emplace_back(std::string(name), d);
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
void device::synchronize() const { impl_->driver().synchronize(); }
void stream::synchronize() const { dev_->driver().synchronize(); }

namespace detail {
allocation::allocation(std::shared_ptr<device_impl> d, std::size_t n) : dev(std::move(d)), bytes(n) {
  addr = dev->driver().alloc(n);
}
allocation::~allocation() { dev->driver().free(addr); }

void copy_to_device(const allocation& a, std::size_t offset, const void* src, std::size_t bytes) {
  a.dev->driver().copy_to_device(a.addr + offset, src, bytes);
}
void copy_to_host(const allocation& a, std::size_t offset, void* dst, std::size_t bytes) {
  a.dev->driver().copy_to_host(dst, a.addr + offset, bytes);
}
void fill_bytes(const allocation& a, std::size_t offset, unsigned char value, std::size_t bytes) {
  a.dev->driver().fill(a.addr + offset, value, bytes);
}
}  // namespace detail

}  // namespace tile

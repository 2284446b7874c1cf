// src/drivers/cpu/cpu_driver.cpp — layer: drivers (cpu). The host as a device: memory is host
// memory (64-byte aligned), a launch runs the grid's program instances on a persistent thread
// pool sized to the cores (the launching thread takes part), program ids handed out from an
// atomic counter. The first failure (a device_assert, a bad loop step) stops the launch and is
// thrown on the launching thread, naming the kernel and the user's line.
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/cpu/cpu_module.hpp"
#include "drivers/host_memory.hpp"
#include "support/env.hpp"

namespace tile::drivers {
namespace {

/// Runs one job on every worker plus the caller; one job at a time.
class thread_pool {
 public:
  thread_pool() {
    unsigned n = std::thread::hardware_concurrency();
    try {
      if (const unsigned long t = std::stoul(env::get("TILE_CPU_THREADS")); t > 0) n = static_cast<unsigned>(t);
    } catch (const std::exception&) {
      throw tile::error("TILE_CPU_THREADS must be a number, got '" + env::get("TILE_CPU_THREADS") + "'");
    }
    if (n == 0) n = 1;
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { work(); });
  }
  ~thread_pool() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// job(worker_index) on `n` threads (n <= size()), the caller being one of them.
  void run(unsigned n, const std::function<void()>& job) {
    std::lock_guard one_at_a_time(run_mu_);
    if (n <= 1 || workers_.empty()) {
      job();
      return;
    }
    {
      std::lock_guard l(mu_);
      job_ = &job;
      wanted_ = n - 1;
      active_ = 0;
      ++generation_;
    }
    cv_.notify_all();
    job();
    std::unique_lock l(mu_);
    done_cv_.wait(l, [&] { return wanted_ == 0 && active_ == 0; });
    job_ = nullptr;
  }

 private:
  void work() {
    std::uint64_t seen = 0;
    std::unique_lock l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || (generation_ != seen && wanted_ > 0); });
      if (stop_) return;
      seen = generation_;
      --wanted_;
      ++active_;
      const auto* job = job_;
      l.unlock();
      (*job)();
      l.lock();
      --active_;
      if (wanted_ == 0 && active_ == 0) done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void()>* job_ = nullptr;
  unsigned wanted_ = 0, active_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

thread_pool& pool() {
  static thread_pool p;
  return p;
}

/// This thread's scratch memory for large tiles, grown on demand, freed at thread exit; null
/// when the host is out of memory.
void* thread_scratch(std::uint64_t bytes) {
  struct block {
    void* p = nullptr;
    std::uint64_t n = 0;
    ~block() { std::free(p); }
  };
  thread_local block b;
  if (bytes == 0) return nullptr;
  if (b.n < bytes) {
    std::free(b.p);
    b.p = nullptr;
    b.n = 0;
    const std::uint64_t n = (bytes + 63) / 64 * 64;
    b.p = std::aligned_alloc(64, n);
    if (!b.p) return nullptr;  // the launch reports it, naming the kernel
    b.n = n;
  }
  return b.p;
}

}  // namespace

namespace {

class cpu_driver final : public host_memory_driver {
 public:
  std::string name() const override { return "cpu"; }
  /// The CPU's memory is the host's: any non-null pointer (the caller vouches for its extent).
  void check_foreign(std::uint64_t addr, std::size_t) const override {
    if (addr == 0) throw tile::error("a null pointer is not memory");
  }

  void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) override {
    if (m.made_by != module::backend::cpu)
      throw tile::error("the CPU driver was given a module compiled for another backend", cfg.where, std::string(cfg.kernel));
    const auto& mod = static_cast<const cpu_module&>(m);
    std::vector<std::uint64_t> slots(args.size() + 1);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const kernel_arg& a = args[i];
      std::uint64_t s = 0;
      switch (a.k) {
        case kernel_arg::kind::pointer: s = a.addr; break;
        case kernel_arg::kind::integer: s = static_cast<std::uint64_t>(a.i); break;
        case kernel_arg::kind::floating:
          if (a.t == dtype::f64) {
            std::memcpy(&s, &a.f, 8);
          } else if (a.t == dtype::f32) {
            const float f = static_cast<float>(a.f);
            std::uint32_t u;
            std::memcpy(&u, &f, 4);
            s = u;
          } else if (a.t == dtype::f16) {
            s = tile::half::from_float(static_cast<float>(a.f));
          } else {
            s = tile::bfloat16::from_float(static_cast<float>(a.f));
          }
          break;
      }
      slots[i] = s;
    }
    const std::uint64_t gx = cfg.grid[0], gy = cfg.grid[1], gz = cfg.grid[2];
    const std::uint64_t total = gx * gy * gz;
    if (total == 0) return;
    cpu_launch state;
    state.mod = &mod;
    std::atomic<std::uint64_t> next{0};
    auto job = [&] {
      cpu_program p{};
      p.nprog[0] = static_cast<std::int32_t>(gx);
      p.nprog[1] = static_cast<std::int32_t>(gy);
      p.nprog[2] = static_cast<std::int32_t>(gz);
      p.launch = &state;
      p.scratch = thread_scratch(mod.scratch_bytes);
      if (mod.scratch_bytes && !p.scratch) {
        std::lock_guard l(state.mu);
        if (!state.error)
          state.error = std::make_exception_ptr(tile::error(
              "out of host memory for " + std::to_string(mod.scratch_bytes) + " bytes of tile scratch", cfg.where, std::string(cfg.kernel)));
        state.failed.store(true);
        return;
      }
      for (;;) {
        if (state.failed.load(std::memory_order_relaxed)) return;
        const std::uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
        if (id >= total) return;
        p.pid[0] = static_cast<std::int32_t>(id % gx);
        p.pid[1] = static_cast<std::int32_t>((id / gx) % gy);
        p.pid[2] = static_cast<std::int32_t>(id / (gx * gy));
        if (mod.fn(slots.data(), &p) != 0) state.failed.store(true);
      }
    };
    const unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(pool().size(), total));
    pool().run(n, job);
    if (state.error) std::rethrow_exception(state.error);
    if (state.failed) throw tile::error("kernel failed at run time", cfg.where, std::string(cfg.kernel));
  }
};

}  // namespace

std::unique_ptr<driver> make_cpu_driver() { return std::make_unique<cpu_driver>(); }

}  // namespace tile::drivers

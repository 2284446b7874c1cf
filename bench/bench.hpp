// bench/bench.hpp — shared by the benches: the cpu device (or a polite exit), 64-byte aligned
// host vectors, a persistent thread pool for the multi-threaded C++ references, the check every
// reference makes of tile's result, and do_bench with the benches' budget.
#pragma once

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <tile/runtime/testing.hpp>
#include <tile/tile.hpp>

namespace bench {

/// do_bench's budget per measurement: a whole bench stays under a minute.
constexpr double warmup_ms = 25, rep_ms = 100;

/// The CPU JIT backend, or nullopt after saying why it is missing (the bench then exits 0).
inline std::optional<tile::device> cpu_device() {
  try {
    return tile::device::get("cpu");
  } catch (const tile::error& e) {
    std::printf("cpu backend unavailable (%s): nothing to benchmark\n", e.message().c_str());
    return std::nullopt;
  }
}

/// Host memory aligned like the cpu device's (64 bytes), so neither side gets split loads.
template <class T>
struct aligned_allocator {
  using value_type = T;
  aligned_allocator() = default;
  template <class U>
  aligned_allocator(const aligned_allocator<U>&) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
  bool operator==(const aligned_allocator&) const { return true; }
};
using floats = std::vector<float, aligned_allocator<float>>;

inline floats random_floats(std::size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  floats v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

/// Copies between aligned host vectors and device buffers.
inline tile::buffer<float> upload(const tile::device& dev, const floats& v) {
  return dev.upload(std::span<const float>(v.data(), v.size()));
}
inline floats download(const tile::buffer<float>& b) {
  auto v = b.to_host();
  return floats(v.begin(), v.end());
}

inline double max_abs_error(const floats& got, const floats& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    m = std::max(m, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
  return got.size() == want.size() ? m : HUGE_VAL;
}

/// Aborts the bench when tile's result (or the threaded reference's) is wrong: timing a wrong
/// kernel tells nothing.
inline void check(const std::string& what, double err, double tol) {
  if (err <= tol) return;
  std::fprintf(stderr, "%s: max error %.3g exceeds the tolerance %.3g — wrong result, bench aborted\n",
               what.c_str(), err, tol);
  std::exit(1);
}

/// A persistent pool of hardware_concurrency() threads (the caller is one of them), like the cpu
/// backend's: parallel_for hands each thread one contiguous chunk and waits for all of them.
class pool {
 public:
  pool() {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  ~pool() {
    {
      std::lock_guard l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// fn(lo, hi) over [0, n) split into size() chunks, one per thread.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn) {
    const std::function<void(unsigned)> chunk = [&, n](unsigned t) { fn(n * t / size(), n * (t + 1) / size()); };
    {
      std::lock_guard l(mu_);
      job_ = &chunk;
      pending_ = size() - 1;
      ++generation_;
    }
    cv_.notify_all();
    chunk(0);
    std::unique_lock l(mu_);
    done_.wait(l, [&] { return pending_ == 0; });
  }

 private:
  void work(unsigned index) {
    std::uint64_t seen = 0;
    std::unique_lock l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      const auto* job = job_;
      l.unlock();
      (*job)(index);
      l.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

/// "threads: …" for the line after a table: the NT reference's pool and tile's (TILE_CPU_THREADS).
inline std::string threads_note(const pool& p) {
  const char* t = std::getenv("TILE_CPU_THREADS");
  return "threads: c++ NT " + std::to_string(p.size()) + " (hardware_concurrency, a persistent pool), tile " +
         (t && *t && std::string(t) != "0" ? std::string(t) + " (TILE_CPU_THREADS)" : "one per core");
}

/// Median milliseconds of fn (do_bench; tile launches pass make_timer(dev) to synchronize).
inline double median_ms(const std::function<void()>& fn, tile::testing::timer* t = nullptr) {
  return tile::testing::do_bench(fn, warmup_ms, rep_ms, {}, t).median_ms;
}

/// A sweep with the benches' defaults: GB/s on the y axis, providers as given.
inline tile::testing::benchmark sweep(std::string name, std::string x_name, std::vector<double> x_vals,
                                      std::vector<std::string> providers, std::vector<std::string> ratio_of,
                                      std::string ylabel = "GB/s", bool x_log = false) {
  tile::testing::benchmark b;
  b.name = std::move(name);
  b.x_name = std::move(x_name);
  b.x_vals = std::move(x_vals);
  b.line_vals = std::move(providers);
  b.ratio_of = std::move(ratio_of);
  b.ylabel = std::move(ylabel);
  b.x_log = x_log;
  return b;
}

}  // namespace bench

// src/runtime/prof/recorder.hpp — layer: runtime. The launch path's view of the profiler and of
// launch hooks (include/tile/runtime/prof.hpp): kernel_core::launch asks observed() — one relaxed
// atomic load — and only when a session records or a hook is installed wraps the driver's launch
// in a launch_observer, which calls the hooks, records the launch in every active session under
// this thread's scopes and times it (src/runtime/prof/profiler.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "tile/core/error.hpp"

namespace tile::detail {
class device_impl;
}
namespace tile::drivers {
struct launch_config;
}

namespace tile::prof::detail {

/// Sessions recording plus hooks installed; zero on the fast path.
extern std::atomic<int> g_observers;
inline bool observed() noexcept { return g_observers.load(std::memory_order_relaxed) != 0; }

struct launch_state;  // profiler.cpp

/// Around one launch: construct just before the driver's launch, call done() right after it
/// returns. A launch that throws is not recorded (the destructor only calls the exit hooks).
class launch_observer {
 public:
  launch_observer(tile::detail::device_impl& dev, const drivers::launch_config& cfg, std::size_t num_args);
  void done();
  ~launch_observer();
  launch_observer(const launch_observer&) = delete;
  launch_observer& operator=(const launch_observer&) = delete;

 private:
  std::unique_ptr<launch_state> s_;
};

}  // namespace tile::prof::detail

// tile/runtime/prof.hpp — layer: runtime (public). The profiler, modelled on Triton's Proton:
// sessions that record every kernel launch under the call path of user scopes that launched it,
// with device time, and write what proton-viewer and Perfetto read.
//
//   auto s = tile::prof::start("matmul");                  // matmul.hatchet, matmul.chrome_trace
//   {
//     tile::prof::scope train("train", {{"flops", 2.0 * M * N * K}});
//     mm[grid](a, b, c, M, N, K, "BLOCK_M"_c = 128, …);    // recorded under ROOT > train as
//   }                                                     //   "matmul <grid:32x1x1> <warps:8> <stages:3>"
//   tile::prof::finalize();                                // writes the files
//
// `tile-prof -m time/ms,tflop/s matmul.hatchet` prints the tree (tools/tile-prof). Whole programs
// are profiled without code changes with TILE_PROFILE=path (files path.hatchet and
// path.chrome_trace, written at exit).
//
// Time: on the cuda backend from CUPTI's activity records where libcupti can be opened (kernel
// start/end on the GPU's clock), otherwise from CUDA events recorded around each launch on the
// launch's stream; on the host backends (cpu, interpreter) a steady clock around the launch; the
// null backend runs nothing and records counts only. A session's scopes are per thread: a launch
// is recorded under the scopes its own thread has entered.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tile::prof {

/// Metrics a scope carries: {"flops", 2e12}, {"bytes", 8e9}, any counter. They are summed over
/// every entry of the scope; tile-prof derives rates (tflop/s, gbyte/s) from them and the
/// scope's time.
using metrics = std::vector<std::pair<std::string, double>>;

struct session_options {
  bool hatchet = true;       // <name>.hatchet: Proton's call-path tree (proton-viewer, tile-prof)
  bool chrome_trace = true;  // <name>.chrome_trace: one event per launch (Perfetto, chrome://tracing)
  /// Kernel time source on the cuda backend: "auto" (CUPTI where it can be opened, else events),
  /// "cupti" (an error where it cannot), "events".
  std::string device_timer = "auto";
};

/// Misuse (an unknown or finalized session, a bad option, a file that cannot be written) throws a
/// tile::error naming the caller's line.
///
/// Starts (and activates) a session writing <name>.hatchet / <name>.chrome_trace at finalize.
/// Returns its id. Several sessions may run at once; each launch is recorded in every active one.
int start(std::string name = "proton", const session_options& opt = {},
          std::source_location where = std::source_location::current());
/// Resumes recording into a session (all sessions when id < 0).
void activate(int session = -1, std::source_location where = std::source_location::current());
/// Pauses a session: launches and scopes entered meanwhile are not recorded in it.
void deactivate(int session = -1, std::source_location where = std::source_location::current());
/// Waits for the recorded kernels' times, writes the session's files and ends it (every session
/// when id < 0). Returns the paths written.
std::vector<std::string> finalize(int session = -1, std::source_location where = std::source_location::current());
/// Whether any session is recording.
bool active() noexcept;

/// The session's current profile as Proton's hatchet JSON (waits for the device times of the
/// launches recorded so far), without ending it. For tests and tools.
std::string hatchet_json(int session, std::source_location where = std::source_location::current());
/// The same, as a Chrome trace.
std::string chrome_trace_json(int session, std::source_location where = std::source_location::current());
/// How the session times kernels: "cupti", "cuda events", "host clock", "none (null backend)",
/// or "" before its first launch.
std::string timer_of(int session, std::source_location where = std::source_location::current());

/// Enters a scope on this thread (exit_scope ends it); prefer tile::prof::scope.
void enter_scope(std::string_view name, const metrics& m = {});
void exit_scope();
/// Adds metrics to this thread's innermost scope in every active session.
void add_metrics(const metrics& m);

/// A scope for its lifetime: kernels launched by this thread meanwhile are recorded under it.
class scope {
 public:
  explicit scope(std::string_view name, const metrics& m = {}) { enter_scope(name, m); }
  ~scope() { exit_scope(); }
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
};

/// What a launch hook sees (valid during the call only).
struct launch_info {
  std::uint64_t id = 0;           // unique per process, increasing
  std::string_view kernel;        // the kernel's name
  std::string_view backend;       // "cuda", "cpu", "interpreter", "null"
  std::string_view device;        // the device's name
  std::int64_t grid[3] = {1, 1, 1};
  int num_warps = 4, num_stages = 3;
  std::size_t num_args = 0;       // runtime arguments
  const char* file = "";          // the launch's source line
  unsigned line = 0;
};
using launch_hook = std::function<void(const launch_info&)>;
/// Calls `enter` just before and `exit` just after every launch of any kernel (from the
/// launching thread), whether or not a session is active: for external tools (NVTX ranges, a
/// tracer of the engine's own). Either may be empty. Returns an id for remove_launch_hook.
int add_launch_hook(launch_hook enter, launch_hook exit);
void remove_launch_hook(int id);

}  // namespace tile::prof

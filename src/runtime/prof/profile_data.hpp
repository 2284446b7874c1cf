// src/runtime/prof/profile_data.hpp — layer: runtime. What a profiling session recorded, in the
// shape Triton's Proton writes it: a call-path tree of frames (scopes, and kernels as leaves)
// with metrics, trace events for a timeline, and the devices the kernels ran on. The recorder
// (src/runtime/prof/profiler.cpp) fills it; the writers (hatchet.cpp, chrome_trace.cpp) turn it
// into the files proton-viewer and Perfetto read; the viewer (tools/tile-prof) reads them back
// through json.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tile::prof::detail {

/// One frame of the call-path tree: a user scope (or the root), or a kernel (a leaf).
struct frame_node {
  std::string name;     // a scope's name, or a kernel's "matmul <grid:32x1x1> <warps:8> <stages:3>"
  bool kernel = false;  // kernels carry count, device_id, device_type and "time (ns)"
  /// Scopes: the user's metrics (flops, bytes, any counter), summed over every entry of the
  /// scope. Kernels: "count" (launches) and "time (ns)" (their summed duration), plus any
  /// metric the launching scope asked to attribute to it.
  std::map<std::string, double> metrics;
  std::string device_type;  // kernels: "CUDA", "CPU", "INTERPRETER", "NULL"
  int device_id = 0;        // kernels
  std::vector<std::unique_ptr<frame_node>> children;  // in the order they were first entered

  /// The child of that name and kind, created (appended) if absent.
  frame_node& child(const std::string& child_name, bool is_kernel);
};

/// One interval on the timeline (Chrome trace "X" event).
struct trace_event {
  std::string name;        // the kernel's (or scope's) name
  std::string category;    // "kernel" or "scope"
  double ts_us = 0;        // start, microseconds from the session's start
  double dur_us = 0;       // duration, microseconds
  std::uint64_t tid = 0;   // kernels: the device's stream id (Proton: 7 for the default stream); scopes: the host thread
  std::vector<std::string> call_stack;  // "ROOT", the scopes, then the name itself
};

/// A device kernels ran on (the hatchet file's second element).
struct device_info {
  std::string type = "CUDA";  // as in frame_node::device_type
  int id = 0;
  std::string arch;           // "90" for sm_90
  std::int64_t bus_width = 0, clock_rate = 0, memory_clock_rate = 0, num_sms = 0;  // 0: unknown
};

struct profile {
  frame_node root{"ROOT", false, {}, {}, 0, {}};
  std::vector<trace_event> events;
  std::vector<device_info> devices;
};

/// Proton's hatchet JSON: [tree, {device type: {id: info}}]. The root's metrics hold every
/// metric name used anywhere in the tree, as 0 (Proton's inclusive placeholder).
std::string to_hatchet(const profile& p);
/// Reads a hatchet file (Proton's or ours) back: the tree (a frame is a kernel when its metrics
/// hold count, time (ns), device_id or device_type; the root's zero placeholders are dropped) and
/// the devices; events stay empty. Throws std::runtime_error saying what is malformed (for bad
/// JSON: json::parse_error, with the line and column).
profile from_hatchet(std::string_view text);
/// Chrome's trace event format ({"displayTimeUnit": "us", "traceEvents": [...]}) as Proton
/// writes it: one "X" event per kernel launch (cat "kernel", args.call_stack).
std::string to_chrome_trace(const profile& p);

}  // namespace tile::prof::detail

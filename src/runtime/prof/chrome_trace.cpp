// src/runtime/prof/chrome_trace.cpp — layer: runtime. The timeline file for chrome://tracing and
// Perfetto, in the shape Proton writes (test/runtime/data/proton/proton-sample-trace.chrome_trace):
//
//   {"displayTimeUnit":"us","traceEvents":[{"args":{"call_stack":["ROOT","train","add_one"]},
//     "cat":"kernel","dur":2.176,"name":"add_one","ph":"X","pid":0,"tid":7,"ts":0.0}, ...]}
//
// One complete ("X") event per kernel launch (and per scope entry, cat "scope", where the recorder
// keeps them), sorted by start time, ts and dur in microseconds as floats. Proton leaves out
// "pid", which the Trace Event Format lists among an X event's fields; we write "pid": 0 so
// strict readers group the events into one process.
#include <algorithm>
#include <numeric>

#include "runtime/prof/json.hpp"
#include "runtime/prof/profile_data.hpp"

namespace tile::prof::detail {

std::string to_chrome_trace(const profile& p) {
  // By start; equal starts in recording order.
  std::vector<std::size_t> order(p.events.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double ta = p.events[a].ts_us, tb = p.events[b].ts_us;
    return ta != tb ? ta < tb : a < b;
  });

  json::value events = json::value::array();
  for (std::size_t i : order) {
    const trace_event* e = &p.events[i];
    json::value stack = json::value::array();
    for (const std::string& frame : e->call_stack) stack.push_back(json::value::string(frame));
    json::value args = json::value::object();
    args["call_stack"] = std::move(stack);

    json::value ev = json::value::object();
    ev["args"] = std::move(args);
    ev["cat"] = json::value::string(e->category.empty() ? "kernel" : e->category);
    ev["dur"] = json::value::real(e->dur_us);
    ev["name"] = json::value::string(e->name);
    ev["ph"] = json::value::string("X");
    ev["pid"] = json::value::integer(0);
    ev["tid"] = json::value::integer(static_cast<std::int64_t>(e->tid));
    ev["ts"] = json::value::real(e->ts_us);
    events.push_back(std::move(ev));
  }

  json::value doc = json::value::object();
  doc["displayTimeUnit"] = json::value::string("us");
  doc["traceEvents"] = std::move(events);
  return json::dump(doc) + "\n";
}

}  // namespace tile::prof::detail

// src/runtime/prof/profiler.cpp — layer: runtime. The profiler's sessions, scopes, launch hooks
// and the recording of launches (include/tile/runtime/prof.hpp, recorder.hpp).
//
// Recording a launch costs the launching thread a lock, a walk down each active session's tree
// along this thread's scope stack, and the start and end marks of its timer: two CUDA events
// from a pool (cuEventRecord is asynchronous), a CUPTI external-correlation push and pop, or two
// steady-clock reads on the host backends. Recording does not wait for the GPU: a launch's time
// is read when the session is written (hatchet_json, finalize, which synchronize), or, for CUDA
// events, once more than kMaxPending launches wait, from the oldest ones the GPU has finished
// (cuEventQuery); CUPTI's every kMaxPendingCupti launches (a synchronization and a flush).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "drivers/cuda/cuda_driver.hpp"
#include "drivers/cuda/cupti.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/prof/profile_data.hpp"
#include "runtime/prof/recorder.hpp"
#include "support/env.hpp"
#include "tile/runtime/prof.hpp"

namespace tile::prof {
namespace detail {

std::atomic<int> g_observers{0};

namespace {

using clock = std::chrono::steady_clock;
const clock::time_point g_epoch = clock::now();
double host_us(clock::time_point t) { return std::chrono::duration<double, std::micro>(t - g_epoch).count(); }

// Past this many launches timed by CUDA events waiting for their times, the oldest half is
// resolved: their events (long finished on the GPU) go back to the pool, so a long session
// creates few events. CUPTI's records wait in its buffers for much longer: resolving them means
// a device synchronization and a CUPTI flush (milliseconds), so only every kMaxPendingCupti.
constexpr std::size_t kMaxPending = 1024, kMaxPendingCupti = std::size_t{1} << 16;

struct session {
  int id = 0;
  std::string name;
  session_options opt;
  bool active = true;
  profile data;
  std::set<const tile::detail::device_impl*> devices;  // those its kernels ran on
  std::string timer;                                  // how its kernels were timed
};

/// The events of one CUDA driver: a base mark for timestamps and a pool of reusable events.
struct cuda_clock {
  drivers::cuda_driver* drv = nullptr;
  std::unique_ptr<drivers::cuda_event> base;
  double base_host_us = 0;
  std::vector<std::unique_ptr<drivers::cuda_event>> pool;
  std::unique_ptr<drivers::cuda_event> take() {
    if (pool.empty()) return std::make_unique<drivers::cuda_event>(*drv);
    auto e = std::move(pool.back());
    pool.pop_back();
    return e;
  }
};

enum class timer_kind { none, host, events, cupti };

/// One recorded launch until its time is known.
struct record {
  std::uint64_t id = 0;
  std::string name;                 // "add <grid:4x1x1> <warps:4> <stages:3>"
  std::vector<std::string> stack;   // the launching thread's scopes
  std::vector<int> sessions;        // the sessions recording it
  std::vector<std::pair<session*, frame_node*>> where;  // their leaves (once the launch succeeded)
  const tile::detail::device_impl* dev = nullptr;
  std::uint64_t tid = 0;
  timer_kind kind = timer_kind::none;
  double host_start_us = 0, host_end_us = 0;
  cuda_clock* cc = nullptr;
  std::unique_ptr<drivers::cuda_event> ev0, ev1;
};

struct hook {
  int id;
  launch_hook enter, exit;
};

std::mutex g_mu;  // everything below
std::map<int, std::unique_ptr<session>> g_sessions;
int g_next_session = 1;
int g_active = 0;
// launches whose time is not read yet, by timer (host-clock and untimed ones are read at once)
std::deque<record> g_pending_events, g_pending_cupti;
std::map<const drivers::cuda_driver*, std::unique_ptr<cuda_clock>> g_clocks;
drivers::cupti_tracer* g_cupti = nullptr;
std::string g_cupti_why;
bool g_cupti_tried = false;
struct device_time {
  double start_us, end_us;
  std::uint32_t stream;
};
std::map<std::uint64_t, device_time> g_cupti_times;  // external id -> its kernel's time on the GPU
std::shared_ptr<const std::vector<hook>> g_hooks = std::make_shared<std::vector<hook>>();
int g_next_hook = 1;
std::atomic<std::uint64_t> g_next_launch{1};

thread_local std::vector<std::string> t_scopes;

void update_observers() {
  g_observers.store(g_active + static_cast<int>(g_hooks->size()), std::memory_order_relaxed);
}

frame_node& scope_node(session& s, const std::vector<std::string>& stack) {
  frame_node* n = &s.data.root;
  for (const auto& name : stack) n = &n->child(name, false);
  return *n;
}

session& get_session(int id) {
  auto it = g_sessions.find(id);
  if (it == g_sessions.end()) throw tile::error("tile::prof: no session " + std::to_string(id) + " (finalized, or never started)");
  return *it->second;
}

template <class F>
void for_sessions(int id, F f) {
  if (id < 0) {
    for (auto& [k, s] : g_sessions) f(*s);
  } else {
    f(get_session(id));
  }
}

std::string kernel_label(const drivers::launch_config& cfg) {
  return std::string(cfg.kernel) + " <grid:" + std::to_string(cfg.grid[0]) + "x" + std::to_string(cfg.grid[1]) + "x" +
         std::to_string(cfg.grid[2]) + "> <warps:" + std::to_string(cfg.num_warps) +
         "> <stages:" + std::to_string(cfg.num_stages) + ">";
}

std::string device_type(const tile::detail::device_impl& d) {
  std::string t = d.backend();
  for (auto& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return t;  // CUDA, CPU, INTERPRETER, NULL
}

drivers::cuda_driver* cuda_of(const tile::detail::device_impl& d) {
  return dynamic_cast<drivers::cuda_driver*>(&d.driver());
}

/// The cuda backend's timer for sessions asking `want`: CUPTI when it can be opened ("auto",
/// "cupti"), else events. Throws for "cupti" when CUPTI cannot be had.
timer_kind cuda_timer_for(const std::string& want) {
  if (want == "events") return timer_kind::events;
  if (!g_cupti_tried) {
    g_cupti_tried = true;
    g_cupti = drivers::cupti_tracer::open(&g_cupti_why);
  }
  if (g_cupti) return timer_kind::cupti;
  if (want == "cupti") throw tile::error("tile::prof: CUPTI was asked for but cannot be used: " + g_cupti_why);
  return timer_kind::events;
}

const char* timer_name(timer_kind k) {
  switch (k) {
    case timer_kind::cupti: return "cupti";
    case timer_kind::events: return "cuda events";
    case timer_kind::host: return "host clock";
    case timer_kind::none: return "none (null backend)";
  }
  return "";
}

/// Reads the time of `r` and adds it to its sessions' trees and traces.
void resolve(record& r) {
  double start = 0, end = 0;
  bool timed = true;
  switch (r.kind) {
    case timer_kind::host: start = r.host_start_us, end = r.host_end_us; break;
    case timer_kind::events:
      start = r.cc->base_host_us + 1e3 * drivers::cuda_event::elapsed_ms(*r.cc->base, *r.ev0);
      end = start + 1e3 * drivers::cuda_event::elapsed_ms(*r.ev0, *r.ev1);
      r.cc->pool.push_back(std::move(r.ev0));
      r.cc->pool.push_back(std::move(r.ev1));
      break;
    case timer_kind::cupti: {
      auto it = g_cupti_times.find(r.id);
      if (it == g_cupti_times.end()) {
        timed = false;  // no activity record (yet): counted, not timed
      } else {
        start = it->second.start_us, end = it->second.end_us;
        r.tid = it->second.stream;  // as Proton: the trace's thread is the kernel's stream
        g_cupti_times.erase(it);
      }
      break;
    }
    case timer_kind::none: timed = false; break;
  }
  for (auto& [s, leaf] : r.where) {
    leaf->metrics["count"] += 1;
    leaf->metrics["time (ns)"] += timed ? (end - start) * 1e3 : 0.0;
    if (!timed) continue;
    trace_event e;
    e.name = r.name;
    e.category = "kernel";
    e.ts_us = start;
    e.dur_us = end - start;
    e.tid = r.tid;
    e.call_stack.push_back("ROOT");
    e.call_stack.insert(e.call_stack.end(), r.stack.begin(), r.stack.end());
    e.call_stack.push_back(r.name);
    s->data.events.push_back(std::move(e));
  }
}

void drain_cupti() {
  if (!g_cupti) return;
  for (auto& k : g_cupti->flush())
    if (k.external_id)
      g_cupti_times[k.external_id] = {static_cast<double>(k.start_ns) * 1e-3, static_cast<double>(k.end_ns) * 1e-3,
                                      k.stream_id};
}

/// Resolves the oldest `n` pending launches (all when n is SIZE_MAX).
/// Resolves the oldest `n` launches timed by events (all when n is SIZE_MAX).
void resolve_events(std::size_t n = SIZE_MAX) {
  for (std::size_t i = 0; i < n && !g_pending_events.empty(); ++i) {
    record r = std::move(g_pending_events.front());  // out first: one that fails is dropped, not retried forever
    g_pending_events.pop_front();
    resolve(r);
  }
}

/// On the launch path: resolves up to `n` of the oldest launches timed by events whose end event
/// has completed (cuEventQuery), stopping at the first that has not — the launching thread does
/// not wait for the GPU. Past 4 kMaxPending waiting launches it waits for the oldest after all
/// (a GPU that far behind would otherwise make the pool grow without bound).
void resolve_finished_events(std::size_t n) {
  for (std::size_t i = 0; i < n && !g_pending_events.empty(); ++i) {
    if (g_pending_events.size() <= 4 * kMaxPending && !g_pending_events.front().ev1->done()) break;
    record r = std::move(g_pending_events.front());
    g_pending_events.pop_front();
    resolve(r);
  }
}

/// Resolves the oldest `n` launches timed by CUPTI: their devices are synchronized first (CUPTI
/// reports a kernel once it has finished), then CUPTI's buffers flushed.
void resolve_cupti(std::size_t n = SIZE_MAX) {
  if (g_pending_cupti.empty()) return;
  std::set<const tile::detail::device_impl*> devs;
  for (std::size_t i = 0; i < n && i < g_pending_cupti.size(); ++i) devs.insert(g_pending_cupti[i].dev);
  for (const auto* d : devs) d->driver().synchronize();
  drain_cupti();
  for (std::size_t i = 0; i < n && !g_pending_cupti.empty(); ++i) {
    record r = std::move(g_pending_cupti.front());
    g_pending_cupti.pop_front();
    resolve(r);
  }
}

void resolve_pending() {
  resolve_events();
  resolve_cupti();
}

/// The session's profile with its devices, ready to write (call with g_mu held, after
/// resolve_pending).
profile snapshot_devices(session& s) {
  profile p;
  p.devices.clear();
  for (const auto* d : s.devices) {
    device_info info;
    info.type = device_type(*d);
    if (auto* cu = cuda_of(*d)) {
      const auto& ci = cu->info();
      info.id = ci.index;
      info.arch = std::to_string(ci.compute_capability());
      info.num_sms = ci.sm_count;
      info.clock_rate = ci.clock_rate_khz;
      info.memory_clock_rate = ci.memory_clock_rate_khz;
      info.bus_width = ci.memory_bus_width;
    }
    p.devices.push_back(info);
  }
  return p;
}

/// Writes `s` as its options say; the paths written.
std::vector<std::string> write_files(session& s) {
  profile devs = snapshot_devices(s);
  s.data.devices = devs.devices;
  // timestamps from the session's first kernel, as Proton writes them
  double t0 = 0;
  if (!s.data.events.empty()) {
    t0 = s.data.events.front().ts_us;
    for (auto& e : s.data.events) t0 = std::min(t0, e.ts_us);
  }
  profile shifted;
  std::vector<std::string> out;
  auto write = [&](const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) throw tile::error("tile::prof: cannot write '" + path + "'");
    out.push_back(path);
  };
  if (s.opt.hatchet) write(s.name + ".hatchet", to_hatchet(s.data));
  if (s.opt.chrome_trace) {
    auto events = s.data.events;
    for (auto& e : s.data.events) e.ts_us -= t0;
    write(s.name + ".chrome_trace", to_chrome_trace(s.data));
    s.data.events = std::move(events);
  }
  return out;
}

// ---- TILE_PROFILE: a session for the whole program, written at exit -----------------------------
int g_env_session = 0;
bool g_env_atexit = false;

void finalize_env_session() {
  int id = 0;
  {
    std::lock_guard lock(g_mu);
    id = g_env_session;
    g_env_session = 0;
    if (!id || !g_sessions.count(id)) return;
  }
  try {
    auto paths = finalize(id);
    for (auto& p : paths) std::fprintf(stderr, "tile: TILE_PROFILE wrote %s\n", p.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile: TILE_PROFILE: %s\n", e.what());
  }
}

struct env_profile {
  env_profile() {
    std::string path = tile::env::get("TILE_PROFILE");
    if (path.empty()) return;
    for (const char* ext : {".hatchet", ".chrome_trace"})
      if (path.size() > std::string_view(ext).size() && path.ends_with(ext)) path.resize(path.size() - std::string_view(ext).size());
    g_env_session = start(path);
  }
  // If no launch registered the exit handler (which runs before the CUDA driver's own), the
  // library's static destruction still writes the files.
  ~env_profile() { finalize_env_session(); }
};
const env_profile g_env_profile;

}  // namespace

// ---- the launch path ------------------------------------------------------------------------------

struct launch_state {
  launch_info info;
  std::shared_ptr<const std::vector<hook>> hooks;
  std::optional<record> rec;
  bool finished = false;
  bool cupti_pushed = false;
};

launch_observer::launch_observer(tile::detail::device_impl& dev, const drivers::launch_config& cfg, std::size_t num_args)
    : s_(std::make_unique<launch_state>()) {
  launch_info& i = s_->info;
  i.id = g_next_launch.fetch_add(1, std::memory_order_relaxed);
  i.kernel = cfg.kernel;
  i.backend = dev.backend();
  i.device = dev.name();
  for (int d = 0; d < 3; ++d) i.grid[d] = cfg.grid[d];
  i.num_warps = cfg.num_warps;
  i.num_stages = cfg.num_stages;
  i.num_args = num_args;
  i.file = cfg.where.file ? cfg.where.file : "";
  i.line = cfg.where.line;
  {
    std::lock_guard lock(g_mu);
    s_->hooks = g_hooks;
    if (g_active) {
      record r;
      r.id = i.id;
      r.dev = &dev;
      r.stack = t_scopes;
      r.name = kernel_label(cfg);
      std::string want;  // the first active session's device timer decides
      for (auto& [k, s] : g_sessions)
        if (s->active) {
          r.sessions.push_back(k);
          if (want.empty()) want = s->opt.device_timer;
        }
      if (!r.sessions.empty()) {
        auto* cu = cuda_of(dev);
        if (!dev.computes() || (cu && cu->capturing())) {
          r.kind = timer_kind::none;  // nothing runs (null backend), or runs later, in the caller's graph
        } else if (cu) {
          r.kind = cuda_timer_for(want);
        } else {
          r.kind = timer_kind::host;
        }
        if (r.kind == timer_kind::events) {
          auto& cc = g_clocks[cu];
          if (!cc) {
            cc = std::make_unique<cuda_clock>();
            cc->drv = cu;
            cc->base = std::make_unique<drivers::cuda_event>(*cu);
            cc->base->record();
            cc->base_host_us = host_us(clock::now());
          }
          r.cc = cc.get();
          r.ev0 = cc->take();
          r.ev1 = cc->take();
          r.tid = reinterpret_cast<std::uintptr_t>(cu->stream()) ? reinterpret_cast<std::uintptr_t>(cu->stream()) : 7;
        } else {
          r.tid = std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffff;
        }
        if (cu && r.kind != timer_kind::none && !g_env_atexit && g_env_session) {
          // after the CUDA driver is open: runs before its own exit handlers
          g_env_atexit = true;
          std::atexit(finalize_env_session);
        }
        s_->rec.emplace(std::move(r));
      }
    }
  }
  // A hook or the timer's start that throws leaves nothing behind: the hooks entered so far are
  // exited and the events go back (the destructor does not run for a constructor that throws).
  std::size_t entered = 0;
  try {
    for (const hook& h : *s_->hooks) {
      if (h.enter) h.enter(i);
      ++entered;
    }
    if (s_->rec) {
      record& r = *s_->rec;
      switch (r.kind) {
        case timer_kind::host: r.host_start_us = host_us(clock::now()); break;
        case timer_kind::events: r.ev0->record(); break;
        case timer_kind::cupti:
          g_cupti->push_external_id(r.id);
          s_->cupti_pushed = true;
          break;
        case timer_kind::none: break;
      }
    }
  } catch (...) {
    for (std::size_t k = 0; k < entered; ++k) {
      try {
        if ((*s_->hooks)[k].exit) (*s_->hooks)[k].exit(i);
      } catch (...) {  // the first error is the one that propagates
      }
    }
    if (s_->rec && s_->rec->kind == timer_kind::events) {
      std::lock_guard lock(g_mu);
      for (auto* e : {&s_->rec->ev0, &s_->rec->ev1})
        if (*e) s_->rec->cc->pool.push_back(std::move(*e));
    }
    throw;
  }
}

void launch_observer::done() {
  s_->finished = true;  // from here the record belongs to the queues (a resolve below may throw)
  if (s_->rec) {
    record& r = *s_->rec;
    switch (r.kind) {
      case timer_kind::host: r.host_end_us = host_us(clock::now()); break;
      case timer_kind::events: r.ev1->record(); break;
      case timer_kind::cupti:
        g_cupti->pop_external_id();
        s_->cupti_pushed = false;
        break;
      case timer_kind::none: break;
    }
    std::lock_guard lock(g_mu);
    // the leaves are made only for a launch that succeeded (in sessions not finalized meanwhile)
    for (int id : r.sessions) {
      auto it = g_sessions.find(id);
      if (it == g_sessions.end()) continue;
      session& s = *it->second;
      frame_node& leaf = scope_node(s, r.stack).child(r.name, true);
      leaf.device_type = device_type(*r.dev);
      if (auto* cu = cuda_of(*r.dev)) leaf.device_id = cu->info().index;
      s.devices.insert(r.dev);
      if (s.timer.empty()) s.timer = timer_name(r.kind);
      r.where.emplace_back(&s, &leaf);
    }
    switch (r.kind) {
      case timer_kind::events:
        g_pending_events.push_back(std::move(r));
        if (g_pending_events.size() > kMaxPending) resolve_finished_events(kMaxPending / 2);
        break;
      case timer_kind::cupti:
        g_pending_cupti.push_back(std::move(r));
        if (g_pending_cupti.size() > kMaxPendingCupti) resolve_cupti(kMaxPendingCupti / 2);
        break;
      case timer_kind::host:
      case timer_kind::none: resolve(r); break;
    }
  }
  for (const hook& h : *s_->hooks)
    if (h.exit) h.exit(s_->info);
}

launch_observer::~launch_observer() {
  if (s_->finished) return;
  if (s_->cupti_pushed) g_cupti->pop_external_id();
  if (s_->rec && s_->rec->kind == timer_kind::events) {  // give the events back
    std::lock_guard lock(g_mu);
    for (auto* e : {&s_->rec->ev0, &s_->rec->ev1})
      if (*e) s_->rec->cc->pool.push_back(std::move(*e));
  }
  for (const hook& h : *s_->hooks) {
    try {
      if (h.exit) h.exit(s_->info);
    } catch (...) {  // the launch's own error is what propagates
    }
  }
}

}  // namespace detail

// ---- the public API -----------------------------------------------------------------------------------
using namespace detail;

namespace {
/// f(), its errors naming the caller's line where they name none.
template <class F>
auto at_caller(std::source_location where, F f) {
  try {
    return f();
  } catch (const tile::error& e) {
    if (e.where().known()) throw;
    throw tile::error(e.message(), where);
  }
}
}  // namespace

int start(std::string name, const session_options& opt, std::source_location where) {
  return at_caller(where, [&] {
    if (name.empty()) throw tile::error("tile::prof::start: a session needs a name (its files' path without extension)");
    if (opt.device_timer != "auto" && opt.device_timer != "cupti" && opt.device_timer != "events")
      throw tile::error("tile::prof::start: device_timer is \"auto\", \"cupti\" or \"events\", got \"" + opt.device_timer + "\"");
    std::lock_guard lock(g_mu);
    if (opt.device_timer == "cupti") (void)cuda_timer_for("cupti");  // unavailable: an error here, not at every launch
    auto s = std::make_unique<session>();
    s->id = g_next_session++;
    s->name = std::move(name);
    s->opt = opt;
    const int id = s->id;
    g_sessions.emplace(id, std::move(s));
    ++g_active;
    update_observers();
    return id;
  });
}

void activate(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    for_sessions(id, [](session& s) {
      if (!s.active) s.active = true, ++g_active;
    });
    update_observers();
  });
}

void deactivate(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    for_sessions(id, [](session& s) {
      if (s.active) s.active = false, --g_active;
    });
    update_observers();
  });
}

std::vector<std::string> finalize(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    std::vector<int> ids;
    for_sessions(id, [&](session& s) { ids.push_back(s.id); });
    resolve_pending();
    std::vector<std::string> paths;
    for (int i : ids) {
      session& s = get_session(i);
      auto p = write_files(s);
      paths.insert(paths.end(), p.begin(), p.end());
      if (s.active) --g_active;
      g_sessions.erase(i);
    }
    if (g_sessions.empty() && g_cupti) {  // no session left: stop tracing (and buffering) every kernel
      g_cupti_times.clear();
      (void)g_cupti->flush(true);
      g_cupti->disable();
      g_cupti = nullptr;
      g_cupti_tried = false;  // the next session opens (re-enables) it again
    }
    update_observers();
    return paths;
  });
}

bool active() noexcept {
  std::lock_guard lock(g_mu);
  return g_active > 0;
}

std::string hatchet_json(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    session& s = get_session(id);
    resolve_pending();
    s.data.devices = snapshot_devices(s).devices;
    return to_hatchet(s.data);
  });
}

std::string chrome_trace_json(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    session& s = get_session(id);
    resolve_pending();
    return to_chrome_trace(s.data);
  });
}

std::string timer_of(int id, std::source_location where) {
  return at_caller(where, [&] {
    std::lock_guard lock(g_mu);
    return get_session(id).timer;
  });
}

void enter_scope(std::string_view name, const metrics& m) {
  t_scopes.emplace_back(name);
  if (!observed()) return;
  std::lock_guard lock(g_mu);
  for (auto& [k, s] : g_sessions) {
    if (!s->active) continue;
    frame_node& n = scope_node(*s, t_scopes);
    for (auto& [key, v] : m) n.metrics[key] += v;
  }
}

void exit_scope() {
  if (!t_scopes.empty()) t_scopes.pop_back();
}

void add_metrics(const metrics& m) {
  if (!observed()) return;
  std::lock_guard lock(g_mu);
  for (auto& [k, s] : g_sessions) {
    if (!s->active) continue;
    frame_node& n = scope_node(*s, t_scopes);
    for (auto& [key, v] : m) n.metrics[key] += v;
  }
}

int add_launch_hook(launch_hook enter, launch_hook exit) {
  std::lock_guard lock(g_mu);
  auto v = std::make_shared<std::vector<hook>>(*g_hooks);
  const int id = g_next_hook++;
  v->push_back({id, std::move(enter), std::move(exit)});
  g_hooks = std::move(v);
  update_observers();
  return id;
}

void remove_launch_hook(int id) {
  std::lock_guard lock(g_mu);
  auto v = std::make_shared<std::vector<hook>>(*g_hooks);
  std::erase_if(*v, [id](const hook& h) { return h.id == id; });
  g_hooks = std::move(v);
  update_observers();
}

}  // namespace tile::prof

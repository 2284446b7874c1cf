// src/aot/record.cpp — layer: aot. See record.hpp.
#include "aot/record.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "aot/catalog.hpp"
#include "support/env.hpp"

namespace tile::aot {
namespace {

struct recorder {
  std::mutex mu;
  std::vector<detail::traced_launch> launches;
  std::vector<std::string> keys;
  bool at_exit = false;
  record_writer writer = nullptr;
};
recorder& rec() {
  static auto& r = *new recorder;  // never destroyed: written from an atexit handler
  return r;
}

void write_at_exit() {
  recorder& r = rec();
  std::lock_guard l(r.mu);
  const std::string path = env::get("TILE_AOT_RECORD");
  std::vector<std::string> targets;
  std::stringstream ss(env::get("TILE_AOT_TARGETS"));
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) targets.push_back(t);
  if (!r.writer) {
    std::fprintf(stderr, "tile: TILE_AOT_RECORD=%s: this program has no compiler to write them with (it links "
                         "libtile_rt): %zu launches recorded, nothing written (link libtile to record)\n",
                 path.c_str(), r.launches.size());
    return;
  }
  try {
    const std::string line = r.writer(r.launches, path, targets);
    std::fprintf(stderr, "%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile: TILE_AOT_RECORD=%s: %s\n", path.c_str(), e.what());
  }
}

}  // namespace

bool recording() {
  static const bool on = !env::get("TILE_AOT_RECORD").empty();
  return on;
}

void record(detail::traced_launch launch) {
  recorder& r = rec();
  const std::string key = lookup_key(*launch.fn);
  std::lock_guard l(r.mu);
  for (const auto& k : r.keys)
    if (k == key) return;
  r.keys.push_back(key);
  r.launches.push_back(std::move(launch));
  if (!r.at_exit) {
    r.at_exit = true;
    std::atexit(write_at_exit);  // after the compilers' static objects: they were made before
  }
}

void set_record_writer(record_writer w) {
  std::lock_guard l(rec().mu);
  rec().writer = w;
}

}  // namespace tile::aot

// src/jit/compile_cache.cpp — layer: jit. See compile_cache.hpp.
#include "jit/compile_cache.hpp"

#include <mutex>
#include <unordered_map>

#include "jit/dump.hpp"
#include "support/env.hpp"

namespace tile::jit {
namespace {

struct state {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const void>> memory;  // digest.kind -> result
  std::unique_ptr<disk_cache> disk;
  compile_stats stats;
};

state& the_state() {
  static state s;
  return s;
}

}  // namespace

cache_policy cache_policy::from_env() {
  cache_policy p;
  p.store = env::enabled("TILE_CACHE");
  p.lookup = p.store && dump_dir().empty() && !env::enabled("TILE_TIME_PASSES");
  return p;
}

disk_cache& shared_disk_cache() {
  state& s = the_state();
  std::lock_guard l(s.mu);
  if (!s.disk) s.disk = std::make_unique<disk_cache>(env::get("TILE_CACHE_DIR"));
  return *s.disk;
}

namespace detail {
std::shared_ptr<const void> memory_find(const std::string& id) {
  state& s = the_state();
  std::lock_guard l(s.mu);
  auto it = s.memory.find(id);
  return it == s.memory.end() ? nullptr : it->second;
}
void memory_put(const std::string& id, std::shared_ptr<const void> value) {
  state& s = the_state();
  std::lock_guard l(s.mu);
  s.memory[id] = std::move(value);
}
}  // namespace detail

compile_stats stats() {
  state& s = the_state();
  std::lock_guard l(s.mu);
  return s.stats;
}

void count(stat what) {
  state& s = the_state();
  std::lock_guard l(s.mu);
  switch (what) {
    case stat::compiled: ++s.stats.compiled; break;
    case stat::memory_hit: ++s.stats.memory_hits; break;
    case stat::disk_hit: ++s.stats.disk_hits; break;
  }
}

}  // namespace tile::jit

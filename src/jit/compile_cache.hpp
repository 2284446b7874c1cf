// src/jit/compile_cache.hpp — layer: jit. The one compile cache of every backend: results in
// memory by key digest and kind, their bytes on disk (jit/disk_cache.hpp, TILE_CACHE_DIR), and
// the counters of compile_stats. A backend gives its key, how to build a result and how to turn
// it into bytes and back (jit/artifact.hpp); the policy (TILE_CACHE, TILE_DUMP_DIR,
// TILE_TIME_PASSES) is decided here once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "jit/compile.hpp"
#include "jit/disk_cache.hpp"

namespace tile::jit {

/// When the caches are read and written. TILE_CACHE=0 turns both off; a dump (TILE_DUMP_DIR) or
/// TILE_TIME_PASSES bypasses the lookups (a cached kernel would skip its dump or its timing)
/// and still stores the result.
struct cache_policy {
  bool lookup = true;
  bool store = true;
  static cache_policy from_env();
};

/// The process's disk cache (TILE_CACHE_DIR, else disk_cache::default_dir()).
disk_cache& shared_disk_cache();

namespace detail {
std::shared_ptr<const void> memory_find(const std::string& id);
void memory_put(const std::string& id, std::shared_ptr<const void> value);
}  // namespace detail

/// `key`'s result of kind `kind` ("ptx", "o"): from memory, else from disk (decode: null for an
/// entry it cannot read, which is built again), else built (and stored where the policy says).
/// Counts the memory hit, the disk hit or the compile.
template <class T>
std::shared_ptr<const T> cached(const cache_key& key, std::string_view kind, const cache_policy& policy,
                                const std::function<std::shared_ptr<const T>()>& build,
                                const std::function<std::string(const T&)>& encode,
                                const std::function<std::shared_ptr<const T>(std::string_view)>& decode) {
  const std::string id = key.digest() + "." + std::string(kind);
  if (policy.lookup) {
    if (auto hit = detail::memory_find(id)) {
      count(stat::memory_hit);
      return std::static_pointer_cast<const T>(hit);
    }
    if (auto bytes = shared_disk_cache().load(key, kind)) {
      if (std::shared_ptr<const T> v = decode(*bytes)) {
        detail::memory_put(id, v);
        count(stat::disk_hit);
        return v;
      }
    }
  }
  std::shared_ptr<const T> v = build();
  count(stat::compiled);
  if (policy.store) {
    shared_disk_cache().store(key, encode(*v), kind);
    detail::memory_put(id, v);
  }
  return v;
}

}  // namespace tile::jit

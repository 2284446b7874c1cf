// src/jit/disk_cache.hpp — layer: jit. The on-disk compile cache: one file per compiled kernel,
// keyed by everything that decides the generated code (the IR's structural hash, the target and
// its options, the library's version). It is an optimization only: any I/O problem is a miss, an
// unwritable directory turns the cache off with one warning, and a corrupt entry is rebuilt, never
// trusted. No LLVM here: payloads are opaque bytes (an object file, PTX, a code object…).
//
// Entry file <dir>/<kernel>-<digest>.<ext>, integers little-endian:
//   "TILECACHE1\n"  u64 key-text length  key text (cache_key::text(): every field, so a digest
//   collision is detected)  u64 payload length  payload  u64 checksum (XXH64 of the payload)
// Writes go to a unique temporary file in the same directory, then rename() over the final name:
// readers see the old entry or the new one, never a partial file, and any number of threads and
// processes may store the same key at once. There is no fsync: after a crash a torn entry fails
// its checksum and is rebuilt.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tile::jit {

/// What decides a cached artifact. Every field is part of the digest and of the entry's header.
struct cache_key {
  std::uint64_t ir_hash = 0;  // structural hash of the tile IR
  std::string target;         // "cpu-x86_64-znver3+avx2...", "sm_90a", ...
  std::string options;        // target options text (opt level, num_warps, ...)
  std::string version;        // which build of the library (support::build_id(): version + binary)
  std::string kernel;         // kernel name; also makes file names readable

  /// Stable 128-bit digest as 32 lowercase hex digits (FNV-1a 64 and XXH64 over text()); the same
  /// on every platform and in every process.
  std::string digest() const;
  /// Canonical, unambiguous text of every field ("<field> <length>:<value>\n" each); stored in the
  /// entry's header and compared on load.
  std::string text() const;
};

/// XXH64 of `s` (the reference algorithm, written out in disk_cache.cpp: no dependency); the
/// same on every platform.
std::uint64_t xxh64(std::string_view s, std::uint64_t seed = 0);
/// `v` as 16 lowercase hex digits.
std::string hex64(std::uint64_t v);

/// A cache directory. Thread-safe: one object may be shared by every thread; several objects (in one
/// or several processes) may use the same directory at once. Not copyable or movable (hold it by
/// reference or pointer).
class disk_cache {
 public:
  /// `dir`: the cache directory, created on the first store. Empty means default_dir() (the caller
  /// resolves $TILE_CACHE_DIR first). Touches no file.
  explicit disk_cache(std::string dir);
  disk_cache(const disk_cache&) = delete;
  disk_cache& operator=(const disk_cache&) = delete;

  /// $XDG_CACHE_HOME/tile, else $HOME/.cache/tile, else <temp dir>/tile-cache-<uid> (normally /tmp).
  static std::string default_dir();

  const std::string& dir() const { return dir_; }
  /// False once the directory proved unwritable; then load and store do nothing.
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  /// The payload stored under `k`, or nullopt on a miss. Never throws. A truncated or corrupt entry
  /// (bad magic, bad length, checksum or key mismatch) is a miss: it is removed, with one line on
  /// stderr per entry path and process:
  ///   tile: warning: ignoring corrupt cache entry <path> (<reason>); rebuilding
  std::optional<std::string> load(const cache_key& k, std::string_view artifact_ext = "bin") const;

  /// Stores `payload` under `k` atomically (unique temp file + rename). Never throws. If the
  /// directory cannot be created or written, prints once per process
  ///   tile: warning: cache directory <dir> is not writable (<strerror>); using the in-memory cache only
  /// and disables this cache.
  void store(const cache_key& k, std::string_view payload, std::string_view artifact_ext = "bin");

  /// <dir>/<kernel>-<digest>.<ext>; the kernel name and extension are reduced to [A-Za-z0-9_.-]
  /// (other characters become '_', the name is cut to 64 characters).
  std::string path_for(const cache_key& k, std::string_view ext = "bin") const;

 private:
  void disable(int err);

  std::string dir_;
  bool in_temp_ = false;  // dir_ is the <temp dir>/tile-cache-<uid> fallback: must stay private to us
  std::atomic<bool> enabled_{true};
};

}  // namespace tile::jit

// src/jit/disk_cache.cpp — layer: jit. The on-disk compile cache: key digests, the entry format,
// atomic writes (temp file + rename) and corrupt-entry detection. POSIX file descriptors for the
// entry files (exclusive create, stat identity), std::filesystem for paths and directories.
#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>

namespace tile::jit {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view entry_magic = "TILECACHE1\n";

// ---- hashing ---------------------------------------------------------------------------------------

constexpr std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

constexpr std::uint64_t xxh_p1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t xxh_p2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t xxh_p3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t xxh_p4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t xxh_p5 = 0x27D4EB2F165667C5ull;

constexpr std::uint64_t rotl64(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// Little-endian reads whatever the host's byte order, so digests and checksums are portable.
constexpr std::uint64_t read_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

constexpr std::uint64_t xxh_round(std::uint64_t acc, std::uint64_t input) {
  acc += input * xxh_p2;
  acc = rotl64(acc, 31);
  return acc * xxh_p1;
}

constexpr std::uint64_t xxh_merge(std::uint64_t acc, std::uint64_t v) {
  acc ^= xxh_round(0, v);
  return acc * xxh_p1 + xxh_p4;
}

}  // namespace

std::uint64_t xxh64(std::string_view s, std::uint64_t seed) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* const end = p + s.size();
  std::uint64_t h;
  if (s.size() >= 32) {
    std::uint64_t v1 = seed + xxh_p1 + xxh_p2, v2 = seed + xxh_p2, v3 = seed, v4 = seed - xxh_p1;
    for (; end - p >= 32; p += 32) {
      v1 = xxh_round(v1, read_le(p, 8));
      v2 = xxh_round(v2, read_le(p + 8, 8));
      v3 = xxh_round(v3, read_le(p + 16, 8));
      v4 = xxh_round(v4, read_le(p + 24, 8));
    }
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xxh_merge(xxh_merge(xxh_merge(xxh_merge(h, v1), v2), v3), v4);
  } else {
    h = seed + xxh_p5;
  }
  h += static_cast<std::uint64_t>(s.size());
  for (; end - p >= 8; p += 8) h = rotl64(h ^ xxh_round(0, read_le(p, 8)), 27) * xxh_p1 + xxh_p4;
  if (end - p >= 4) {
    h = rotl64(h ^ (read_le(p, 4) * xxh_p1), 23) * xxh_p2 + xxh_p3;
    p += 4;
  }
  for (; p < end; ++p) h = rotl64(h ^ (*p * xxh_p5), 11) * xxh_p1;
  h ^= h >> 33;
  h *= xxh_p2;
  h ^= h >> 29;
  h *= xxh_p3;
  h ^= h >> 32;
  return h;
}

std::string hex64(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (int shift = 60; shift >= 0; shift -= 4) out += digits[(v >> shift) & 0xf];
  return out;
}

namespace {

void append_hex(std::string& out, std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out += digits[(v >> shift) & 0xf];
}

void append_u64_le(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += ' ';
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

/// The entry's checksum: XXH64 of the payload, seeded with XXH64 of everything before it (magic and
/// header), so a flipped bit anywhere in the file is caught.
std::uint64_t entry_checksum(std::string_view head, std::string_view payload) {
  return xxh64(payload, xxh64(head, 0));
}

// ---- file names ------------------------------------------------------------------------------------

std::string sanitize(std::string_view s, std::size_t max_len, bool allow_dot, std::string_view fallback) {
  std::string out;
  for (char c : s.substr(0, max_len)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || (allow_dot && c == '.' && !out.empty());
    out += ok ? c : '_';
  }
  return out.empty() ? std::string(fallback) : out;
}

/// The last-resort default, <temp dir>/tile-cache-<uid>. It lives in a world-writable place, so it is
/// created 0700 and used only while it is a real directory owned by us (see private_dir_ok).
std::string temp_fallback_dir() {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec || tmp.empty()) tmp = "/tmp";
  return (tmp / ("tile-cache-" + std::to_string(::getuid()))).string();
}

/// True when `dir` is a directory (not a symlink) owned by this user and writable by no one else:
/// then nobody else can plant code objects in it.
bool private_dir_ok(const std::string& dir) {
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::getuid() &&
         (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

// ---- warnings (each at most once per process, or once per entry path) --------------------------------

void print_line(const std::string& line) {
  // One fwrite of the whole line: concurrent warnings do not interleave within a line.
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void warn_corrupt(const std::string& path, std::string_view reason) {
  static std::mutex m;
  static auto* warned = new std::unordered_set<std::string>();  // leaked: usable during exit
  {
    std::lock_guard lock(m);
    if (!warned->insert(path).second) return;
  }
  print_line("tile: warning: ignoring corrupt cache entry " + path + " (" + std::string(reason) +
             "); rebuilding\n");
}

std::atomic<bool> unwritable_warned{false};

// ---- file I/O ---------------------------------------------------------------------------------------

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

/// Reads the whole file; false on an I/O error.
bool read_all(int fd, std::string& out, std::size_t size_hint) {
  out.clear();
  out.reserve(size_hint);
  std::array<char, 1 << 16> buf{};
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
}

/// Writes every byte; errno is set when it returns false.
bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

/// Checks `bytes` as an entry for `key_text`. On success returns "" and leaves the payload in
/// [payload_at, payload_at + payload_len); otherwise returns the reason it is corrupt.
std::string_view check_entry(const std::string& bytes, const std::string& key_text, std::size_t& payload_at,
                             std::size_t& payload_len) {
  const std::size_t n = bytes.size();
  if (n < entry_magic.size())
    return entry_magic.starts_with(std::string_view(bytes)) ? "truncated" : "bad magic";
  if (std::string_view(bytes).substr(0, entry_magic.size()) != entry_magic) return "bad magic";
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t pos = entry_magic.size();
  if (n - pos < 8) return "truncated";
  const std::uint64_t key_len = read_le(u + pos, 8);
  pos += 8;
  if (key_len > n - pos) return "truncated";
  const std::string_view stored_key(bytes.data() + pos, static_cast<std::size_t>(key_len));
  pos += static_cast<std::size_t>(key_len);
  if (n - pos < 8) return "truncated";
  const std::uint64_t len = read_le(u + pos, 8);
  pos += 8;
  if (len > n - pos || n - pos - len < 8) return "truncated";
  if (n - pos - len > 8) return "bad length";
  const std::string_view head(bytes.data(), pos);
  const std::string_view payload(bytes.data() + pos, static_cast<std::size_t>(len));
  if (entry_checksum(head, payload) != read_le(u + pos + len, 8)) return "checksum mismatch";
  if (stored_key != key_text) return "key mismatch";
  payload_at = pos;
  payload_len = static_cast<std::size_t>(len);
  return {};
}

}  // namespace

// ---- cache_key ------------------------------------------------------------------------------------------

std::string cache_key::text() const {
  std::string out;
  std::string hash;
  append_hex(hash, ir_hash);
  append_field(out, "ir_hash", hash);
  append_field(out, "target", target);
  append_field(out, "options", options);
  append_field(out, "version", version);
  append_field(out, "kernel", kernel);
  return out;
}

std::string cache_key::digest() const {
  const std::string t = text();
  std::string out;
  append_hex(out, fnv1a64(t));
  append_hex(out, xxh64(t, 0x7469'6c65'6361'6368ull));  // seed: "tilecach"
  return out;
}

// ---- disk_cache -----------------------------------------------------------------------------------------

disk_cache::disk_cache(std::string dir)
    : dir_(dir.empty() ? default_dir() : std::move(dir)), in_temp_(dir_ == temp_fallback_dir()) {}

std::string disk_cache::default_dir() {
  // XDG: a relative $XDG_CACHE_HOME is invalid and ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return (fs::path(xdg) / "tile").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    return (fs::path(home) / ".cache" / "tile").string();
  return temp_fallback_dir();
}

std::string disk_cache::path_for(const cache_key& k, std::string_view ext) const {
  std::string name = sanitize(k.kernel, 64, true, "kernel");
  name += '-';
  name += k.digest();
  name += '.';
  name += sanitize(ext, 16, false, "bin");
  return (fs::path(dir_) / name).string();
}

void disk_cache::disable(int err) {
  enabled_.store(false, std::memory_order_relaxed);
  if (!unwritable_warned.exchange(true))
    print_line("tile: warning: cache directory " + dir_ + " is not writable (" + std::strerror(err) +
               "); using the in-memory cache only\n");
}

std::optional<std::string> disk_cache::load(const cache_key& k, std::string_view artifact_ext) const {
  if (!enabled()) return std::nullopt;
  try {
    if (in_temp_ && !private_dir_ok(dir_)) return std::nullopt;
    const std::string path = path_for(k, artifact_ext);
    fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) return std::nullopt;  // the ordinary miss (or unreadable: a miss too)
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    std::string bytes;
    if (!read_all(f.fd, bytes, static_cast<std::size_t>(st.st_size))) return std::nullopt;
    std::size_t at = 0, len = 0;
    const std::string_view reason = check_entry(bytes, k.text(), at, len);
    if (reason.empty()) {
      bytes.resize(at + len);
      bytes.erase(0, at);
      return bytes;
    }
    warn_corrupt(path, reason);
    // Remove the entry only if the name still denotes the file we read: another thread or process may
    // have renamed a good entry over it meanwhile. (A rename between this stat and the unlink costs a
    // good entry, i.e. one more miss, never a wrong result.)
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
      ::unlink(path.c_str());
    return std::nullopt;
  } catch (...) {  // std::bad_alloc, std::filesystem errors: a miss
    return std::nullopt;
  }
}

void disk_cache::store(const cache_key& k, std::string_view payload, std::string_view artifact_ext) {
  if (!enabled()) return;
  try {
    std::error_code ec;
    if (const fs::path parent = fs::path(dir_).parent_path(); !parent.empty())
      fs::create_directories(parent, ec);
    if (!ec && ::mkdir(dir_.c_str(), in_temp_ ? 0700 : 0777) != 0 && errno != EEXIST)
      ec = std::error_code(errno, std::generic_category());
    if (!ec && !fs::is_directory(dir_, ec) && !ec) ec = std::make_error_code(std::errc::not_a_directory);
    if (ec) return disable(ec.value());
    if (in_temp_ && !private_dir_ok(dir_)) return disable(EACCES);

    const std::string final_path = path_for(k, artifact_ext);
    const std::string key_text = k.text();
    std::string head(entry_magic);
    append_u64_le(head, key_text.size());
    head += key_text;
    append_u64_le(head, payload.size());
    std::string tail;
    append_u64_le(tail, entry_checksum(head, payload));

    // A unique temp name in the same directory (rename is atomic only within one file system):
    // pid + thread + per-process counter; O_EXCL guards against a clash across pid namespaces.
    static std::atomic<std::uint64_t> counter{0};
    const std::string final_name = fs::path(final_path).filename().string();
    const std::size_t tid = std::hash<std::thread::id>{}(std::this_thread::get_id());
    std::string tmp_path;
    fd_guard f;
    for (int attempt = 0; attempt < 8 && f.fd < 0; ++attempt) {
      std::string tmp_name = "." + final_name + ".tmp-" + std::to_string(::getpid()) + "-";
      append_hex(tmp_name, tid);
      tmp_name += "-" + std::to_string(counter.fetch_add(1));
      tmp_path = (fs::path(dir_) / tmp_name).string();
      f.fd = ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (f.fd < 0 && errno != EEXIST) break;
    }
    if (f.fd < 0) return disable(errno);

    int err = 0;
    if (!write_all(f.fd, head) || !write_all(f.fd, payload) || !write_all(f.fd, tail)) err = errno;
    const int fd = std::exchange(f.fd, -1);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && ::rename(tmp_path.c_str(), final_path.c_str()) != 0) err = errno;
    if (err != 0) {
      ::unlink(tmp_path.c_str());
      disable(err);
    }
  } catch (...) {  // std::bad_alloc and the like: the cache is only an optimization
  }
}

}  // namespace tile::jit

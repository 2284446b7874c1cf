// test/jit/test_disk_cache.cpp — the on-disk compile cache: hits and misses, every key field, the
// file names and digests, corrupt entries (truncated, flipped bytes, bad magic, trailing bytes, a
// digest collision) rebuilt with one warning, an unwritable directory, the default directory, many
// threads and several processes on one key. The process test runs the executable named by
// $TILE_CACHE_RACE_CHILD (cache_race_child.cpp) and is skipped without it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "jit/disk_cache.hpp"
#include "support/build_id.hpp"
#include "../requires.hpp"

extern char** environ;

namespace fs = std::filesystem;
using tile::jit::cache_key;
using tile::jit::disk_cache;

namespace {

/// A fresh directory <temp>/tile-cache-test-<pid>-<n>, removed with everything in it at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<int> n{0};
    path = fs::temp_directory_path() /
           ("tile-cache-test-" + std::to_string(::getpid()) + "-" + std::to_string(n.fetch_add(1)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::string str() const { return path.string(); }
};

/// Redirects file descriptor 2 into a file until text() is called (or the end of the scope).
class stderr_capture {
 public:
  stderr_capture()
      : file_(fs::temp_directory_path() / ("tile-cache-test-stderr-" + std::to_string(::getpid()))) {
    int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    std::fflush(stderr);
    saved_ = ::dup(2);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~stderr_capture() {
    restore();
    std::error_code ec;
    fs::remove(file_, ec);
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;
  std::string text() {
    restore();
    std::ifstream in(file_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  fs::path file_;
  int saved_ = -1;
};

cache_key make_key(std::string kernel = "add_kernel") {
  return cache_key{0x1234'5678'9abc'def0ull, "cpu-x86_64-znver3+avx2", "O3 num_warps=4 num_stages=3", "0.1.0",
                   std::move(kernel)};
}

/// Bytes of every value, NULs included.
std::string make_payload(std::size_t size, unsigned salt = 0) {
  std::string p(size, '\0');
  for (std::size_t i = 0; i < size; ++i) p[i] = static_cast<char>((i * 131 + salt * 7 + i / 251) & 0xff);
  return p;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::size_t occurrences(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

/// Files in `dir` whose name contains ".tmp-" (left-over temporaries).
std::size_t temp_files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp-") != std::string::npos) ++n;
  return n;
}

std::string corrupt_warning(const std::string& path, const std::string& reason) {
  return "tile: warning: ignoring corrupt cache entry " + path + " (" + reason + "); rebuilding\n";
}

/// Damages the stored entry of `k` with `damage`, loads it and checks: a miss, exactly one warning
/// naming `reason`, the file removed, and a fresh store hits again.
void check_corrupt_entry_rebuilt(disk_cache& cache, const cache_key& k, const std::string& reason,
                                 void (*damage)(std::string&)) {
  const std::string payload = make_payload(1000, 3);
  cache.store(k, payload);
  const std::string path = cache.path_for(k);
  std::string bytes = read_file(path);
  damage(bytes);
  write_file(path, bytes);

  stderr_capture err;
  CHECK_FALSE(cache.load(k).has_value());
  CHECK_FALSE(cache.load(k).has_value());  // now a plain miss: the entry is gone, no second warning
  const std::string text = err.text();
  CHECK(text == corrupt_warning(path, reason));
  CHECK_FALSE(fs::exists(path));

  cache.store(k, payload);
  CHECK(cache.load(k) == payload);
}

}  // namespace

TEST_CASE("disk cache: a miss, then a hit after store") {
  temp_dir dir;
  disk_cache cache(dir.str());
  CHECK(cache.enabled());
  CHECK(cache.dir() == dir.str());
  const cache_key k = make_key();
  CHECK_FALSE(cache.load(k).has_value());

  const std::string payload = make_payload(5000);
  cache.store(k, payload);
  auto got = cache.load(k);
  REQUIRE(got.has_value());
  CHECK(*got == payload);
  CHECK(fs::is_regular_file(cache.path_for(k)));
  CHECK(temp_files_in(dir.path) == 0);

  SUBCASE("a second store replaces the entry") {
    const std::string other = make_payload(70000, 9);
    cache.store(k, other);
    CHECK(cache.load(k) == other);
  }
  SUBCASE("an empty payload is a hit, not a miss") {
    cache.store(k, "");
    auto empty = cache.load(k);
    REQUIRE(empty.has_value());
    CHECK(empty->empty());
  }
  SUBCASE("another cache object on the same directory sees the entry") {
    disk_cache again(dir.str());
    CHECK(again.load(k) == payload);
  }
  SUBCASE("artifact extensions are separate entries") {
    CHECK_FALSE(cache.load(k, "ptx").has_value());
    cache.store(k, "ptx text", "ptx");
    CHECK(cache.load(k, "ptx") == std::string("ptx text"));
    CHECK(cache.load(k) == payload);
  }
  CHECK(temp_files_in(dir.path) == 0);
}

TEST_CASE("disk cache: every key field decides the entry") {
  temp_dir dir;
  disk_cache cache(dir.str());
  const cache_key base = make_key();
  cache.store(base, "base payload");
  REQUIRE(cache.load(base) == std::string("base payload"));

  stderr_capture err;
  cache_key k = base;
  SUBCASE("ir_hash") { k.ir_hash ^= 1; }
  SUBCASE("target") { k.target = "sm_90a"; }
  SUBCASE("options") { k.options = "O2 num_warps=4 num_stages=3"; }
  SUBCASE("version") { k.version = "0.1.1"; }
  SUBCASE("kernel") { k.kernel = "mul_kernel"; }
  CHECK(k.digest() != base.digest());
  CHECK(cache.path_for(k) != cache.path_for(base));
  CHECK_FALSE(cache.load(k).has_value());
  cache.store(k, "other payload");
  CHECK(cache.load(k) == std::string("other payload"));
  CHECK(cache.load(base) == std::string("base payload"));
  CHECK(err.text().empty());  // different keys are plain misses, never "corrupt"
}

TEST_CASE("disk cache: entries are keyed by the build (version and binary), so a rebuilt compiler misses") {
  // support::build_id(): the version, then the size and modification time of the binary that
  // holds tile (libtile.so here): a rebuilt library with the same version has another id
  const std::string& id = tile::support::build_id();
  INFO(id);
  const auto plus = id.find('+');
  REQUIRE(plus != std::string::npos);
  CHECK(plus > 0);
  CHECK(id.find('.', plus) != std::string::npos);
  CHECK(&tile::support::build_id() == &id);  // computed once
}

TEST_CASE("disk cache: digests and file names") {
  const cache_key k = make_key();
  const std::string d = k.digest();
  CHECK(d.size() == 32);
  CHECK(d.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(d == make_key().digest());
  // Pinned: the digest must not change between builds, hosts or library refactors (entries would be
  // orphaned). Update only together with the entry magic.
  CHECK(d == "e6231356dacfc887542a326f7f3f4673");

  // Length prefixes: moving text between adjacent fields changes the digest.
  cache_key a = k, b = k;
  a.target = "ab";
  a.options = "c";
  b.target = "a";
  b.options = "bc";
  CHECK(a.digest() != b.digest());
  CHECK(a.text() != b.text());

  disk_cache cache("/some/dir");
  CHECK(cache.path_for(k) == "/some/dir/add_kernel-" + d + ".bin");
  CHECK(cache.path_for(k, "o") == "/some/dir/add_kernel-" + d + ".o");
  cache_key odd = k;
  odd.kernel = "../we ird/name";
  const std::string p = cache.path_for(odd, "p/x");
  CHECK(p == "/some/dir/_._we_ird_name-" + odd.digest() + ".p_x");
  odd.kernel = "";
  CHECK(cache.path_for(odd) == "/some/dir/kernel-" + odd.digest() + ".bin");
  odd.kernel = std::string(200, 'k');
  CHECK(fs::path(cache.path_for(odd)).filename().string() ==
        std::string(64, 'k') + "-" + odd.digest() + ".bin");
}

TEST_CASE("disk cache: a truncated entry is a miss, removed with one warning, and rebuilt") {
  temp_dir dir;
  disk_cache cache(dir.str());
  SUBCASE("cut inside the payload") {
    check_corrupt_entry_rebuilt(cache, make_key("cut_payload"), "truncated",
                                [](std::string& b) { b.resize(b.size() / 2); });
  }
  SUBCASE("cut inside the checksum") {
    check_corrupt_entry_rebuilt(cache, make_key("cut_checksum"), "truncated",
                                [](std::string& b) { b.resize(b.size() - 3); });
  }
  SUBCASE("cut inside the header") {
    check_corrupt_entry_rebuilt(cache, make_key("cut_header"), "truncated",
                                [](std::string& b) { b.resize(15); });
  }
  SUBCASE("cut inside the magic") {
    check_corrupt_entry_rebuilt(cache, make_key("cut_magic"), "truncated",
                                [](std::string& b) { b.resize(5); });
  }
  SUBCASE("empty file (a crash before the data reached the disk)") {
    check_corrupt_entry_rebuilt(cache, make_key("empty"), "truncated", [](std::string& b) { b.clear(); });
  }
}

TEST_CASE("disk cache: a damaged entry is a miss, removed with one warning, and rebuilt") {
  temp_dir dir;
  disk_cache cache(dir.str());
  SUBCASE("a flipped payload byte") {
    check_corrupt_entry_rebuilt(cache, make_key("flip_payload"), "checksum mismatch",
                                [](std::string& b) { b[b.size() - 100] ^= 0x20; });
  }
  SUBCASE("a flipped checksum byte") {
    check_corrupt_entry_rebuilt(cache, make_key("flip_checksum"), "checksum mismatch",
                                [](std::string& b) { b.back() ^= 1; });
  }
  SUBCASE("a flipped byte in the key text") {
    check_corrupt_entry_rebuilt(cache, make_key("flip_key"), "checksum mismatch",
                                [](std::string& b) { b[30] ^= 1; });
  }
  SUBCASE("bad magic") {
    check_corrupt_entry_rebuilt(cache, make_key("magic"), "bad magic", [](std::string& b) { b[0] = 'X'; });
  }
  SUBCASE("an older format") {
    check_corrupt_entry_rebuilt(cache, make_key("old_format"), "bad magic",
                                [](std::string& b) { b[9] = '0'; });
  }
  SUBCASE("trailing bytes") {
    check_corrupt_entry_rebuilt(cache, make_key("trailing"), "bad length",
                                [](std::string& b) { b += "0123456789"; });
  }
}

TEST_CASE("disk cache: a digest collision is detected through the stored key") {
  temp_dir dir;
  disk_cache cache(dir.str());
  const cache_key a = make_key("collide");
  cache_key b = a;
  b.options = "O0";
  cache.store(a, "payload of a");
  // Pretend b's digest equals a's: a's (valid) entry sits under b's name.
  fs::copy_file(cache.path_for(a), cache.path_for(b));
  stderr_capture err;
  CHECK_FALSE(cache.load(b).has_value());
  CHECK(err.text() == corrupt_warning(cache.path_for(b), "key mismatch"));
  CHECK_FALSE(fs::exists(cache.path_for(b)));
  CHECK(cache.load(a) == std::string("payload of a"));
}

TEST_CASE("disk cache: the corrupt-entry warning is printed once per entry and process") {
  temp_dir dir;
  disk_cache cache(dir.str());
  const cache_key k = make_key("twice");
  stderr_capture err;
  for (int round = 0; round < 3; ++round) {
    cache.store(k, make_payload(300));
    fs::resize_file(cache.path_for(k), 100);
    CHECK_FALSE(cache.load(k).has_value());
    CHECK_FALSE(fs::exists(cache.path_for(k)));
  }
  CHECK(occurrences(err.text(), "ignoring corrupt cache entry") == 1);
}

TEST_CASE("disk cache: an unwritable directory disables the cache with one warning") {
  temp_dir dir;
  write_file(dir.path / "file", "a regular file, not a directory");
  // Under a regular file: creating the directory fails even for root (chmod would not stop root).
  const std::string bad = (dir.path / "file" / "sub").string();
  const cache_key k = make_key();

  stderr_capture err;
  disk_cache cache(bad);
  CHECK(cache.enabled());  // nothing tried yet
  CHECK_FALSE(cache.load(k).has_value());
  CHECK_NOTHROW(cache.store(k, "payload"));
  CHECK_FALSE(cache.enabled());
  CHECK_NOTHROW(cache.store(k, "payload"));
  CHECK_FALSE(cache.load(k).has_value());

  disk_cache file_as_dir((dir.path / "file").string());  // the directory itself is a regular file
  CHECK_NOTHROW(file_as_dir.store(k, "payload"));
  CHECK_FALSE(file_as_dir.enabled());
  CHECK_FALSE(file_as_dir.load(k).has_value());

  const std::string text = err.text();
  CHECK(occurrences(text, "tile: warning: cache directory ") == 1);  // once per process
  CHECK(text.starts_with("tile: warning: cache directory " + bad + " is not writable ("));
  CHECK(text.ends_with("); using the in-memory cache only\n"));
  CHECK(read_file(dir.path / "file") == "a regular file, not a directory");
}

TEST_CASE("disk cache: the directory is created on the first store") {
  temp_dir dir;
  const fs::path nested = dir.path / "a" / "b" / "tile";
  disk_cache cache(nested.string());
  const cache_key k = make_key();
  CHECK_FALSE(cache.load(k).has_value());
  CHECK_FALSE(fs::exists(nested));
  cache.store(k, "x");
  CHECK(fs::is_directory(nested));
  CHECK(cache.load(k) == std::string("x"));
}

TEST_CASE("disk cache: the default directory") {
  struct saved_env {
    const char* name;
    std::optional<std::string> value;
    explicit saved_env(const char* n) : name(n) {
      if (const char* v = std::getenv(n)) value = v;
    }
    ~saved_env() {
      if (value)
        ::setenv(name, value->c_str(), 1);
      else
        ::unsetenv(name);
    }
  } xdg("XDG_CACHE_HOME"), home("HOME");

  ::setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  ::setenv("HOME", "/home/someone", 1);
  CHECK(disk_cache::default_dir() == "/xdg/cache/tile");
  CHECK(disk_cache("").dir() == "/xdg/cache/tile");
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);  // not absolute: ignored, as XDG says
  CHECK(disk_cache::default_dir() == "/home/someone/.cache/tile");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(disk_cache::default_dir() == "/home/someone/.cache/tile");
  ::unsetenv("HOME");
  const std::string fallback = disk_cache::default_dir();
  CHECK(fallback.ends_with("/tile-cache-" + std::to_string(::getuid())));

  SUBCASE("the fallback in the temp directory is created private") {
    temp_dir tmp;
    saved_env tmpdir("TMPDIR");
    ::setenv("TMPDIR", tmp.str().c_str(), 1);
    disk_cache cache("");
    CHECK(cache.dir() == (tmp.path / ("tile-cache-" + std::to_string(::getuid()))).string());
    cache.store(make_key(), "private");
    CHECK(cache.load(make_key()) == std::string("private"));
    CHECK((fs::status(cache.dir()).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
          fs::perms::none);
  }
  SUBCASE("a fallback directory others may write to is not trusted") {
    temp_dir tmp, elsewhere;
    saved_env tmpdir("TMPDIR");
    ::setenv("TMPDIR", tmp.str().c_str(), 1);
    const fs::path planted = tmp.path / ("tile-cache-" + std::to_string(::getuid()));
    fs::create_directory(planted);
    fs::permissions(planted, fs::perms::all);  // 0777: anybody could have planted entries
    disk_cache cache("");
    REQUIRE(cache.dir() == planted.string());
    const cache_key k = make_key();
    disk_cache other(elsewhere.str());  // an explicit directory is trusted as given
    other.store(k, "planted");
    REQUIRE(other.load(k) == std::string("planted"));
    fs::copy_file(other.path_for(k), cache.path_for(k));  // a valid entry, planted by "someone else"
    CHECK_FALSE(cache.load(k).has_value());
    // (store() would disable the cache with the once-per-process warning, which the unwritable-directory
    // test counts; so only loads here.)
  }
}

TEST_CASE("disk cache: 16 threads store and load one key at once") {
  temp_dir dir;
  disk_cache cache(dir.str());
  const cache_key k = make_key("threads");
  const std::string payload = make_payload(100000, 5);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      cache_key own = k;
      own.ir_hash += static_cast<std::uint64_t>(t) + 1;  // and one key of its own
      const std::string own_payload =
          make_payload(1000 + static_cast<std::size_t>(t), static_cast<unsigned>(t));
      for (int i = 0; i < 20; ++i) {
        cache.store(k, payload);
        if (cache.load(k) != payload) ++failures;
        cache.store(own, own_payload);
        if (cache.load(own) != own_payload) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(cache.enabled());
  CHECK(temp_files_in(dir.path) == 0);
  CHECK(cache.load(k) == payload);
}

/// The process test runs cache_race_child (test/jit/meson.build names it in TILE_CACHE_RACE_CHILD).
constexpr tiletest::needs needs_race_child{"needs cache_race_child", []() -> std::string {
  const char* child = std::getenv("TILE_CACHE_RACE_CHILD");
  return child && *child ? "" : "TILE_CACHE_RACE_CHILD is not set: no child processes to race";
}};

TEST_CASE("disk cache: several processes store and load one key at once" * needs_race_child) {
  const char* child = std::getenv("TILE_CACHE_RACE_CHILD");
  temp_dir dir;
  const std::string dir_arg = (dir.path / "cache").string();  // created by the racing children
  for (const char* size : {"100", "300000"}) {
    std::vector<pid_t> pids;
    for (int i = 0; i < 4; ++i) {
      std::string arg0 = child, arg1 = dir_arg, arg2 = size;
      char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
      pid_t pid = 0;
      REQUIRE(::posix_spawn(&pid, child, nullptr, nullptr, argv, environ) == 0);
      pids.push_back(pid);
    }
    for (pid_t pid : pids) {
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(temp_files_in(dir_arg) == 0);
  }
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_arg)) ++entries;
  CHECK(entries == 1);  // one key: every writer renamed over the same name
}

// src/aot/catalog.cpp — layer: aot. See catalog.hpp.
#include "aot/catalog.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <deque>
#include <iostream>
#include <mutex>

#include "jit/disk_cache.hpp"  // xxh64

#ifndef TILE_VERSION
#define TILE_VERSION "dev"
#endif

namespace tile::aot {
namespace {

/// What the archive's code depends on besides the kernels: the library's version, the CPU
/// kernels' ABI (drivers/cpu/cpu_module.hpp) and the artifact format (jit/artifact.hpp).
std::string library_version() {
  return std::string(TILE_VERSION) + " cpu-abi 3 artifact " + std::to_string(jit::kArtifactVersion);
}

void put_sized(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += '\n';
  out += s;
}

/// A cursor over the bytes; every read checks what is left (a truncated archive fails here).
class reader {
 public:
  explicit reader(std::string_view b) : b_(b) {}
  bool line(std::string_view& out) {
    const std::size_t nl = b_.find('\n', p_);
    if (nl == std::string_view::npos) return false;
    out = b_.substr(p_, nl - p_);
    p_ = nl + 1;
    return true;
  }
  bool prefixed(std::string_view prefix, std::string_view& rest) {
    std::string_view l;
    if (!line(l) || l.substr(0, prefix.size()) != prefix) return false;
    rest = l.substr(prefix.size());
    return true;
  }
  template <class T>
  bool number(T& out) {
    std::string_view l;
    return line(l) && parse(l, out);
  }
  bool sized(std::string& out) {
    std::size_t n = 0;
    return number(n) && take(n, out);
  }
  std::size_t pos() const { return p_; }
  bool take(std::size_t n, std::string& out) {
    if (n > b_.size() - p_) return false;
    out.assign(b_.substr(p_, n));
    p_ += n;
    return true;
  }
  template <class T>
  static bool parse(std::string_view l, T& out) {
    const auto [end, ec] = std::from_chars(l.data(), l.data() + l.size(), out);
    return ec == std::errc() && end == l.data() + l.size() && !l.empty();
  }

 private:
  std::string_view b_;
  std::size_t p_ = 0;
};

struct catalog_state {
  std::mutex mu;
  std::deque<archive> archives;  // deque: entries handed out stay where they are
  std::vector<std::pair<std::string, std::string>> refused;  // origin, reason
};
catalog_state& state() {
  static auto& s = *new catalog_state;  // never destroyed: launches may run during exit
  return s;
}
std::atomic<bool> any_archive{false};

std::vector<std::string_view> fields(std::string_view spec) {
  std::vector<std::string_view> out;
  std::size_t p = 0;
  while (p <= spec.size()) {
    std::size_t q = spec.find(", ", p);
    if (q == std::string_view::npos) q = spec.size();
    out.push_back(spec.substr(p, q - p));
    p = q + 2;
  }
  return out;
}

}  // namespace

std::string serialize(const archive& a) {
  std::string out(kMagic);
  out += "tile " + library_version() + "\n";
  out += "name ";
  put_sized(out, a.name);
  out += "\nentries " + std::to_string(a.entries.size()) + "\n";
  for (const entry& e : a.entries) {
    put_sized(out, e.key);
    put_sized(out, e.spec);
    put_sized(out, e.target);
    put_sized(out, jit::serialize(e.code));
  }
  out += "\nchoices " + std::to_string(a.choices.size()) + "\n";
  for (const choice& c : a.choices) {
    put_sized(out, c.kernel);
    put_sized(out, c.tuning);
    put_sized(out, c.target);
    put_sized(out, c.config);
  }
  out += "\n";
  out += "xxh64 " + jit::hex64(jit::xxh64(out)) + "\n";  // of everything before it, this line's newline included
  return out;
}

std::variant<archive, std::string> parse(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    if (bytes.substr(0, 9) == "TILE-AOT ") return std::string("an archive of another format (this library reads ") +
                                                  std::string(kMagic.substr(0, kMagic.size() - 1)) + ")";
    return std::string("not a tile kernel archive");
  }
  // the checksum first: a damaged archive is refused before anything in it is believed
  const std::size_t tail = bytes.rfind("\nxxh64 ");
  if (tail == std::string_view::npos || bytes.size() - tail != 24 || bytes.back() != '\n')
    return std::string("truncated (no checksum at its end)");
  const std::string want = jit::hex64(jit::xxh64(bytes.substr(0, tail + 1)));
  if (bytes.substr(tail + 7, 16) != want) return std::string("corrupt (its checksum does not match its contents)");
  reader r(bytes.substr(0, tail + 1));
  std::string_view l;
  r.line(l);  // the magic
  archive a;
  if (!r.prefixed("tile ", l)) return std::string("malformed (no library version)");
  a.tile_version = std::string(l);
  if (a.tile_version != library_version())
    return "built by tile " + a.tile_version + "; this is tile " + library_version() + ": build it again";
  std::size_t n = 0;
  std::string_view num;
  std::size_t name_bytes = 0;
  if (!r.prefixed("name ", l) || !r.parse(l, name_bytes) || !r.take(name_bytes, a.name) || !r.line(l) || !l.empty())
    return std::string("malformed (no name)");
  if (!r.prefixed("entries ", num) || !r.parse(num, n)) return std::string("malformed (no entry count)");
  for (std::size_t i = 0; i < n; ++i) {
    entry e;
    std::string code;
    if (!r.sized(e.key) || !r.sized(e.spec) || !r.sized(e.target) || !r.sized(code))
      return "malformed (entry " + std::to_string(i) + " of " + std::to_string(n) + ")";
    auto art = jit::parse_artifact(code);
    if (!art) return "malformed (entry " + std::to_string(i) + ": its code's header does not parse)";
    e.code = std::move(*art);
    a.entries.push_back(std::move(e));
  }
  std::string_view blank;
  if (!r.line(blank) || !blank.empty() || !r.prefixed("choices ", num) || !r.parse(num, n))
    return std::string("malformed (no choice count)");
  for (std::size_t i = 0; i < n; ++i) {
    choice c;
    if (!r.sized(c.kernel) || !r.sized(c.tuning) || !r.sized(c.target) || !r.sized(c.config))
      return "malformed (choice " + std::to_string(i) + " of " + std::to_string(n) + ")";
    a.choices.push_back(std::move(c));
  }
  if (!r.line(blank) || !blank.empty() || r.pos() != tail + 1) return std::string("malformed (bytes after the choices)");
  return a;
}

std::string lookup_key(const ir::Function& f) {
  std::string k = f.name + "|" + jit::hex64(ir::structural_hash(f)) + "|w" + std::to_string(f.num_warps) + "|s" +
                  std::to_string(f.num_stages);
  if (!f.fp_fusion) k += "|nofma";
  return k;
}

void add(archive a) {
  auto& s = state();
  std::lock_guard l(s.mu);
  s.archives.push_back(std::move(a));
  any_archive.store(true, std::memory_order_release);
}

void refuse(std::string origin, std::string reason) {
  auto& s = state();
  std::lock_guard l(s.mu);
  s.refused.emplace_back(std::move(origin), std::move(reason));
  any_archive.store(true, std::memory_order_release);
}

bool any() { return any_archive.load(std::memory_order_acquire); }

const std::string* find_choice(std::string_view kernel, std::string_view tuning, std::string_view target) {
  auto& s = state();
  std::lock_guard l(s.mu);
  for (const archive& a : s.archives)
    for (const choice& c : a.choices)
      if (c.kernel == kernel && c.tuning == tuning && c.target == target) return &c.config;
  return nullptr;
}

bool has_target(std::span<const std::string> targets) {
  auto& s = state();
  std::lock_guard l(s.mu);
  for (const archive& a : s.archives)
    for (const entry& e : a.entries)
      if (std::find(targets.begin(), targets.end(), e.target) != targets.end()) return true;
  return false;
}

const entry* find(std::string_view key, std::span<const std::string> targets, const archive** from) {
  auto& s = state();
  std::lock_guard l(s.mu);
  for (const std::string& t : targets)  // the best target any archive has wins
    for (const archive& a : s.archives)
      for (const entry& e : a.entries)
        if (e.key == key && e.target == t) {
          if (from) *from = &a;
          return &e;
        }
  return nullptr;
}

std::string nearest(std::string_view kernel, std::string_view spec) {
  auto& s = state();
  std::lock_guard l(s.mu);
  struct near {
    std::string spec;
    std::vector<std::string> targets;
    int same = 0;
    std::size_t order = 0;  // first seen first among equals
  };
  std::vector<near> found;
  const auto want = fields(spec);
  for (const archive& a : s.archives)
    for (const entry& e : a.entries) {
      if (e.code.kernel != kernel) continue;
      auto it = std::find_if(found.begin(), found.end(), [&](const near& n) { return n.spec == e.spec; });
      if (it == found.end()) {
        near n{e.spec, {}, 0, found.size()};
        const auto have = fields(e.spec);
        for (std::size_t i = 0; i < std::min(have.size(), want.size()); ++i) n.same += have[i] == want[i];
        found.push_back(std::move(n));
        it = found.end() - 1;
      }
      if (std::find(it->targets.begin(), it->targets.end(), e.target) == it->targets.end()) it->targets.push_back(e.target);
    }
  // (std::sort with the order as a tie-break: clang with libstdc++ 12 deprecates stable_sort's buffer)
  std::sort(found.begin(), found.end(),
            [](const near& x, const near& y) { return x.same != y.same ? x.same > y.same : x.order < y.order; });
  std::string out;
  if (found.empty()) {
    out += "\n  the archives linked or loaded have no specialization of '" + std::string(kernel) + "'";
  } else {
    out += "\n  nearest prebuilt specializations of '" + std::string(kernel) + "':";
    for (std::size_t i = 0; i < found.size() && i < 5; ++i) {
      out += "\n    " + found[i].spec + "  [";
      for (std::size_t t = 0; t < found[i].targets.size(); ++t) out += (t ? ", " : "") + found[i].targets[t];
      out += "]";
    }
    if (found.size() > 5) out += "\n    (" + std::to_string(found.size() - 5) + " more)";
  }
  for (const auto& [origin, reason] : s.refused) out += "\n  refused archive " + origin + ": " + reason;
  return out;
}

std::string describe() {
  auto& s = state();
  std::lock_guard l(s.mu);
  std::string out;
  for (const archive& a : s.archives) {
    for (const entry& e : a.entries) out += e.code.kernel + "  " + e.spec + "  " + e.target + "  (" + a.origin + ")\n";
    for (const choice& c : a.choices)
      out += c.kernel + "  tuned for " + c.tuning + " on " + c.target + ": {" + c.config + "}  (" + a.origin + ")\n";
  }
  for (const auto& [origin, reason] : s.refused) out += "refused " + origin + ": " + reason + "\n";
  return out;
}

}  // namespace tile::aot

extern "C" void tile_aot_register(const char* blob, std::uint64_t bytes, const tile_aot_cpu_symbol* cpu,
                                  std::uint64_t n_cpu, const char* origin) {
  // called from a constructor before main: nothing may escape
  try {
    auto parsed = tile::aot::parse(std::string_view(blob, static_cast<std::size_t>(bytes)));
    if (auto* why = std::get_if<std::string>(&parsed)) {
      tile::aot::refuse(origin, *why);
      return;
    }
    auto& a = std::get<tile::aot::archive>(parsed);
    a.origin = origin;
    a.cpu.assign(cpu, cpu + n_cpu);
    tile::aot::add(std::move(a));
  } catch (const std::exception& e) {
    try {
      tile::aot::refuse(origin, e.what());
    } catch (...) {
    }
  } catch (...) {
  }
}

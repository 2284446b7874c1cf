// src/jit/ptxas.cpp — layer: jit. See ptxas.hpp.
#include "jit/ptxas.hpp"
#include "jit/pick_variant.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "drivers/null/null_driver.hpp"
#include "jit/dump.hpp"
#include "jit/occupancy.hpp"
#include "support/env.hpp"

extern char** environ;

namespace tile::jit {
namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

bool write_file(const std::string& path, std::string_view text) {
  std::ofstream f(path, std::ios::binary);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(f);
}

std::string sanitize(std::string_view name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return s.empty() ? "kernel" : s;
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

/// The digest naming a kernel's artifacts: the compile's own, else a hash of the PTX.
std::string digest_of(const ptx_kernel& k) {
  if (!k.digest.empty()) return k.digest;
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : k.ptx) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// A scratch directory removed when this goes out of scope.
struct temp_dir {
  std::string path;
  temp_dir() {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    std::string templ = base + "/tile-ptxas-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data())) path = buf.data();
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace

std::string find_ptxas() {
  const std::string forced = env::get("TILE_PTXAS");
  if (!forced.empty()) {
    if (forced == "0" || forced == "off" || forced == "none") return "";
    if (!executable_file(forced))
      throw tile::error("TILE_PTXAS=" + forced + " is not an executable file (unset it to look on PATH and in "
                        "/usr/local/cuda/bin, or set it to 0 to never run ptxas)");
    return forced;
  }
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (true) {
      const auto colon = rest.find(':');
      std::string dir(rest.substr(0, colon));
      if (dir.empty()) dir = ".";
      if (std::string p = dir + "/ptxas"; executable_file(p)) return p;
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (executable_file("/usr/local/cuda/bin/ptxas")) return "/usr/local/cuda/bin/ptxas";
  return "";
}

ptxas_result run_ptxas(const std::string& ptxas, std::string_view ptx, const std::string& arch, std::string_view name) {
  ptxas_result r;
  temp_dir dir;
  if (dir.path.empty()) {
    r.log = std::string("cannot create a temporary directory for ptxas: ") + std::strerror(errno);
    return r;
  }
  const std::string stem = dir.path + "/" + sanitize(name);
  const std::string in = stem + ".ptx", out = stem + ".cubin", log = dir.path + "/ptxas.log";
  if (!write_file(in, ptx)) {
    r.log = "cannot write " + in;
    return r;
  }
  const std::string arch_flag = "-arch=" + arch;
  std::vector<std::string> args = {ptxas, arch_flag, "-v", "-o", out, in};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int err = ::posix_spawn(&pid, ptxas.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    r.log = "cannot run " + ptxas + ": " + std::strerror(err);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      r.log = std::string("waiting for ptxas: ") + std::strerror(errno);
      return r;
    }
  }
  r.log = trim_end(read_file(log));
  if (WIFSIGNALED(status)) {
    r.log += (r.log.empty() ? "" : "\n") + std::string("ptxas was killed by signal ") + std::to_string(WTERMSIG(status));
    return r;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    if (r.log.empty()) r.log = "ptxas exited with status " + std::to_string(code) + " and printed nothing";
    return r;
  }
  r.cubin = read_file(out);
  r.ok = !r.cubin.empty();
  // -v's report: "ptxas info    : Used 47 registers, used 1 barriers" and, under "Function
  // properties for <entry>", "8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads"
  // (one kernel a module: the first of each)
  auto number_before = [&](std::string_view what) {
    const auto at = r.log.find(what);
    if (at == std::string::npos) return -1;
    auto begin = at;
    while (begin > 0 && r.log[begin - 1] >= '0' && r.log[begin - 1] <= '9') --begin;
    return begin == at ? -1 : std::stoi(r.log.substr(begin, at - begin));
  };
  r.registers = number_before(" registers");
  r.spill_bytes = std::max(number_before(" bytes spill stores"), 0);
  if (!r.ok) r.log += (r.log.empty() ? "" : "\n") + std::string("ptxas succeeded but wrote no cubin");
  return r;
}

bool assemble(const ptx_kernel& k, ptxas_usage* usage, std::string* cubin) {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty()) return false;
  const std::string digest = digest_of(k);
  const std::string dump = dump_dir();
  static std::mutex mu;
  static std::unordered_map<std::string, ptxas_usage> done;  // arch|digest|dump dir of every PTX ptxas accepted
  const std::string key = k.arch + "|" + digest + "|" + dump;
  if (!cubin) {
    std::lock_guard l(mu);
    if (auto it = done.find(key); it != done.end()) {
      if (usage) *usage = it->second;
      return true;
    }
  }
  ptxas_result r = run_ptxas(ptxas, k.ptx, k.arch, k.entry.empty() ? k.kernel : k.entry);
  if (!r.ok) {
    std::string msg = ptxas + " -arch=" + k.arch + " rejected the kernel's PTX" +
                      (k.entry.empty() ? "" : " (entry " + k.entry + ")") + ":\n" + r.log;
    msg += dump.empty() ? "\n(TILE_DUMP_DIR=dir keeps the PTX)" : "\n(the PTX is in " + dump + ")";
    throw tile::error(msg, {}, k.kernel);
  }
  dump_artifact(k.kernel, digest, "cubin", r.cubin);
  const ptxas_usage u{.registers = r.registers, .spill_bytes = r.spill_bytes, .serialized_mma = r.log.find("C7515") != std::string::npos};
  if (usage) *usage = u;
  if (cubin) *cubin = std::move(r.cubin);
  std::lock_guard l(mu);
  done.emplace(key, u);
  return true;
}

nvptx_build build_nvptx(const ir::Function& fn, const targets::nvptx::arch& a, bool want_cubin) {
  // the occupancy retry (jit/pick_variant.hpp) on the registers ptxas reports, where it is present
  using build = nvptx_build;  // k writes .tir, .gtir, .layouts, .ll, .ptx when dumping
  const sm_limits sm = sm_limits_of(a.sm);
  const auto use = [](const build& b) {
    return block_use{.threads = 32 * b.k->num_warps, .registers = b.usage.registers, .shared_bytes = b.k->shared_bytes};
  };
  const auto make = [&](targets::nvptx::lowering_options options) {
    build b{compile_ptx(fn, a, options), false, {}, {}};
    b.assembled = assemble(*b.k, &b.usage, want_cubin ? &b.cubin : nullptr);
    return b;
  };
  std::optional<targets::nvptx::lowering_options> lean_options, ws_options, plain_options;
  // (compile_cuda's rules: the plain build where the compiler's warp-specialized one spills)
  build made = make(first_options(fn));
  const bool first_ws = made.k->options.warp_specialize;
  build initial = pick_variant(
      std::move(made),
      [&](const build& b) {
        return b.assembled && b.usage.registers >= 0 && (plain_options = plain_variant(fn, *b.k, b.usage.spill_bytes)).has_value();
      },
      [&]() -> std::optional<build> {
        build plain = make(*plain_options);
        if (!plain.assembled || plain.usage.registers < 0) return std::nullopt;
        return plain;
      },
      [&](const build& b, const build& o) { return o.usage.spill_bytes < b.usage.spill_bytes; });
  build first = pick_variant(
      std::move(initial),
      [&](const build& b) {
        return b.assembled && b.usage.registers >= 0 && env::enabled("TILE_OCCUPANCY_RETRY") &&
               (lean_options = lean_variant(sm, *b.k, use(b))).has_value();
      },
      [&]() -> std::optional<build> {
        build lean = make(*lean_options);
        if (!lean.assembled || lean.usage.registers < 0) return std::nullopt;
        return lean;
      },
      [&](const build& b, const build& o) { return holds_more(sm, use(b), b.usage.spill_bytes, use(o), o.usage.spill_bytes); });
  // warp specialization (compile_cuda's rule)
  return pick_variant(
      std::move(first),
      [&](const build& b) {
        // (not where the first build already was: the plain one replaced it, spilling less)
        return b.assembled && b.usage.registers >= 0 && !first_ws &&
               (ws_options = warp_specialized_variant(sm, fn, *b.k, use(b))).has_value();
      },
      [&]() -> std::optional<build> {
        build w = make(*ws_options);
        if (!w.assembled || w.usage.registers < 0) return std::nullopt;
        return w;
      },
      [&](const build& b, const build& o) { return o.usage.spill_bytes <= b.usage.spill_bytes; });
}

std::unique_ptr<drivers::module> compile_null(const ir::Function& fn, const targets::nvptx::arch& a) {
  const nvptx_build chosen = build_nvptx(fn, a, false);
  const std::shared_ptr<const ptx_kernel>& k = chosen.k;
  const bool assembled = chosen.assembled;
  const ptxas_usage& usage = chosen.usage;
  auto m = std::make_unique<drivers::null_module>();
  m->kernel = fn.name;
  m->entry = k->entry;
  m->arch = k->arch.empty() ? a.name() : k->arch;
  m->num_warps = k->num_warps;
  m->shared_bytes = k->shared_bytes;
  m->assembled = assembled;
  m->registers = usage.registers;
  m->variant = variant_name(*k);
  return m;
}

void ptxas_check(const ir::Function& fn) {
  const std::string want = env::get("TILE_PTXAS_CHECK");
  if (want.empty() || want == "0" || want == "off") return;
  const std::string what = "TILE_PTXAS_CHECK=" + want + ": ";
  targets::nvptx::arch a;
  try {
    a = targets::nvptx::parse_arch(want);
  } catch (const tile::error& e) {
    throw tile::error(what + e.message(), {}, fn.name);
  }
  std::string ptxas;
  try {
    ptxas = find_ptxas();
  } catch (const tile::error& e) {
    throw tile::error(what + e.message(), {}, fn.name);
  }
  if (ptxas.empty())
    throw tile::error(what + "no ptxas to check with (TILE_PTXAS, PATH and /usr/local/cuda/bin/ptxas have none)", {},
                      fn.name);
  ptxas_usage u;
  try {
    assemble(*compile_ptx(fn, a, first_options(fn)), &u);  // (the build a launch makes first)
  } catch (const tile::error& e) {
    throw tile::error(what + e.message(), e.where(), e.kernel().empty() ? fn.name : e.kernel());
  }
  if (u.serialized_mma)
    throw tile::error(what + "ptxas serializes the kernel's asynchronous tensor-core dots (C7515: a wgmma accumulator "
                      "written by other code while the dot is in flight); TILE_DUMP_DIR=dir keeps the PTX", {}, fn.name);
}

}  // namespace tile::jit

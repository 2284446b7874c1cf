// test/fuzz/main.cpp — the random-program differential tester's command line (fuzz.hpp).
//
//   test_fuzz [--seeds FIRST:COUNT] [--minutes M] [--jobs J] [--backends cpu,cuda,null] [--print SEED]
//             [--probe] [--self-test]
//
// Runs the programs of seeds FIRST … FIRST+COUNT-1 (default 0:300), or from FIRST for M minutes,
// on the interpreter and on each named backend (default: cpu), and compares every backend's
// memory with the interpreter's (the compile-only null backend: only whether it rejects the
// program, and with what message: with TILE_PTXAS_CHECK or ptxas present, GPU code checked
// without a GPU). A difference prints the seed, the launch, the differing
// elements and the program as C++; the exit status is 1 if there was one. --print SEED prints a
// seed's program and launch without running it anywhere but the interpreter. --probe adds a store
// of every value where it is made (each its own slot), so a difference names the first value
// that differs; the program is otherwise the seed's own. --jobs J runs J
// processes, process j taking every J-th seed from FIRST + j (their output in order, one summary). --self-test checks
// that the comparison catches one flipped bit. A named backend that is not present is skipped
// (exit status 77, meson's "skipped"). Compile caches are off (TILE_CACHE=0) unless set.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz.hpp"

namespace {

std::string describe(const fuzz::config& c) {
  return "seed " + std::to_string(c.seed) + ": grid {" + std::to_string(c.programs) + "}, n = " + std::to_string(c.n) +
         ", k = " + std::to_string(c.k) + ", num_warps " + std::to_string(c.num_warps) +
         (c.fp_fusion ? ", enable_fp_fusion" : "");
}

int usage() {
  std::fprintf(stderr, "usage: test_fuzz [--seeds FIRST:COUNT] [--minutes M] [--jobs J] [--backends cpu,cuda,null] [--print SEED] [--probe] [--self-test]\n");
  return 2;
}

/// The comparison must see one flipped bit of a stored exact value and of a byte no store covers.
int self_test(const tile::device& interp, const tile::device& other) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const fuzz::config cfg = fuzz::choose(seed);
    fuzz::program prog;
    auto res = fuzz::run({interp, other}, cfg, prog);
    if (res[0].rejected || res[1].rejected || !fuzz::compare(prog, cfg, false, res[0], res[1]).empty()) continue;
    const fuzz::slot* s = nullptr;
    for (const auto& sl : prog.slots)
      if (!sl.in_io && sl.exact.cpu && sl.count) s = &sl;
    if (!s) continue;
    fuzz::result flipped = res[1];
    flipped.out[s->offset] ^= 0x01;
    const auto d1 = fuzz::compare(prog, cfg, false, res[0], flipped);
    fuzz::result stray = res[1];
    stray.out[fuzz::out_bytes - 1] ^= 0x80;
    const auto d2 = fuzz::compare(prog, cfg, false, res[0], stray);
    std::printf("self-test on %s: a flipped bit of %s: %s\n", describe(cfg).c_str(), s->what.c_str(),
                d1.empty() ? "NOT reported" : d1[0].c_str());
    std::printf("self-test: a flipped bit no store covers: %s\n", d2.empty() ? "NOT reported" : d2[0].c_str());
    return d1.empty() || d2.empty() ? 1 : 0;
  }
  std::printf("self-test: no program of seeds 0-199 stored an exact value\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("TILE_CACHE")) setenv("TILE_CACHE", "0", 1);
  const auto process_start = std::chrono::steady_clock::now();
  std::uint64_t first = 0, count = 300;
  double minutes = 0;
  std::string backends = "cpu";
  bool print_only = false, self = false, probe = false;
  int jobs = 1;
  std::uint64_t print_seed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--seeds" && has) {
      const std::string v = argv[++i];
      const auto colon = v.find(':');
      first = std::stoull(v.substr(0, colon));
      if (colon != std::string::npos) count = std::stoull(v.substr(colon + 1));
    } else if (a == "--minutes" && has) {
      minutes = std::stod(argv[++i]);
    } else if (a == "--backends" && has) {
      backends = argv[++i];
    } else if (a == "--print" && has) {
      print_only = true;
      print_seed = std::stoull(argv[++i]);
    } else if (a == "--jobs" && has) {
      jobs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--probe") {
      probe = true;
    } else if (a == "--self-test") {
      self = true;
    } else {
      return usage();
    }
  }
  // --jobs: the processes are forked before any device exists (a CUDA context does not survive a fork)
  std::uint64_t stride = 1;
  if (jobs > 1 && !print_only && !self) {
    std::vector<std::pair<pid_t, int>> kids;
    for (int j = 0; j < jobs; ++j) {
      int fd[2];
      if (pipe(fd) != 0) return 2;
      const pid_t pid = fork();
      if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        first += static_cast<std::uint64_t>(j);
        stride = static_cast<std::uint64_t>(jobs);
        count = (count + static_cast<std::uint64_t>(jobs - 1 - j)) / static_cast<std::uint64_t>(jobs);
        jobs = 1;
        goto child;
      }
      close(fd[1]);
      kids.push_back({pid, fd[0]});
    }
    unsigned long long ran = 0, rejected = 0, failed = 0;
    bool skipped = false;
    for (auto [pid, fd] : kids) {
      std::string text;
      char buf[4096];
      for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(got));
      close(fd);
      int status = 0;
      waitpid(pid, &status, 0);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 77) skipped = true;
      if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1 && WEXITSTATUS(status) != 77)) {
        std::printf("FAIL a process of the run died (status %d)\n", status);
        ++failed;
      }
      unsigned long long r = 0, x = 0, f = 0;
      const auto at = text.find("[fuzz] ");
      if (at != std::string::npos && std::sscanf(text.c_str() + at, "[fuzz] %llu programs%*[^:]: %llu differ, %llu rejected", &r, &f, &x) == 3)
        ran += r, failed += f, rejected += x;
      std::fputs(text.substr(0, at == std::string::npos ? text.size() : at).c_str(), stdout);
      if (skipped && at == std::string::npos) std::fputs(text.c_str(), stdout);
    }
    if (skipped) return 77;
    std::printf("[fuzz] %llu programs (seeds from %llu, %d processes) on interpreter and %s: %llu differ, %llu rejected by every "
                "backend alike, %.1f min\n",
                ran, static_cast<unsigned long long>(first), jobs, backends.c_str(), failed, rejected,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - process_start).count() / 60);
    return failed ? 1 : 0;
  }
child:
  const tile::device interp = tile::device::get("interpreter");
  if (print_only) {
    fuzz::config cfg = fuzz::choose(print_seed);
    cfg.probe = probe;
    fuzz::program prog;
    auto res = fuzz::run({interp}, cfg, prog);
    std::printf("// %s\n%s", describe(cfg).c_str(), prog.cpp.c_str());
    if (res[0].rejected) std::printf("// rejected: %s\n", res[0].error.c_str());
    return 0;
  }
  std::vector<tile::device> devs = {interp};
  std::vector<std::string> names;
  for (std::size_t at = 0; at <= backends.size();) {
    const std::size_t comma = std::min(backends.find(',', at), backends.size());
    const std::string b = backends.substr(at, comma - at);
    at = comma + 1;
    if (b.empty()) continue;
    try {
      devs.push_back(tile::device::get(b));
      names.push_back(b);
    } catch (const tile::error& e) {
      std::printf("[tile] skipped: backend %s is not present here: %s\n", b.c_str(), e.what());
      return 77;
    }
  }
  if (self) return self_test(interp, devs.size() > 1 ? devs[1] : interp);

  const auto start = std::chrono::steady_clock::now();
  auto elapsed_min = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60; };
  std::uint64_t ran = 0, rejected = 0, failed = 0;
  for (std::uint64_t i = 0;; ++i) {
    const std::uint64_t seed = first + i * stride;
    if (minutes > 0 ? elapsed_min() >= minutes : i >= count) break;
    fuzz::config cfg = fuzz::choose(seed);
    cfg.probe = probe;
    fuzz::program prog;
    std::vector<fuzz::result> res;
    ++ran;
    try {
      res = fuzz::run(devs, cfg, prog);
    } catch (const std::exception& e) {
      std::printf("FAIL %s: %s\n", describe(cfg).c_str(), e.what());
      ++failed;
      continue;
    }
    if (res[0].rejected) ++rejected;
    bool bad = false;
    for (std::size_t b = 1; b < res.size(); ++b) {
      // the compile-only null backend (NVIDIA code, assembled by ptxas where present) runs
      // nothing: only its rejections are compared
      fuzz::result ran_here = res[b];
      if (names[b - 1] == "null" && !ran_here.rejected && !res[0].rejected) ran_here = res[0];
      if (names[b - 1] == "null" && !res[b].rejected && res[0].rejected && res[0].error.find("out-of-bounds") != std::string::npos)
        ran_here = res[0];  // an access only a run can see
      const auto diffs = fuzz::compare(prog, cfg, names[b - 1] == "cuda", res[0], ran_here);
      if (diffs.empty()) continue;
      bad = true;
      std::printf("FAIL %s on %s:\n", describe(cfg).c_str(), names[b - 1].c_str());
      for (const auto& d : diffs) std::printf("  %s\n", d.c_str());
    }
    if (bad) {
      ++failed;
      std::printf("%s", prog.cpp.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("[fuzz] %llu programs (seeds from %llu) on interpreter", static_cast<unsigned long long>(ran),
              static_cast<unsigned long long>(first));
  for (const auto& n : names) std::printf(" and %s", n.c_str());
  std::printf(": %llu differ, %llu rejected by every backend alike, %.1f min\n", static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(rejected), elapsed_min());
  return failed ? 1 : 0;
}

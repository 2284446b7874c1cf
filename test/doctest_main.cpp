// The main of every doctest executable. A test case that cannot run here is reported as skipped,
// never as passed:
//  - TILE_SKIP_WITHOUT_BACKEND=<name> (the GPU suites: lang-cuda, …): when that backend is not
//    available here, say why and exit 77, which meson and scripts/bundle/run-all count as
//    skipped — CI machines have no GPU;
//  - a test case that names a need (test/requires.hpp: a CUDA device, ptxas, …) not met here is
//    excluded from the run, saying why, and doctest reports it as skipped.
// Either way the last line is "[tile] test cases skipped here: K": those passing the command
// line's filters that did not run because of an unmet need, a doctest::skip decorator or the
// missing backend (doctest's own "W skipped" also counts the test cases the filters leave out).
// scripts/count_tests.py reads it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "requires.hpp"
#include "tile/runtime/device.hpp"

namespace {

/// The number of test cases that pass the command line's filters and `exclude`d test suites
/// (skip decorators ignored when `no_skip`), or -1 when the command line is not a plain run
/// (--help, --list-…: nothing is counted).
long count_cases(int argc, char** argv, const std::vector<const char*>& exclude, bool no_skip) {
  doctest::Context c(argc, argv);
  std::ostringstream out;
  c.setCout(&out);
  c.setOption("reporters", "console");
  c.setOption("no-colors", true);
  const char* const count[] = {argv[0], "--count"};  // a flag, which setOption cannot set
  c.applyCommandLine(2, count);
  if (no_skip) c.setOption("no-skip", true);
  for (const char* s : exclude) c.addFilter("test-suite-exclude", s);
  c.run();
  const std::string text = out.str();
  const std::string key = "unskipped test cases passing the current filters: ";
  const auto at = text.rfind(key);
  if (at == std::string::npos) return -1;
  return std::strtol(text.c_str() + at + key.size(), nullptr, 10);
}

/// A command line that lists, counts or prints help rather than running tests.
bool query(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    a = a.substr(0, a.find('='));
    a.erase(0, a.find_first_not_of('-'));
    if (a.rfind("dt-", 0) == 0) a.erase(0, 3);
    for (const char* q : {"c", "count", "ltc", "list-test-cases", "lts", "list-test-suites", "lr", "list-reporters",
                          "h", "help", "?", "v", "version"})
      if (a == q) return true;
  }
  return false;
}

void report_skipped(long all, long runnable) {
  if (all >= 0 && runnable >= 0) std::cout << "[tile] test cases skipped here: " << all - runnable << "\n";
}

}  // namespace

std::string tiletest::backend_missing(const char* name) {
  try {
    (void)tile::device::get(name);
    return "";
  } catch (const tile::error& e) {
    return e.message();
  }
}

std::string tiletest::host_backend_missing() {
  try {
    const std::string b = tile::device::best().backend();
    return b == "cuda" ? "the tests run on the cuda backend (TILE_BACKEND=cuda)" : "";
  } catch (const tile::error& e) {
    return e.message();
  }
}

int main(int argc, char** argv) {
  const long all = query(argc, argv) ? -1 : count_cases(argc, argv, {}, true);
  if (const char* want = std::getenv("TILE_SKIP_WITHOUT_BACKEND"); want && *want)
    for (const auto& b : tile::device::backends())
      if (b.name == want && !b.available) {
        std::cout << "skipped: the " << want << " backend is not available here (" << b.reason << ")\n";
        report_skipped(all, 0);
        return 77;
      }
  doctest::Context ctx(argc, argv);
  std::vector<const char*> unmet;
  for (const tiletest::need_record& n : tiletest::need_registry()) {
    const std::string why = n.probe();
    if (why.empty()) continue;
    std::cout << "[tile] skipped, " << n.name << ": " << why << "\n";
    unmet.push_back(n.name);
    ctx.addFilter("test-suite-exclude", n.name);
  }
  const long runnable = count_cases(argc, argv, unmet, false);
  const int rc = ctx.run();
  report_skipped(all, runnable);
  return rc;
}

// test/requires.hpp — test cases that need what a machine may lack (a CUDA device, ptxas, the cpu
// backend, …) are reported as skipped there, never as passed. A test case names its need with a
// doctest decorator:
//
//   TEST_CASE("cuda: …" * tiletest::needs_cuda) { auto dev = tile::device::get("cuda"); … }
//
// A need is a name and a probe that says why it is not met here ("" when it is). The decorator
// puts the test case in a doctest test suite of the need's name; test/doctest_main.cpp probes
// each need of the executable once, before any test runs, and excludes the test suites of those
// not met (saying why), so doctest reports their test cases as skipped. It also prints
//   [tile] test cases skipped here: K
// (K: those that pass the command line's filters but are skipped, by an unmet need or a
// doctest::skip decorator), which scripts/count_tests.py counts. The body of such a test case
// needs no check of its own: where the need is met, a failure to get what it needs is a failure.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

namespace tiletest {

/// Why a need is not met on this machine, or "" when it is.
using probe_fn = std::string (*)();

struct need_record {
  const char* name;
  probe_fn probe;
};

/// Every need the test cases of this executable named, once each.
inline std::vector<need_record>& need_registry() {
  static std::vector<need_record> r;
  return r;
}

/// The decorator. `name` is a string literal (the test suite's name: no commas, no wildcards).
struct needs {
  const char* name;
  probe_fn probe;
  void fill(doctest::detail::TestCase& tc) const {
    record();
    tc.m_test_suite = name;
  }
  void fill(doctest::detail::TestSuite& ts) const {
    record();
    ts.m_test_suite = name;
  }

 private:
  void record() const {
    for (const need_record& r : need_registry())
      if (std::strcmp(r.name, name) == 0) return;
    need_registry().push_back({name, probe});
  }
};

// The probes of the common needs (test/doctest_main.cpp, linked into every test executable: this
// header includes nothing of tile's, so white-box tests may include it beside their own names).
/// "" if backend `name` opens here (tile::device::get), else why not.
std::string backend_missing(const char* name);
/// "" if the test environment's device (tile::device::best(): TILE_BACKEND) runs on the host,
/// else why not: on the cuda backend a device-side failure is fatal to the context and prints go
/// to the GPU's stdout.
std::string host_backend_missing();

/// A CUDA driver and device (the cuda backend opens).
inline constexpr needs needs_cuda{"needs a CUDA device", [] { return backend_missing("cuda"); }};
/// The cpu backend (built with LLVM).
inline constexpr needs needs_cpu{"needs the cpu backend", [] { return backend_missing("cpu"); }};
/// The null backend (compile-only; built with LLVM).
inline constexpr needs needs_null{"needs the null backend", [] { return backend_missing("null"); }};
/// A backend that runs on the host (see host_backend_missing).
inline constexpr needs needs_host_backend{"needs a host backend", host_backend_missing};

}  // namespace tiletest

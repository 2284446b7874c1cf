// test/errors/error_test.hpp — helpers for error tests: run something that must throw
// tile::error and check the message, the user's file:line and the kernel's name.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <tile/tile.hpp>

namespace errtest {

inline tile::device interp() { return tile::device::get("interpreter"); }

struct expected {
  std::vector<std::string> words;  // each must appear in the message
  int line = 0;                    // the user's line (0: don't check)
  std::string kernel;              // "" : don't check
};

/// Runs `f`, which must throw tile::error, and checks the error against `e`.
inline void expect_error(const std::function<void()>& f, const expected& e) {
  bool thrown = false;
  try {
    f();
  } catch (const tile::error& err) {
    thrown = true;
    std::string what = err.what();
    INFO("what(): " << what);
    for (auto& w : e.words) CHECK_MESSAGE(what.find(w) != std::string::npos, "missing '" << w << "'");
    if (e.line) {
      CHECK(err.where().line == static_cast<std::uint32_t>(e.line));
      CHECK(std::string(err.where().file).find("test/errors/") != std::string::npos);
      CHECK(what.find(":" + std::to_string(e.line) + ": error:") != std::string::npos);
    }
    if (!e.kernel.empty()) {
      CHECK(err.kernel() == e.kernel);
      CHECK(what.find("kernel '" + e.kernel + "'") != std::string::npos);
    }
    // no internal source paths leak into the user's message
    CHECK(what.find("/src/") == std::string::npos);
    CHECK(what.find("include/tile/") == std::string::npos);
  }
  CHECK_MESSAGE(thrown, "expected a tile::error");
}

}  // namespace errtest

// test/errors/error_test.hpp — helpers for the error tests: run something that must throw
// tile::error and check everything a user sees: the message's key words, the exact
// "file:line: error: kernel 'name': message" shape of what(), that file:line is the user's own
// statement (in the calling test file), the kernel's name, and that nothing internal (a path
// under src/ or include/tile/, a header, an internal namespace) leaks into the text.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <source_location>
#include <string>
#include <tile/tile.hpp>
#include <utility>
#include <vector>

namespace errtest {

inline tile::device interp() { return tile::device::get("interpreter"); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::string file_name_of(const std::string& path) {
  auto s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

/// Checks that `text` names no source file but `user_file` (by its base name): no internal
/// .cpp/.hpp file, no path into the library's tree, no internal namespace.
inline void check_no_internals(const std::string& text, const std::string& user_file) {
  INFO("text: " << text);
  for (const char* bad : {"src/", "include/tile", "tile/tl/", "tile/runtime/", "tile/core/", ".hpp", "detail::",
                          "frontend", "tile::ir", "std::"})
    CHECK_MESSAGE(!contains(text, bad), "internal text '" << bad << "' leaks into the message");
  // every "<name>.cpp" in the text must be the user's own file
  for (std::size_t at = text.find(".cpp"); at != std::string::npos; at = text.find(".cpp", at + 1)) {
    std::size_t start = at;
    while (start > 0 && text[start - 1] != ' ' && text[start - 1] != '(' && text[start - 1] != '"') --start;
    std::string file = file_name_of(text.substr(start, at + 4 - start));
    CHECK_MESSAGE(file == file_name_of(user_file), "the message names the file '" << file << "'");
  }
}

/// Runs `f`, which must throw tile::error, and checks it:
///  - every word of `words` appears in the message;
///  - it names `kernel` ("" : it must name no kernel);
///  - it points at line `line` of the calling file (read after `f` ran, so a kernel body may set
///    it while being traced); line < 0: the error carries no location;
///  - what() is exactly "file:line: error: kernel 'name': message";
///  - no internal path or name leaks.
/// Returns the error (empty if nothing, or something else, was thrown).
template <class F>
std::optional<tile::error> expect_error(F&& f, const std::vector<std::string>& words, const std::string& kernel,
                                        const int& line,
                                        std::source_location here = std::source_location::current()) {
  std::optional<tile::error> caught;
  try {
    std::forward<F>(f)();
  } catch (const tile::error& e) {
    caught = e;
  } catch (const std::exception& e) {
    FAIL_CHECK("expected a tile::error, got another exception: " << e.what());
    return std::nullopt;
  }
  if (!caught) {
    FAIL_CHECK("expected a tile::error, nothing was thrown (expected: " << (words.empty() ? "" : words[0]) << ")");
    return std::nullopt;
  }
  const tile::error& e = *caught;
  const std::string what = e.what();
  INFO("what(): " << what);
  for (const auto& w : words) CHECK_MESSAGE(contains(e.message(), w), "the message lacks '" << w << "'");
  CHECK(e.kernel() == kernel);
  std::string prefix;
  if (line >= 0) {
    REQUIRE_MESSAGE(line > 0, "the offending statement was never reached (line not recorded)");
    CHECK(e.where().known());
    CHECK(std::string(e.where().file) == std::string(here.file_name()));
    CHECK(e.where().line == static_cast<std::uint32_t>(line));
    prefix = std::string(here.file_name()) + ":" + std::to_string(line) + ": ";
  } else {
    CHECK_FALSE(e.where().known());
  }
  prefix += "error: ";
  if (!kernel.empty()) prefix += "kernel '" + kernel + "': ";
  CHECK(what == prefix + e.message());
  if (kernel.empty()) CHECK_FALSE(contains(e.message(), "kernel '"));
  check_no_internals(e.message(), here.file_name());
  return caught;
}

}  // namespace errtest

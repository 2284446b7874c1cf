// tile/core/error.hpp — layer: core (public). The one exception type every user error is
// reported with. Its message names the user's file:line and, where known, the kernel.
#pragma once

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace tile {

/// A location in the user's C++ source, as captured by std::source_location. `file` points to
/// storage of static duration (the compiler's string literal).
struct src_loc {
  const char* file = "";
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  constexpr src_loc() = default;
  constexpr src_loc(const std::source_location& l)  // NOLINT: implicit on purpose
      : file(l.file_name()), line(l.line()), column(l.column()) {}
  constexpr bool known() const { return line != 0; }
};

/// Every error tile reports to its user. what() reads
///   "file:line: error: kernel 'name': message"
/// so editors and CI logs can jump to the user's own line.
class error : public std::runtime_error {
 public:
  error(std::string message, src_loc where = {}, std::string kernel = {});
  const std::string& message() const { return message_; }
  const std::string& kernel() const { return kernel_; }
  const src_loc& where() const { return where_; }

 private:
  std::string message_;
  std::string kernel_;
  src_loc where_;
};

}  // namespace tile

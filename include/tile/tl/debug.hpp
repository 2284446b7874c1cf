// tile/tl/debug.hpp — layer: language (public). Printing and assertions on the device, checks
// at trace time, and compiler hints.
#pragma once

#include <string>

#include "tile/tl/types.hpp"

namespace tl {

/// A message with the place it was written (for device_print's prefix).
struct message {
  std::string text;
  tile::src_loc loc;
  message(const char* s, std::source_location l = std::source_location::current()) : text(s), loc(l) {}  // NOLINT
  message(std::string s, std::source_location l = std::source_location::current()) : text(std::move(s)), loc(l) {}  // NOLINT
};

/// Print `prefix` and each element of the values, one line per element with its program id
/// and index: "pid (0, 0, 0) idx (3) x: 1.5".
template <class... T>
void device_print(const message& prefix, const T&... values) {
  std::vector<tile::detail::node*> ns{operand::of(values, prefix.loc).d.n...};
  tile::detail::device_print(prefix.text, ns, false, prefix.loc);
}
template <class... T>
void device_print_hex(const message& prefix, const T&... values) {
  std::vector<tile::detail::node*> ns{operand::of(values, prefix.loc).d.n...};
  tile::detail::device_print(prefix.text, ns, true, prefix.loc);
}
/// Fail the launch, naming this line, where `cond` is false for some element.
inline void device_assert(const operand& cond, const std::string& msg = "") {
  tile::detail::device_assert(cond.d, msg, cond.loc);
}
/// A check at trace time (Triton's tl.static_assert): a false condition stops the compile with
/// `msg` at this line.
inline void static_assert_(bool cond, const std::string& msg = "static_assert_ failed",
                           std::source_location l = std::source_location::current()) {
  if (!cond) tile::detail::trace_error(msg, l);
}

/// Promise that every element (or each run of `max_contiguous`) of x is a multiple of n.
inline tensor multiple_of(const operand& x, std::int64_t n) {
  return tensor(tile::detail::hint(x.d.n, tile::detail::hint_kind::multiple_of, {&n, 1}, x.loc));
}
/// Promise that x holds runs of n consecutive values (e.g. offsets of a contiguous block).
inline tensor max_contiguous(const operand& x, std::int64_t n) {
  return tensor(tile::detail::hint(x.d.n, tile::detail::hint_kind::max_contiguous, {&n, 1}, x.loc));
}

}  // namespace tl

// tile/core/fixed_string.hpp — layer: core (public). A string usable as a template argument, so
// meta-parameter names ("BLOCK") are part of types and checked by the compiler.
#pragma once

#include <cstddef>
#include <string_view>

namespace tile {

template <std::size_t N>
struct fixed_string {
  char data[N]{};
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit from a literal
    for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
  }
  constexpr std::string_view view() const { return {data, N - 1}; }
  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& o) const {
    return view() == o.view();
  }
};

}  // namespace tile

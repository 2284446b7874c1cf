// src/support/env.hpp — layer: support. The one registry of environment switches — the public
// debugging interface. Each switch is declared once (env.cpp) with its default, its effect on
// the compile cache and a line of documentation; reading an undeclared switch is a bug.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tile::env {

/// How a switch relates to cached kernels.
enum class cache_effect {
  none,             // does not change generated code
  part_of_key,      // changes generated code: part of every cache key
  forces_recompile  // needs a fresh compile to take effect (e.g. dumps)
};

struct Switch {
  std::string_view name;
  std::string_view default_value;
  cache_effect effect;
  std::string_view doc;
};

const std::vector<Switch>& all();
/// The switch's value, or its default when unset. Throws std::logic_error for an undeclared name.
std::string get(std::string_view name);
/// True when the switch is set to something other than "", "0", "false", "off", "no".
bool enabled(std::string_view name);
/// Human-readable table of every switch (tools print it for --help).
std::string describe();

}  // namespace tile::env

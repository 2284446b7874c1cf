// src/jit/stage_timer.hpp — layer: jit. TILE_TIME_PASSES: each pipeline's stages timed and
// printed to stderr, one table a compile.
#pragma once

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace tile::jit {

struct stage_timer {
  std::vector<std::pair<std::string, double>> rows;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  /// Ends the stage `name` (since the last lap, or since construction).
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    rows.emplace_back(name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
  /// The table: one row a stage (ms, share of the total), then the total.
  void print(const std::string& kernel, const std::string& target) const {
    double total = 0;
    for (auto& r : rows) total += r.second;
    std::cerr << "// ----- compile timing, " << target << " (kernel " << kernel << ") ----- //\n";
    char line[160];
    for (auto& r : rows) {
      std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", r.first.c_str(), r.second, total > 0 ? 100.0 * r.second / total : 0.0);
      std::cerr << line;
    }
    std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", "total", total, 100.0);
    std::cerr << line << std::flush;
  }
};

}  // namespace tile::jit

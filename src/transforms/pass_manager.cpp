// src/transforms/pass_manager.cpp — layer: transforms. Running passes with dumps, verification
// and timing.
#include "transforms/pass_manager.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "support/env.hpp"

namespace tile::transforms {

Pass::~Pass() = default;

PassManager::Options PassManager::Options::from_env() {
  Options o;
  o.dump_ir = env::enabled("TILE_DUMP_IR");
  o.verify = env::enabled("TILE_VERIFY");
  o.time_passes = env::enabled("TILE_TIME_PASSES");
  o.out = &std::cerr;
  return o;
}

void PassManager::add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

namespace {
void dump(std::ostream& os, const ir::Function& f, std::string_view stage) {
  os << "// ----- IR after " << stage << " (kernel " << f.name << ") ----- //\n" << ir::print(f, true) << std::flush;
}

void timing_table(std::ostream& os, const ir::Function& f, const std::vector<PassManager::Timing>& timings) {
  double total = 0.0;
  std::size_t width = 5;  // "total"
  for (auto& t : timings) {
    total += t.ms;
    width = std::max(width, t.pass.size());
  }
  char line[256];
  os << "// ----- pass timing (kernel " << f.name << ") ----- //\n";
  std::snprintf(line, sizeof line, "  %-*s %10s %7s\n", static_cast<int>(width), "pass", "ms", "%");
  os << line;
  for (auto& t : timings) {
    double pct = total > 0.0 ? 100.0 * t.ms / total : 0.0;
    std::snprintf(line, sizeof line, "  %-*.*s %10.3f %6.1f%%\n", static_cast<int>(width),
                  static_cast<int>(t.pass.size()), t.pass.data(), t.ms, pct);
    os << line;
  }
  std::snprintf(line, sizeof line, "  %-*s %10.3f %6.1f%%\n", static_cast<int>(width), "total", total, 100.0);
  os << line << std::flush;
}
}  // namespace

bool PassManager::run(ir::Function& f) {
  std::ostream& os = options_.out ? *options_.out : std::cerr;
  timings_.clear();
  if (options_.dump_ir && options_.dump_input) dump(os, f, options_.input_stage);
  if (options_.verify) ir::verify(f, options_.input_stage);
  bool changed = false;
  for (auto& p : passes_) {
    auto start = std::chrono::steady_clock::now();
    changed |= p->run(f);
    auto stop = std::chrono::steady_clock::now();
    timings_.push_back({p->name(), std::chrono::duration<double, std::milli>(stop - start).count()});
    if (options_.dump_ir) dump(os, f, p->name());
    if (options_.verify) ir::verify(f, p->name());
  }
  if (options_.time_passes) timing_table(os, f, timings_);
  return changed;
}

}  // namespace tile::transforms

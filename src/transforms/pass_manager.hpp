// src/transforms/pass_manager.hpp — layer: transforms. The Pass interface and the PassManager
// that runs passes in order and does, for all of them, what no pass does itself: dumping the IR
// (TILE_DUMP_IR), verifying it after every pass (TILE_VERIFY) and timing the passes
// (TILE_TIME_PASSES). A pass only transforms and reports whether it changed anything.
#pragma once

#include <iosfwd>
#include <memory>
#include <string_view>
#include <vector>

#include "ir/ir.hpp"

namespace tile::transforms {

/// One transformation of a kernel's IR. Implementations live one a file, each behind a factory
/// declared in passes.hpp.
class Pass {
 public:
  virtual ~Pass();
  /// A short, stable, snake_case name ("cse") of static storage duration (a literal): used in
  /// dumps, timings and verifier messages.
  virtual std::string_view name() const = 0;
  /// Transform `f` in place; returns whether anything changed. Must leave verifiable IR.
  virtual bool run(ir::Function& f) = 0;
};

class PassManager {
 public:
  struct Options {
    bool dump_ir = false;       // print the IR after trace and after every pass
    bool verify = true;         // run ir::verify on the input and after every pass
    bool time_passes = false;   // print a per-pass timing table when run() ends
    std::ostream* out = nullptr;  // where dumps and timings go; null means std::cerr
    /// What produced the input (its dump's and verifier messages' stage name), and whether it is
    /// dumped: a pipeline that continues another's output ("canonicalize") need not print it again.
    std::string_view input_stage = "trace";
    bool dump_input = true;
    /// TILE_DUMP_IR, TILE_VERIFY and TILE_TIME_PASSES (see support/env.cpp), output to stderr.
    static Options from_env();
  };

  /// The time one pass took in the last run().
  struct Timing {
    std::string_view pass;
    double ms = 0.0;
  };

  PassManager() = default;
  explicit PassManager(Options options) : options_(options) {}

  void add(std::unique_ptr<Pass> pass);
  /// Run every pass in order. With `verify`, the input is verified first (stage input_stage) and the
  /// IR after every pass (stage = the pass's name); a failure throws tile::error. Returns whether
  /// any pass changed the IR.
  bool run(ir::Function& f);

  const Options& options() const { return options_; }
  const std::vector<Timing>& timings() const { return timings_; }

 private:
  Options options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<Timing> timings_;
};

}  // namespace tile::transforms

// src/drivers/interpreter/interpreter.hpp — layer: drivers (interpreter). Executes tile IR
// directly on host memory with exact semantics: the oracle every compiled backend is tested
// against. Every load, store and atomic is checked against the memory regions of the buffers
// passed to the kernel; an access outside them is a tile::error naming the kernel, the program
// id, the element and the user's file:line of the tl::load / tl::store.
//
// Unlike other drivers this one reads tile IR (it is the IR's executor), so it depends on
// src/ir as well as src/support.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tile::interp {

/// A region of memory a kernel may access: one per pointer argument.
struct Region {
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
  std::string what;  // "argument 2 (ptr<f32>, 1000 elements)"
};

/// A runtime argument: integers and pointers (as host addresses) in `i`, floats in `f`.
struct ArgValue {
  std::int64_t i = 0;
  double f = 0.0;
};

struct Grid {
  std::uint32_t x = 1, y = 1, z = 1;
};

struct RunOptions {
  unsigned threads = 0;           // 0: hardware concurrency
  std::ostream* print = nullptr;  // device_print output (null: std::cout)
  /// memory[k] is the k-th pointer argument's region: an access through a pointer derived from
  /// one argument that lands in another argument's buffer is then an error too.
  bool regions_follow_pointer_args = false;
};

/// A kernel prepared for execution (values numbered into slots once, reused by every launch).
class Program {
 public:
  explicit Program(std::shared_ptr<const ir::Function> f);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  /// Run every program instance of the grid. Instances may run in parallel; atomics are
  /// atomic across them. Throws tile::error on an out-of-bounds access or a failed
  /// device_assert (the first one found; the launch stops).
  void run(Grid grid, std::span<const ArgValue> args, std::span<const Region> memory,
           const RunOptions& opts = {}) const;

  const ir::Function& function() const { return *fn_; }

 private:
  struct Impl;
  std::shared_ptr<const ir::Function> fn_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tile::interp

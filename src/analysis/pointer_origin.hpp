// src/analysis/pointer_origin.hpp — layer: analysis. Which kernel argument a pointer tile was
// derived from, by the interpreter's rule for where an access may land (Val::origin: addptr,
// select and the shape ops keep a pointer's origin; the interpreter reports an access outside
// the origin's memory as out of bounds). Loop-carried pointers have an origin when every value
// that enters the carried slot has the same one. Anything else (a pointer made from an integer,
// two origins meeting) has none.
//
// With the launch's promise that an argument's memory is reached through no other pointer
// argument (ir::ArgInfo::noalias, checked by the runtime on the buffers' ranges), two accesses
// of different origins cannot touch the same bytes: the GPU lowering then needs no barrier
// between a store and a later load (docs/ARCHITECTURE.md, "global memory order").
#pragma once

#include <optional>
#include <unordered_map>

#include "ir/ir.hpp"

namespace tile::analysis {

class PointerOrigins {
 public:
  /// Solves the whole function at once (to a fixed point over the loops).
  explicit PointerOrigins(const ir::Function& f);
  /// The index of the kernel argument `ptr` (a pointer tile or scalar) derives from; nullopt
  /// when it has none (or is not a pointer).
  std::optional<unsigned> origin(const ir::Value* ptr) const;
  /// Whether accesses through the pointers `a` and `b` may touch the same bytes: false only
  /// where both have an origin, the origins differ and one of the two arguments is noalias.
  bool may_alias(const ir::Value* a, const ir::Value* b) const;

 private:
  // a lattice value: not yet known (top), an argument's index, none (bottom)
  static constexpr int kTop = -1, kNone = -2;
  static int meet(int a, int b);
  int get(const ir::Value* v) const;
  bool update(const ir::Value* v, int r);  // lowers v's value to r; true when it changed
  bool visit(const ir::Block& b);          // one pass over b and its regions

  const ir::Function& fn_;
  std::unordered_map<const ir::Value*, int> val_;
};

}  // namespace tile::analysis

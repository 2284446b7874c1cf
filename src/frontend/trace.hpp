// src/frontend/trace.hpp — layer: frontend. The state of a kernel being traced on this thread:
// the function under construction, the builder's insertion point, and access to the registry of
// live tl::tensor objects (which makes reassigned outer tiles loop-carried). Also the semantic
// helpers every op uses: turning operands into typed values, promotion and broadcasting.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "tile/tl/tensor.hpp"

namespace tile::detail {

/// Reads and writes the private parts of tl::tensor (its value and its registry links).
struct tensor_access {
  static node*& value(tl::tensor& t) { return t.node_; }
  static tl::tensor*& prev(tl::tensor& t) { return t.prev_; }
  static tl::tensor*& next(tl::tensor& t) { return t.next_; }
};

}  // namespace tile::detail

namespace tile::frontend {

using detail::node;
using detail::operand_data;

using ir::Type;
using ir::Value;

/// One kernel being traced. Created by the runtime around the call of the user's kernel
/// function; installs itself as this thread's current trace.
class Trace {
 public:
  Trace(ir::Function& fn, std::string kernel_name);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  /// The trace running on this thread; throws tile::error naming `loc` when tl:: ops are used
  /// outside a kernel.
  static Trace& current(src_loc loc);
  static Trace* current_or_null();

  ir::Function& fn() { return fn_; }
  ir::Builder& builder() { return builder_; }
  const std::string& kernel() const { return kernel_; }

  [[noreturn]] void fail(const std::string& message, src_loc loc) const;

 private:
  ir::Function& fn_;
  ir::Builder builder_;
  std::string kernel_;
  Trace* outer_;
};

/// Restores the builder's insertion point (the end of the current block) when a region's
/// tracing ends, normally or by an exception.
class InsertionGuard {
 public:
  explicit InsertionGuard(ir::Builder& b) : b_(b), block_(b.block()) {}
  ~InsertionGuard() { b_.set_insertion_end(block_); }
  InsertionGuard(const InsertionGuard&) = delete;
  InsertionGuard& operator=(const InsertionGuard&) = delete;

 private:
  ir::Builder& b_;
  ir::Block* block_;
};

/// "file.cpp:12": a user's location as messages quote it (the file's base name).
std::string loc_str(src_loc l);

/// Every live tl::tensor on this thread (those holding a value, or all), most recent first.
std::vector<tl::tensor*> live_tensors(bool include_undefined = false);

// ---- semantics (semantics.cpp) ---------------------------------------------------------------
inline Value* V(node* n) { return ir::as_value(n); }
inline const Type& type_of(const Value* v) { return v->type; }
bool is_pow2(std::int64_t n);
std::string shape_str(const std::vector<std::int64_t>& s);

/// The dtype Triton's rules give a binary op on two strongly typed operands.
dtype promote(dtype a, dtype b);
/// The value of an operand: a traced value, or a literal materialized with dtype `like` (weak
/// typing: an int literal takes an int or float tile's dtype, a float literal a float tile's;
/// otherwise the literal's natural dtype: i32/i64, f32, i1).
Value* materialize(const operand_data& o, const Type* like, src_loc loc);
/// The operand's type if it is a value; null for literals.
const Type* value_type(const operand_data& o);
/// Convert `v` to dtype `t` (no-op when equal).
Value* convert(Value* v, dtype t, src_loc loc);
/// Broadcast `v` to `shape` (splat for scalars); throws naming both shapes when incompatible.
Value* broadcast(Value* v, const std::vector<std::int64_t>& shape, src_loc loc);
/// The numpy broadcast of two shapes, or an error naming them.
std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t>& a,
                                           const std::vector<std::int64_t>& b, src_loc loc,
                                           const char* what);
/// Bring two operands to a common dtype and shape for an arithmetic op (Triton's promotion).
std::pair<Value*, Value*> binary_operands(const operand_data& a, const operand_data& b,
                                          src_loc loc, const char* what);
/// Require a pointer value.
Value* require_pointer(const operand_data& o, const char* op, src_loc loc);
/// Checks a tile shape: power-of-two extents, at most 2^20 elements.
void check_shape(const std::vector<std::int64_t>& shape, src_loc loc, const char* what);
Value* to_bool(Value* v, src_loc loc);

Value* create1(ir::OpKind k, std::vector<Value*> operands, Type result, src_loc loc,
               ir::Attrs attrs = {});

}  // namespace tile::frontend

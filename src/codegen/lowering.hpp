// src/codegen/lowering.hpp — layer: codegen. Tile IR -> LLVM IR, shared by every target.
//
// One program instance is one call of the kernel function. A tile value lowers to one of:
//   scalar   an LLVM scalar (rank-0 values);
//   uniform  every element equals one LLVM scalar (splats, constants) — never materialized;
//   affine   element (i0, i1, …) = base + Σ coef[d]·i_d, for integers (in the type's width) and
//            pointers (coef in elements of the pointee) — arange, offsets, pointer tiles; lets a
//            load through `ptr + pid * B + arange(B)` become a contiguous, vectorizable access;
//   buffer   the elements in row-major order in stack memory (storage types, see storage_type),
//            or a strided view of such memory (broadcast, expand_dims, permute, split);
//   lazy     a pure elementwise op or a load used once, in its own block: computed inside its
//            consumer's loop (fusion), never stored. A lazy that reads memory is materialized
//            before any op that writes memory (flush_reads), so loads keep their order with
//            stores; a store that consumes one checks at run time that it does not overwrite
//            elements still to be read (else it takes an unfused path).
// Elementwise ops on tiles become loop nests over the shape (innermost: the last axis) that
// LLVM's loop vectorizer turns into vector code; the scalar semantics of each op (scalar.cpp)
// match the interpreter's exactly.
//
// Files: lower_kernel.cpp (driver, dispatch, constants, ids), scalar.cpp (one element of each
// elementwise op, conversions), tiles.cpp (element access, loops, buffers, shape ops),
// lower_memory.cpp, lower_reduce.cpp (reduce, scan), lower_dot.cpp, lower_control.cpp (for,
// while, if), lower_debug.cpp (print, assert).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "codegen/target.hpp"
#include "ir/ir.hpp"

namespace tile::codegen {

using detail::atomic_kind;
using detail::precision;

/// The index of one element inside a loop nest: per-axis indices and the row-major flat index,
/// all i64.
struct Index {
  std::vector<llvm::Value*> axis;
  llvm::Value* flat = nullptr;
};

/// A lowered tile-IR value (see the file comment).
struct TV {
  enum class K : std::uint8_t { scalar, uniform, affine, buffer, lazy };
  TV() = default;
  TV(K kind, llvm::Value* value, std::vector<std::int64_t> c, ir::Type t)
      : k(kind), v(value), coef(std::move(c)), type(std::move(t)) {}
  K k = K::scalar;
  llvm::Value* v = nullptr;        // scalar / uniform value / affine base / buffer address
  std::vector<std::int64_t> coef;  // affine: per-axis coefficients; buffer: per-axis strides in
                                   // elements (empty: contiguous row-major; 0 on broadcast axes)
  ir::Type type;
  /// lazy: computes element ix at the point of use (a single-use elementwise op fused into its
  /// consumer's loop; never a load, so reordering it is safe).
  std::shared_ptr<const std::function<llvm::Value*(const Index&)>> fn;
  /// lazy: the pointer tiles of the loads fused into it (a store consuming it checks that it
  /// does not overwrite what it still has to read).
  std::vector<TV> reads;
  bool contiguous() const { return k == K::buffer && coef.empty(); }
};


/// Lowers one tile-IR function into an LLVM module.
class Lowering {
 public:
  Lowering(llvm::LLVMContext& ctx, const TargetHooks& target);

  /// Lower `f` into a new module holding one kernel named `symbol`. Throws tile::error naming
  /// the op and the user's file:line for anything the target cannot lower.
  std::unique_ptr<llvm::Module> run(const ir::Function& f, const std::string& symbol);

  // ---- state the target hooks use ----
  llvm::LLVMContext& ctx;
  const TargetHooks& target;
  llvm::Module* mod = nullptr;
  llvm::Function* fn = nullptr;
  const ir::Function* ir_fn = nullptr;
  std::unique_ptr<llvm::IRBuilder<>> b;
  llvm::BasicBlock* entry = nullptr;  // allocas go here

  // ---- types ----
  /// How an element of dtype t (or a pointer) lives in memory and in buffers: i1 as i8,
  /// bf16 as i16, pointers as `ptr`.
  llvm::Type* storage_type(dtype t, bool ptr) const;
  llvm::Type* storage_type(const ir::Type& t) const { return storage_type(t.elem, t.ptr); }
  /// How a scalar lives in a register: as storage, except i1 is i1.
  llvm::Type* reg_type(dtype t, bool ptr) const;
  llvm::Type* reg_type(const ir::Type& t) const { return reg_type(t.elem, t.ptr); }
  llvm::Value* to_storage(llvm::Value* reg, const ir::Type& t);
  llvm::Value* from_storage(llvm::Value* mem, const ir::Type& t);

  // ---- values ----
  const TV& get(const ir::Value* v) const;
  void set(const ir::Value* v, TV tv) { values_[v] = std::move(tv); }
  TV scalar(llvm::Value* v, const ir::Type& t) const { return TV{TV::K::scalar, v, {}, t}; }
  TV uniform(llvm::Value* v, const ir::Type& t) const { return TV{TV::K::uniform, v, {}, t}; }

  // ---- tiles (tiles.cpp) ----
  /// Memory for `t`'s elements, 64-byte aligned: an alloca in the entry block, or for tiles over
  /// kStackTile bytes a slice of the program's scratch memory (the stack stays small whatever
  /// the tile sizes; each buffer has its own slice).
  static constexpr std::uint64_t kStackTile = 16 * 1024;
  llvm::Value* alloc_buffer(const ir::Type& t, const char* name = "tile");
  /// Loop nest over `shape` (innermost: the last axis); `body` emits one element's code.
  void loop_nest(const std::vector<std::int64_t>& shape, const std::function<void(const Index&)>& body);
  /// Loop from lo to hi (i64 constants or values), body gets the induction variable.
  void counted_loop(llvm::Value* lo, llvm::Value* hi, const std::function<void(llvm::Value*)>& body,
                    const char* name = "i");
  /// The register value of element `ix` of `tv` (whose shape is the loop's).
  llvm::Value* elem(const TV& tv, const Index& ix);
  /// The address of element `flat` of a buffer.
  llvm::Value* elem_addr(const TV& buf, llvm::Value* flat);
  /// Store register value `r` as element `flat` of buffer `buf` (type `t`).
  void store_elem(llvm::Value* buf, const ir::Type& t, llvm::Value* flat, llvm::Value* r);
  /// `tv` as a contiguous buffer (materialized when uniform, affine or a strided view; a scalar
  /// becomes a 1-element buffer).
  TV materialize(const TV& tv);
  /// Row-major strides of `shape`.
  static std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& shape);
  /// A new buffer of type `t` computed element by element.
  TV compute(const ir::Type& t, const std::function<llvm::Value*(const Index&)>& f);
  /// Copy buffer/any `src` into the existing buffer `dst` (same type).
  void copy_into(llvm::Value* dst, const TV& src);
  /// The Index of the element at per-axis indices `axes` of a tile of `shape`.
  Index index_of(std::vector<llvm::Value*> axes, const std::vector<std::int64_t>& shape);
  /// A scalar stack slot holding a register value of type t (promoted to a register by LLVM).
  llvm::Value* alloc_slot(const ir::Type& t, const char* name = "slot");
  llvm::Value* load_slot(llvm::Value* slot, const ir::Type& t);
  void store_slot(llvm::Value* slot, const ir::Type& t, llvm::Value* v);
  llvm::Value* i64(std::int64_t x) const;
  llvm::Value* i32(std::int32_t x) const;

  // ---- op lowering entry points ----
  void lower_block(const ir::Block& blk);
  void lower_op(const ir::Op& op);
  void lower_elementwise(const ir::Op& op);
  void lower_shape(const ir::Op& op);
  void lower_memory(const ir::Op& op);
  void lower_reduce(const ir::Op& op);
  void lower_reorderable_reduce(const ir::Op& op, const ir::Op& combine);
  void lower_dot(const ir::Op& op);
  void lower_control(const ir::Op& op);
  void lower_debug(const ir::Op& op);
  /// Lower a region whose arguments are bound to `args` and return its terminator's operands.
  std::vector<TV> lower_region(const ir::Block& region, std::span<const TV> args);

  /// One element of an elementwise op on register values (scalar.cpp).
  llvm::Value* scalar_op(const ir::Op& op, std::span<llvm::Value* const> in);
  /// An IEEE exp or division of floats: an op batch_op may compute as a batch.
  static bool has_batch_form(const ir::Op& op);
  /// An elementwise op over many elements at once (`in[k][i]`: operand k of element i): the
  /// target's batch form (TargetHooks::batch_fn) where the op has one (has_batch_form) and the
  /// target too; empty otherwise (then scalar_op each).
  std::vector<llvm::Value*> batch_op(const ir::Op& op, const std::vector<std::vector<llvm::Value*>>& in);
  /// Register value conversion between element types (cast semantics).
  llvm::Value* convert(llvm::Value* v, const ir::Type& from, const ir::Type& to);
  /// Float register values of dtype t to/from their compute type (f16/bf16 compute in f32).
  llvm::Value* to_compute(llvm::Value* v, dtype t);
  llvm::Value* from_compute(llvm::Value* v, dtype t);
  llvm::Type* compute_type(dtype t) const;
  /// IEEE minNum/maxNum on compute-type floats: NaN yields the other operand, -0 < +0.
  llvm::Value* min_max_num(llvm::Value* x, llvm::Value* y, bool is_min);
  /// Targets with NaN-ignoring min/max instructions (GPUs) set this: min_max_num uses them.
  bool native_min_max = false;
  /// f32 -> f16 is the target's plain conversion (cvt.rn.f16.f32): a NaN becomes its canonical
  /// NaN, not the interpreter's payload-keeping one (NaN bits are unspecified: LANGUAGE.md).
  bool native_f16_nan = false;
  /// f32 -> bf16 is the target's conversion (cvt.rn.bf16.f32, sm_80+: round to nearest even as
  /// the integer expansion, NaN bits unspecified as above), not that expansion.
  bool native_bf16 = false;
  /// The kernel's float add, sub and mul may fuse into fma (LLVM's `contract` flag on them; the
  /// GPU lowering sets it from ir::Function::fp_fusion). The library's own expansions (exact
  /// fmod, the compensated exp, …) and the dot's exact FMA loop never carry the flag.
  bool fp_contract = false;
  /// The values an if-then-else emits: `cond` selects `then_fn()` or `else_fn()` (register
  /// values of the same type; else_fn may be null for "no value").
  llvm::Value* if_else(llvm::Value* cond, const std::function<llvm::Value*()>& then_fn,
                       const std::function<llvm::Value*()>& else_fn, const char* name = "if");
  /// What `fast()` emits where `ok` holds, else what `slow()` emits (marked unlikely), each in a
  /// block of its own: one branch for a batch of values (batch_fn's fallback). Only the inputs
  /// live across the branch, not two sets of results.
  std::vector<llvm::Value*> fast_or_slow(llvm::Value* ok, const std::function<std::vector<llvm::Value*>()>& fast,
                                         const std::function<std::vector<llvm::Value*>()>& slow, const char* name);
  /// f(v) of each of `x` (values of one type), computed in a loop that is not unrolled: each
  /// trip applies f to the first of the values and rotates them (the result goes last), so after
  /// x.size() trips they are f(x[0]), f(x[1]), ... in order. A rare path's code the size of one
  /// element's (a batch's fallback: 64 IEEE divisions were a fifth of ptxas's time for
  /// attention). f must not branch. Fewer than 4 values, or of mixed types: f of each inline.
  std::vector<llvm::Value*> each_in_loop(std::span<llvm::Value* const> x, const std::function<llvm::Value*(llvm::Value*)>& f,
                                         const char* name);
  /// The two-way branch both build on: blocks name+then_name, name+else_name, name+end_name;
  /// a phi for each position both sides return a value at.
  std::vector<llvm::Value*> branch(llvm::Value* cond, const std::function<std::vector<llvm::Value*>()>& then_fn,
                                   const std::function<std::vector<llvm::Value*>()>& else_fn, const char* name,
                                   const char* then_name, const char* else_name, const char* end_name, bool likely);
  /// What a batch's check proves about its results, for a later batch of the same thread: where
  /// `ok` (i1) holds, |v| lies in [lo, hi] or v is NaN. batch_fn records them (exp's results) and
  /// may use them in place of its own check (a division by a shared divisor of those results).
  struct Bound {
    llvm::Value* ok;
    double lo, hi;
  };
  std::unordered_map<const llvm::Value*, Bound> bounds;

  /// The byte range [lo, hi) an affine/uniform pointer tile's elements occupy (none for others).
  std::optional<std::pair<llvm::Value*, llvm::Value*>> byte_range(const TV& p);
  /// i1: true when a store through `dst` cannot overwrite an element the fused `reads` have yet
  /// to read; null when that cannot be decided (then the caller does not fuse).
  llvm::Value* fused_store_is_safe(const TV& dst, const std::vector<TV>& reads, const ir::Type& elem);

  /// A dot operand element converted to the compute dtype `cd` (tf32-rounded when asked).
  llvm::Value* dot_input(llvm::Value* v, const ir::Type& from, dtype cd, bool tf32);
  /// One element of atomic_rmw / atomic_cas through `p`: a compare-and-swap loop (the
  /// interpreter's exact semantics for every kind and dtype); returns the old value. `cmp`: the
  /// compare value of atomic_cas.
  llvm::Value* atomic_element(const ir::Op& op, llvm::Value* p, llvm::Value* v, llvm::Value* cmp);

  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) const;

 private:
  std::unordered_map<const ir::Value*, TV> values_;
  std::unordered_map<const ir::Value*, int> uses_;            // number of uses
  std::unordered_map<const ir::Value*, bool> used_elsewhere_;  // some use is in another block
 public:
  /// May `v` be computed lazily at its one use (see TV::K::lazy)?
  bool fusible(const ir::Value* v) const;
  /// Before an op that may write memory: materialize every pending lazy that reads memory,
  /// except `keep` (the op's own operands, which it checks itself).
  void flush_reads(const std::vector<const ir::Value*>& keep);
  /// Note a new lazy value that reads memory.
  void note_reads(const ir::Value* v) { pending_reads_.push_back(v); }
 private:
  std::vector<const ir::Value*> pending_reads_;
  std::uint64_t scratch_bytes_ = 0;
  llvm::Value* scratch_base_ = nullptr;
 public:
};

}  // namespace tile::codegen

// src/codegen/target.hpp — layer: codegen. The target-hook interface: everything the shared
// lowering (lowering.hpp) needs to ask of a target. A target (src/targets/<name>) implements it
// once; the lowering of ops is written once for every target.
//
// What a target decides:
//   - the kernel's LLVM signature and how a runtime argument is read from it;
//   - program ids and grid sizes;
//   - debugging services (device_print, device_assert) and how a failed assert leaves the kernel;
//   - the data layout and triple of the module (so LLVM's optimizer knows the machine).
// GPU targets add thread/lane ids, shuffles, barriers, shared memory and matrix
// instructions here; the CPU target runs each program instance as one sequential function over
// its whole tiles, so it needs none of them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llvm {
class ConstantFolder;
class IRBuilderDefaultInserter;
template <typename FolderTy, typename InserterTy>
class IRBuilder;
class Function;
class Module;
class Type;
class Value;
}  // namespace llvm

namespace tile::ir {
struct Function;
struct Op;
}  // namespace tile::ir

namespace tile::codegen {

class Lowering;
using Builder = llvm::IRBuilder<llvm::ConstantFolder, llvm::IRBuilderDefaultInserter>;

class TargetHooks {
 public:
  virtual ~TargetHooks() = default;
  /// "cpu", "nvptx", … (for messages).
  virtual std::string name() const = 0;
  /// Set the module's triple and data layout.
  virtual void configure_module(llvm::Module& m) const = 0;
  /// Create the kernel's function in `m` (named `symbol`).
  virtual llvm::Function* declare_kernel(llvm::Module& m, const ir::Function& f, const std::string& symbol) const = 0;
  /// The runtime argument `i` of the kernel as a value of LLVM type `ty` (its register type).
  virtual llvm::Value* kernel_arg(Lowering& L, unsigned i, llvm::Type* ty) const = 0;
  /// program_id(axis) and num_programs(axis) as i32.
  virtual llvm::Value* program_id(Lowering& L, int axis) const = 0;
  virtual llvm::Value* num_programs(Lowering& L, int axis) const = 0;
  /// Leave the kernel normally (`return`).
  virtual void emit_return(Lowering& L) const = 0;
  /// device_print: `data[k]` is the address of operand k's elements in row-major storage
  /// (a scalar's address for scalars).
  virtual void emit_print(Lowering& L, const ir::Op& op, const std::vector<llvm::Value*>& data) const = 0;
  /// The base address of the program's scratch memory, where tiles too large for the stack live
  /// (emitted with `at`, in the kernel's entry block).
  virtual llvm::Value* scratch_base(Lowering& L, Builder& at) const = 0;
  /// Called once the kernel is lowered: `scratch_bytes` of scratch memory are needed per program.
  virtual void finish_kernel(Lowering& L, std::uint64_t scratch_bytes) const = 0;
  /// A run-time failure: report it and leave the kernel. Called in a block of its own; must end
  /// it with a terminator. `value` (i64): the failing element's flat index (assert_fail) or the
  /// offending number (bad_step).
  enum class failure : std::uint8_t { assert_fail, bad_step };
  /// A transcendental function (exp, exp2, log, log2, sin, cos, erf; ir::OpKind as int) of a
  /// compute-type float (f32 or f64) the target computes itself; null: the C library's.
  virtual llvm::Value* math_fn(Lowering&, int /*ir::OpKind*/, llvm::Value* /*x*/) const { return nullptr; }
  /// Float remainder (C's fmod, exact) of compute-type floats; null: LLVM's frem (exact where
  /// the target lowers it to the C library, as on the CPU).
  virtual llvm::Value* float_rem(Lowering&, llvm::Value* /*x*/, llvm::Value* /*y*/) const { return nullptr; }
  /// tl::fast_div (kind div: x / y), tl::fast_sqrt (kind sqrt: sqrt(x), y null) and tl::fast_exp
  /// (kind exp, y null) in the compute type of x: the target's approximate instruction, or null
  /// for the IEEE operation (exp: the target's own).
  virtual llvm::Value* approx_fn(Lowering&, int /*ir::OpKind*/, llvm::Value* /*x*/, llvm::Value* /*y*/) const {
    return nullptr;
  }
  /// exp or exp2 (y empty) or IEEE division x[i] / y[i] of compute-type floats over many elements at once
  /// (a thread's registers of one op): the target's batch form, or empty to lower each element
  /// on its own. The result must equal the per-element one bit for bit. NVPTX: exp and division
  /// as a fast path for the whole batch behind one range check, with the per-element form as
  /// its fallback (Lowering::each_in_loop); exp2 has no batch form there (ex2.approx.ftz).
  virtual std::vector<llvm::Value*> batch_fn(Lowering&, int /*ir::OpKind*/, std::span<llvm::Value* const> /*x*/,
                                             std::span<llvm::Value* const> /*y*/) const {
    return {};
  }
  /// The bits of `v` as type `to` (same width) where LLVM's own bitcast cannot be selected;
  /// null: LLVM's bitcast. NVPTX: between the 16-bit float types (f16 from bf16's bits: LLVM
  /// folds i16 -> half after a bfloat into bfloat -> half, which instruction selection rejects).
  virtual llvm::Value* bitcast_fn(Lowering&, llvm::Value* /*v*/, llvm::Type* /*to*/) const { return nullptr; }
  virtual void emit_fail(Lowering& L, const ir::Op& op, failure kind, llvm::Value* value) const = 0;
};

}  // namespace tile::codegen

// src/ir/ir.hpp — layer: ir. The tile IR: typed SSA values, operations from one table
// (ops.def), blocks and regions for loops and branches, and the kernel function.
//
// Ownership: a Function owns its body Block; a Block owns its arguments and its Ops (in order);
// an Op owns its results and its region Blocks. Values are referenced by plain pointers and
// never outlive their owner. Each region of an op is a single Block (structured control flow).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/linear_layout.hpp"
#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"
#include "tile/tl/detail/api.hpp"

namespace tile::detail {
/// The opaque handle the DSL holds is the IR value itself (see ir::Value).
struct node {};
}  // namespace tile::detail

namespace tile::layout {
class MmaTarget;
}  // namespace tile::layout

namespace tile::ir {

// ---- types --------------------------------------------------------------------------------------
/// Where a value of the GPU level lives: in registers (a tile spread over the threads by its
/// layout; a scalar), or in a shared-memory buffer that holds a [rows][cols] tile arranged as
///   swizzled           rows of 16-byte chunks XOR-ed by the row's address bits, in column blocks
///                      of min(128, cols · elem bytes) bytes (16-bit elements: what a warp's matrix loads
///                      read without bank conflicts and a warpgroup engine's descriptors name);
///   padded             row-major, rows padded by 16 bytes;
///   padded_transposed  the transpose ([cols][rows]) so, padded by 16 bytes;
///   swizzled_transposed the transpose ([cols][rows]) swizzled: a tile contiguous along its rows
///                      (a B operand [K][N] read along K, as attention's Kᵀ) kept in that order.
enum class smem : std::uint8_t { none, swizzled, padded, padded_transposed, barriers, swizzled_transposed };
std::string_view smem_name(smem s);

/// The type of a value: an element dtype (the pointee for pointers), a pointer flag and a shape
/// (empty for scalars). At the GPU level of the IR (Function::gpu) a tile's type also carries
/// its layout: how its elements are spread over the registers, lanes and warps of a CTA (Triton's
/// tensor encodings); scalars, which every thread holds, carry none; a shared-memory buffer
/// (`local_alloc`'s result) carries its arrangement (`mem`) instead.
struct Type {
  dtype elem = dtype::i32;
  bool ptr = false;
  std::vector<std::int64_t> shape;
  std::shared_ptr<const layout::LinearLayout> layout;  // null at the tile level and for scalars
  smem mem = smem::none;                                // a shared-memory buffer: its arrangement
  bool token = false;  // the GPU level: an asynchronous copy's or group's token (no data; see async_token)

  Type() = default;
  Type(dtype e, bool p = false, std::vector<std::int64_t> s = {}, std::shared_ptr<const layout::LinearLayout> l = nullptr,
       smem m = smem::none)
      : elem(e), ptr(p), shape(std::move(s)), layout(std::move(l)), mem(m) {}

  bool is_scalar() const { return shape.empty(); }
  bool is_float() const { return !ptr && tile::is_float(elem); }
  bool is_int() const { return !ptr && tile::is_int(elem); }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
  Type scalar() const { return {elem, ptr, {}, nullptr}; }
  Type with_shape(std::vector<std::int64_t> s) const { return {elem, ptr, std::move(s), nullptr}; }
  /// Another element type, the same shape and layout.
  Type with_elem(dtype e) const { return {e, false, shape, layout}; }
  Type with_layout(layout::LinearLayout l) const {
    return {elem, ptr, shape, std::make_shared<const layout::LinearLayout>(std::move(l))};
  }
  Type without_layout() const {
    Type t{elem, ptr, shape, nullptr, mem};
    t.token = token;
    return t;
  }
  bool is_buffer() const { return mem != smem::none; }
  /// The GPU level's token of asynchronous copies (async_copy, async_commit): a value with no
  /// data that names the copies an async_wait waits for, carried by loops like any other.
  static Type async_token() {
    Type t;
    t.token = true;
    return t;
  }
  /// Equal element, pointer flag, shape, buffer arrangement and layout (compared by value).
  bool operator==(const Type& o) const;
  /// Equal but for the layout and where it lives.
  bool same_data(const Type& o) const { return elem == o.elem && ptr == o.ptr && shape == o.shape && token == o.token; }
  /// "f32", "ptr<f16>", "i32[16,32]", "ptr<f32>[128]"; a layout follows as " #linear<…>", a
  /// buffer's arrangement as " #smem<swizzled>".
  std::string str() const;
};

// ---- ops ----------------------------------------------------------------------------------------
enum class OpKind : std::uint8_t {
#define TILE_OP(e, text, flags) e,
#include "ir/ops.def"
#undef TILE_OP
};
namespace opflag {
constexpr unsigned P = 1, T = 2, R = 4, E = 8, M = 16, G = 32;
}
std::string_view op_name(OpKind k);
unsigned op_flags(OpKind k);
inline bool is_pure(OpKind k) { return op_flags(k) & opflag::P; }
inline bool is_terminator(OpKind k) { return op_flags(k) & opflag::T; }
inline bool is_elementwise(OpKind k) { return op_flags(k) & opflag::E; }
/// An op of the GPU level only (convert_layout, …): the verifier rejects it in tile IR.
inline bool is_gpu_only(OpKind k) { return op_flags(k) & opflag::G; }

enum class CmpPred : std::int64_t { eq, ne, lt, le, gt, ge };
std::string_view pred_name(CmpPred p);

/// Attributes, generic on purpose: each op's meaning of `ints`, `f` and `str` is in ops.def.
struct Attrs {
  std::vector<std::int64_t> ints;
  double f = 0.0;
  std::string str;
  bool operator==(const Attrs&) const = default;
};

struct Op;
struct Block;
struct Function;

/// An SSA value: the result of an op or an argument of a block. Derives from the opaque
/// handle the DSL holds (tile::detail::node).
struct Value : tile::detail::node {
  Type type;
  Op* def = nullptr;        // defining op, or null for a block argument
  Block* owner = nullptr;   // the block whose argument this is (null for op results)
  unsigned index = 0;       // result index / argument index
};
inline Value* as_value(tile::detail::node* n) { return static_cast<Value*>(n); }
inline const Value* as_value(const tile::detail::node* n) { return static_cast<const Value*>(n); }

struct Op {
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<std::unique_ptr<Value>> results;
  std::vector<std::unique_ptr<Block>> regions;
  Attrs attrs;
  src_loc loc;
  Block* parent = nullptr;

  Value* result(unsigned i = 0) const { return results.at(i).get(); }
  Value* operand(unsigned i) const { return operands.at(i); }
  Block* region(unsigned i) const { return regions.at(i).get(); }
};

struct Block {
  std::vector<std::unique_ptr<Value>> args;
  std::list<std::unique_ptr<Op>> ops;
  Op* parent = nullptr;  // the op whose region this is (null for the function body)

  Value* arg(unsigned i) const { return args.at(i).get(); }
  Value* add_arg(Type t);
  Op* terminator() const { return ops.empty() ? nullptr : ops.back().get(); }
};

/// What the launcher promised about a kernel argument when it specialized the kernel.
struct ArgInfo {
  std::string name;          // "arg0" … (printed as %arg0)
  std::int64_t divisibility = 1;  // the value (pointer address or integer) is a multiple of this
  bool nonneg = false;            // integers: the value is >= 0
  bool positive = false;          // integers: the value is >= 1 (then nonneg too)
  /// Pointers: the memory this argument's buffer spans is reached through no other pointer
  /// argument of the launch (the runtime compared the buffers' address ranges), so an access
  /// derived from it (analysis/pointer_origin.hpp) never touches bytes another argument's does.
  bool noalias = false;
};

struct Function {
  std::string name;
  Block body;                // args = the kernel's runtime arguments; ends with `return`
  std::vector<ArgInfo> arg_info;
  src_loc loc;               // where the kernel was launched from (for messages)
  // Launch options the kernel is compiled for (GPU targets distribute tiles over
  // 32 * num_warps threads; num_stages bounds software pipelining).
  int num_warps = 4;
  int num_stages = 3;
  // enable_fp_fusion: the NVIDIA backend may compute a float a * b + c with one rounding (fma),
  // as Triton and nvcc do by default; false keeps every op rounded (the interpreter's results)
  bool fp_fusion = true;
  // warp_specialize: -1 the compiler's choice (schedule/warp_specialize.hpp: where it qualifies
  // and the plain plan's rings or the plain build hold one block an SM), 0 never, 1 wherever the
  // kernel qualifies.
  int warp_specialize = -1;
  /// The GPU level (layout/gpu_passes.hpp made it from tile IR): every tile value's type carries
  /// its layout for a CTA of num_warps warps, a use that wants another layout goes through an
  /// explicit convert_layout, and the ops ops.def marks G may appear. The printer shows it as
  /// the kernel's `attributes {gpu, num_warps = …, num_stages = …}`.
  bool gpu = false;
  /// The tensor-core engines of the target the GPU level was made for (layout/mma_target.hpp;
  /// select_mma records it; not printed): the verifier checks a dot on an engine against its
  /// forms. Null (IR read from text, no target named): only the rules every target shares.
  const layout::MmaTarget* mma_target = nullptr;
};

// ---- building -----------------------------------------------------------------------------------
/// Creates ops at an insertion point (the end of a block, or before an op).
class Builder {
 public:
  explicit Builder(Block* b) : block_(b), at_(b->ops.end()) {}
  Builder(Block* b, std::list<std::unique_ptr<Op>>::iterator at) : block_(b), at_(at) {}

  Op* create(OpKind k, std::vector<Value*> operands, std::vector<Type> result_types,
             Attrs attrs = {}, src_loc loc = {}, unsigned num_regions = 0);
  Value* constant_int(const Type& t, std::int64_t v, src_loc loc = {});
  Value* constant_float(const Type& t, double v, src_loc loc = {});

  Block* block() const { return block_; }
  void set_insertion_end(Block* b) {
    block_ = b;
    at_ = b->ops.end();
  }
  void set_insertion_before(Op* op);

 private:
  Block* block_;
  std::list<std::unique_ptr<Op>>::iterator at_;
};

// ---- utilities ----------------------------------------------------------------------------------
/// Visit every op, pre-order, nested regions included.
template <class F>
void walk(Block& b, F&& f) {
  for (auto& op : b.ops) {
    f(*op);
    for (auto& r : op->regions) walk(*r, f);
  }
}
/// Replace every use of `from` inside `b` (nested regions included) with `to`.
void replace_all_uses(Block& b, Value* from, Value* to);
/// Erase `op` from its block. Its results must be unused.
void erase(Op* op);
/// Whether `v` is made inside `op`'s regions (by an op at any depth, or as a block argument).
bool made_inside(const Value& v, const Op& op);
/// The integer an integer (or i1, or pointer) `constant` holds, splat tiles included; nullopt for
/// any other value.
std::optional<std::int64_t> int_constant(const Value* v);
/// Deep copy (for tests and for passes that need a pristine copy).
std::unique_ptr<Function> clone(const Function& f);
/// Copies `op` (its regions too) at `b`'s insertion point: each operand is replaced by its entry
/// in `map` where it has one, and `map` gains every value the copy defines (results, and the
/// arguments and results inside its regions), keyed by the original.
Op* clone_op(const Op& op, Builder& b, std::unordered_map<const Value*, Value*>& map);

// ---- the services every layer uses -------------------------------------------------------------
/// A source file's name without its directories ("kernels.cpp"), as printed IR and messages
/// quote a location.
std::string base_name(const char* file);

/// Textual form, deterministic (value numbering in order of definition). Locations are printed
/// as trailing `loc("file":line)` when `with_locations`.
std::string print(const Function& f, bool with_locations = true);
/// The same with `note(op)` as a trailing `// comment` on each op's line (layouts, analyses).
std::string print(const Function& f, bool with_locations, std::function<std::string(const Op&)> note);
/// The function `text` (print's form, with or without locations) describes. Throws tile::error
/// "<name>:<line>:<column>: expected …, found '…'" for text it cannot read; the result is not
/// verified (call verify). num_warps, num_stages and enable_fp_fusion come from the kernel's
/// `attributes {…}` (print writes them at the GPU level and wherever they are not the
/// defaults), else take their defaults.
std::unique_ptr<Function> parse(std::string_view text, const std::string& name = "<ir>");
/// Verify structural and type invariants; throws tile::error naming the offending op's source
/// location and the broken rule. `stage` names the pass that ran last (for messages).
void verify(const Function& f, std::string_view stage = "trace");
/// A 64-bit structural hash: equal for functions that print equally without locations.
std::uint64_t structural_hash(const Function& f);
/// A hash of the source locations (file, line, column) of the ops whose run-time failure
/// compiled code reports by location: device_assert and for_range's step check. A backend whose
/// code embeds them (NVIDIA's target: the assert's file and line, the step message) adds it to its cache
/// key, so that a kernel whose assert moved to another line is compiled again; one that reports
/// failures by a site id resolved against the current IR (the CPU backend) needs none.
std::uint64_t failure_location_hash(const Function& f);

}  // namespace tile::ir

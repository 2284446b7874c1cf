// tile/tl/detail/api.hpp — layer: language (public, internal use). The narrow, non-template
// interface between the DSL headers and the compiled core (src/frontend). Every tl:: op does its
// C++ type plumbing in a header and then calls exactly one function declared here; semantic
// checks (broadcasting, promotion, dot rules) and IR construction live behind it. Values cross
// as opaque `node*` handles: no IR class is visible to users.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"

namespace tl {
class tensor;
}

namespace tile::detail {

struct node;  // an SSA value of the kernel being traced (opaque)

/// An operand as the DSL hands it over: a traced value, or a C++ literal that is weakly typed
/// (it takes the dtype of the tile it meets, as Python scalars do in Triton).
struct operand_data {
  enum class kind : std::uint8_t { none, value, int_lit, float_lit, bool_lit };
  kind k = kind::none;
  node* n = nullptr;
  std::int64_t i = 0;
  double f = 0.0;
  bool present() const { return k != kind::none; }
};

enum class binop : std::uint8_t {
  add, sub, mul, div, rem, bit_and, bit_or, bit_xor, shl, shr,
  logical_and, logical_or, minimum, maximum, umulhi,
  div_approx,  // tl::fast_div
  eq, ne, lt, le, gt, ge,  // comparisons last (binary() tests op >= eq)
};
enum class unop : std::uint8_t {
  neg, bit_not, logical_not, exp, exp2, log, log2, sqrt, rsqrt, sin, cos, abs, floor, ceil, erf,
  sqrt_approx,  // tl::fast_sqrt
  exp_approx,   // tl::fast_exp
};
enum class atomic_kind : std::uint8_t { add, max, min, xchg, bit_and, bit_or, bit_xor };
enum class precision : std::uint8_t { tf32, tf32x3, ieee };
enum class hint_kind : std::uint8_t { multiple_of, max_contiguous };
enum class cache_mod : std::uint8_t { none, ca, cg, cv };
enum class eviction : std::uint8_t { normal, first, last };

// ---- queries ----------------------------------------------------------------------------------
// (An unassigned tensor, n == null, is a tile::error naming `loc`.)
dtype node_dtype(const node* n, src_loc loc = {});
bool node_is_pointer(const node* n, src_loc loc = {});
std::span<const std::int64_t> node_shape(const node* n, src_loc loc = {});
/// True while a kernel is being traced on this thread.
bool tracing();
/// `n` if it is a pointer with pointee `pointee` (a value assigned to a tl::ptr); otherwise a
/// tile::error naming what it is and the line that created it, reported at `loc` or, where that is
/// unknown (an assignment, which cannot capture its line), at the line that created the value.
node* ptr_value(node* n, dtype pointee, src_loc loc);

// ---- the registry of live tensors (for loop-carried and if-assigned tiles) -------------------
void track(tl::tensor* t) noexcept;
void untrack(tl::tensor* t) noexcept;

// ---- creation ---------------------------------------------------------------------------------
node* program_id(int axis, src_loc loc);
node* num_programs(int axis, src_loc loc);
node* arange(std::int64_t start, std::int64_t end, src_loc loc);
node* full(std::span<const std::int64_t> shape, dtype t, const operand_data& value, src_loc loc);
/// A literal turned into a value: dtype `t` (or its natural dtype when `t` is null).
node* literal(const operand_data& value, const dtype* t, src_loc loc);
node* cast(const operand_data& x, dtype to, bool bitcast, src_loc loc);
node* pointer_cast(const operand_data& x, dtype pointee, src_loc loc);

// ---- elementwise ------------------------------------------------------------------------------
node* binary(binop op, const operand_data& a, const operand_data& b, src_loc loc);
node* unary(unop op, const operand_data& a, src_loc loc);
node* select(const operand_data& c, const operand_data& a, const operand_data& b, src_loc loc);
node* fma(const operand_data& a, const operand_data& b, const operand_data& c, src_loc loc);

// ---- memory -----------------------------------------------------------------------------------
node* load(const operand_data& ptr, const operand_data& mask, const operand_data& other,
           cache_mod cache, eviction evict, bool is_volatile, src_loc loc);
void store(const operand_data& ptr, const operand_data& value, const operand_data& mask,
           cache_mod cache, eviction evict, src_loc loc);
node* atomic_rmw(atomic_kind k, const operand_data& ptr, const operand_data& value,
                 const operand_data& mask, src_loc loc);
node* atomic_cas(const operand_data& ptr, const operand_data& cmp, const operand_data& value,
                 src_loc loc);

/// Tensor descriptors (tl/descriptor.hpp): the checks make_tensor_descriptor runs, a block load
/// (one desc_load op) and a block store (a masked store).
void desc_check(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const std::int64_t> block, src_loc loc);
node* desc_load(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const operand_data> offsets, std::span<const std::int64_t> block, src_loc loc);
void desc_store(const operand_data& base, std::span<const operand_data> shape, std::span<const operand_data> strides,
                std::span<const operand_data> offsets, std::span<const std::int64_t> block, const operand_data& value,
                src_loc loc);

// ---- shape ------------------------------------------------------------------------------------
node* expand_dims(node* x, int axis, src_loc loc);
node* broadcast_to(const operand_data& x, std::span<const std::int64_t> shape, src_loc loc);
node* reshape(node* x, std::span<const std::int64_t> shape, src_loc loc);
node* permute(node* x, std::span<const int> order, src_loc loc);
node* join(const operand_data& a, const operand_data& b, src_loc loc);
std::pair<node*, node*> split(node* x, src_loc loc);
/// x(i0, i1, ...) indexing with `_` (keep an axis, 1) and `newaxis` (insert an axis, 0).
node* index(node* x, std::span<const std::uint8_t> kinds, src_loc loc);

// ---- reductions, scans, dot -------------------------------------------------------------------
using combine_fn = std::function<std::vector<node*>(std::span<node* const> lhs,
                                                    std::span<node* const> rhs)>;
/// Reduce `inputs` (same shape) along `axis` with a combine function traced once on scalars.
std::vector<node*> reduce(std::span<node* const> inputs, int axis, const combine_fn& combine,
                          src_loc loc);
std::vector<node*> scan(std::span<node* const> inputs, int axis, bool reverse,
                        const combine_fn& combine, src_loc loc);
node* dot(const operand_data& a, const operand_data& b, const operand_data& acc, precision p,
          src_loc loc);

// ---- control flow -----------------------------------------------------------------------------
void for_range(const operand_data& lo, const operand_data& hi, const operand_data& step,
               const std::function<void(node* iv)>& body, src_loc loc);
void while_loop(const std::function<node*()>& cond, const std::function<void()>& body,
                src_loc loc);
std::vector<node*> if_then_else(const operand_data& cond,
                                const std::function<std::vector<node*>()>& then_fn,
                                const std::function<std::vector<node*>()>& else_fn,
                                src_loc loc);

// ---- debugging and hints ----------------------------------------------------------------------
void device_print(const std::string& prefix, std::span<node* const> values, bool hex,
                  src_loc loc);
void device_assert(const operand_data& cond, const std::string& message, src_loc loc);
[[noreturn]] void trace_error(const std::string& message, src_loc loc);
node* hint(node* x, hint_kind k, std::span<const std::int64_t> values, src_loc loc);

}  // namespace tile::detail

// src/ir/verify_layouts.cpp — layer: ir. The verifier's rules for the GPU level (Function::gpu):
// what a layout may be, and which layouts each op's operands and results must share. The
// lowering relies on them: it moves elements between threads only at a convert_layout, so every
// other op finds its operands already where it needs them.
//
//   values        a tile's type has a layout of its extents, with log2(num_warps) warp bases
//                 and one lane basis count for the whole kernel; a scalar has none;
//   elementwise   tile operands in the result's layout (cast, cmp and select included);
//   memory        pointers, mask, `other`, the stored value and the result in one layout;
//   shape ops     the operand in the layout that makes the op a renumbering of registers:
//                 broadcast_source, slice (expand_dims), reshape and permute of the result's;
//                 join's operands in one layout, split's results in one layout;
//   reduce        operands in one layout, the results in its slice along the axis (the lowering
//                 folds in place);
//   scan          operands in one layout, the results in any (the lowering moves the elements
//                 between its steps as they need, the last move into the result's layout);
//   dot           the accumulator in the result's layout; on tensor cores (mma = warp or
//                 warpgroup) warps that tile the result and, where the kernel names its target
//                 (Function::mma_target), one of the target's forms: its accumulator layout, its
//                 operands' arrangement (layout/mma_target.hpp);
//   control flow  a carried value's initial value, region arguments, yields and result in one
//                 layout; an if's yields in its results';
//   convert_layout  the same elements (type) in another layout;
//   buffers       a local_alloc's result is a shared-memory buffer (no layout: its arrangement,
//                 ir::smem), read only as A or B of a tensor-core dot, in the arrangement its
//                 engine reads (the target's).
// In tile IR (not gpu) no type carries a layout and no op of the GPU level appears.
#include "ir/verify_layouts.hpp"

#include "layout/mma_target.hpp"

#include <algorithm>
#include <bit>

namespace tile::ir {

namespace {

std::string text(const Value* v) { return v->type.str(); }

/// "" when `v`'s layout is `want` (or `v` is a scalar), else the rule. (A tile without a layout —
/// a buffer — is never in `want`.)
std::string expect(const Value* v, const layout::LinearLayout& want, const std::string& rule) {
  if (v->type.shape.empty() || (v->type.layout && *v->type.layout == want)) return {};
  return rule + " (" + text(v) + "; expected " + want.str() + ")";
}
/// Every tile among `vs` in the layout of the first tile among them; none a buffer.
std::string one_layout(const std::vector<const Value*>& vs, const std::string& rule) {
  const Value* first = nullptr;
  for (const Value* v : vs) {
    if (!v || v->type.shape.empty()) continue;
    if (!v->type.layout) return rule + " (" + text(v) + " has none: a shared-memory buffer)";
    if (!first) {
      first = v;
      continue;
    }
    if (auto r = expect(v, *first->type.layout, rule); !r.empty()) return r;
  }
  return {};
}

}  // namespace

std::string gpu_type_rule(const Function& f, const Type& t, int& lane_bits) {
  if (!f.gpu) {
    if (t.token) return "an asynchronous copies' token in tile IR (only the GPU level has them)";
    if (t.layout) return "a layout in tile IR (only the GPU level's types carry one): " + t.str();
    return t.is_buffer() ? "a shared-memory buffer in tile IR: " + t.str() : "";
  }
  if (t.token) return t.layout || t.is_buffer() || !t.shape.empty() || t.ptr ? "a token with data: " + t.str() : "";
  if (t.is_buffer()) {
    if (t.layout) return "a shared-memory buffer with a register layout: " + t.str();
    if (t.ptr) return "a shared-memory buffer of pointers: " + t.str();
    if (t.mem == smem::barriers) return t.shape.size() == 1 && t.elem == dtype::i64 ? "" : "copy barriers other than i64[buffers]: " + t.str();
    // (a ring: [buffers, rows, cols], its buffers the rules below)
    const std::size_t rank = t.shape.size();
    if (rank != 2 && !(rank == 3 && (t.mem == smem::swizzled || t.mem == smem::swizzled_transposed))) return "a shared-memory buffer of other than a 2-D tile (or a ring of them): " + t.str();
    // the swizzle moves 16-byte chunks of rows of 32 bytes or more: 16-bit elements, 16 columns or more
    if (t.mem == smem::swizzled && (size_of(t.elem) != 2 || t.shape[rank - 1] < 16)) return "a swizzled buffer of other than 16-bit rows of 16 elements or more: " + t.str();
    // (transposed: stored column by column, each column a swizzled row)
    if (t.mem == smem::swizzled_transposed && (size_of(t.elem) != 2 || t.shape[rank - 2] < 16))
      return "a transposed swizzled buffer of other than a 16-bit tile of 16 rows or more: " + t.str();
    return {};
  }
  if (t.shape.empty()) return t.layout ? "a scalar with a layout (every thread holds a scalar): " + t.str() : "";
  if (!t.layout) return "a tile without a layout at the GPU level: " + t.str();
  const layout::LinearLayout& l = *t.layout;
  if (l.shape != t.shape) return "a layout of other extents than its tile's: " + t.str();
  if (l.warp.size() != static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(f.num_warps))))
    return "a layout of " + std::to_string(l.num_warps()) + " warp(s) in a kernel of num_warps = " + std::to_string(f.num_warps) + ": " + t.str();
  if (lane_bits < 0) lane_bits = static_cast<int>(l.lane.size());
  if (static_cast<int>(l.lane.size()) != lane_bits)
    return "layouts of " + std::to_string(1 << lane_bits) + " and " + std::to_string(l.num_lanes()) + " lanes a warp in one kernel: " + t.str();
  for (const auto* bases : {&l.reg, &l.lane, &l.warp})
    for (const auto& b : *bases) {
      if (b.size() != t.shape.size()) return "a layout basis of another rank than its tile: " + t.str();
      for (std::size_t d = 0; d < b.size(); ++d)
        if (b[d] < 0 || b[d] >= t.shape[d]) return "a layout basis outside its tile: " + t.str();
    }
  if (!l.is_injective()) return "a layout that does not give each element one owner: " + t.str();
  // every element held (the nonzero bases span the tile; a zero basis holds a copy)
  std::int64_t numel = 1;
  for (auto e : t.shape) numel *= e;
  std::size_t spanning = 0;
  for (const auto* bases : {&l.reg, &l.lane, &l.warp})
    for (const auto& b : *bases)
      spanning += std::any_of(b.begin(), b.end(), [](std::int64_t c) { return c != 0; });
  if (l.reg.size() > 20) return "a layout of more than 2^20 registers a thread: " + t.str();
  if ((std::int64_t{1} << spanning) != numel) return "a layout that leaves elements of its tile without an owner: " + t.str();
  return {};
}

namespace {
/// Whether operand i of op may be a shared-memory buffer.
bool reads_buffer(const Op& op, std::size_t i) {
  switch (op.kind) {
    case OpKind::dot: return i < 2 && op.attrs.ints.size() >= 4 && op.attrs.ints[1] != 0;
    case OpKind::buffer_index:
    case OpKind::async_copy:
    case OpKind::copy_barrier_init:
    case OpKind::copy_barrier_expect:
    case OpKind::copy_barrier_wait:
    case OpKind::copy_barrier_inval:
    case OpKind::barrier_arrive: return i == 0;
    case OpKind::tensor_copy: return i == 1 || i == 2;
    default: return false;
  }
}
}  // namespace

std::string gpu_op_rule(const Function& f, const Op& op) {
  if (!f.gpu) return is_gpu_only(op.kind) ? "an op of the GPU level in tile IR" : "";
  auto operands = [&](std::size_t from = 0) {
    std::vector<const Value*> v;
    for (std::size_t i = from; i < op.operands.size(); ++i) v.push_back(op.operands[i]);
    return v;
  };
  const Value* res = op.results.empty() ? nullptr : op.results[0].get();
  const bool tile_result = res && !res->type.shape.empty() && res->type.layout;
  // only a local_alloc makes a buffer, only a tensor-core dot reads one
  if (op.kind != OpKind::local_alloc && op.kind != OpKind::buffer_index)
    for (const auto& r : op.results)
      if (r->type.is_buffer()) return "a shared-memory buffer made by other than local_alloc or buffer_index (" + text(r.get()) + ")";
  for (const auto& reg : op.regions)
    for (const auto& a : reg->args)
      if (a->type.is_buffer()) return "a region argument that is a shared-memory buffer (" + text(a.get()) + ")";
  // tokens: made by the copies and their groups, taken by groups, waits and control flow
  const bool control = op.kind == OpKind::for_ || op.kind == OpKind::while_ || op.kind == OpKind::if_ || op.kind == OpKind::yield;
  const bool makes_token = op.kind == OpKind::async_copy || op.kind == OpKind::async_commit;
  for (const auto& r : op.results)
    if (r->type.token && !makes_token && !control) return "a token made by other than async_copy or async_commit (" + text(r.get()) + ")";
  for (std::size_t i = 0; i < op.operands.size(); ++i)
    if (op.operands[i]->type.token && op.kind != OpKind::async_commit && op.kind != OpKind::async_wait && !control)
      return "operand #" + std::to_string(i) + " is a token, which only async_commit, async_wait and control flow take";
  for (std::size_t i = 0; i < op.operands.size(); ++i)
    if (op.operands[i]->type.is_buffer() && !reads_buffer(op, i))
      return "operand #" + std::to_string(i) + " is a shared-memory buffer, which only a tensor-core dot (as A or B), buffer_index, the copies and the copy barriers take";
  switch (op.kind) {
    case OpKind::local_alloc:
      if (op.operands.empty()) return {};  // (a ring or copy barriers: the IR verifier's rules)
      if (op.operands.size() != 1 || op.results.size() != 1 || !res->type.is_buffer()) return "local_alloc gives a shared-memory buffer";
      if (op.operands[0]->type.is_buffer()) return "local_alloc of a buffer";
      return {};
    case OpKind::async_copy: {
      auto vs = operands(1);
      vs.erase(vs.begin() + 1);  // (valid: a scalar)
      return one_layout(vs, "the pointers and mask of an async_copy must share one layout");
    }
    case OpKind::mma_wait:
      return one_layout({res, op.operands.empty() ? nullptr : op.operands[0]}, "mma_wait's result must be in its operand's layout");
    case OpKind::convert_layout:
      if (op.operands.size() != 1 || op.results.size() != 1) return "convert_layout takes one value and gives one";
      if (!op.operands[0]->type.same_data(res->type)) return "convert_layout keeps the type (" + text(op.operands[0]) + " -> " + text(res) + ")";
      if (op.operands[0]->type.shape.empty()) return "convert_layout of a scalar";
      if (op.operands[0]->type == res->type) return "convert_layout to the layout its operand already has (" + text(res) + ")";
      return {};
    case OpKind::load:
    case OpKind::store:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: {
      auto vs = operands();
      if (res) vs.push_back(res);
      return one_layout(vs, "the pointers, mask, values and result of a memory op must share one layout");
    }
    case OpKind::broadcast:
      if (!tile_result || op.operands.empty()) return {};
      return expect(op.operands[0], layout::broadcast_source(*res->type.layout, op.operands[0]->type.shape),
                    "a broadcast's operand must be in its result's layout restricted to the stretched axes");
    case OpKind::expand_dims:
      if (!tile_result || op.attrs.ints.empty()) return {};
      return expect(op.operands[0], layout::slice(*res->type.layout, static_cast<int>(op.attrs.ints[0])),
                    "an expand_dims's operand must be in its result's layout sliced along the new axis");
    case OpKind::reshape:
      if (!tile_result) return {};
      return expect(op.operands[0], layout::reshape(*res->type.layout, op.operands[0]->type.shape),
                    "a reshape's operand must hold each element in the thread and register its result does");
    case OpKind::permute: {
      if (!tile_result || op.attrs.ints.size() != res->type.shape.size()) return {};
      std::vector<std::int64_t> inv(op.attrs.ints.size());
      for (std::size_t i = 0; i < inv.size(); ++i) {
        const auto a = op.attrs.ints[i];
        if (a < 0 || static_cast<std::size_t>(a) >= inv.size()) return {};
        inv[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(i);
      }
      return expect(op.operands[0], layout::permute(*res->type.layout, inv), "a permute's operand must be its result's layout with the axes put back");
    }
    case OpKind::join: return one_layout(operands(), "both operands of a join must share one layout");
    case OpKind::split: {
      std::vector<const Value*> rs;
      for (const auto& r : op.results) rs.push_back(r.get());
      return one_layout(rs, "both results of a split must share one layout");
    }
    case OpKind::reduce: {
      if (auto r = one_layout(operands(), "the operands of a reduce must share one layout"); !r.empty()) return r;
      if (op.operands.empty() || op.attrs.ints.empty() || !op.operands[0]->type.layout) return {};
      const layout::LinearLayout want = layout::slice(*op.operands[0]->type.layout, static_cast<int>(op.attrs.ints[0]));
      for (const auto& r : op.results)
        if (auto e = expect(r.get(), want, "a reduce's results must be in its operands' layout sliced along the axis"); !e.empty()) return e;
      return {};
    }
    case OpKind::scan:  // (its results in any layout: the lowering's steps end with a conversion)
      return one_layout(operands(), "the operands of a scan must share one layout");
    case OpKind::dot: {
      if (op.operands.size() < 3 || !tile_result) return {};
      if (auto r = expect(op.operands[2], *res->type.layout, "a dot's accumulator must be in its result's layout"); !r.empty()) return r;
      const auto& a = op.attrs.ints;
      if (a.size() < 4) return "a dot at the GPU level names its engine (mma = none, warp or warpgroup)";
      if (a[1] < 0 || a[1] > 2) return "a dot's engine must be 0 (none), 1 (warp) or 2 (warpgroup)";
      if (a.size() > 4 && (a[4] < 0 || a[4] > 2 || (a[4] != 0 && a[1] != 2)))
        return "only a warpgroup dot is left in flight (ints[4] = 1 or 2; an mma_wait takes its result)";
      if (a[1] == 0) return {};
      for (unsigned k = 2; k < 4; ++k)
        if (a[k] < 1 || (a[k] & (a[k] - 1))) return "a tensor-core dot's warps must be powers of two";
      const auto& s = res->type.shape;
      if (s.size() != 2 || a[2] * a[3] > f.num_warps) return "a tensor-core dot's warps must tile its result within num_warps";
      // the target's forms (layout/mma_target.hpp), where the kernel names its target
      if (!f.mma_target) return {};
      if (auto r = f.mma_target->check(op, f.num_warps); !r.empty()) return r;
      for (unsigned k = 0; k < 2; ++k) {  // staged operands: what the engine reads (stage_mma_operands.cpp)
        const Type& t = op.operands[k]->type;
        const smem want = f.mma_target->operand_arrangement(op, k);
        if (t.is_buffer() && t.mem != want)
          return "a tensor-core dot reads " + std::string(k ? "B" : "A") + " from a " + std::string(smem_name(want)) +
                 " buffer (" + t.str() + ")";
      }
      // an operand in registers once B is staged: one the engine takes from registers, in its layout
      if (op.operands[1]->type.is_buffer())
        for (unsigned k = 0; k < 2; ++k) {
          if (op.operands[k]->type.is_buffer()) continue;
          const auto reg = f.mma_target->register_operand(op, k, f.num_warps);
          if (!reg) return "a tensor-core dot reads " + std::string(k ? "B" : "A") + " from shared memory, not registers, on its engine";
          if (auto r = expect(op.operands[k], *reg, "a tensor-core dot's register operand must be in the engine's register layout"); !r.empty())
            return r;
        }
      return expect(res, f.mma_target->accumulator(op, f.num_warps), "a tensor-core dot's result must be in the MMA accumulator layout of its warps");
    }
    case OpKind::for_:
    case OpKind::while_: {
      const std::size_t first = op.kind == OpKind::for_ ? 3 : 0;
      for (std::size_t k = 0; k < op.results.size(); ++k) {
        std::vector<const Value*> vs{op.results[k].get()};
        if (first + k < op.operands.size()) vs.push_back(op.operands[first + k]);
        for (const auto& reg : op.regions) {
          const std::size_t arg = op.kind == OpKind::for_ ? k + 1 : k;
          if (arg < reg->args.size()) vs.push_back(reg->args[arg].get());
        }
        if (auto r = one_layout(vs, "a carried value's initial value, region arguments and result must share one layout"); !r.empty())
          return r;
      }
      return {};
    }
    case OpKind::yield: {
      const Op* parent = op.parent ? op.parent->parent : nullptr;
      if (!parent || (parent->kind != OpKind::for_ && parent->kind != OpKind::while_ && parent->kind != OpKind::if_)) return {};
      for (std::size_t k = 0; k < op.operands.size() && k < parent->results.size(); ++k)
        if (auto r = one_layout({parent->results[k].get(), op.operands[k]}, "a yielded value must be in the layout of the result it becomes");
            !r.empty())
          return r;
      return {};
    }
    case OpKind::hint: return one_layout({res, op.operands.empty() ? nullptr : op.operands[0]}, "a hint's result must be in its operand's layout");
    default: break;
  }
  if (is_elementwise(op.kind) && tile_result) {
    auto vs = operands();
    vs.insert(vs.begin(), res);
    return one_layout(vs, "the tile operands of an elementwise op must be in its result's layout (a layout change is an explicit convert_layout)");
  }
  return {};
}

}  // namespace tile::ir

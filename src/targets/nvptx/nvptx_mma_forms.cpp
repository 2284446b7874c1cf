// src/targets/nvptx/nvptx_mma_forms.cpp — layer: targets (nvptx). See nvptx_mma_forms.hpp.
#include "targets/nvptx/nvptx_mma_forms.hpp"
#include "targets/nvptx/nvptx_mma_layouts.hpp"
#include "layout/dot_chains.hpp"

namespace tile::targets::nvptx {

using layout::mma_engine;

int NvptxMmaForms::operand_elements(const ir::Op& dot) {
  const dtype in = dot.operands.at(0)->type.elem, out = dot.results.at(0)->type.elem;
  if ((in == dtype::f16 || in == dtype::bf16) && out == dtype::f32) return 2;
  if ((in == dtype::i8 || in == dtype::u8) && out == dtype::i32) return 4;
  // f32 at tf32 precision (the default): the inputs rounded to tf32 as the interpreter does,
  // then multiplied exactly by the tensor cores; tf32x3 and ieee stay on the exact path
  if (in == dtype::f32 && out == dtype::f32 && !dot.attrs.ints.empty() &&
      dot.attrs.ints[0] == static_cast<std::int64_t>(tile::detail::precision::tf32))
    return 1;
  return 0;
}

bool NvptxMmaForms::warp_form(const ir::Op& dot) {
  const ir::Type& a = dot.operand(0)->type;
  const ir::Type& b = dot.operand(1)->type;
  const ir::Type& r = dot.result()->type;
  if (a.shape.size() != 2 || b.shape.size() != 2 || r.shape.size() != 2) return false;
  if (a.elem != b.elem || a.shape[0] < 16 || b.shape[1] < 8) return false;
  const int kw = operand_elements(dot);
  return kw > 0 && a.shape[1] >= 8 * kw;
}

bool NvptxMmaForms::warpgroup_form(const ir::Op& dot, int num_warps) {
  if (!warp_form(dot) || operand_elements(dot) != 2) return false;
  const auto& a = dot.operand(0)->type.shape;
  const auto& b = dot.operand(1)->type.shape;
  if (num_warps != 4 && num_warps != 8) return false;
  return a[0] % (16 * num_warps) == 0 && b[1] >= 16 && b[1] <= 256 && b[1] % 16 == 0 && a[1] % 16 == 0;
}

layout::MmaTarget::Choice NvptxMmaForms::choose(const ir::Op& dot, int num_warps, int lanes) const {
  if (lanes != 32 || dot.kind != ir::OpKind::dot || !warp_form(dot)) return {};  // (32-lane instructions)
  if (warpgroup_ && warpgroup_form(dot, num_warps)) return {mma_engine::warpgroup, {num_warps, 1}};
  const auto& s = dot.result()->type.shape;
  // a chain of dots (attention's QKᵀ then P·V): every warp along M, where M has a fragment row for
  // each, so each warp holds whole rows of the first product (layout/dot_chains.hpp)
  if (s[0] % (16 * num_warps) == 0 && layout::chained_dot(dot)) return {mma_engine::warp, {num_warps, 1}};
  return {mma_engine::warp, mma_warps(s[0], s[1], num_warps)};
}

std::string NvptxMmaForms::check(const ir::Op& dot, int num_warps) const {
  const auto& a = dot.attrs.ints;
  const mma_engine e = layout::engine_of(dot);
  if (e == mma_engine::none) return {};
  if (operand_elements(dot) == 0)
    return "a tensor-core dot of operands no tensor-core form of " + name_ + " takes (" + dot.operand(0)->type.str() + " into " +
           dot.result()->type.str() + ")";
  if (e != mma_engine::warpgroup && dot.operand(1)->type.mem == ir::smem::swizzled_transposed && operand_elements(dot) != 2)
    return "a warp's tensor-core dot reads a transposed B only of 16-bit elements (" + dot.operand(1)->type.str() + ")";
  if (e == mma_engine::warpgroup) {
    if (!warpgroup_) return "a warpgroup dot on " + name_ + ", which has no warpgroup MMA";
    if (operand_elements(dot) != 2 || a[2] != num_warps || a[3] != 1)
      return "a warpgroup dot takes 16-bit operands with every warp along M (warps = [num_warps, 1])";
  }
  return {};
}

layout::LinearLayout NvptxMmaForms::accumulator(const ir::Op& dot, int num_warps) const {
  const auto& s = dot.result()->type.shape;
  return mma_v2(s.at(0), s.at(1), layout::mma_warps_of(dot), num_warps);
}

ir::smem NvptxMmaForms::operand_arrangement(const ir::Op& dot, unsigned k) const {
  // 16-bit operands: swizzled tiles (A [M][K], B [K][N]: what ldmatrix reads without bank
  // conflicts and wgmma's descriptors name); tf32 and 8-bit (mma.sync only): A row-major and B
  // transposed ([N][K]), rows padded by 16 bytes, each thread's consecutive k one 32-bit word
  // A 16-bit B whose registers run along K (Kᵀ in attention, x @ Wᵀ): stored in that order,
  // [N][K] swizzled, and read as a K-major operand (wgmma's descriptor; mma.sync's fragments by
  // ldmatrix without .trans), not transposed element by element into [K][N] (2-byte stores, bank
  // conflicts); a pipelined loop's copies then fill it along K
  const ir::Value* x = dot.operand(k);
  if (x->type.is_buffer() && x->def && x->def->kind == ir::OpKind::local_alloc && !x->def->operands.empty())
    x = x->def->operand(0);  // (staged already: the tile it stored)
  const bool kmajor_b = size_of(x->type.elem) == 2 && k == 1 && layout::engine_of(dot) != mma_engine::none && x->type.shape.at(0) >= 16;
  // a ring's buffer (a pipelined loop's) keeps the arrangement of the staging it replaced
  if (kmajor_b && x->type.is_buffer() && x->type.mem == ir::smem::swizzled_transposed) return ir::smem::swizzled_transposed;
  if (kmajor_b && x->type.layout) {
    const auto [run, axis] = layout::register_run(*x->type.layout);
    if (axis == 0 && run >= 2) return ir::smem::swizzled_transposed;
  }
  if (size_of(x->type.elem) == 2) return ir::smem::swizzled;
  return k == 0 ? ir::smem::padded : ir::smem::padded_transposed;
}

std::optional<layout::LinearLayout> NvptxMmaForms::register_operand(const ir::Op& dot, unsigned k, int num_warps) const {
  // mma.sync's m16n8k16 A fragment (and wgmma's, per warp of the warpgroup: 16 rows each):
  // registers a0..a7 at (r, c..c+1), (r+8, c..), (r, c+8..), (r+8, c+8..) — the accumulator's
  // two n8 blocks of a k16 step, so a product's f32 accumulator, cast, is this layout as it is.
  // A warp's MMA takes it where every warp is along M (a warp along N would need rows another
  // warp holds): the accumulator layout over [M, K] with the dot's warps
  const mma_engine e = layout::engine_of(dot);
  if (k != 0 || e == mma_engine::none || size_of(dot.operand(0)->type.elem) != 2 || operand_elements(dot) != 2)
    return std::nullopt;
  const std::array<int, 2> warps = layout::mma_warps_of(dot);
  if (warps[1] != 1) return std::nullopt;
  const auto& s = dot.operand(0)->type.shape;
  return mma_v2(s.at(0), s.at(1), warps, num_warps);
}

const NvptxMmaForms* mma_forms(int sm, bool accel) {
  static const NvptxMmaForms warp("nvptx-sm_80", false), warpgroup("nvptx-sm_90a", true);
  if (sm < 80) return nullptr;
  return sm >= 90 && accel ? &warpgroup : &warp;
}

}  // namespace tile::targets::nvptx

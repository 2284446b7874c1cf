// src/targets/nvptx/nvptx_mma.cpp — layer: targets (nvptx). See nvptx_mma.hpp.
#include "targets/nvptx/nvptx_mma.hpp"
#include "targets/nvptx/nvptx_mma_forms.hpp"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include "layout/mma_engine.hpp"
#include "targets/nvptx/nvptx_asm.hpp"
#include "targets/nvptx/nvptx_mma_layouts.hpp"

namespace tile::targets::nvptx {

using codegen::gpu::DV;
using codegen::gpu::GpuLowering;

namespace {

std::int64_t block_bytes(std::int64_t cols, std::int64_t es) { return std::min<std::int64_t>(128, cols * es); }

/// The descriptor's swizzle-mode field for S-byte rows: 1 (128 B), 2 (64 B), 3 (32 B).
std::uint64_t swizzle_mode(std::int64_t s) { return s == 128 ? 1 : s == 64 ? 2 : 3; }

}  // namespace

DV NvptxMma::dot(GpuLowering& G, const ir::Op& op, llvm::Value* a_at, llvm::Value* b_at, std::int64_t lda, std::int64_t ldb,
                 const DV& acc, int pending, const DV* a_regs) const {
  if (layout::engine_of(op) == layout::mma_engine::warpgroup) return wgmma_from_shared(G, op, a_at, b_at, acc, pending, a_regs);
  return mma_from_shared(G, op, layout::mma_warps_of(op), a_at, b_at, lda, ldb, acc, a_regs);
}

llvm::Value* NvptxMma::a_register_pair(GpuLowering& G, const ir::Op& op, const DV& a_regs, const layout::LinearLayout& la,
                                       std::int64_t row, std::int64_t col) {
  auto& B = G.b();
  auto lo = layout::register_of(la, {row, col}), hi = layout::register_of(la, {row, col + 1});
  if (!lo || !hi) G.unsupported(op, "internal error: an MMA's A fragment element has no register");
  auto reg = [&](std::int64_t i) { return a_regs.regs.size() == 1 ? a_regs.regs[0] : a_regs.regs.at(static_cast<std::size_t>(i)); };
  // two conversions from f32 (a product cast to the input type): one cvt of the pair
  if (llvm::Value* w = G.pack_16x2(reg(*lo), reg(*hi))) return w;
  auto bits = [&](std::int64_t i) {
    llvm::Value* v = reg(i);
    return v->getType()->isIntegerTy() ? v : B.CreateBitCast(v, B.getInt16Ty());
  };
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(B.getInt16Ty(), 2));
  v = B.CreateInsertElement(B.CreateInsertElement(v, bits(*lo), B.getInt32(0)), bits(*hi), B.getInt32(1));
  return B.CreateBitCast(v, B.getInt32Ty());
}

std::vector<llvm::Value*> NvptxMma::wait(GpuLowering& G, int pending, const std::vector<llvm::Value*>& acc) const {
  return wgmma_wait(G.S, pending, acc);
}

void NvptxMma::make_visible(GpuLowering& G, layout::mma_engine e) const {
  // wgmma reads shared memory through the async proxy: the ordinary stores (st.shared, cp.async)
  // are fenced for it; mma.sync's ldmatrix reads them as any load does
  if (e == layout::mma_engine::warpgroup) void_asm(G.S, "fence.proxy.async.shared::cta;");
}

DV NvptxMma::mma_from_shared(GpuLowering& G, const ir::Op& op, std::array<int, 2> warps, llvm::Value* a_base, llvm::Value* b_base,
                             std::int64_t lda, std::int64_t ldb, const DV& acc, const DV* a_regs) const {
  auto& B = G.b();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const int W = G.num_warps;
  const int kw = NvptxMmaForms::operand_elements(op);
  const std::int64_t es = 4 / kw, kfrag = 8 * kw;
  const bool b_rows = es == 2;
  const layout::LinearLayout LA = mma_v2_operand(0, M, K, warps, W, kw);
  const layout::LinearLayout LB = mma_v2_operand(1, K, N, warps, W, kw);
  const layout::LinearLayout& C = G.layout_of(op.result());
  auto reg_of = [&](const layout::LinearLayout& l, std::int64_t r, std::int64_t c) {
    auto i = layout::register_of(l, {r, c});
    if (!i) G.unsupported(op, "internal error: an mma fragment element has no register");
    return *i;
  };
  // A in registers (a preceding dot's product, cast: attention's P): its k16 fragments are
  // register pairs of its layout, no ldmatrix
  std::optional<layout::LinearLayout> LR;
  if (a_regs) {
    if (es != 2 || warps[1] != 1) G.unsupported(op, "internal error: a warp's MMA with A in registers needs 16-bit A and every warp along M");
    LR = layout::LinearLayout(a_regs->layout);
  }
  // a_base and b_base are absolute offsets into the shared buffer
  auto at_elem = [&](llvm::Value* base, llvm::Value* row, llvm::Value* col, std::int64_t ld) {
    llvm::Value* flat = B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<std::uint32_t>(ld))), col);
    return G.smem_abs(B.CreateAdd(base, B.CreateMul(B.CreateZExt(flat, B.getInt64Ty()), B.getInt64(static_cast<std::uint64_t>(es)))));
  };
  auto at_swizzled = [&](llvm::Value* base, llvm::Value* row, llvm::Value* col, std::int64_t rows, std::int64_t cols) {
    return G.smem_abs(B.CreateAdd(base, G.swizzled_offset(rows, cols, es, row, col)));
  };
  // the 32-bit word of transposed B holding this thread's (k .. k + kw - 1, n) of register r
  auto b_word = [&](int r) -> llvm::Value* {
    return B.CreateAlignedLoad(B.getInt32Ty(), at_elem(b_base, G.coord(LB, r, 1), G.coord(LB, r, 0), ldb), llvm::Align(4));
  };
  // ldmatrix's row addresses: lane i points at row i % 8 of matrix i / 8; the warp's own offset
  // along M (A) or N (B) is its thread coordinate without the lane's bits (rows 0..7 of a
  // fragment for A, columns 0..7 for B)
  llvm::Value* li = B.CreateAnd(G.lane, B.getInt32(7));
  llvm::Value* lm = B.CreateLShr(G.lane, B.getInt32(3));
  llvm::Value* warp_m = B.CreateAnd(G.thread_coord(LA, 0), B.getInt32(~7u));
  llvm::Value* warp_n = B.CreateAnd(G.thread_coord(LB, 1), B.getInt32(~7u));
  // A: matrix m of the fragment at (r0, k0) is rows r0 + 8 (m & 1), columns k0 + kh (m >> 1)
  llvm::Value* a_row_in = B.CreateAdd(li, B.CreateMul(B.CreateAnd(lm, B.getInt32(1)), B.getInt32(8)));
  llvm::Value* a_col_in = B.CreateMul(B.CreateLShr(lm, B.getInt32(1)), B.getInt32(static_cast<std::uint32_t>(4 * kw)));
  // B (row-major, .trans): matrix m of the fragment at (k0, c0) is rows k0 + 8 m, columns c0;
  // B K-major ([N][K] swizzled, no .trans): matrix m is rows (n) c0 .. c0 + 7, columns (k) k0 + 8 m
  llvm::Value* b_k_in = B.CreateMul(B.CreateAnd(lm, B.getInt32(1)), B.getInt32(8));
  llvm::Value* b_row_in = B.CreateAdd(li, b_k_in);
  const bool b_kmajor = bt.mem == ir::smem::swizzled_transposed;

  std::vector<llvm::Value*> d(static_cast<std::size_t>(C.num_regs()));
  for (int r = 0; r < C.num_regs(); ++r)
    d[static_cast<std::size_t>(r)] = acc.regs.size() == 1 ? acc.regs[0] : acc.regs.at(static_cast<std::size_t>(r));
  const std::int64_t kh = 4 * kw;  // the fragment's second half of k
  struct Fragments {
    std::vector<std::array<llvm::Value*, 4>> af;
    std::vector<std::array<llvm::Value*, 2>> bf;
  };
  // the operand fragments of k step k0 (ldmatrix from shared memory, or B's registers)
  auto fragments = [&](std::int64_t k0) {
    Fragments f;
    auto& af = f.af;
    auto& bf = f.bf;
    for (std::int64_t r0 = 0; r0 < M; r0 += 16 * warps[0]) {
      if (a_regs) {  // (r0's rows of the warp's fragment: the layout's lane and warp bases)
        af.push_back({a_register_pair(G, op, *a_regs, *LR, r0, k0), a_register_pair(G, op, *a_regs, *LR, r0 + 8, k0),
                      a_register_pair(G, op, *a_regs, *LR, r0, k0 + kh), a_register_pair(G, op, *a_regs, *LR, r0 + 8, k0 + kh)});
        continue;
      }
      llvm::Value* row = B.CreateAdd(B.CreateAdd(warp_m, a_row_in), B.getInt32(static_cast<std::uint32_t>(r0)));
      llvm::Value* col = B.CreateAdd(a_col_in, B.getInt32(static_cast<std::uint32_t>(k0)));
      auto m = ldmatrix(G.S, es == 2 ? at_swizzled(a_base, row, col, M, K) : at_elem(a_base, row, col, lda), 4, false);
      af.push_back({m[0], m[1], m[2], m[3]});
    }
    for (std::int64_t c0 = 0; c0 < N; c0 += 8 * warps[1]) {
      if (b_rows && b_kmajor) {
        llvm::Value* n = B.CreateAdd(B.CreateAdd(warp_n, li), B.getInt32(static_cast<std::uint32_t>(c0)));
        llvm::Value* k = B.CreateAdd(b_k_in, B.getInt32(static_cast<std::uint32_t>(k0)));
        auto m = ldmatrix(G.S, at_swizzled(b_base, n, k, N, K), 2, false);
        bf.push_back({m[0], m[1]});
      } else if (b_rows) {
        llvm::Value* row = B.CreateAdd(b_row_in, B.getInt32(static_cast<std::uint32_t>(k0)));
        llvm::Value* col = B.CreateAdd(warp_n, B.getInt32(static_cast<std::uint32_t>(c0)));
        auto m = ldmatrix(G.S, at_swizzled(b_base, row, col, K, N), 2, true);
        bf.push_back({m[0], m[1]});
      } else {
        bf.push_back({b_word(reg_of(LB, k0, c0)), b_word(reg_of(LB, k0 + kh, c0))});
      }
    }
    return f;
  };
  // k in order, one fragment's k at a time; the next step's fragments are read into registers
  // before this step's mma.sync (Triton's operand prefetch), so their shared-memory latency
  // overlaps the tensor cores' work
  Fragments next = fragments(0);
  for (std::int64_t k0 = 0; k0 < K; k0 += kfrag) {
    const Fragments cur = std::move(next);
    if (k0 + kfrag < K) next = fragments(k0 + kfrag);
    const auto& af = cur.af;
    const auto& bf = cur.bf;
    std::size_t mi = 0;
    for (std::int64_t r0 = 0; r0 < M; r0 += 16 * warps[0], ++mi) {
      std::size_t ni = 0;
      for (std::int64_t c0 = 0; c0 < N; c0 += 8 * warps[1], ++ni) {
        const std::array<std::size_t, 4> ci{static_cast<std::size_t>(reg_of(C, r0, c0)), static_cast<std::size_t>(reg_of(C, r0, c0 + 1)),
                                            static_cast<std::size_t>(reg_of(C, r0 + 8, c0)), static_cast<std::size_t>(reg_of(C, r0 + 8, c0 + 1))};
        auto out = mma_m16n8(G.S, at.elem, af[mi], bf[ni], {d[ci[0]], d[ci[1]], d[ci[2]], d[ci[3]]});
        for (std::size_t j = 0; j < 4; ++j) d[ci[j]] = out[j];
      }
    }
  }
  return DV{C, std::move(d), op.result()->type};
}

DV NvptxMma::wgmma_from_shared(GpuLowering& G, const ir::Op& op, llvm::Value* a_base, llvm::Value* b_base, const DV& acc,
                               int pending, const DV* a_regs) const {
  auto& B = G.b();
  auto* i64 = B.getInt64Ty();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const int W = G.num_warps;
  const layout::LinearLayout& C = G.layout_of(op.result());
  const std::int64_t sa = block_bytes(K, 2), sb = block_bytes(N, 2);
  // descriptor: start >> 4 (bits 0-13), leading byte offset >> 4 (16-29), stride byte offset >>
  // 4 (32-45), swizzle mode (62-63)
  // — written as fields + (buffer start >> 4) + (offset >> 4): every offset is a multiple of 16
  // and shared addresses stay below 2^18, so the sum never carries out of the start field, and
  // the loop-invariant part is computed once, each step adding a constant
  llvm::Value* start16 = B.CreateLShr(B.CreatePtrToInt(G.smem_abs(B.getInt64(0)), i64), B.getInt64(4));
  // (the buffer's offset and the offset within it shifted apart, so that a buffer at a run-time
  // offset (a ring's) still adds one constant a step)
  auto desc = [&](llvm::Value* buffer, llvm::Value* byte_off, std::uint64_t lbo, std::uint64_t sbo, std::int64_t s) {
    const std::uint64_t fixed = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | swizzle_mode(s) << 62;
    auto x16 = [&](llvm::Value* v) { return B.CreateLShr(v, B.getInt64(4), "", /*isExact=*/true); };
    return B.CreateAdd(B.CreateAdd(B.CreateAdd(B.getInt64(fixed), start16), x16(buffer)), x16(byte_off));
  };
  auto reg_of = [&](std::int64_t r, std::int64_t c) {
    auto i = layout::register_of(C, {r, c});
    if (!i) G.unsupported(op, "internal error: a wgmma accumulator element has no register");
    return static_cast<std::size_t>(*i);
  };
  // a guard (defer_dots: the deferred dot of a loop's first iteration issues nothing)
  llvm::Value* guard = op.operands.size() > 3 ? G.get(op.operand(3)).regs.at(0) : nullptr;
  // the warpgroup's first row within each 16 W-row repetition
  llvm::Value* wg_row = B.CreateMul(B.CreateLShr(G.warp, B.getInt32(2)), B.getInt32(64));
  const std::int64_t reps = M / (16 * W);
  std::vector<std::vector<std::size_t>> idx(static_cast<std::size_t>(reps));
  std::vector<std::vector<llvm::Value*>> d(static_cast<std::size_t>(reps));
  for (std::int64_t r = 0; r < reps; ++r)
    for (std::int64_t c8 = 0; c8 < N / 8; ++c8)
      for (int t = 0; t < 4; ++t) {
        const std::size_t k = reg_of(r * 16 * W + (t >= 2 ? 8 : 0), 8 * c8 + (t & 1));
        idx[static_cast<std::size_t>(r)].push_back(k);
        d[static_cast<std::size_t>(r)].push_back(acc.regs.size() == 1 ? acc.regs[0] : acc.regs.at(k));
      }
  wgmma_fence(G.S);
  // B [K][N] (N-major): rows k0 .. k0 + 15 of every N block (blocks K * sb bytes apart, 8-row
  // groups 8 sb). B stored transposed, [N][K] (K-major, as A): the K block holding k0, every row
  // from the first, k0's byte within the block row
  const bool b_kmajor = bt.mem == ir::smem::swizzled_transposed;
  const std::int64_t sbk = block_bytes(K, 2);
  std::vector<llvm::Value*> db;
  for (std::int64_t k0 = 0; k0 < K; k0 += 16)
    db.push_back(b_kmajor ? desc(b_base, B.getInt64(static_cast<std::uint64_t>(k0 * 2 / sbk * N * sbk + k0 * 2 % sbk)), 16,
                                 static_cast<std::uint64_t>(8 * sbk), sbk)
                          : desc(b_base, B.getInt64(static_cast<std::uint64_t>(k0 * sb)), static_cast<std::uint64_t>(K * sb),
                                 static_cast<std::uint64_t>(8 * sb), sb));
  // one chained statement per 64-row block: its k steps, then (a single block: in the same
  // statement) the commit and the wait
  std::vector<llvm::Value*> out(static_cast<std::size_t>(C.num_regs()), nullptr);
  // A in registers: the accumulator layout over [M, K] (register_operand), the k16 step's
  // fragment a0..a7 at (row, k0 + c), c = 2·(lane % 4) (+1), rows +8, columns +8; packed in pairs
  std::optional<layout::LinearLayout> LA;
  if (a_regs) LA = layout::LinearLayout(a_regs->layout);
  auto a_pair = [&](std::int64_t row, std::int64_t col) { return a_register_pair(G, op, *a_regs, *LA, row, col); };
  for (std::int64_t r = 0; r < reps; ++r) {
    // A: the K block holding k0, the warpgroup's 64 rows, k0's byte within the block row
    std::vector<WgmmaStep> steps;
    for (std::int64_t k0 = 0; k0 < K; k0 += 16) {
      WgmmaStep st;
      st.b = db[static_cast<std::size_t>(k0 / 16)];
      if (a_regs) {
        const std::int64_t row = r * 16 * W;  // (the warp's rows: the layout's lane and warp bases)
        st.a = {a_pair(row, k0), a_pair(row + 8, k0), a_pair(row, k0 + 8), a_pair(row + 8, k0 + 8)};
      } else {
        llvm::Value* row = B.CreateAdd(wg_row, B.getInt32(static_cast<std::uint32_t>(r * 16 * W)));
        const std::int64_t kb = k0 * 2 / sa, kin = k0 * 2 % sa;
        llvm::Value* off = B.CreateAdd(B.getInt64(static_cast<std::uint64_t>(kb * M * sa + kin)),
                                       B.CreateMul(B.CreateZExt(row, i64), B.getInt64(static_cast<std::uint64_t>(sa))));
        st.a = {desc(a_base, off, 16, static_cast<std::uint64_t>(8 * sa), sa)};
      }
      steps.push_back(std::move(st));
    }
    d[static_cast<std::size_t>(r)] = wgmma(G.S, at.elem, static_cast<int>(N), steps, d[static_cast<std::size_t>(r)],
                                                  reps == 1 ? pending : -1, b_kmajor, guard);
  }
  if (reps > 1) {
    wgmma_commit(G.S);
    for (std::int64_t r = 0; r < reps; ++r) d[static_cast<std::size_t>(r)] = wgmma_wait(G.S, pending, d[static_cast<std::size_t>(r)]);
  }
  for (std::int64_t r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < d[static_cast<std::size_t>(r)].size(); ++k)
      out[idx[static_cast<std::size_t>(r)][k]] = d[static_cast<std::size_t>(r)][k];
  for (auto* v : out)
    if (!v) G.unsupported(op, "internal error: a wgmma accumulator register was not written");
  return DV{C, std::move(out), op.result()->type};
}

std::array<llvm::Value*, 4> NvptxMma::mma_m16n8(codegen::Lowering& L, tile::dtype in, const std::array<llvm::Value*, 4>& a,
                                                   const std::array<llvm::Value*, 2>& b,
                                                   const std::array<llvm::Value*, 4>& c) const {
  auto& bld = *L.b;
  const bool integer = in == dtype::i8 || in == dtype::u8;
  auto* acc = integer ? bld.getInt32Ty() : bld.getFloatTy();
  auto* i32 = bld.getInt32Ty();
  auto* ret = llvm::StructType::get(L.ctx, {acc, acc, acc, acc});
  auto* fty = llvm::FunctionType::get(ret, {i32, i32, i32, i32, i32, i32, acc, acc, acc, acc}, false);
  std::string shape_types;
  switch (in) {
    case dtype::f16: shape_types = "m16n8k16.row.col.f32.f16.f16.f32"; break;
    case dtype::bf16: shape_types = "m16n8k16.row.col.f32.bf16.bf16.f32"; break;
    case dtype::f32: shape_types = "m16n8k8.row.col.f32.tf32.tf32.f32"; break;
    case dtype::i8: shape_types = "m16n8k32.row.col.s32.s8.s8.s32"; break;
    case dtype::u8: shape_types = "m16n8k32.row.col.s32.u8.u8.s32"; break;
    default: throw tile::error("nvptx: no mma.sync for " + std::string(tile::name(in)) + " operands");
  }
  const std::string c_reg = integer ? "r" : "f";
  auto* asm_fn = llvm::InlineAsm::get(
      fty, "mma.sync.aligned." + shape_types + " {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
      "=" + c_reg + ",=" + c_reg + ",=" + c_reg + ",=" + c_reg + ",r,r,r,r,r,r," + c_reg + "," + c_reg + "," + c_reg + "," + c_reg,
      /*hasSideEffects=*/false);
  llvm::Value* d = bld.CreateCall(asm_fn, {a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2], c[3]});
  return {bld.CreateExtractValue(d, 0), bld.CreateExtractValue(d, 1), bld.CreateExtractValue(d, 2),
          bld.CreateExtractValue(d, 3)};
}

std::vector<llvm::Value*> NvptxMma::ldmatrix(codegen::Lowering& L, llvm::Value* shared_row_ptr, int count,
                                               bool trans) const {
  auto& b = *L.b;
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  switch (count) {
    case 1: id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16 : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16; break;
    case 2: id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16 : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16; break;
    case 4: id = trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16 : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16; break;
    default: throw tile::error("nvptx: ldmatrix of " + std::to_string(count) + " matrices");
  }
  llvm::Value* r = b.CreateIntrinsic(id, {shared_row_ptr->getType()}, {shared_row_ptr});  // overloaded on the pointer
  std::vector<llvm::Value*> out;
  if (count == 1) {
    out.push_back(r);
  } else {
    for (int i = 0; i < count; ++i) out.push_back(b.CreateExtractValue(r, static_cast<unsigned>(i)));
  }
  return out;
}

void NvptxMma::wgmma_fence(codegen::Lowering& L) const { void_asm(L, "wgmma.fence.sync.aligned;"); }
void NvptxMma::wgmma_commit(codegen::Lowering& L) const { void_asm(L, "wgmma.commit_group.sync.aligned;"); }

std::vector<llvm::Value*> NvptxMma::wgmma(codegen::Lowering& L, tile::dtype in, int n, const std::vector<WgmmaStep>& steps,
                                          const std::vector<llvm::Value*>& acc, int commit_wait, bool b_kmajor,
                                          llvm::Value* guard) const {
  if (!arch_.accel || arch_.sm < 90) throw tile::error("nvptx: wgmma needs sm_90a, not " + arch_.name());
  if (in != dtype::f16 && in != dtype::bf16) throw tile::error("nvptx: wgmma of " + std::string(tile::name(in)));
  if (static_cast<int>(acc.size()) != n / 2) throw tile::error("nvptx: wgmma m64n" + std::to_string(n) + " takes n / 2 accumulators");
  if (steps.empty()) throw tile::error("nvptx: wgmma without a k step");
  const std::string t = in == dtype::f16 ? "f16" : "bf16";
  const std::size_t h = acc.size();
  // operands: the accumulators $0 .. $h-1, each step's A (a descriptor, or four registers) and
  // B descriptor, scale-d's 1; the accumulators' inputs tied to their outputs. One statement for
  // the whole chain: ptxas sees the same instructions, LLVM a quarter of the 128-value structs of
  // four statements (K = 64)
  std::string acc_list = "{";
  for (std::size_t i = 0; i < h; ++i) acc_list += (i ? ", $" : "$") + std::to_string(i);
  acc_list += "}";
  std::vector<llvm::Value*> extra;
  std::string cons, body;
  std::size_t next = h;
  for (const WgmmaStep& st : steps) {
    if (st.a.size() != 1 && st.a.size() != 4) throw tile::error("nvptx: a wgmma step's A is a descriptor or four registers");
    const bool regs = st.a.size() == 4;
    std::string a;
    for (std::size_t i = 0; i < st.a.size(); ++i) {
      a += (i ? ", $" : "$") + std::to_string(next++);
      extra.push_back(st.a[i]);
      cons += std::string(cons.empty() ? "" : ",") + (regs ? "r" : "l");
    }
    if (regs) a = "{" + a + "}";
    const std::string b = "$" + std::to_string(next++);
    extra.push_back(st.b);
    cons += ",l";
    // scale-d = 1 (accumulate), A and B unscaled; A from shared memory K-major (0); B N-major
    // (1) or K-major (0)
    body += std::string(guard ? "\t@g " : "\t") + "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + t + "." + t + " " + acc_list + ", " + a + ", " +
            b + ", p, 1, 1, " + (regs ? "" : "0, ") + (b_kmajor ? "0" : "1") + ";\n";
  }
  // (a guard, where given: every step issued only where it is nonzero, the accumulators otherwise
  // as they were; the warpgroup's threads agree on it)
  std::string text = "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, $" + std::to_string(next) + ", 0;\n";
  if (guard) text += "\t.reg .pred g;\n\tsetp.ne.b32 g, $" + std::to_string(next + 1) + ", 0;\n";
  // (a guarded chain fences its own registers: whatever LLVM moved into the accumulators or A's
  // registers since the dot's wgmma.fence, before the steps that read them; without it ptxas
  // adds one before each step, C7519, or, where it finds none to add, issues them unfenced)
  if (guard) text += "\twgmma.fence.sync.aligned;\n";
  text += body;
  if (commit_wait >= 0)
    text += "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned " + std::to_string(commit_wait) + ";\n";
  text += "}";
  extra.push_back(L.b->getInt32(1));
  if (guard) extra.push_back(L.b->CreateZExt(guard, L.b->getInt32Ty()));
  return acc_asm(L, text, acc, extra, cons + ",r" + (guard ? ",r" : ""));
}

std::vector<llvm::Value*> NvptxMma::wgmma_wait(codegen::Lowering& L, int pending, const std::vector<llvm::Value*>& acc) const {
  return acc_asm(L, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", acc, {}, "");
}

}  // namespace tile::targets::nvptx

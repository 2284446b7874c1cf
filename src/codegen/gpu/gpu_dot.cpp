// src/codegen/gpu/gpu_dot.cpp — layer: codegen (gpu). dot(a, b, acc) without tensor cores: both
// operands go to shared memory in the compute type (f32/f64, tf32-rounded f32 at tf32
// precision; the accumulator's type for integers), then each thread runs one multiply-add chain
// per accumulator element it holds, k in order — the interpreter's order and roundings (f16/bf16
// accumulators round after every step). Dots select_mma put on a warp's tensor cores (sm_80+)
// run as mma.sync m16n8k{16,8,32} instead (lower_dot_mma), on operands their local_allocs
// staged in shared memory, k in fragment steps, the hardware's own rounding within a step. wgmma
// (sm_90a) is gpu_wgmma.cpp's; the staging buffers gpu_shared.cpp's; software pipelining of K
// loops gpu_pipeline.cpp's.
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

void GpuLowering::lower_dot_mma(const ir::Op& op, std::array<int, 2> warps) {
  // A and B are shared-memory buffers (layout/stage_mma_operands.cpp: 16-bit A [M][K] and B
  // [K][N] swizzled, other types A row-major and B transposed [N][K] with rows padded by 16
  // bytes), written by their local_allocs. k one fragment at a time, each warp reads its
  // fragments — the elements the operand layouts (layout::mma_v2_operand) give each thread: A
  // with ldmatrix.x4, 16-bit B with ldmatrix.x2.trans, 32-bit and 8-bit B word by word — and
  // runs its mma.sync steps. Only one k step's fragments are live at a time, besides the
  // accumulator.
  auto& B = b();
  const ir::Type& at = op.operand(0)->type;
  const std::int64_t K = at.shape[1];
  const std::int64_t es = 4 / layout::mma_kwidth(op);  // element bytes
  const DV acc = operand(op, 2);  // in the accumulator layout
  barrier_after_write();  // the local_allocs' stores are visible to every warp
  const std::int64_t ld = es == 2 ? 0 : K + 16 / es;  // padded rows (elements); swizzled: unused
  DV res = mma_from_shared(op, warps, B.getInt64(buffer_offset(op.operand(0))), B.getInt64(buffer_offset(op.operand(1))),
                           es == 2 ? K : ld, es == 2 ? op.operand(1)->type.shape[1] : ld, acc);
  note_smem_read();
  set(op.result(), std::move(res));
}

DV GpuLowering::mma_from_shared(const ir::Op& op, std::array<int, 2> warps, llvm::Value* a_base, llvm::Value* b_base,
                                std::int64_t lda, std::int64_t ldb, const DV& acc) {
  auto& B = b();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const int W = num_warps;
  const int kw = layout::mma_kwidth(op);
  const std::int64_t es = 4 / kw, kfrag = 8 * kw;
  const bool b_rows = es == 2;
  const layout::LinearLayout LA = layout::mma_v2_operand(0, M, K, warps, W, kw);
  const layout::LinearLayout LB = layout::mma_v2_operand(1, K, N, warps, W, kw);
  const layout::LinearLayout& C = layout_of(op.result());
  auto reg_of = [&](const layout::LinearLayout& l, std::int64_t r, std::int64_t c) {
    auto i = layout::register_of(l, {r, c});
    if (!i) unsupported(op, "internal error: an mma fragment element has no register");
    return *i;
  };
  // a_base and b_base are absolute offsets into the shared buffer (the pipelined ring's are not
  // moved by smem_floor_)
  auto at_elem = [&](llvm::Value* base, llvm::Value* row, llvm::Value* col, std::int64_t ld) {
    llvm::Value* flat = B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<std::uint32_t>(ld))), col);
    return smem_abs(B.CreateAdd(base, B.CreateMul(B.CreateZExt(flat, B.getInt64Ty()), B.getInt64(static_cast<std::uint64_t>(es)))));
  };
  auto at_swizzled = [&](llvm::Value* base, llvm::Value* row, llvm::Value* col, std::int64_t rows, std::int64_t cols) {
    return smem_abs(B.CreateAdd(base, swizzled_offset(rows, cols, es, row, col)));
  };
  // the 32-bit word of transposed B holding this thread's (k .. k + kw - 1, n) of register r
  auto b_word = [&](int r) -> llvm::Value* {
    return B.CreateAlignedLoad(B.getInt32Ty(), at_elem(b_base, coord(LB, r, 1), coord(LB, r, 0), ldb), llvm::Align(4));
  };
  // ldmatrix's row addresses: lane i points at row i % 8 of matrix i / 8; the warp's own offset
  // along M (A) or N (B) is its thread coordinate without the lane's bits (rows 0..7 of a
  // fragment for A, columns 0..7 for B)
  llvm::Value* li = B.CreateAnd(lane, B.getInt32(7));
  llvm::Value* lm = B.CreateLShr(lane, B.getInt32(3));
  llvm::Value* warp_m = B.CreateAnd(thread_coord(LA, 0), B.getInt32(~7u));
  llvm::Value* warp_n = B.CreateAnd(thread_coord(LB, 1), B.getInt32(~7u));
  // A: matrix m of the fragment at (r0, k0) is rows r0 + 8 (m & 1), columns k0 + kh (m >> 1)
  llvm::Value* a_row_in = B.CreateAdd(li, B.CreateMul(B.CreateAnd(lm, B.getInt32(1)), B.getInt32(8)));
  llvm::Value* a_col_in = B.CreateMul(B.CreateLShr(lm, B.getInt32(1)), B.getInt32(static_cast<std::uint32_t>(4 * kw)));
  // B (row-major, .trans): matrix m of the fragment at (k0, c0) is rows k0 + 8 m, columns c0
  llvm::Value* b_row_in = B.CreateAdd(li, B.CreateMul(B.CreateAnd(lm, B.getInt32(1)), B.getInt32(8)));

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
      llvm::Value* row = B.CreateAdd(B.CreateAdd(warp_m, a_row_in), B.getInt32(static_cast<std::uint32_t>(r0)));
      llvm::Value* col = B.CreateAdd(a_col_in, B.getInt32(static_cast<std::uint32_t>(k0)));
      auto m = target.ldmatrix(S, es == 2 ? at_swizzled(a_base, row, col, M, K) : at_elem(a_base, row, col, lda), 4, false);
      af.push_back({m[0], m[1], m[2], m[3]});
    }
    for (std::int64_t c0 = 0; c0 < N; c0 += 8 * warps[1]) {
      if (b_rows) {
        llvm::Value* row = B.CreateAdd(b_row_in, B.getInt32(static_cast<std::uint32_t>(k0)));
        llvm::Value* col = B.CreateAdd(warp_n, B.getInt32(static_cast<std::uint32_t>(c0)));
        auto m = target.ldmatrix(S, at_swizzled(b_base, row, col, K, N), 2, true);
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
        auto out = target.mma_m16n8(S, at.elem, af[mi], bf[ni], {d[ci[0]], d[ci[1]], d[ci[2]], d[ci[3]]});
        for (std::size_t j = 0; j < 4; ++j) d[ci[j]] = out[j];
      }
    }
  }
  return DV{C, std::move(d), op.result()->type};
}

void GpuLowering::lower_dot(const ir::Op& op) {
  if (layout::engine_of(op) == layout::mma_engine::warpgroup) return lower_dot_wgmma(op);
  if (layout::engine_of(op) == layout::mma_engine::warp) return lower_dot_mma(op, layout::mma_warps_of(op));
  auto& B = b();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const ir::Type& ct = op.operand(2)->type;
  const ir::Type& rt = op.result()->type;
  if (at.shape.size() != 2) unsupported(op, "batched dot on the GPU");
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const dtype out = ct.elem;
  if (!is_float(out) && is_float(at.elem)) unsupported(op, "float inputs into an integer accumulator");
  const dtype cd = is_float(out) ? (out == dtype::f64 ? dtype::f64 : dtype::f32) : out;
  const bool tf32 = at.elem == dtype::f32 && op.attrs.ints.at(0) == static_cast<std::int64_t>(detail::precision::tf32) && cd == dtype::f32;
  const ir::Type cs{cd, false, {}};
  llvm::Type* cty = S.storage_type(cs);
  const std::uint64_t es = S.mod->getDataLayout().getTypeAllocSize(cty);
  const std::uint64_t a_bytes = static_cast<std::uint64_t>(M * K) * es;
  reserve(a_bytes + static_cast<std::uint64_t>(K * N) * es);

  const DV& A = get(op.operand(0));
  const DV& Bm = get(op.operand(1));
  const layout::LinearLayout& C = layout_of(op.result());
  DV acc = operand(op, 2);

  // operands into shared memory, row-major, in the compute type
  barrier_before_write();
  auto store_all = [&](const DV& x, const ir::Type& t, std::uint64_t base) {
    llvm::Value* writer = is_writer(x.layout);
    S.if_else(writer, [&]() -> llvm::Value* {
      for (int r = 0; r < x.layout.num_regs(); ++r) {
        llvm::Value* i = coord(x.layout, r, 0);
        llvm::Value* j = coord(x.layout, r, 1);
        llvm::Value* flat = B.CreateAdd(B.CreateMul(i, B.getInt32(static_cast<std::uint32_t>(t.shape[1]))), j);
        llvm::Value* off = B.CreateAdd(B.getInt64(base), B.CreateMul(B.CreateZExt(flat, B.getInt64Ty()), B.getInt64(es)));
        B.CreateStore(S.dot_input(x.regs[static_cast<std::size_t>(r)], t, cd, tf32), smem_at(off));
      }
      return nullptr;
    }, nullptr, "dot.stage");
  };
  store_all(A, at, 0);
  store_all(Bm, bt, a_bytes);
  barrier();

  // per accumulator register: its row and column, and the running sum
  const int nr = C.num_regs();
  std::vector<llvm::Value*> row, col, init;
  for (int r = 0; r < nr; ++r) {
    row.push_back(B.CreateZExt(coord(C, r, 0), B.getInt64Ty()));
    col.push_back(B.CreateZExt(coord(C, r, 1), B.getInt64Ty()));
    init.push_back(S.convert(acc.regs[static_cast<std::size_t>(r)], ct.scalar(), cs));
  }
  const bool fl = is_float(out);
  const bool narrow = out == dtype::f16 || out == dtype::bf16;
  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(S.ctx, "dot.k", S.fn);
  auto* done = llvm::BasicBlock::Create(S.ctx, "dot.done", S.fn);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::PHINode* k = B.CreatePHI(B.getInt64Ty(), 2, "k");
  k->addIncoming(B.getInt64(0), pre);
  std::vector<llvm::PHINode*> sum;
  for (int r = 0; r < nr; ++r) {
    sum.push_back(B.CreatePHI(cty, 2, "acc"));
    sum.back()->addIncoming(init[static_cast<std::size_t>(r)], pre);
  }
  std::vector<llvm::Value*> next;
  for (int r = 0; r < nr; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    llvm::Value* ao = B.CreateMul(B.CreateAdd(B.CreateMul(row[ur], B.getInt64(static_cast<std::uint64_t>(K))), k), B.getInt64(es));
    llvm::Value* bo = B.CreateAdd(B.getInt64(a_bytes), B.CreateMul(B.CreateAdd(B.CreateMul(k, B.getInt64(static_cast<std::uint64_t>(N))), col[ur]), B.getInt64(es)));
    llvm::Value* x = B.CreateLoad(cty, smem_at(ao));
    llvm::Value* y = B.CreateLoad(cty, smem_at(bo));
    llvm::Value* s;
    if (fl) {
      s = B.CreateFAdd(sum[ur], B.CreateFMul(x, y));
      if (narrow) s = S.to_compute(S.from_compute(s, out), out);
    } else {
      s = B.CreateAdd(sum[ur], B.CreateMul(x, y));
    }
    next.push_back(s);
  }
  llvm::Value* k1 = B.CreateAdd(k, B.getInt64(1));
  for (int r = 0; r < nr; ++r) sum[static_cast<std::size_t>(r)]->addIncoming(next[static_cast<std::size_t>(r)], B.GetInsertBlock());
  k->addIncoming(k1, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpULT(k1, B.getInt64(static_cast<std::uint64_t>(K))), loop, done);
  B.SetInsertPoint(done);
  note_smem_read();
  DV res{C, {}, rt};
  // the sums after the last k (not the phis: those hold the sums before it)
  for (int r = 0; r < nr; ++r) res.regs.push_back(cd == out ? next[static_cast<std::size_t>(r)] : S.from_compute(next[static_cast<std::size_t>(r)], out));
  (void)M;
  set(op.result(), std::move(res));
}

}  // namespace tile::codegen::gpu

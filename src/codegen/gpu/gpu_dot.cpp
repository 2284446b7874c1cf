// src/codegen/gpu/gpu_dot.cpp — layer: codegen (gpu). dot(a, b, acc) without tensor cores: both
// operands go to shared memory in the compute type (f32/f64, tf32-rounded f32 at tf32
// precision; the accumulator's type for integers), then each thread runs one multiply-add chain
// per accumulator element it holds, k in order — the interpreter's order and roundings (f16/bf16
// accumulators round after every step). Dots the layouts put on tensor cores (f16/bf16 into f32,
// sm_80+) run as mma.sync m16n8k16 instead (lower_dot_mma): k in steps of 16, the hardware's
// own rounding within a step. wgmma (sm_90a) is still to come.
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

void GpuLowering::lower_dot_mma(const ir::Op& op, std::array<int, 2> warps) {
  auto& B = b();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const DV A = operand(op, 0);   // in mma_v2_operand(0, …)
  const DV Bo = operand(op, 1);  // in mma_v2_operand(1, …)
  const DV acc = operand(op, 2);  // in the accumulator layout
  const layout::LinearLayout& C = plan.at(op.result());
  auto reg = [&](const DV& x, std::int64_t r, std::int64_t c) -> llvm::Value* {
    auto i = layout::register_of(x.layout, {r, c});
    if (!i) unsupported(op, "internal error: an mma fragment element has no register");
    return x.regs.size() == 1 ? x.regs[0] : x.regs.at(static_cast<std::size_t>(*i));
  };
  auto bits16 = [&](llvm::Value* v) -> llvm::Value* {  // f16 (half) or bf16 (i16) storage -> i32
    if (!v->getType()->isIntegerTy()) v = B.CreateBitCast(v, B.getInt16Ty());
    return B.CreateZExt(v, B.getInt32Ty());
  };
  auto pack = [&](llvm::Value* lo, llvm::Value* hi) { return B.CreateOr(bits16(lo), B.CreateShl(bits16(hi), 16)); };
  std::vector<llvm::Value*> d(static_cast<std::size_t>(C.num_regs()));
  for (int r = 0; r < C.num_regs(); ++r) d[static_cast<std::size_t>(r)] = acc.regs.size() == 1 ? acc.regs[0] : acc.regs.at(static_cast<std::size_t>(r));
  for (std::int64_t r0 = 0; r0 < M; r0 += 16 * warps[0])
    for (std::int64_t c0 = 0; c0 < N; c0 += 8 * warps[1]) {
      std::array<std::size_t, 4> ci{};
      const std::int64_t cr[4][2] = {{r0, c0}, {r0, c0 + 1}, {r0 + 8, c0}, {r0 + 8, c0 + 1}};
      for (int j = 0; j < 4; ++j) {
        auto i = layout::register_of(C, {cr[j][0], cr[j][1]});
        if (!i) unsupported(op, "internal error: an mma accumulator element has no register");
        ci[static_cast<std::size_t>(j)] = static_cast<std::size_t>(*i);
      }
      std::array<llvm::Value*, 4> c{d[ci[0]], d[ci[1]], d[ci[2]], d[ci[3]]};
      for (std::int64_t k0 = 0; k0 < K; k0 += 16) {  // k in order, 16 at a time
        const std::array<llvm::Value*, 4> a{pack(reg(A, r0, k0), reg(A, r0, k0 + 1)),
                                            pack(reg(A, r0 + 8, k0), reg(A, r0 + 8, k0 + 1)),
                                            pack(reg(A, r0, k0 + 8), reg(A, r0, k0 + 9)),
                                            pack(reg(A, r0 + 8, k0 + 8), reg(A, r0 + 8, k0 + 9))};
        const std::array<llvm::Value*, 2> bb{pack(reg(Bo, k0, c0), reg(Bo, k0 + 1, c0)),
                                             pack(reg(Bo, k0 + 8, c0), reg(Bo, k0 + 9, c0))};
        c = target.mma_m16n8k16(S, at.elem, a, bb, c);
      }
      for (int j = 0; j < 4; ++j) d[ci[static_cast<std::size_t>(j)]] = c[static_cast<std::size_t>(j)];
    }
  set(op.result(), DV{C, std::move(d), op.result()->type});
}

void GpuLowering::lower_dot(const ir::Op& op) {
  if (auto it = plan.mma.find(&op); it != plan.mma.end()) return lower_dot_mma(op, it->second);
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
  const layout::LinearLayout& C = plan.at(op.result());
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

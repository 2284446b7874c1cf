// src/codegen/gpu/gpu_dot.cpp — layer: codegen (gpu). dot(a, b, acc) without tensor cores: both
// operands go to shared memory in the compute type (f32/f64, tf32-rounded f32 at tf32
// precision; the accumulator's type for integers), then each thread runs one multiply-add chain
// per accumulator element it holds, k in order — the interpreter's order and roundings (f16/bf16
// accumulators round after every step). Dots select_mma put on tensor cores run on the target's
// engine instead (lower_dot_mma: the target's MmaEngine, gpu_target.hpp), on
// operands their local_allocs staged in shared memory (gpu_shared.cpp), the hardware's own
// rounding within a step; in a pipelined loop they read a ring's buffer (gpu_async.cpp).
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

void GpuLowering::lower_dot_mma(const ir::Op& op) {
  // A and B are shared-memory buffers their local_allocs wrote (layout/stage_mma_operands.cpp:
  // 16-bit A [M][K] and B [K][N] swizzled, other types A row-major and B transposed [N][K] with
  // rows padded by 16 bytes), made visible to the engine's reads by the fence and barrier the IR
  // has before the dot (schedule/insert_barriers.cpp); the target's engine reads its fragments
  // from them and runs the steps. An A in registers (layout/register_operands.hpp) is in the
  // engine's register layout, and the engine takes it from there.
  const ir::Type& at = op.operand(0)->type;
  const std::int64_t K = at.shape[1];
  const auto es = static_cast<std::int64_t>(size_of(at.elem));
  const DV acc = operand(op, 2);  // in the accumulator layout
  const bool padded = op.operand(1)->type.mem == ir::smem::padded_transposed;
  const std::int64_t ld = K + 16 / es;  // the padded buffers' rows (elements)
  const int in_flight = op.attrs.ints.size() > 4 ? static_cast<int>(op.attrs.ints[4]) : 0;
  std::optional<DV> a_regs;
  if (!at.is_buffer()) a_regs = operand(op, 0);
  DV res = mma().dot(*this, op, a_regs ? nullptr : buffer_at(op.operand(0)), buffer_at(op.operand(1)), padded ? ld : K,
                     padded ? ld : op.operand(1)->type.shape[1], acc, in_flight, a_regs ? &*a_regs : nullptr);
  set(op.result(), std::move(res));
}

void GpuLowering::lower_dot(const ir::Op& op) {
  if (layout::engine_of(op) != layout::mma_engine::none) return lower_dot_mma(op);
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
  scratch_phase();
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
  DV res{C, {}, rt};
  // the sums after the last k (not the phis: those hold the sums before it)
  for (int r = 0; r < nr; ++r) res.regs.push_back(cd == out ? next[static_cast<std::size_t>(r)] : S.from_compute(next[static_cast<std::size_t>(r)], out));
  (void)M;
  set(op.result(), std::move(res));
}

}  // namespace tile::codegen::gpu

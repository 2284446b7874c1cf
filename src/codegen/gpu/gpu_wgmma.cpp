// src/codegen/gpu/gpu_wgmma.cpp — layer: codegen (gpu). dot on sm_90a's warpgroup tensor cores
// (wgmma.mma_async m64nNk16, f16/bf16 into f32). The operands sit in shared memory as swizzled
// tiles (swizzled_offset): A [M][K] K-major, B [K][N] N-major (wgmma's transposed B), each a
// row of column blocks of S = min(128, cols * 2) bytes, 16-byte chunks XOR-ed with the row's
// address bits — the layouts the 128/64/32-byte swizzle modes of a wgmma descriptor describe,
// and free of bank conflicts for the copies that fill them. Warpgroup g computes rows
// 64 g .. 64 g + 63 of every 16 num_warps (layout::LayoutPlan::wgmma): its accumulator is
// mma_v2's layout with all warps along M, so everything after the dot is as for mma.sync.
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

namespace {

std::int64_t block_bytes(std::int64_t cols, std::int64_t es) { return std::min<std::int64_t>(128, cols * es); }

/// The descriptor's swizzle-mode field for S-byte rows: 1 (128 B), 2 (64 B), 3 (32 B).
std::uint64_t swizzle_mode(std::int64_t s) { return s == 128 ? 1 : s == 64 ? 2 : 3; }

}  // namespace

llvm::Value* GpuLowering::swizzled_offset(std::int64_t rows, std::int64_t cols, std::int64_t es, llvm::Value* i,
                                          llvm::Value* j) {
  auto& B = b();
  auto* i64 = B.getInt64Ty();
  const std::int64_t s = block_bytes(cols, es);
  llvm::Value* jb = B.CreateMul(B.CreateZExt(j, i64), B.getInt64(static_cast<std::uint64_t>(es)));  // byte column
  llvm::Value* blk = B.CreateUDiv(jb, B.getInt64(static_cast<std::uint64_t>(s)));
  llvm::Value* in = B.CreateURem(jb, B.getInt64(static_cast<std::uint64_t>(s)));
  llvm::Value* off = B.CreateAdd(B.CreateMul(blk, B.getInt64(static_cast<std::uint64_t>(rows * s))),
                                 B.CreateAdd(B.CreateMul(B.CreateZExt(i, i64), B.getInt64(static_cast<std::uint64_t>(s))), in));
  // bits 4 .. 4 + log2(S / 16) ^= bits 7 ..
  llvm::Value* sw = B.CreateAnd(B.CreateLShr(off, B.getInt64(7)), B.getInt64(static_cast<std::uint64_t>(s / 16 - 1)));
  return B.CreateXor(off, B.CreateShl(sw, B.getInt64(4)));
}

DV GpuLowering::wgmma_from_shared(const ir::Op& op, llvm::Value* a_base, llvm::Value* b_base, const DV& acc, int pending) {
  auto& B = b();
  auto* i64 = B.getInt64Ty();
  const ir::Type& at = op.operand(0)->type;
  const ir::Type& bt = op.operand(1)->type;
  const std::int64_t M = at.shape[0], K = at.shape[1], N = bt.shape[1];
  const int W = num_warps;
  const layout::LinearLayout& C = layout_of(op.result());
  const std::int64_t sa = block_bytes(K, 2), sb = block_bytes(N, 2);
  // descriptor: start >> 4 (bits 0-13), leading byte offset >> 4 (16-29), stride byte offset >>
  // 4 (32-45), swizzle mode (62-63)
  // — written as fields + (buffer start >> 4) + (offset >> 4): every offset is a multiple of 16
  // and shared addresses stay below 2^18, so the sum never carries out of the start field, and
  // the loop-invariant part is computed once, each step adding a constant
  llvm::Value* start16 = B.CreateLShr(B.CreatePtrToInt(smem_abs(B.getInt64(0)), i64), B.getInt64(4));
  auto desc = [&](llvm::Value* byte_off, std::uint64_t lbo, std::uint64_t sbo, std::int64_t s) {
    const std::uint64_t fixed = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | swizzle_mode(s) << 62;
    return B.CreateAdd(B.CreateAdd(B.getInt64(fixed), start16), B.CreateLShr(byte_off, B.getInt64(4), "", /*isExact=*/true));
  };
  auto reg_of = [&](std::int64_t r, std::int64_t c) {
    auto i = layout::register_of(C, {r, c});
    if (!i) unsupported(op, "internal error: a wgmma accumulator element has no register");
    return static_cast<std::size_t>(*i);
  };
  // the warpgroup's first row within each 16 W-row repetition
  llvm::Value* wg_row = B.CreateMul(B.CreateLShr(warp, B.getInt32(2)), B.getInt32(64));
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
  target.wgmma_fence(S);
  // B: rows k0 .. k0 + 15 of every N block (blocks K * sb bytes apart, 8-row groups 8 sb)
  std::vector<llvm::Value*> db;
  for (std::int64_t k0 = 0; k0 < K; k0 += 16)
    db.push_back(desc(B.CreateAdd(b_base, B.getInt64(static_cast<std::uint64_t>(k0 * sb))),
                      static_cast<std::uint64_t>(K * sb), static_cast<std::uint64_t>(8 * sb), sb));
  // one chained statement per 64-row block: its k steps, then (a single block: in the same
  // statement) the commit and the wait
  std::vector<llvm::Value*> out(static_cast<std::size_t>(C.num_regs()), nullptr);
  for (std::int64_t r = 0; r < reps; ++r) {
    // A: the K block holding k0, the warpgroup's 64 rows, k0's byte within the block row
    llvm::Value* row = B.CreateAdd(wg_row, B.getInt32(static_cast<std::uint32_t>(r * 16 * W)));
    std::vector<std::pair<llvm::Value*, llvm::Value*>> steps;
    for (std::int64_t k0 = 0; k0 < K; k0 += 16) {
      const std::int64_t kb = k0 * 2 / sa, kin = k0 * 2 % sa;
      llvm::Value* off = B.CreateAdd(B.getInt64(static_cast<std::uint64_t>(kb * M * sa + kin)),
                                     B.CreateMul(B.CreateZExt(row, i64), B.getInt64(static_cast<std::uint64_t>(sa))));
      steps.emplace_back(desc(B.CreateAdd(a_base, off), 16, static_cast<std::uint64_t>(8 * sa), sa), db[static_cast<std::size_t>(k0 / 16)]);
    }
    d[static_cast<std::size_t>(r)] = target.wgmma(S, at.elem, static_cast<int>(N), steps, d[static_cast<std::size_t>(r)],
                                                  reps == 1 ? pending : -1);
  }
  if (reps > 1) {
    target.wgmma_commit(S);
    for (std::int64_t r = 0; r < reps; ++r) d[static_cast<std::size_t>(r)] = target.wgmma_wait(S, pending, d[static_cast<std::size_t>(r)]);
  }
  for (std::int64_t r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < d[static_cast<std::size_t>(r)].size(); ++k)
      out[idx[static_cast<std::size_t>(r)][k]] = d[static_cast<std::size_t>(r)][k];
  for (auto* v : out)
    if (!v) unsupported(op, "internal error: a wgmma accumulator register was not written");
  return DV{C, std::move(out), op.result()->type};
}

void GpuLowering::lower_dot_wgmma(const ir::Op& op) {
  // A and B are swizzled buffers their local_allocs wrote (1024-byte aligned): visible to the
  // async proxy that wgmma reads through, then to every warp
  auto& B = b();
  const DV acc = operand(op, 2);
  if (smem_written_) target.fence_async_shared(S);
  barrier_after_write();
  DV res = wgmma_from_shared(op, B.getInt64(buffer_offset(op.operand(0))), B.getInt64(buffer_offset(op.operand(1))), acc);
  note_smem_read();
  set(op.result(), std::move(res));
}

}  // namespace tile::codegen::gpu

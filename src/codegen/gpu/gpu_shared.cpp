// src/codegen/gpu/gpu_shared.cpp — layer: codegen (gpu). Shared-memory buffers of the GPU level:
// a local_alloc stores its tile, from the registers of its layout, at the offset
// allocate_shared gave it (schedule/allocate_shared.hpp), in the buffer's arrangement (ir::smem):
//   swizzled           16-bit tiles, runs of up to 8 elements along the columns a 16-byte
//                      vector store (the swizzle keeps 16-byte chunks whole);
//   padded             row-major, rows padded by 16 bytes;
//   padded_transposed  the transpose so (each thread's consecutive k one 32-bit word);
//   swizzled_transposed the transpose swizzled ([cols][rows]): runs along the tile's rows;
// replicated threads do not write. The reader (a tensor-core dot) waits at the barrier the IR
// has before it (schedule/insert_barriers.cpp). A swizzled [rows][cols] tile (swizzled_offset) is a row of column
// blocks of S = min(128, cols · bytes) bytes, each [rows][S] with 16-byte chunk c of row r at
// c ^ (r's address bits 7 ..): what the 128/64/32-byte swizzle modes of a warpgroup engine's descriptor
// describe, free of bank conflicts for a warp's matrix loads and for the copies that fill it.
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

namespace {
std::int64_t block_bytes(std::int64_t cols, std::int64_t es) { return std::min<std::int64_t>(128, cols * es); }
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


void GpuLowering::lower_local_alloc(const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  if (op.attrs.ints.empty() || op.attrs.ints[0] < 0)
    unsupported(op, "internal error: a shared-memory buffer without an offset (allocate_shared did not run)");
  const auto at = static_cast<std::uint64_t>(op.attrs.ints[0]);
  smem_bytes_ = std::max(smem_bytes_, at + schedule::shared_bytes(t));
  if (op.operands.empty()) {  // a ring or copy barriers: written by the ops that take it
    set(op.result(), DV{scalar_, {b().getInt64(at)}, t});
    return;
  }
  const DV& x = get(op.operand(0));
  const std::int64_t rows = t.shape.at(0), cols = t.shape.at(1);
  const bool tf32 = op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  switch (t.mem) {
    case ir::smem::swizzled: stage_swizzled(x, rows, cols, at, false, "local_alloc.swizzled"); break;
    case ir::smem::swizzled_transposed: stage_swizzled(x, rows, cols, at, true, "local_alloc.swizzled_transposed"); break;
    case ir::smem::padded: stage_padded(x, 0, cols, at, tf32, "local_alloc.padded"); break;
    case ir::smem::padded_transposed: stage_padded(x, 1, rows, at, tf32, "local_alloc.transposed"); break;
    case ir::smem::none:
    case ir::smem::barriers: unsupported(op, "internal error: local_alloc of a tile into no tile arrangement");
  }
  set(op.result(), DV{scalar_, {b().getInt64(at)}, t});  // (a buffer's one register: its byte offset)
}

void GpuLowering::stage_swizzled(const DV& x, std::int64_t rows, std::int64_t cols, std::uint64_t at_byte, bool transposed,
                                 const char* name) {
  // runs of up to 8 elements along the stored rows (the columns; transposed: the tile's rows):
  // one 16-byte chunk, which the swizzle keeps whole
  auto& B = b();
  const int along = transposed ? 0 : 1;
  auto [run, ax] = register_run(x.layout);
  if (ax != along || x.regs.size() == 1) run = 1;
  run = std::min(run, 8);
  llvm::Value* writer = is_writer(x.layout);
  S.if_else(writer, [&]() -> llvm::Value* {
    for (int r = 0; r < x.layout.num_regs(); r += run) {
      llvm::Value* i = coord(x.layout, r, 1 - along), *j = coord(x.layout, r, along);
      llvm::Value* off = B.CreateAdd(B.getInt64(at_byte), transposed ? swizzled_offset(cols, rows, 2, i, j) : swizzled_offset(rows, cols, 2, i, j));
      auto bits = [&](int e) -> llvm::Value* {
        llvm::Value* v = x.regs.size() == 1 ? x.regs[0] : x.regs[static_cast<std::size_t>(r + e)];
        return v->getType()->isIntegerTy() ? v : B.CreateBitCast(v, B.getInt16Ty());
      };
      if (run == 1) {
        B.CreateStore(bits(0), smem_abs(off));
      } else {
        llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(B.getInt16Ty(), static_cast<unsigned>(run)));
        for (int e = 0; e < run; ++e) v = B.CreateInsertElement(v, bits(e), B.getInt32(static_cast<std::uint32_t>(e)));
        B.CreateAlignedStore(v, smem_abs(off), llvm::Align(static_cast<std::uint64_t>(run * 2)));
      }
    }
    return nullptr;
  }, nullptr, name);
}

void GpuLowering::stage_padded(const DV& x, int row_axis, std::int64_t row_len, std::uint64_t at_byte, bool tf32, const char* name) {
  // element (row, col) — its (axis row_axis, the other) coordinates — at at_byte + (row * ld +
  // col) * es, ld = row_len + 16 bytes; runs of consecutive registers along col in one store
  auto& B = b();
  const ir::Type& t = x.type;
  const auto es = static_cast<std::int64_t>(size_of(t.elem));
  const std::int64_t ld = row_len + 16 / es;
  llvm::Type* ety = B.getIntNTy(static_cast<unsigned>(8 * es));
  // an element as the integer of its bits: f16 (half) and bf16 (i16) as they are stored, f32
  // rounded to tf32 first where asked (nearest even, as the interpreter rounds)
  auto to_bits = [&](llvm::Value* v) -> llvm::Value* {
    if (tf32) v = S.dot_input(v, t, dtype::f32, true);
    return v->getType()->isIntegerTy() ? v : B.CreateBitCast(v, ety);
  };
  auto [run, ax] = register_run(x.layout);
  if (ax != 1 - row_axis || x.regs.size() == 1) run = 1;
  run = std::min<int>(run, static_cast<int>(16 / es));
  llvm::Value* writer = is_writer(x.layout);
  S.if_else(writer, [&]() -> llvm::Value* {
    for (int r = 0; r < x.layout.num_regs(); r += run) {
      llvm::Value* i = coord(x.layout, r, row_axis);
      llvm::Value* j = coord(x.layout, r, 1 - row_axis);
      llvm::Value* flat = B.CreateAdd(B.CreateMul(i, B.getInt32(static_cast<std::uint32_t>(ld))), j);
      llvm::Value* off = B.CreateAdd(B.getInt64(at_byte), B.CreateMul(B.CreateZExt(flat, B.getInt64Ty()), B.getInt64(static_cast<std::uint64_t>(es))));
      if (run == 1) {
        B.CreateStore(to_bits(x.regs.size() == 1 ? x.regs[0] : x.regs[static_cast<std::size_t>(r)]), smem_abs(off));
      } else {
        llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(ety, static_cast<unsigned>(run)));
        for (int e = 0; e < run; ++e)
          v = B.CreateInsertElement(v, to_bits(x.regs[static_cast<std::size_t>(r + e)]), B.getInt32(static_cast<std::uint32_t>(e)));
        B.CreateAlignedStore(v, smem_abs(off), llvm::Align(static_cast<std::uint64_t>(run * es)));
      }
    }
    return nullptr;
  }, nullptr, name);
}

}  // namespace tile::codegen::gpu

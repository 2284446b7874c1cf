// src/codegen/gpu/gpu_debug.cpp — layer: codegen (gpu). device_print and device_assert.
// print: one printf line per element, by the thread that owns it (replicated copies stay
// quiet), in the interpreter's shape "pid (x, y, z) idx (i, j) <prefix><value>"; lines of
// different threads come in any order, and floats print with %.9g (f32, f16, bf16) or %.17g
// (f64) rather than the interpreter's shortest form. assert: each thread checks its elements and
// the first false one fails the kernel through the target (emit_fail: the device runtime's assert on NVIDIA's target,
// naming the user's message with its file:line).
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using ir::OpKind;

void GpuLowering::lower_debug(const ir::Op& op) {
  auto& B = b();
  if (op.kind == OpKind::print) {
    const bool hex = !op.attrs.ints.empty() && op.attrs.ints[0];
    std::vector<llvm::Value*> pid;
    for (int a = 0; a < 3; ++a) pid.push_back(target.program_id(S, a));
    if (op.operands.empty()) {
      llvm::Value* w = is_writer(scalar_);
      S.if_else(w, [&]() -> llvm::Value* {
        target.printf(S, "pid (%d, %d, %d) " + op.attrs.str + "\n", pid);
        return nullptr;
      }, nullptr, "print");
      return;
    }
    for (unsigned o = 0; o < op.operands.size(); ++o) {
      const DV& d = get(op.operand(o));
      const ir::Type t = d.type.scalar();
      llvm::Value* w = is_writer(d.layout);
      S.if_else(w, [&]() -> llvm::Value* {
        for (int r = 0; r < static_cast<int>(d.regs.size()); ++r) {
          std::string fmt = "pid (%d, %d, %d) idx (";
          std::vector<llvm::Value*> args = pid;
          for (std::size_t ax = 0; ax < d.type.shape.size(); ++ax) {
            fmt += ax ? ", %d" : "%d";
            args.push_back(coord(d.layout, r, static_cast<int>(ax)));
          }
          fmt += ") " + op.attrs.str;
          if (op.operands.size() > 1) fmt += "(operand " + std::to_string(o) + ") ";
          llvm::Value* v = d.regs[static_cast<std::size_t>(r)];
          if (hex || t.ptr) {
            llvm::Value* bits = t.ptr ? B.CreatePtrToInt(v, B.getInt64Ty()) : B.CreateBitCast(S.to_storage(v, t), B.getIntNTy(static_cast<unsigned>(S.storage_type(t)->getPrimitiveSizeInBits())));
            const int digits = t.ptr ? 16 : std::max(1, static_cast<int>(bits->getType()->getIntegerBitWidth()) / 4);
            fmt += "0x%0" + std::to_string(digits) + "llx";
            args.push_back(B.CreateZExt(bits, B.getInt64Ty()));
          } else if (t.is_float()) {
            fmt += t.elem == dtype::f64 ? "%.17g" : "%.9g";
            args.push_back(B.CreateFPExt(S.to_compute(v, t.elem), B.getDoubleTy()));
          } else if (t.elem == dtype::i1) {
            fmt += "%d";
            args.push_back(B.CreateZExt(v, B.getInt32Ty()));
          } else {
            fmt += is_signed(t.elem) ? "%lld" : "%llu";
            args.push_back(is_signed(t.elem) ? B.CreateSExt(v, B.getInt64Ty()) : B.CreateZExt(v, B.getInt64Ty()));
          }
          target.printf(S, fmt + "\n", args);
        }
        return nullptr;
      }, nullptr, "print");
    }
    return;
  }
  // assert_
  const DV& c = get(op.operand(0));
  for (int r = 0; r < static_cast<int>(c.regs.size()); ++r) {
    auto* fail = llvm::BasicBlock::Create(S.ctx, "assert.fail", S.fn);
    auto* ok = llvm::BasicBlock::Create(S.ctx, "assert.ok", S.fn);
    B.CreateCondBr(c.regs[static_cast<std::size_t>(r)], ok, fail);
    B.SetInsertPoint(fail);
    llvm::Value* flat = B.getInt64(0);
    for (std::size_t ax = 0; ax < c.type.shape.size(); ++ax)
      flat = B.CreateAdd(B.CreateMul(flat, B.getInt64(static_cast<std::uint64_t>(c.type.shape[ax]))),
                         B.CreateZExt(coord(c.layout, r, static_cast<int>(ax)), B.getInt64Ty()));
    target.emit_fail(S, op, TargetHooks::failure::assert_fail, flat);
    B.SetInsertPoint(ok);
  }
}

}  // namespace tile::codegen::gpu

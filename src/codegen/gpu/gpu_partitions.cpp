// src/codegen/gpu/gpu_partitions.cpp — layer: codegen (gpu). warp_specialize
// (schedule/warp_specialize.hpp): the kernel's num_warps warps run the consumer region, the
// producer warps launched after them the producer region. Every thread of a partition first
// takes its registers (the producer warpgroup gives back, the consumers take: the target's
// set_registers, all of a warpgroup's threads at once); then only the producer's first warp runs
// its region, its first thread issuing the copies (issuer_thread_), and the consumers' CTA
// barriers become their named barrier (consumer_threads_). Both partitions then leave the op.
#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

void GpuLowering::lower_partitions(const ir::Op& op) {
  auto& B = b();
  const int consumer_regs = static_cast<int>(op.attrs.ints.at(1)), producer_regs = static_cast<int>(op.attrs.ints.at(2));
  const int consumers = lanes * num_warps;
  llvm::Value* is_consumer = B.CreateICmpULT(tid, B.getInt32(static_cast<std::uint32_t>(consumers)));
  S.if_else(is_consumer, [&]() -> llvm::Value* {
    if (consumer_regs > 0) target.set_registers(S, consumer_regs, true);
    consumer_threads_ = consumers;
    lower_region(*op.region(1), {});
    consumer_threads_ = 0;
    return nullptr;
  }, [&]() -> llvm::Value* {
    if (producer_regs > 0) target.set_registers(S, producer_regs, false);
    llvm::Value* first_warp = B.CreateICmpULT(tid, B.getInt32(static_cast<std::uint32_t>(consumers + lanes)));
    S.if_else(first_warp, [&]() -> llvm::Value* {
      issuer_thread_ = consumers;
      lower_region(*op.region(0), {});
      issuer_thread_ = 0;
      return nullptr;
    }, nullptr, "producer");
    return nullptr;
  }, "partition");
}

}  // namespace tile::codegen::gpu

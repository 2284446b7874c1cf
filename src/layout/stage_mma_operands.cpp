// src/layout/stage_mma_operands.cpp — layer: layout. The pass stage_mma_operands
// (gpu_passes.hpp): a dot on tensor cores reads its operands from shared memory, so each of A
// and B becomes a `local_alloc` right before the dot (before the loops around it where the
// operand is made outside them) — the tile stored once, from whatever
// layout it has, into a buffer arranged as the engine reads it (as the target's description
// says: layout/mma_target.hpp, which NVIDIA's target implements):
//   - 16-bit operands (both engines): swizzled tiles (A [M][K], B [K][N]: 16-byte chunks XOR-ed
//     by row, what a warp's matrix loads read without bank conflicts and a warpgroup engine's descriptors name);
//   - tf32 and 8-bit operands (the warp MMA): A row-major and B transposed ([N][K]), rows padded
//     by 16 bytes, so each thread's consecutive k of a fragment register is one 32-bit word; f32
//     elements stored rounded to tf32 (the interpreter's rounding of a tf32 dot's inputs).
// A dot that reads A from registers (register_operands.hpp: attention's P on a warpgroup engine)
// has only B staged. The buffers' offsets are allocate_shared's; a pipelined loop reads its dots'
// operands from its ring instead (its copies land in the same arrangement) and lowers none of these.
#include "layout/gpu_passes.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"
#include "layout/register_operands.hpp"

namespace tile::layout {

namespace {

using ir::OpKind;

/// Where the buffer of `dot`'s operand `x` is made: before the dot, or, where x is made outside
/// the loops around it (Q in attention: loop-invariant), before the outermost of them that x is
/// made outside of: stored once, not every iteration, and live through the loop.
ir::Op* outside_loops(ir::Op* dot, const ir::Value* x) {
  ir::Op* at = dot;
  for (ir::Op* p = at->parent ? at->parent->parent : nullptr; p && (p->kind == OpKind::for_ || p->kind == OpKind::while_) && !ir::made_inside(*x, *p);
       p = p->parent ? p->parent->parent : nullptr)
    at = p;
  return at;
}

class StageMmaOperands final : public transforms::Pass {
 public:
  std::string_view name() const override { return "stage_mma_operands"; }
  bool run(ir::Function& f) override {
    std::vector<ir::Op*> dots;
    ir::walk(f.body, [&](ir::Op& op) {
      if (engine_of(op) != mma_engine::none && op.operand(1)->type.mem == ir::smem::none) dots.push_back(&op);
    });
    if (!dots.empty() && !f.mma_target)
      throw tile::error("layout: internal error: a dot on tensor cores in a kernel of no tensor-core target", dots[0]->loc);
    for (ir::Op* dot : dots) {
      // (A read from registers: assign_layouts put it in the engine's register layout)
      const bool a_in_registers = register_a(f, *dot, f.num_warps).has_value();
      for (unsigned k = a_in_registers ? 1 : 0; k < 2; ++k) {
        ir::Value* x = dot->operand(k);
        ir::Op* at = outside_loops(dot, x);
        ir::Builder b(at->parent);
        b.set_insertion_before(at);
        ir::Type t = x->type.without_layout();
        t.mem = f.mma_target->operand_arrangement(*dot, k);
        // f32 at tf32 precision: stored rounded to tf32, as the interpreter rounds the inputs
        const std::int64_t tf32 = x->type.elem == dtype::f32;
        dot->operands[k] = b.create(OpKind::local_alloc, {x}, {t}, ir::Attrs{{-1, tf32}, 0.0, {}}, dot->loc)->result();
      }
    }
    return !dots.empty();
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_stage_mma_operands() { return std::make_unique<StageMmaOperands>(); }

}  // namespace tile::layout

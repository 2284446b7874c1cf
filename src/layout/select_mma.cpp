// src/layout/select_mma.cpp — layer: layout. The pass select_mma (gpu_passes.hpp): which dots
// run on tensor cores, recorded on each dot (layout/mma_engine.hpp) for the passes after it.
//
// The target's description of its engines (caps.mma, layout/mma_target.hpp) chooses: a warp's
// MMA with warps along M and N, or a warpgroup's with every warp along M (NVIDIA's forms are
// described by NVIDIA's target). Any other dot (every dot of a target without tensor cores,
// or whose forms do not fit its warp size) is one fused multiply-add chain per accumulator
// element (engine none). The kernel then names the description (Function::mma_target), which
// the passes after it and the verifier consult.
#include "layout/gpu_passes.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"

namespace tile::layout {

namespace {

class SelectMma final : public transforms::Pass {
 public:
  explicit SelectMma(target_caps caps) : caps_(caps) {}
  std::string_view name() const override { return "select_mma"; }
  bool run(ir::Function& f) override {
    bool changed = f.mma_target != caps_.mma;
    f.mma_target = caps_.mma;
    ir::walk(f.body, [&](ir::Op& op) {
      if (op.kind != ir::OpKind::dot) return;
      const MmaTarget::Choice c = caps_.mma ? caps_.mma->choose(op, f.num_warps, caps_.lanes) : MmaTarget::Choice{};
      const auto before = op.attrs.ints;
      set_engine(op, c.engine, c.warps);
      changed |= op.attrs.ints != before;
    });
    return changed;
  }

 private:
  target_caps caps_;
};

}  // namespace

std::unique_ptr<transforms::Pass> make_select_mma(target_caps caps) { return std::make_unique<SelectMma>(caps); }

}  // namespace tile::layout

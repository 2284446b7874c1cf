// src/layout/select_mma.cpp — layer: layout. The pass select_mma (gpu_passes.hpp): which dots
// run on tensor cores, recorded on each dot (layout/mma_engine.hpp) for the passes after it.
//
// A dot mma_eligible accepts runs on the target's warp-level MMA (caps.mma: 16 x 8 fragments a
// warp, warps along M and N by mma_warps); on a target with warpgroup MMA (caps.wgmma) one that
// warpgroup_mma_eligible accepts runs a warpgroup's instead, every warp along M. Any other dot — and
// every dot of a target whose warps are not 32 lanes, which the MMA forms assume — is one fused
// multiply-add chain per accumulator element (engine none).
#include "layout/gpu_passes.hpp"
#include "layout/mma_engine.hpp"

namespace tile::layout {

namespace {

class SelectMma final : public transforms::Pass {
 public:
  explicit SelectMma(target_caps caps) : caps_(caps) {}
  std::string_view name() const override { return "select_mma"; }
  bool run(ir::Function& f) override {
    bool changed = false;
    ir::walk(f.body, [&](ir::Op& op) {
      if (op.kind != ir::OpKind::dot) return;
      mma_engine e = mma_engine::none;
      std::array<int, 2> warps{0, 0};
      if (caps_.lanes == 32 && caps_.mma >= 80 && mma_eligible(op)) {
        const auto& s = op.result()->type.shape;
        const bool wg = caps_.warpgroup_mma && warpgroup_mma_eligible(op, f.num_warps);
        e = wg ? mma_engine::warpgroup : mma_engine::warp;
        warps = wg ? std::array<int, 2>{f.num_warps, 1} : mma_warps(s[0], s[1], f.num_warps);
      }
      const auto before = op.attrs.ints;
      set_engine(op, e, warps);
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

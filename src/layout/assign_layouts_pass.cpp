// src/layout/assign_layouts_pass.cpp — layer: layout. The pass assign_layouts (gpu_passes.hpp):
// tile IR becomes the GPU level. assign_layouts.cpp decides a layout for every tile value; this
// pass writes each into its value's type, puts a convert_layout before every use whose op wants
// the value in another layout (wanted_operands; a yield wants its op's result layouts) and after
// a reduce whose results the plan put in another layout than the reduce makes (its operands'
// sliced along the axis), and marks the function gpu. One conversion a use: remove_conversions shares and removes them.
#include <algorithm>

#include "layout/gpu_passes.hpp"

namespace tile::layout {

namespace {

using ir::OpKind;

bool is_tile(const ir::Value* v) { return !v->type.shape.empty(); }

class AssignLayouts final : public transforms::Pass {
 public:
  explicit AssignLayouts(target_caps caps) : caps_(caps) {}
  std::string_view name() const override { return "assign_layouts"; }

  bool run(ir::Function& f) override {
    if (f.gpu) return false;
    const analysis::AxisAnalysis ai(f);
    const LayoutPlan plan = assign_layouts(f, ai, f.num_warps, caps_.lanes);
    // every use that wants another layout, decided before any type changes
    struct Wish {
      ir::Op* op;
      unsigned k;
      LinearLayout want;
    };
    std::vector<Wish> wishes;
    ir::walk(f.body, [&](ir::Op& op) {
      auto w = wanted_operands(op, plan, ai);
      if (op.kind == OpKind::yield && op.parent->parent) {
        const ir::Op& p = *op.parent->parent;
        if (p.kind == OpKind::for_ || p.kind == OpKind::while_ || p.kind == OpKind::if_)
          for (std::size_t k = 0; k < op.operands.size() && k < p.results.size(); ++k)
            if (is_tile(p.result(static_cast<unsigned>(k)))) w[k] = plan.at(p.result(static_cast<unsigned>(k)));
      }
      for (unsigned k = 0; k < op.operands.size(); ++k)
        if (w[k] && is_tile(op.operand(k)) && !(plan.at(op.operand(k)) == *w[k])) wishes.push_back({&op, k, *w[k]});
    });
    // the layouts into the types
    auto set = [&](ir::Value* v) {
      if (is_tile(v)) v->type.layout = std::make_shared<const LinearLayout>(plan.at(v));
    };
    for (auto& a : f.body.args) set(a.get());
    ir::walk(f.body, [&](ir::Op& op) {
      for (auto& r : op.results) set(r.get());
      for (auto& reg : op.regions)
        for (auto& a : reg->args) set(a.get());
    });
    // one conversion a use, right before it
    for (Wish& w : wishes) {
      ir::Builder b(w.op->parent);
      b.set_insertion_before(w.op);
      ir::Value* v = w.op->operand(w.k);
      ir::Op* c = b.create(OpKind::convert_layout, {v}, {v->type.with_layout(std::move(w.want))}, {}, w.op->loc);
      w.op->operands[w.k] = c->result();
    }
    // a reduce gives its results in its operands' layout sliced along the axis (its lowering
    // folds each thread's registers, then lanes, then warps, in place): where the plan put a
    // result in another layout, a conversion after the reduce
    std::vector<ir::Op*> reduces;
    ir::walk(f.body, [&](ir::Op& op) {
      if (op.kind == OpKind::reduce) reduces.push_back(&op);
    });
    for (ir::Op* op : reduces) {
      const LinearLayout in = *op->operand(0)->type.layout;
      for (auto& r : op->results) {
        if (!is_tile(r.get())) continue;
        LinearLayout out = slice(in, static_cast<int>(op->attrs.ints.at(0)));
        if (*r->type.layout == out) continue;
        auto at = std::find_if(op->parent->ops.begin(), op->parent->ops.end(), [&](const auto& o) { return o.get() == op; });
        ir::Builder b(op->parent, std::next(at));
        ir::Op* c = b.create(OpKind::convert_layout, {r.get()}, {r->type}, {}, op->loc);
        r->type.layout = std::make_shared<const LinearLayout>(std::move(out));
        ir::replace_all_uses(f.body, r.get(), c->result());
        c->operands[0] = r.get();
      }
    }
    f.gpu = true;
    return true;
  }

 private:
  target_caps caps_;
};

}  // namespace

std::unique_ptr<transforms::Pass> make_assign_layouts(target_caps caps) { return std::make_unique<AssignLayouts>(caps); }

}  // namespace tile::layout

// src/layout/assign_layouts.cpp — layer: layout. See assign_layouts.hpp.
#include "layout/assign_layouts.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"
#include "layout/register_operands.hpp"
#include "ir/verify_layouts.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace tile::layout {

using ir::OpKind;

namespace {

int elem_bytes(const ir::Type& t) { return t.ptr ? 8 : std::max<int>(1, static_cast<int>(size_of(t.elem))); }

bool is_tile(const ir::Value* v) { return !v->type.shape.empty(); }

class Assigner {
 public:
  Assigner(const ir::Function& f, const analysis::AxisAnalysis& ai, int num_warps, int lanes) : f_(f), ai_(ai) {
    plan_.num_warps = num_warps;
    plan_.lanes = lanes;
  }

  LayoutPlan run() {
    // 1. anchors
    ir::walk(const_cast<ir::Block&>(f_.body), [&](const ir::Op& op) {
      if ((op.kind == OpKind::load || op.kind == OpKind::atomic_rmw || op.kind == OpKind::atomic_cas) &&
          is_tile(op.result())) {
        plan_.of[op.result()] = coalesced(op.operand(0), ai_, plan_.num_warps, plan_.lanes);
        anchored_.insert(op.result());
        shape_anchor_.emplace(op.result()->type.shape, plan_.of[op.result()]);
      }
      // a descriptor load kept for the target's tensor copies, rows contiguous (its last stride 1):
      // registers along the rows, as a coalesced load of the same block would hold them (the
      // staging that reads it then stores rows: what a tensor copy of the block writes)
      if (op.kind == OpKind::desc_load && op.result()->type.shape.size() >= 2 &&
          ir::int_constant(op.operand(static_cast<unsigned>(2 * op.result()->type.shape.size()))) == std::optional<std::int64_t>(1)) {
        plan_.of[op.result()] = default_layout(op.result()->type, plan_.num_warps, plan_.lanes);
        anchored_.insert(op.result());
      }
      if (op.kind == OpKind::dot && engine_of(op) != mma_engine::none) {  // (select_mma's choice)
        if (!f_.mma_target) throw tile::error("layout: internal error: a dot on tensor cores in a kernel of no tensor-core target", op.loc);
        plan_.of[op.result()] = f_.mma_target->accumulator(op, plan_.num_warps);
        anchored_.insert(op.result());
        if (auto a = register_a(f_, op, plan_.num_warps)) plan_.register_a.emplace(&op, std::move(*a));
      }
    });
    // 1b. a tensor-core accumulator's layout flows forward through what consumes it
    forward(f_.body);
    // 2. consumers decide, backwards
    block(f_.body);
    // 3. conversions move past the narrowing casts that follow them
    sink_conversions();
    return std::move(plan_);
  }

 private:
  const ir::Function& f_;
  const analysis::AxisAnalysis& ai_;
  LayoutPlan plan_;
  std::unordered_set<const ir::Value*> anchored_;
  std::map<std::vector<std::int64_t>, LinearLayout> shape_anchor_;  // the first load's layout per shape
  std::unordered_set<const ir::Value*> forwarded_;  // in a tensor-core accumulator's layout (forward)

  /// A tensor-core dot leaves its result in the engine's accumulator layout. The float and mask
  /// values computed from it elementwise, its reductions along an axis (in the slice of that
  /// layout) and the loop values that carry them take that layout too, in program order: the
  /// softmax of attention scores (row maxima and sums, the rescaling, exp, the cast to the next
  /// dot's input type) and a matmul's epilogue run where the engine put the elements, and only
  /// what leaves that chain for another layout is converted. Integer and pointer results are left
  /// to their consumers (addresses want the coalesced layout).
  void forward(const ir::Block& b) {
    for (const auto& o : b.ops) {
      const ir::Op& op = *o;
      for (const auto& r : op.regions) forward(*r);
      if (op.results.empty()) continue;
      const ir::Value* r = op.result();
      if (op.kind == OpKind::dot) {
        if (anchored_.count(r)) forwarded_.insert(r);
        continue;
      }
      if (op.kind == OpKind::for_) {  // (its body first: a carried value whose yield flowed)
        const ir::Op* y = op.region(0)->terminator();
        for (std::size_t k = 0; y && k < op.results.size() && k < y->operands.size(); ++k) {
          const ir::Value* v = y->operand(static_cast<unsigned>(k));
          const ir::Value* res = op.result(static_cast<unsigned>(k));
          if (forwarded_.count(v) && !has(res)) {
            plan_.of[res] = plan_.of.at(v);
            forwarded_.insert(res);
          }
        }
        continue;
      }
      if (has(r) || !is_tile(r) || r->type.ptr || (!r->type.is_float() && r->type.elem != dtype::i1)) continue;
      if (op.kind == OpKind::reduce && op.operands.size() == 1 && op.results.size() == 1 && forwarded_.count(op.operand(0))) {
        plan_.of[r] = slice(plan_.of.at(op.operand(0)), static_cast<int>(op.attrs.ints.at(0)));
        forwarded_.insert(r);
      } else if (ir::is_elementwise(op.kind) && op.regions.empty() && op.results.size() == 1) {
        // not where another operand is a loaded tile (acc + bias): that one would move, and the
        // result again for its store; the consumers decide there, as without the flow
        const ir::Value* from = nullptr;
        bool loaded = false;
        for (const ir::Value* v : op.operands) {
          if (!from && forwarded_.count(v) && v->type.shape == r->type.shape) from = v;
          loaded |= is_tile(v) && !forwarded_.count(v) && anchored_.count(v);
        }
        if (from && !loaded) {
          plan_.of[r] = plan_.of.at(from);
          forwarded_.insert(r);
        }
      }
    }
  }

  /// The layout of an unconstrained value: that of the kernel's first load of the same shape, so
  /// values computed alongside loaded ones need no conversion; else default_layout.
  LinearLayout preferred(const ir::Type& t) const {
    auto it = shape_anchor_.find(t.shape);
    return it != shape_anchor_.end() ? it->second : default_layout(t, plan_.num_warps, plan_.lanes);
  }

  bool has(const ir::Value* v) const { return plan_.of.count(v) != 0; }
  /// The first request wins.
  void want(const ir::Value* v, const LinearLayout& l) {
    if (is_tile(v) && !has(v)) plan_.of[v] = l;
  }
  /// A result's layout: what its consumers asked for, or the default.
  void decide(const ir::Value* v) {
    if (is_tile(v) && !has(v)) plan_.of[v] = preferred(v->type);
  }
  void force(const ir::Value* v, const LinearLayout& l) {
    if (is_tile(v)) plan_.of[v] = l;
  }

  void block(const ir::Block& b) {
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it) op(**it);
  }

  void op(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::reduce:
      case OpKind::scan: {
        const ir::Value* x = op.operand(0);
        LinearLayout l = has(x) ? plan_.of.at(x) : (op.kind == OpKind::scan && has(op.result()) ? plan_.of.at(op.result())
                                                                                                 : preferred(x->type));
        for (const ir::Value* v : op.operands) force_if_free(v, l);
        const auto axis = static_cast<int>(op.attrs.ints.at(0));
        for (const auto& r : op.results) force(r.get(), op.kind == OpKind::reduce ? slice(l, axis) : l);
        break;
      }
      case OpKind::join: {
        const ir::Value* r = op.result();
        decide(r);
        if (!split(plan_.of.at(r))) force(r, join(has(op.operand(0)) ? plan_.of.at(op.operand(0)) : preferred(op.operand(0)->type)));
        break;
      }
      case OpKind::split: {
        decide(op.result(0));
        if (is_tile(op.result(0))) force(op.result(1), plan_.of.at(op.result(0)));  // (halves of a [2] tile: scalars)
        break;
      }
      case OpKind::for_:
      case OpKind::while_: {
        // one layout per carried value: the result's, its region arguments', init's, yield's
        const std::size_t first = op.kind == OpKind::for_ ? 3 : 0;
        for (std::size_t k = 0; k < op.results.size(); ++k) {
          const ir::Value* r = op.result(static_cast<unsigned>(k));
          if (!is_tile(r)) continue;
          if (!has(r)) {
            const ir::Value* init = op.operand(static_cast<unsigned>(first + k));
            plan_.of[r] = has(init) ? plan_.of.at(init) : preferred(r->type);
          }
          // an accumulator a dot anchors (tensor cores) stays in that layout through the loop:
          // converted once after it, not twice every iteration
          if (op.kind == OpKind::for_) {
            const ir::Op* y = op.region(0)->terminator();
            if (y && k < y->operands.size() && anchored_.count(y->operand(static_cast<unsigned>(k))) &&
                y->operand(static_cast<unsigned>(k))->def && y->operand(static_cast<unsigned>(k))->def->kind == OpKind::dot)
              force(r, plan_.of.at(y->operand(static_cast<unsigned>(k))));
          }
          const LinearLayout& l = plan_.of.at(r);
          for (const auto& reg : op.regions) {
            const std::size_t arg = op.kind == OpKind::for_ ? k + 1 : k;
            if (arg < reg->args.size()) force(reg->arg(static_cast<unsigned>(arg)), l);
          }
        }
        break;
      }
      case OpKind::permute:
        // the transpose of a loaded tile nothing asked a layout of (a staging: tl::trans(K) for a
        // dot): the load's layout, transposed, so that no conversion comes between
        if (!has(op.result()) && anchored_.count(op.operand(0)) && has(op.operand(0)))
          force(op.result(), permute(plan_.of.at(op.operand(0)), op.attrs.ints));
        decide(op.result());
        break;
      default:
        for (const auto& r : op.results) decide(r.get());
        break;
    }
    // requests to operands
    auto w = wanted_operands(op, plan_, ai_);
    for (std::size_t k = 0; k < op.operands.size(); ++k)
      if (w[k]) want(op.operand(static_cast<unsigned>(k)), *w[k]);
    // yields inside regions: their operands want the op's result layouts
    for (const auto& reg : op.regions) {
      const ir::Op* t = reg->terminator();
      if (t && t->kind == OpKind::yield)
        for (std::size_t k = 0; k < t->operands.size() && k < op.results.size(); ++k)
          if (is_tile(op.result(static_cast<unsigned>(k)))) want(t->operand(static_cast<unsigned>(k)), plan_.of.at(op.result(static_cast<unsigned>(k))));
      block(*reg);
      for (const auto& a : reg->args) decide(a.get());
    }
  }

  void force_if_free(const ir::Value* v, const LinearLayout& l) {
    if (!has(v)) want(v, l);
  }

  static bool uniform(const ir::Value* v) {
    return v->def && (v->def->kind == OpKind::constant || v->def->kind == OpKind::splat);
  }

  /// A value whose consumers run in another layout (a tensor-core accumulator before its
  /// epilogue) is converted where it is used. When those consumers are an elementwise chain ending
  /// in a narrowing cast (acc -> leaky ReLU -> f16), the chain runs in the value's own layout
  /// instead and the conversion moves to the chain's results: half the bytes through shared
  /// memory for f32 -> f16. The chain: elementwise ops of the value's block whose tile operands
  /// are the value, other chain results, or uniform tiles (constants and splats, which the
  /// lowering makes in any layout); moved only when the bytes converted go down and the chain's
  /// results leave it for stores and elementwise ops alone.
  void sink_conversions() {
    std::unordered_map<const ir::Value*, std::vector<const ir::Op*>> users;
    std::vector<const ir::Value*> values;
    ir::walk(const_cast<ir::Block&>(f_.body), [&](const ir::Op& op) {
      for (const ir::Value* v : op.operands) users[v].push_back(&op);
      for (const auto& r : op.results)
        if (is_tile(r.get()) && !uniform(r.get())) values.push_back(r.get());
    });
    auto bytes = [](const ir::Value* v) {
      std::int64_t n = elem_bytes(v->type);
      for (auto e : v->type.shape) n *= e;
      return n;
    };
    for (const ir::Value* x : values) {
      const LinearLayout& lx = plan_.of.at(x);
      const ir::Block* home = x->def->parent;
      std::vector<const ir::Op*> chain;
      std::unordered_set<const ir::Op*> in_chain;
      std::unordered_set<const ir::Value*> in{x};
      auto joins = [&](const ir::Op* u) {
        if (!ir::is_elementwise(u->kind) || !u->regions.empty() || u->parent != home || u->results.size() != 1 ||
            u->result()->type.shape != x->type.shape || in.count(u->result()))
          return false;
        for (const ir::Value* o : u->operands)
          if (is_tile(o) && !in.count(o) && !uniform(o)) return false;
        return true;
      };
      for (std::size_t i = 0; i <= chain.size(); ++i) {  // breadth first from x's users
        const ir::Value* from = i == 0 ? x : chain[i - 1]->result();
        for (const ir::Op* u : users[from])
          if (joins(u)) {
            chain.push_back(u);
            in_chain.insert(u);
            in.insert(u->result());
          }
      }
      // bytes converted now (x, for its chain users in other layouts) and after (each value
      // with a use outside the chain that may want another layout than lx)
      bool differs = false;
      for (const ir::Op* u : chain) differs |= !(plan_.of.at(u->result()) == lx);
      if (!differs) continue;
      // the chain's results may only leave it for ops that take any layout and convert at the use
      // (stores, elementwise ops): a reduce, a loop or a shape op decided its own layouts from
      // the one it was asked for
      bool movable = true;
      for (const ir::Op* c : chain)
        for (const ir::Op* u : users[c->result()])
          if (!in_chain.count(u) && !(ir::is_elementwise(u->kind) && u->regions.empty()) && u->kind != OpKind::store &&
              u->kind != OpKind::atomic_rmw && u->kind != OpKind::atomic_cas)
            movable = false;
      if (!movable) continue;
      std::int64_t after = 0;
      for (const ir::Value* v : in)
        for (const ir::Op* u : users[v])
          if (!in_chain.count(u)) {
            auto want = wanted_operands(*u, plan_, ai_);
            bool converts = false;
            for (std::size_t k = 0; k < u->operands.size(); ++k)  // (no wish, e.g. a yield's: counted)
              converts |= u->operand(static_cast<unsigned>(k)) == v && !(want[k] && *want[k] == lx);
            if (converts) {
              after += bytes(v);
              break;
            }
          }
      if (after >= bytes(x)) continue;
      for (const ir::Op* u : chain) plan_.of[u->result()] = lx;
    }
  }
};

}  // namespace

const LinearLayout& LayoutPlan::at(const ir::Value* v) const {
  auto it = of.find(v);
  if (it != of.end()) return it->second;
  static thread_local std::map<std::pair<int, int>, LinearLayout> scalars;  // (warps, lanes)
  if (!v->type.shape.empty()) throw tile::error("layout: internal error: a tile value has no layout");
  auto [s, fresh] = scalars.try_emplace({num_warps, lanes});
  if (fresh) s->second = scalar();
  return s->second;
}

LinearLayout LayoutPlan::scalar() const { return scalar_layout(num_warps, lanes); }

LinearLayout default_layout(const ir::Type& t, int num_warps, int lanes) {
  return default_blocked(t.shape, num_warps, std::max(1, 16 / elem_bytes(t)), {}, lanes);
}

LinearLayout coalesced(const ir::Value* ptr, const analysis::AxisAnalysis& ai, int num_warps, int lanes) {
  const ir::Type& t = ptr->type;
  const analysis::AxisInfo& info = ai.at(ptr);
  const int R = static_cast<int>(t.shape.size());
  if (R == 0) return scalar_layout(num_warps, lanes);
  std::vector<int> order;
  for (int d = R - 1; d >= 0; --d) order.push_back(d);
  // most contiguous axis first (ties: the later axis, row-major)
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ca = info.contiguity[static_cast<std::size_t>(a)], cb = info.contiguity[static_cast<std::size_t>(b)];
    return ca != cb ? ca > cb : a > b;
  });
  const int eb = std::max(1, static_cast<int>(size_of(t.elem)));
  const std::int64_t contig = info.contiguity[static_cast<std::size_t>(order[0])];
  int vec = static_cast<int>(std::min<std::int64_t>(16 / eb, contig));
  if (contig <= 1) {  // no contiguity known: keep the default order and width
    order.clear();
    vec = std::max(1, 16 / eb);
  }
  return default_blocked(t.shape, num_warps, std::max(vec, 1), order, lanes);
}

std::vector<std::optional<LinearLayout>> wanted_operands(const ir::Op& op, const LayoutPlan& plan,
                                                         const analysis::AxisAnalysis& ai) {
  std::vector<std::optional<LinearLayout>> w(op.operands.size());
  auto res = [&](unsigned i = 0) -> const LinearLayout& { return plan.at(op.result(i)); };
  const int W = plan.num_warps;
  switch (op.kind) {
    case OpKind::load:
    case OpKind::store:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: {
      if (op.operand(0)->type.shape.empty()) return w;
      LinearLayout l = coalesced(op.operand(0), ai, W, plan.lanes);
      for (auto& x : w) x = l;
      return w;
    }
    case OpKind::broadcast: w[0] = broadcast_source(res(), op.operand(0)->type.shape); return w;
    case OpKind::expand_dims:
      if (!op.operand(0)->type.shape.empty()) w[0] = slice(res(), static_cast<int>(op.attrs.ints.at(0)));
      return w;
    case OpKind::reshape: w[0] = reshape(res(), op.operand(0)->type.shape); return w;
    case OpKind::permute: {
      std::vector<std::int64_t> inv(op.attrs.ints.size());
      for (std::size_t i = 0; i < inv.size(); ++i) inv[static_cast<std::size_t>(op.attrs.ints[i])] = static_cast<std::int64_t>(i);
      w[0] = permute(res(), inv);
      return w;
    }
    case OpKind::join: {
      auto s = split(res());
      if (s) w[0] = w[1] = *s;
      return w;
    }
    case OpKind::split:
      if (!op.result(0)->type.shape.empty()) w[0] = join(res(0));
      return w;
    case OpKind::reduce:
    case OpKind::scan: {
      // every operand in the first one's layout (argmax: values and indices together)
      if (plan.of.count(op.operand(0)))
        for (auto& x : w) x = plan.of.at(op.operand(0));
      return w;
    }
    case OpKind::dot: {  // the operands go through shared memory in any layout, or A from registers in the engine's
      w[2] = res();
      if (auto a = plan.register_a.find(&op); a != plan.register_a.end()) w[0] = a->second;
      return w;
    }
    case OpKind::for_: {
      for (std::size_t k = 3; k < op.operands.size(); ++k)
        if (!op.operand(static_cast<unsigned>(k))->type.shape.empty()) w[k] = res(static_cast<unsigned>(k - 3));
      return w;
    }
    case OpKind::while_: {
      for (std::size_t k = 0; k < op.operands.size(); ++k)
        if (!op.operand(static_cast<unsigned>(k))->type.shape.empty()) w[k] = res(static_cast<unsigned>(k));
      return w;
    }
    case OpKind::hint: w[0] = res(); return w;
    default: break;
  }
  if (ir::is_elementwise(op.kind) && !op.results.empty() && !op.result()->type.shape.empty())
    for (auto& x : w) x = res();
  return w;
}

LayoutPlan assign_layouts(const ir::Function& f, const analysis::AxisAnalysis& ai, int num_warps, int lanes) {
  return Assigner(f, ai, num_warps, lanes).run();
}

std::string print_gpu_ir(const ir::Function& f, const analysis::AxisAnalysis* ai) {
  int conversions = 0;
  std::string text = ir::print(f, false, [&](const ir::Op& op) {
    conversions += op.kind == OpKind::convert_layout;
    std::string n;
    for (const auto& r : op.results) {
      if (r->type.layout) n += (n.empty() ? "" : "; ") + r->type.layout->str();
      if (ai && !r->type.shape.empty() && (r->type.ptr || r->type.is_int())) n += " " + ai->at(r.get()).str();
    }
    return n;
  });
  return text + "// layout conversions: " + std::to_string(conversions) + "\n";
}

}  // namespace tile::layout

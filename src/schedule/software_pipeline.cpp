// src/schedule/software_pipeline.cpp — layer: schedule. plan_pipelines: finds the K loops whose
// tensor-core dots can read their operands from a ring of shared-memory buffers filled
// `stages - 1` iterations ahead (see the header for the conditions). The pass pipeline_loops
// (pipeline_loops.cpp) writes the plan into the IR as rings, copies, waits and barriers.
#include "schedule/software_pipeline.hpp"
#include "layout/assign_layouts.hpp"
#include "schedule/allocate_shared.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

namespace tile::schedule {

using ir::OpKind;

bool safe_ahead(OpKind k) {
  switch (k) {
    case OpKind::constant:
    case OpKind::program_id:
    case OpKind::num_programs:
    case OpKind::arange:
    case OpKind::splat:
    case OpKind::broadcast:
    case OpKind::expand_dims:
    case OpKind::reshape:
    case OpKind::permute:
    case OpKind::cast:
    case OpKind::bitcast:
    case OpKind::add:
    case OpKind::sub:
    case OpKind::mul:
    case OpKind::bit_and:
    case OpKind::bit_or:
    case OpKind::bit_xor:
    case OpKind::minimum:
    case OpKind::maximum:
    case OpKind::cmp:
    case OpKind::addptr:
    case OpKind::neg:
    case OpKind::bit_not:
    case OpKind::select:
    case OpKind::convert_layout:
    case OpKind::hint: return true;
    default: return false;
  }
}

namespace {

/// `v` is zero in every element: a zero constant, possibly splat, broadcast, reshaped or cast.
bool is_zero(const ir::Value* v) {
  for (int depth = 0; v && v->def && depth < 8; ++depth) {
    const ir::Op* d = v->def;
    switch (d->kind) {
      case OpKind::constant:
        return v->type.is_float() ? d->attrs.f == 0.0 : !d->attrs.ints.empty() && d->attrs.ints[0] == 0;
      case OpKind::splat:
      case OpKind::broadcast:
      case OpKind::expand_dims:
      case OpKind::reshape:
      case OpKind::cast: v = d->operand(0); break;
      default: return false;
    }
  }
  return false;
}

using Users = std::unordered_map<const ir::Value*, std::vector<const ir::Op*>>;

Users users_of(const ir::Function& f) {
  Users u;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
    for (const ir::Value* v : o.operands) u[v].push_back(&o);
  });
  return u;
}

bool writes_memory(const ir::Block& b) {
  bool w = false;
  ir::walk(const_cast<ir::Block&>(b), [&](const ir::Op& o) {
    if (o.kind == OpKind::store || o.kind == OpKind::atomic_rmw || o.kind == OpKind::atomic_cas) w = true;
  });
  return w;
}

/// The argument index of `v` in `body` (-1: not one of its arguments).
int arg_index(const ir::Block& body, const ir::Value* v) {
  for (std::size_t i = 0; i < body.args.size(); ++i)
    if (body.args[i].get() == v) return static_cast<int>(i);
  return -1;
}

struct Planner {
  const analysis::AxisAnalysis& axis;
  const Users& users;
  int num_stages;
  std::uint64_t smem_limit;
  const CopyTarget& copies;
  const ir::Function& f;

  /// What the staging buffers (local_alloc) that may be live while `loop` runs take: every one
  /// but those inside the body of another loop that does not hold `loop` (made and used up in
  /// that loop's iterations; shared memory is placed by liveness, schedule/allocate_shared.cpp),
  /// counted as if all lived at once. The rings get what they leave (the loads a loop pipelines
  /// give theirs back to it).
  std::uint64_t staging_bytes(const ir::Op& loop) const {
    auto holds = [](const ir::Op* outer, const ir::Op* inner) {
      for (const ir::Op* o = inner; o; o = o->parent ? o->parent->parent : nullptr)
        if (o == outer) return true;
      return false;
    };
    std::uint64_t bytes = 0;
    ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
      if (o.kind != OpKind::local_alloc) return;
      for (const ir::Op* p = o.parent ? o.parent->parent : nullptr; p; p = p->parent ? p->parent->parent : nullptr)
        if (p->kind == OpKind::for_ && !holds(p, &loop)) return;  // (dead while `loop` runs)
      bytes += shared_bytes(o.result()->type);
    });
    return bytes;
  }

  /// Elements per copy for `load` (runs along the stored rows: the tile's last axis, or its
  /// first for a transposed buffer; at most the target's largest copy, at least its smallest);
  /// 0 when the tile is not copied in such runs.
  int copy_run(const ir::Op& load, std::int64_t es, ir::smem arrangement) const {
    const ir::Value* r = load.result();
    if (r->type.shape.size() != 2 || !r->type.layout) return 0;
    const auto along = static_cast<std::size_t>(arrangement == ir::smem::swizzled_transposed ? 0 : 1);
    auto [w, ax] = layout::register_run(*r->type.layout);
    if (ax != static_cast<int>(along)) return 0;
    const auto& pi = axis.at(load.operand(0));
    std::int64_t limit = std::min<std::int64_t>(
        {w, pi.contiguity[along], std::max<std::int64_t>(1, pi.divisibility[along] / es), copies.max_copy_bytes() / es});
    if (load.attrs.ints.at(0) != 0) limit = std::min(limit, axis.at(load.operand(1)).constancy[along]);
    int v = 1;
    while (v * 2 <= limit) v *= 2;
    return v * es >= copies.min_copy_bytes() ? v : 0;
  }

  /// Whether `v`'s only user is `u`.
  bool only_user(const ir::Value* v, const ir::Op* u) const {
    auto it = users.find(v);
    return it != users.end() && it->second.size() == 1 && it->second[0] == u;
  }
  /// A dot's operand k as a staging: the local_alloc (its only user the dot) that holds it and,
  /// where the staged tile is a transpose (permute [1, 0], its only user that local_alloc) of
  /// another, that transpose. `staged` null: the operand is not so staged.
  struct StagedUse {
    const ir::Op* dot;
    unsigned k;
    const ir::Op* staged;
    const ir::Op* transpose;
  };
  StagedUse staged_use(const ir::Op* dot, unsigned k) const {
    StagedUse u{dot, k, nullptr, nullptr};
    const ir::Op* d = dot->operand(k)->def;
    if (!d || d->kind != OpKind::local_alloc || !only_user(d->result(), dot)) return u;
    u.staged = d;
    const ir::Op* src = d->operand(0)->def;
    if (src && src->kind == OpKind::permute && src->attrs.ints == std::vector<std::int64_t>{1, 0} && only_user(src->result(), d))
      u.transpose = src;
    return u;
  }
  /// The op whose tile a staging holds (through its transpose, where there is one).
  template <class U>
  static const ir::Op* load_of(const U& u) {
    const ir::Value* v = u.transpose ? u.transpose->operand(0) : u.staged->operand(0);
    return v->def;
  }
  /// A load a pipelined dot may read from the ring.
  bool ring_load(const ir::Op* l, const ir::Block& body) const {
    if (!l || l->parent != &body) return false;
    if (l->kind == OpKind::desc_load) return true;  // kept for tensor copies (tensor_copy_candidate said yes)
    if (l->kind != OpKind::load) return false;
    const auto& a = l->attrs.ints;
    if (a.size() > 4 && a[4] != 0) return false;  // volatile
    if (a.at(1) != 0 && !is_zero(l->operand(2))) return false;
    const dtype e = l->result()->type.elem;
    return e == dtype::f16 || e == dtype::bf16;
  }

  std::optional<PipelinedLoop> loop(const ir::Op& op) const {
    const ir::Block& body = *op.region(0);
    if (writes_memory(body)) return std::nullopt;
    PipelinedLoop pl;
    // the dots' operands behind staging buffers, grouped by the load they stage: a load read
    // by several dots (as it is, or through tl::trans) gets one ring where every staging holds
    // the ring buffer's bytes
    using Use = StagedUse;
    std::vector<const ir::Op*> order;  // (the loads in the order the dots first read them)
    std::unordered_map<const ir::Op*, std::vector<Use>> uses;
    for (const auto& o : body.ops) {
      if (o->kind != OpKind::dot || layout::engine_of(*o) == layout::mma_engine::none) continue;
      std::array<const ir::Op*, 2> ld{};
      for (unsigned k = 0; k < 2; ++k) {
        const Use u = staged_use(o.get(), k);
        ld[k] = u.staged ? load_of(u) : nullptr;
        if (!ring_load(ld[k], body)) continue;
        if (!uses.count(ld[k])) order.push_back(ld[k]);
        uses[ld[k]].push_back(u);
      }
      if (ld[0] && ld[0] == ld[1]) uses.erase(ld[0]);  // (one load both operands: read as it is)
    }
    for (const ir::Op* l : order) {
      auto it = uses.find(l);
      if (it == uses.end()) continue;
      const std::vector<Use>& us = it->second;
      // every user of the load is one of these stagings or transposes
      auto lu = users.find(l->result());
      if (lu == users.end() || lu->second.size() != us.size()) continue;
      // the ring's arrangement: each staging's, flipped where a transpose comes first
      auto flip = [](ir::smem m) { return m == ir::smem::swizzled ? ir::smem::swizzled_transposed : ir::smem::swizzled; };
      std::optional<ir::smem> arrangement;
      bool same = true;
      for (const Use& u : us) {
        const ir::smem m = u.staged->result()->type.mem;
        if (m != ir::smem::swizzled && m != ir::smem::swizzled_transposed) same = false;
        const ir::smem ring = u.transpose ? flip(m) : m;
        if (arrangement && *arrangement != ring) same = false;
        arrangement = ring;
      }
      if (!same) continue;
      const ir::Type& t = l->result()->type;
      PipelinedLoad pld;
      pld.load = l;
      pld.arrangement = *arrangement;
      pld.elem = t.elem;
      pld.elem_bytes = static_cast<std::int64_t>(size_of(t.elem));
      pld.rows = t.shape[0];
      pld.cols = t.shape[1];
      if (l->kind == OpKind::desc_load) {
        if (pld.arrangement != ir::smem::swizzled) return std::nullopt;  // (boxes of rows)
        pld.tensor_copy = true;
        pld.box_cols = copies.box_cols(pld.cols, pld.elem_bytes);
      } else {
        pld.run = copy_run(*l, pld.elem_bytes, pld.arrangement);
        if (pld.run == 0) continue;  // (no copy reads it in runs: staged as it is, the others still get rings)
      }
      const int index = static_cast<int>(pl.loads.size());
      for (const Use& u : us) {
        if (!pld.staged) pld.staged = u.staged;
        else pld.also_staged.push_back(u.staged);
        if (u.transpose) pld.transposes.push_back(u.transpose);
        auto d = pl.dots.emplace(u.dot, std::array<int, 2>{-1, -1}).first;
        d->second[u.k] = index;
        pl.views[u.dot][u.k] = u.transpose != nullptr;
      }
      pl.loads.push_back(std::move(pld));
    }
    if (pl.loads.empty()) return std::nullopt;
    // one kind of copy a ring: all tensor copies (warpgroup dots only) or all per-thread copies
    pl.tensor_copy = pl.loads.front().tensor_copy;
    for (const auto& l : pl.loads)
      if (l.tensor_copy != pl.tensor_copy) return std::nullopt;
    if (pl.tensor_copy)
      for (const auto& [d, idx] : pl.dots)
        if (layout::engine_of(*d) != layout::mma_engine::warpgroup) return std::nullopt;

    // the ahead slice: the loads' operands, back through the body to its arguments
    const ir::Op* yield = body.terminator();
    pl.ahead_arg.assign(body.args.size() - 1, false);
    std::vector<const ir::Value*> work;
    for (const auto& l : pl.loads)
      for (const ir::Value* v : l.load->operands) work.push_back(v);
    while (!work.empty()) {
      const ir::Value* v = work.back();
      work.pop_back();
      if (const int a = arg_index(body, v); a >= 1) {
        if (!pl.ahead_arg[static_cast<std::size_t>(a - 1)]) {
          pl.ahead_arg[static_cast<std::size_t>(a - 1)] = true;
          work.push_back(yield->operand(static_cast<unsigned>(a - 1)));
        }
      } else if (a < 0 && v->def && v->def->parent == &body) {
        const ir::Op* d = v->def;
        if (pl.ahead.count(d)) continue;
        if (!safe_ahead(d->kind) || !d->regions.empty()) return std::nullopt;
        pl.ahead.insert(d);
        for (const ir::Value* o : d->operands) work.push_back(o);
      }
    }
    // who may use what: an in-order op (not ahead, not a ring load, not the yield slot of an
    // ahead carried value) must see no value that runs ahead
    auto in_order_use = [&](const ir::Op* user, const ir::Value* v) {
      if (pl.ahead.count(user) || pl.is_pipelined_load(user)) return false;
      if (user == yield) {
        for (std::size_t k = 0; k < yield->operands.size(); ++k)
          if (yield->operands[k] == v && !pl.ahead_arg[k]) return true;
        return false;
      }
      return true;
    };
    // a carried value running ahead whose values (it, or what the ahead ops make of it) the body
    // also reads in order, or that the code after the loop reads, keeps its slot in order and
    // runs ahead in a slot of its own (dup_arg)
    pl.dup_arg.assign(pl.ahead_arg.size(), false);
    for (std::size_t k = 0; k < pl.ahead_arg.size(); ++k) {
      if (!pl.ahead_arg[k]) continue;
      std::unordered_set<const ir::Value*> runs_ahead{body.arg(static_cast<unsigned>(k + 1))};
      for (const auto& o : body.ops)
        if (pl.ahead.count(o.get()))
          for (const ir::Value* v : o->operands)
            if (runs_ahead.count(v)) {
              for (const auto& r : o->results) runs_ahead.insert(r.get());
              break;
            }
      bool in_order = users.count(op.result(static_cast<unsigned>(k))) > 0;  // read after the loop
      for (const ir::Value* v : runs_ahead) {
        auto it = users.find(v);
        if (it == users.end()) continue;
        for (const ir::Op* u : it->second) in_order = in_order || in_order_use(u, v);
      }
      pl.dup_arg[k] = in_order;
    }
    for (std::size_t k = 0; k < pl.ahead_arg.size(); ++k) {
      if (!pl.ahead_arg[k]) continue;
      // its yield slot must hold the arg itself or an ahead value (not an in-order one)
      const ir::Value* y = yield->operand(static_cast<unsigned>(k));
      const bool ok = y == body.arg(static_cast<unsigned>(k + 1)) || (y->def && pl.ahead.count(y->def)) ||
                      (arg_index(body, y) < 0 && (!y->def || y->def->parent != &body));
      if (!ok) return std::nullopt;
    }
    // warpgroup dots left in flight across iterations: a warpgroup dot whose result only feeds a
    // carried value, whose operands not from a ring were made before the loop or are registers
    // (a buffer the body fills could be refilled while the dot still reads it), and whose carried
    // value the next iteration reads either only as this dot's accumulator (chained on the
    // engine: no wait) or not at all through this dot (a wait before its first use)
    for (const auto& [d, idx] : pl.dots) {
      bool ok = layout::engine_of(*d) == layout::mma_engine::warpgroup;
      for (unsigned k = 0; k < 2; ++k)
        if (idx[k] < 0) ok = ok && (!ir::made_inside(*d->operand(k), op) || !d->operand(k)->type.is_buffer());
      auto u = users.find(d->result());
      ok = ok && u != users.end() && u->second.size() == 1 && u->second[0] == yield;
      int slot = -1;
      for (std::size_t k = 0; ok && k < yield->operands.size(); ++k)
        if (yield->operand(static_cast<unsigned>(k)) == d->result()) slot = slot < 0 ? static_cast<int>(k) : -2;
      ok = ok && slot >= 0 && !pl.ahead_arg[static_cast<std::size_t>(slot)];
      if (!ok) continue;
      const ir::Value* arg = body.arg(static_cast<unsigned>(slot + 1));
      auto au = users.find(arg);
      const bool only_dot = au != users.end() && au->second.size() == 1 && au->second[0] == d && d->operand(2) == arg;
      bool through_dot = false;
      if (au != users.end())
        for (const ir::Op* x : au->second) through_dot |= x == d;
      if (only_dot) {
        pl.in_flight.insert(d);
      } else if (!through_dot) {
        pl.in_flight.insert(d);
        pl.wait_at_use.insert(d);
      }
    }
    pl.async_mma = !pl.in_flight.empty();
    std::uint64_t others = staging_bytes(op);
    for (const auto& l : pl.loads) {
      others -= shared_bytes(l.staged->result()->type);
      for (const ir::Op* x : l.also_staged) others -= shared_bytes(x->result()->type);
    }
    const std::uint64_t budget = smem_limit > others ? smem_limit - others : 0;
    pl.stages = std::max(2, num_stages);
    auto ring = [&] {  // (the rings' bytes for this many stages)
      pl.buffers = pl.stages + (pl.async_mma ? 1 : 0);
      return pl.ring_bytes();
    };
    while (pl.stages > 2 && ring() > budget) --pl.stages;
    if (ring() > budget) return std::nullopt;
    pl.buffers = pl.stages + (pl.async_mma ? 1 : 0);
    return pl;
  }
};

}  // namespace

ir::Type PipelinedLoop::ring_type(const PipelinedLoad& l) const {
  return ir::Type(l.elem, false, {buffers, l.rows, l.cols}, nullptr, l.arrangement);
}

std::uint64_t PipelinedLoop::ring_bytes() const {
  std::uint64_t bytes = tensor_copy ? shared_bytes(ir::Type(dtype::i64, false, {buffers}, nullptr, ir::smem::barriers)) : 0;
  for (const auto& l : loads) bytes += shared_bytes(ring_type(l));
  return bytes;
}

PipelinePlan plan_pipelines(const ir::Function& f, const analysis::AxisAnalysis& axis, int num_stages,
                            std::uint64_t smem_limit, const CopyTarget& copies) {
  PipelinePlan p;
  bool any_mma = false;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) { any_mma |= layout::engine_of(o) != layout::mma_engine::none; });
  if (num_stages < 2 || !any_mma) return p;
  const Users users = users_of(f);
  Planner pl{axis, users, num_stages, smem_limit, copies, f};
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
    if (o.kind != OpKind::for_) return;
    if (auto l = pl.loop(o)) {
      for (auto& ld : l->loads)
        if (ld.tensor_copy) {
          ld.tensor_map_param = static_cast<int>(p.tensor_maps.size());
          p.tensor_maps.push_back(ld.load);
        }
      p.loops.emplace(&o, std::move(*l));
    }
  });
  return p;
}

std::optional<LaunchValue> launch_value(const ir::Function& f, const ir::Value* v) {
  if (!v->type.is_scalar() || (v->type.elem != dtype::i32 && v->type.elem != dtype::i64)) return std::nullopt;
  const int bits = v->type.elem == dtype::i32 ? 32 : 64;
  if (v->owner == &f.body) return LaunchValue{{v->index}, 1, bits};
  if (auto c = ir::int_constant(v)) return LaunchValue{{}, *c, bits};
  if (!v->def || v->def->kind != OpKind::mul || v->def->parent != &f.body) return std::nullopt;
  auto a = launch_value(f, v->def->operand(0)), b = launch_value(f, v->def->operand(1));
  if (!a || !b || a->bits != bits || b->bits != bits || a->args.size() + b->args.size() > 4) return std::nullopt;
  a->args.insert(a->args.end(), b->args.begin(), b->args.end());
  a->factor = static_cast<std::int64_t>(static_cast<std::uint64_t>(a->factor) * static_cast<std::uint64_t>(b->factor));
  return a;
}

namespace {
/// The dots that read `l`'s tile, each as it is or through a transpose (tl::trans) that only it
/// reads, all in `l`'s block and none as its accumulator; empty where anything else reads it.
std::vector<const ir::Op*> reading_dots(const ir::Function& f, const ir::Op& l) {
  Users users = users_of(f);
  std::vector<const ir::Op*> dots;
  auto dot_of = [&](const ir::Op* u, const ir::Value* v) {
    return u->kind == OpKind::dot && u->parent == l.parent && u->operand(2) != v && u->operand(0) != u->operand(1);
  };
  for (const ir::Op* u : users[l.result()]) {
    if (dot_of(u, l.result())) {
      dots.push_back(u);
      continue;
    }
    if (u->kind != OpKind::permute || u->attrs.ints != std::vector<std::int64_t>{1, 0} || u->parent != l.parent) return {};
    const auto& tu = users[u->result()];
    if (tu.size() != 1 || !dot_of(tu[0], u->result())) return {};
    dots.push_back(tu[0]);
  }
  return dots;
}

/// tensor_copy_candidate's conditions on one operand (and the dot's shape); `other_load`: the
/// dot's other operand's descriptor load in the same body, or null.
bool tensor_copy_operand(const ir::Function& f, const ir::Op& l, int num_warps, const layout::MmaTarget& mma, const CopyTarget& copies,
                         const ir::Op** other_load) {
  const std::int64_t align = copies.tensor_alignment();
  if (l.kind != OpKind::desc_load || l.attrs.ints.size() != 2) return false;
  const ir::Type& t = l.result()->type;
  if (t.elem != dtype::f16 && t.elem != dtype::bf16) return false;
  const ir::Block* body = l.parent;
  if (!body || !body->parent || body->parent->kind != OpKind::for_) return false;
  // read by warpgroup-eligible dots of the same body, each as it is or transposed; each dot's
  // other operand another descriptor load of that body or no load of it
  const std::vector<const ir::Op*> dots = reading_dots(f, l);
  if (dots.empty()) return false;
  *other_load = nullptr;
  for (const ir::Op* dot : dots) {
    if (mma.choose(*dot, num_warps, 32).engine != layout::mma_engine::warpgroup) return false;
    for (unsigned k = 0; k < 2; ++k) {
      const ir::Op* d = dot->operand(k)->def;
      if (d && d->kind == OpKind::permute) d = d->operand(0)->def;
      if (!d || d == &l || d->parent != body) continue;
      if (d->kind == OpKind::desc_load) {
        if (*other_load && *other_load != d) return false;  // (one partner: the pair is copied, or neither)
        *other_load = d;
      } else if (d->kind == OpKind::load) {
        return false;
      }
    }
  }
  // what the launch encodes: the base (an argument), extents and strides (launch values)
  auto info = [&](unsigned arg) -> const ir::ArgInfo* { return arg < f.arg_info.size() ? &f.arg_info[arg] : nullptr; };
  const ir::Value* base = l.operand(0);
  if (base->owner != &f.body || !info(base->index) || info(base->index)->divisibility % align != 0) return false;
  std::array<std::optional<LaunchValue>, 4> lv;
  for (unsigned k = 1; k < 5; ++k)
    if (!(lv[k - 1] = launch_value(f, l.operand(k)))) return false;
  // extents positive: each factor (the launch's specialization says so of an argument)
  for (unsigned k = 0; k < 2; ++k) {
    if (lv[k]->factor <= 0) return false;
    for (unsigned a : lv[k]->args)
      if (!info(a) || !info(a)->positive) return false;
  }
  const LaunchValue& col_stride = *lv[3];
  if (!col_stride.args.empty() || col_stride.factor != 1) return false;  // the last stride
  const LaunchValue& row_stride = *lv[2];
  const std::int64_t es = static_cast<std::int64_t>(size_of(t.elem));
  if (row_stride.args.empty()) {
    if (row_stride.factor <= 0 || (row_stride.factor * es) % align != 0) return false;
  } else {
    if (row_stride.args.size() != 1 || row_stride.factor != 1) return false;
    const ir::ArgInfo* ai = info(row_stride.args[0]);
    if (!ai || !ai->positive || (ai->divisibility * es) % align != 0) return false;
  }
  for (unsigned k = 5; k < 7; ++k)
    if (l.operand(k)->type.elem != dtype::i32) return false;
  // the box: what one of the target's tensor copies moves
  return copies.tensor_copy_box(l.attrs.ints[0], l.attrs.ints[1] * es);
}
}  // namespace

bool tensor_copy_candidate(const ir::Function& f, const ir::Op& l, int num_warps, const layout::MmaTarget& mma, const CopyTarget& copies) {
  if (!copies.tensor_copies()) return false;
  const ir::Op* other = nullptr;
  const ir::Op* back = nullptr;
  if (!tensor_copy_operand(f, l, num_warps, mma, copies, &other)) return false;
  // (a dot reading two descriptor loads: both copied, or neither)
  return !other || (tensor_copy_operand(f, *other, num_warps, mma, copies, &back) && back == &l);
}

std::string print_pipelines(const ir::Function& f, const PipelinePlan& p) {
  std::ostringstream os;
  int n = 0;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
    if (o.kind != OpKind::for_) return;
    ++n;
    auto it = p.loops.find(&o);
    if (it == p.loops.end()) return;
    const PipelinedLoop& l = it->second;
    os << "for #" << n << " (" << o.loc.file << ":" << o.loc.line << "): pipelined, " << l.stages << " stages ("
       << l.buffers << " buffers" << (l.async_mma ? ", the dots left in flight" : "") << "), " << l.loads.size() << " loads copied "
       << l.distance() << " iterations ahead (";
    if (l.tensor_copy) {
      os << "tensor copies: boxes of";
      for (const auto& ld : l.loads) os << " " << ld.rows << "x" << ld.box_cols << " (tensor map " << ld.tensor_map_param << ")";
    } else {
      os << "copies in runs of";
      for (const auto& ld : l.loads) os << " " << ld.run;
      os << " elements";
    }
    os << "), " << l.ring_bytes() << " bytes of rings, " << l.ahead.size() << " ops computed ahead\n";
  });
  if (const auto& w = p.warp_specialized) {
    os << "warp-specialized: " << w->producer_warps << " producer warps after the kernel's " << f.num_warps
       << " issue the tensor copies";
    if (w->consumer_regs > 0) os << "; registers a thread: consumers " << w->consumer_regs << ", producer " << w->producer_regs;
    if (w->share_rings) os << "; loops of one ring shape take turns on one set of rings";
    os << "\n";
  }
  return os.str();
}

}  // namespace tile::schedule

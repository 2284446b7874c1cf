// src/schedule/allocate_shared.cpp — layer: schedule. See allocate_shared.hpp.
#include "schedule/allocate_shared.hpp"

#include <algorithm>

namespace tile::schedule {

using ir::OpKind;

namespace {

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

/// Pre-order positions of every op, and for each op with regions the last position inside it.
struct Positions {
  std::unordered_map<const ir::Op*, std::size_t> at, end;
  std::size_t next = 0;
  void block(const ir::Block& b) {
    for (const auto& op : b.ops) {
      at[op.get()] = next++;
      for (const auto& r : op->regions) block(*r);
      end[op.get()] = next - 1;
    }
  }
};

/// The buffers each token's copies write (async_copy: its ring; a group, a loop's or an if's
/// token: those of the tokens it takes): a use of the token keeps them live, as the copies
/// still write them until the async_wait that names it.
std::unordered_map<const ir::Value*, std::vector<const ir::Op*>> token_buffers(const ir::Function& f) {
  std::unordered_map<const ir::Value*, std::vector<const ir::Op*>> of;
  auto add = [&](const ir::Value* to, const ir::Value* from) {
    bool grew = false;
    auto it = of.find(from);
    if (it == of.end()) return false;
    const std::vector<const ir::Op*> src = it->second;
    auto& dst = of[to];
    for (const ir::Op* b : src)
      if (std::find(dst.begin(), dst.end(), b) == dst.end()) {
        dst.push_back(b);
        grew = true;
      }
    return grew;
  };
  for (bool grew = true; grew;) {  // (loops carry tokens around: until nothing grows)
    grew = false;
    ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
      if (op.kind == OpKind::async_copy) {
        const ir::Value* buf = op.operand(0);
        while (buf->def && buf->def->kind == OpKind::buffer_index) buf = buf->def->operand(0);
        if (buf->def && of[op.result()].empty()) {
          of[op.result()].push_back(buf->def);
          grew = true;
        }
      } else if (op.kind == OpKind::async_commit) {
        for (const ir::Value* t : op.operands) grew |= add(op.result(), t);
      } else if (op.kind == OpKind::for_ || op.kind == OpKind::while_ || op.kind == OpKind::if_) {
        // carried: the initial value and what each region yields reach the argument and result
        const unsigned first = op.kind == OpKind::for_ ? 3 : 0;
        for (std::size_t k = 0; k < op.results.size(); ++k) {
          if (!op.result(static_cast<unsigned>(k))->type.token) continue;
          if (op.kind != OpKind::if_) grew |= add(op.result(static_cast<unsigned>(k)), op.operand(static_cast<unsigned>(first + k)));
          for (const auto& r : op.regions) {
            const ir::Op* y = r->terminator();
            if (y && y->kind == OpKind::yield) grew |= add(op.result(static_cast<unsigned>(k)), y->operand(static_cast<unsigned>(k)));
          }
          const unsigned arg = static_cast<unsigned>(op.kind == OpKind::for_ ? k + 1 : k);
          if (op.kind != OpKind::if_)
            for (const auto& r : op.regions)
              if (arg < r->args.size()) grew |= add(r->arg(arg), op.result(static_cast<unsigned>(k)));
        }
      }
    });
  }
  return of;
}

}  // namespace

std::uint64_t slot_bytes(const ir::Type& ring) {
  const auto es = static_cast<std::uint64_t>(size_of(ring.elem));
  return align_up(static_cast<std::uint64_t>(ring.shape.at(1) * ring.shape.at(2)) * es, 1024);
}

std::uint64_t shared_bytes(const ir::Type& t) {
  const auto es = static_cast<std::int64_t>(size_of(t.elem));
  if (t.mem == ir::smem::barriers) return static_cast<std::uint64_t>(t.shape.at(0) * 8);
  if (t.shape.size() == 3) return static_cast<std::uint64_t>(t.shape[0]) * slot_bytes(t);  // a ring
  const std::int64_t rows = t.shape.at(0), cols = t.shape.at(1);
  switch (t.mem) {
    case ir::smem::swizzled:
    case ir::smem::swizzled_transposed: return static_cast<std::uint64_t>(rows * cols * es);
    case ir::smem::padded: return static_cast<std::uint64_t>(rows * (cols + 16 / es) * es);
    case ir::smem::padded_transposed: return static_cast<std::uint64_t>(cols * (rows + 16 / es) * es);
    case ir::smem::none:
    case ir::smem::barriers: break;
  }
  return 0;
}

std::uint64_t SharedPlan::offset(const ir::Op& op) const {
  for (const auto& b : buffers)
    if (b.op == &op) return b.offset;
  throw tile::error("schedule: internal error: a shared-memory buffer without an offset", op.loc);
}

SharedPlan plan_shared(const ir::Function& f) {
  Positions pos;
  pos.block(f.body);
  SharedPlan plan;
  const auto tokens = token_buffers(f);
  auto covers = [&](const ir::Value* v, const ir::Op* buffer) {
    if (!v->type.token) return false;
    auto t = tokens.find(v);
    return t != tokens.end() && std::find(t->second.begin(), t->second.end(), buffer) != t->second.end();
  };
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
    if (op.kind == OpKind::local_alloc) {
      SharedBuffer b;
      b.op = &op;
      b.bytes = shared_bytes(op.result()->type);
      b.align = op.result()->type.mem == ir::smem::swizzled || op.result()->type.mem == ir::smem::swizzled_transposed ? 1024 : 16;
      b.first = b.last = pos.at.at(&op);
      // its last use; a use in a loop the buffer was made outside of: the loop's end
      std::function<void(const ir::Block&)> uses = [&](const ir::Block& blk) {
        for (const auto& u : blk.ops) {
          for (const ir::Value* v : u->operands)
            if (v == op.result() || covers(v, &op)) {
              std::size_t last = pos.at.at(u.get());
              for (const ir::Op* p = u->parent ? u->parent->parent : nullptr; p; p = p->parent ? p->parent->parent : nullptr) {
                // a loop the buffer was made before (outside of) reads it every iteration
                if (b.first < pos.at.at(p) && (p->kind == OpKind::for_ || p->kind == OpKind::while_)) last = std::max(last, pos.end.at(p));
              }
              b.last = std::max(b.last, last);
            }
          for (const auto& r : u->regions) uses(*r);
        }
      };
      uses(f.body);
      plan.buffers.push_back(b);
    }
  });
  // first fit, in order of first op (walk order already)
  for (std::size_t i = 0; i < plan.buffers.size(); ++i) {
    SharedBuffer& b = plan.buffers[i];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;  // [start, end) of live ones
    for (std::size_t j = 0; j < i; ++j) {
      const SharedBuffer& o = plan.buffers[j];
      if (o.first <= b.last && b.first <= o.last) taken.emplace_back(o.offset, o.offset + o.bytes);
    }
    std::sort(taken.begin(), taken.end());
    std::uint64_t at = 0;
    for (const auto& [s, e] : taken) {
      if (align_up(at, b.align) + b.bytes <= s) break;
      at = std::max(at, e);
    }
    b.offset = align_up(at, b.align);
    plan.top = std::max(plan.top, b.offset + b.bytes);
  }
  // each op's floor: the top of the buffers live at it
  for (const auto& [op, p] : pos.at) {
    std::uint64_t top = 0;
    for (const auto& b : plan.buffers)
      if (b.first <= p && p <= b.last) top = std::max(top, b.offset + b.bytes);
    if (top) plan.floors[op] = top;
  }
  return plan;
}

namespace {

class AllocateShared final : public transforms::Pass {
 public:

  std::string_view name() const override { return "allocate_shared"; }
  bool run(ir::Function& f) override {
    const SharedPlan plan = plan_shared(f);
    bool changed = false;
    for (const auto& b : plan.buffers)
      if (b.op->kind == OpKind::local_alloc) {
        auto& a = const_cast<ir::Op*>(b.op)->attrs.ints;
        if (a.size() < 2) a.resize(2, 0);
        changed |= a[0] != static_cast<std::int64_t>(b.offset);
        a[0] = static_cast<std::int64_t>(b.offset);
      }
    return changed;
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_allocate_shared() { return std::make_unique<AllocateShared>(); }

}  // namespace tile::schedule

// src/analysis/pointer_origin.cpp — layer: analysis. See pointer_origin.hpp. A forward data-flow
// problem on a three-level lattice (not yet known > argument i > none): every pointer value
// starts unknown and is lowered by its definition's transfer until nothing changes (loops feed
// their carried slots back, so a few passes).
#include "analysis/pointer_origin.hpp"

namespace tile::analysis {

using ir::OpKind;

int PointerOrigins::meet(int a, int b) {
  if (a == kTop) return b;
  if (b == kTop) return a;
  return a == b ? a : kNone;
}

int PointerOrigins::get(const ir::Value* v) const {
  if (!v->type.ptr) return kNone;
  if (!v->def && v->owner == &fn_.body) return static_cast<int>(v->index);  // a kernel argument
  auto it = val_.find(v);
  return it == val_.end() ? kTop : it->second;
}

bool PointerOrigins::update(const ir::Value* v, int r) {
  if (!v->type.ptr) return false;
  const int old = get(v);
  const int now = meet(old, r);
  if (now == old) return false;
  val_[v] = now;
  return true;
}

bool PointerOrigins::visit(const ir::Block& b) {
  bool changed = false;
  for (const auto& up : b.ops) {
    const ir::Op& o = *up;
    auto in = [&](unsigned i) { return i < o.operands.size() ? get(o.operand(i)) : kNone; };
    // what a region's terminator passes on in slot k (top when the region has none)
    auto yielded = [&](const ir::Block& r, unsigned k) {
      const ir::Op* y = r.terminator();
      return y && k < y->operands.size() ? get(y->operand(k)) : kTop;
    };
    switch (o.kind) {
      case OpKind::addptr:
      case OpKind::splat:
      case OpKind::broadcast:
      case OpKind::expand_dims:
      case OpKind::reshape:
      case OpKind::permute:
      case OpKind::convert_layout:
      case OpKind::hint: changed |= update(o.result(), in(0)); break;
      case OpKind::split:
        for (const auto& r : o.results) changed |= update(r.get(), in(0));
        break;
      case OpKind::join: changed |= update(o.result(), meet(in(0), in(1))); break;
      case OpKind::select: changed |= update(o.result(), meet(in(1), in(2))); break;
      case OpKind::for_: {  // region args (iv, carried...), operands (lo, hi, step, init...)
        const ir::Block& body = *o.region(0);
        for (unsigned k = 0; k + 3 < o.operands.size(); ++k) {
          const int slot = meet(in(3 + k), yielded(body, k));
          if (k + 1 < body.args.size()) changed |= update(body.arg(k + 1), slot);
          if (k < o.results.size()) changed |= update(o.result(k), slot);
        }
        changed |= visit(body);
        break;
      }
      case OpKind::while_: {  // both regions' args are the carried values
        for (unsigned k = 0; k < o.operands.size(); ++k) {
          const int slot = meet(in(k), yielded(*o.region(1), k));
          for (const auto& reg : o.regions)
            if (k < reg->args.size()) changed |= update(reg->arg(k), slot);
          if (k < o.results.size()) changed |= update(o.result(k), slot);
        }
        for (const auto& reg : o.regions) changed |= visit(*reg);
        break;
      }
      case OpKind::if_: {
        for (unsigned k = 0; k < o.results.size(); ++k) {
          int slot = kTop;
          for (const auto& reg : o.regions) slot = meet(slot, yielded(*reg, k));
          changed |= update(o.result(k), slot);
        }
        for (const auto& reg : o.regions) changed |= visit(*reg);
        break;
      }
      default:
        // a pointer made any other way (from an integer, loaded from memory): no origin
        for (const auto& r : o.results) changed |= update(r.get(), kNone);
        for (const auto& reg : o.regions) changed |= visit(*reg);
        break;
    }
  }
  return changed;
}

PointerOrigins::PointerOrigins(const ir::Function& f) : fn_(f) {
  while (visit(f.body)) {
  }
}

std::optional<unsigned> PointerOrigins::origin(const ir::Value* ptr) const {
  if (!ptr || !ptr->type.ptr) return std::nullopt;
  const int r = get(ptr);
  if (r < 0) return std::nullopt;  // none, or never reached (a carried slot nothing enters)
  return static_cast<unsigned>(r);
}

bool PointerOrigins::may_alias(const ir::Value* a, const ir::Value* b) const {
  const std::optional<unsigned> x = origin(a), y = origin(b);
  if (!x || !y || *x == *y) return true;
  auto own = [&](unsigned i) { return i < fn_.arg_info.size() && fn_.arg_info[i].noalias; };
  return !own(*x) && !own(*y);
}

}  // namespace tile::analysis

// src/transforms/cse.cpp — layer: transforms. Scoped common-subexpression elimination of pure
// ops (see passes.hpp for the contract).
//
// A walk in program order keeps a stack of scopes, one per block being visited: an op is
// looked up from the innermost scope outwards and, if an equivalent op is found, its results
// replace the op's results in every later use; otherwise it is recorded in the innermost scope.
// Leaving a block pops its scope, so values defined in a region are never offered to ops after
// it. Combine regions of reduce/scan start from an empty stack. Replaced ops are erased at the
// end: every use of theirs comes later in the walk and has been redirected.
#include <bit>
#include <unordered_map>

#include "transforms/passes.hpp"

namespace tile::transforms {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::uint64_t key_hash(const Op& op) {
  std::uint64_t h = static_cast<std::uint64_t>(op.kind);
  for (const Value* o : op.operands) h = mix(h, reinterpret_cast<std::uintptr_t>(o));
  for (auto i : op.attrs.ints) h = mix(h, static_cast<std::uint64_t>(i));
  h = mix(h, std::bit_cast<std::uint64_t>(op.attrs.f));
  h = mix(h, std::hash<std::string>{}(op.attrs.str));
  for (auto& r : op.results) {
    h = mix(h, static_cast<std::uint64_t>(r->type.elem) * 2 + r->type.ptr);
    for (auto e : r->type.shape) h = mix(h, static_cast<std::uint64_t>(e));
  }
  return h;
}

/// Same kind, operands, attrs (f bit for bit: 0.0 and -0.0 differ) and result types.
bool equivalent(const Op& a, const Op& b) {
  if (a.kind != b.kind || a.operands != b.operands || a.results.size() != b.results.size()) return false;
  if (a.attrs.ints != b.attrs.ints || a.attrs.str != b.attrs.str ||
      std::bit_cast<std::uint64_t>(a.attrs.f) != std::bit_cast<std::uint64_t>(b.attrs.f))
    return false;
  for (std::size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i]->type != b.results[i]->type) return false;
  return true;
}

class Cse {
 public:
  bool run(ir::Function& f) {
    block(f.body);
    for (auto& [b, it] : dead_) b->ops.erase(it);  // pure and, once uses are redirected, unused
    return !dead_.empty();
  }

 private:
  using Scope = std::unordered_multimap<std::uint64_t, Op*>;
  std::vector<Scope> scopes_;
  std::unordered_map<Value*, Value*> subst_;
  std::vector<std::pair<ir::Block*, std::list<std::unique_ptr<Op>>::iterator>> dead_;

  Op* lookup(const Op& op, std::uint64_t h) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
      auto [lo, hi] = s->equal_range(h);
      for (auto it = lo; it != hi; ++it)
        if (equivalent(*it->second, op)) return it->second;
    }
    return nullptr;
  }

  void block(ir::Block& b) {
    scopes_.emplace_back();
    for (auto it = b.ops.begin(); it != b.ops.end(); ++it) {
      Op& op = **it;
      for (auto& o : op.operands)
        if (auto s = subst_.find(o); s != subst_.end()) o = s->second;
      if (op.regions.empty() && ir::is_pure(op.kind)) {
        std::uint64_t h = key_hash(op);
        if (Op* prev = lookup(op, h)) {
          for (std::size_t i = 0; i < op.results.size(); ++i) subst_[op.result(i)] = prev->result(i);
          dead_.emplace_back(&b, it);
        } else {
          scopes_.back().emplace(h, &op);
        }
        continue;
      }
      bool isolated = op.kind == OpKind::reduce || op.kind == OpKind::scan;
      for (auto& r : op.regions) {
        std::vector<Scope> outer;
        if (isolated) outer.swap(scopes_);
        block(*r);
        if (isolated) outer.swap(scopes_);
      }
    }
    scopes_.pop_back();
  }
};

class CsePass final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  bool run(ir::Function& f) override { return Cse().run(f); }
};

}  // namespace

std::unique_ptr<Pass> make_cse() { return std::make_unique<CsePass>(); }

}  // namespace tile::transforms

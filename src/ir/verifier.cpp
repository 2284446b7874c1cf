// src/ir/verifier.cpp — layer: ir. Checks the invariants of tile IR that every pass may rely on
// and must preserve; the pass manager runs it after every pass (TILE_VERIFY).
//
// Three kinds of rules:
//   structure   every block ends with exactly one terminator (and has none elsewhere), the kernel
//               body ends with `return`, regions end with the terminator their op expects, the
//               ownership links (op <-> block <-> value) are consistent;
//   dominance   an operand is defined earlier in the same block or in an enclosing block: a value
//               defined inside a region is never used outside it, and an op's own results are not
//               visible in its regions;
//   per op      operand and result counts and types, attributes and region signatures, as
//               documented row by row in ops.def;
//   layouts     at the GPU level, every tile's layout and the layouts each op's values must
//               share (verify_layouts.cpp); in tile IR, none.
// Power-of-two extents are not an IR rule (the frontend enforces them for user tiles).
//
// A violation throws tile::error:
//   "IR verifier (after <stage>): op '<name>': <rule broken> (<types involved>)"
// located at the op's source location, with the function's name as the kernel.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/ir.hpp"
#include "ir/verify_layouts.hpp"

namespace tile::ir {

namespace {

std::string type_list(std::initializer_list<const Type*> ts) {
  std::string s;
  for (const Type* t : ts) s += (s.empty() ? "" : ", ") + t->str();
  return s;
}
std::string type_list(const std::vector<const Type*>& ts) {
  std::string s;
  for (const Type* t : ts) s += (s.empty() ? "" : ", ") + t->str();
  return s;
}
std::vector<const Type*> types_of(const std::vector<Value*>& vs, std::size_t from = 0) {
  std::vector<const Type*> out;
  for (std::size_t i = from; i < vs.size(); ++i) out.push_back(&vs[i]->type);
  return out;
}
std::vector<const Type*> types_of(const std::vector<std::unique_ptr<Value>>& vs, std::size_t from = 0) {
  std::vector<const Type*> out;
  for (std::size_t i = from; i < vs.size(); ++i) out.push_back(&vs[i]->type);
  return out;
}
bool same_types(const std::vector<const Type*>& a, const std::vector<const Type*>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Type* x, const Type* y) { return x->same_data(*y); });
}
std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

class Verifier {
 public:
  Verifier(const Function& f, std::string_view stage) : f_(f), stage_(stage) {}

  void run() {
    number(f_.body);
    for (std::size_t i = 0; i < f_.body.args.size(); ++i) {
      const Value* a = f_.body.args[i].get();
      if (!a->type.is_scalar())
        fail_fn("kernel argument " + std::to_string(i) + " must be a scalar or a pointer (" + a->type.str() + ")");
    }
    if (!f_.arg_info.empty() && f_.arg_info.size() != f_.body.args.size())
      fail_fn("the kernel has " + std::to_string(f_.body.args.size()) + " arguments but " +
              std::to_string(f_.arg_info.size()) + " argument infos");
    for (auto& ai : f_.arg_info)
      if (ai.divisibility < 1) fail_fn("argument " + ai.name + " has divisibility " + std::to_string(ai.divisibility));
    if (f_.body.parent) fail_fn("the kernel body must not belong to an op");
    if (f_.body.ops.empty()) fail_fn("the kernel body is empty; it must end with 'return'");
    block(f_.body);
  }

 private:
  const Function& f_;
  std::string_view stage_;
  std::unordered_set<const Value*> visible_;
  std::unordered_map<const Value*, std::size_t> order_;  // pre-order position of each definition
  std::unordered_map<const Op*, std::size_t> op_order_;  // values defined before the op
  int lane_bits_ = -1;  // the GPU level's lane bases a layout (the first tile's)

  void check_layout(const Op* op, const Type& t) {
    std::string r = gpu_type_rule(f_, t, lane_bits_);
    if (r.empty()) return;
    if (op) fail(*op, r);
    fail_fn(r);
  }

  [[noreturn]] void fail(const Op& op, const std::string& rule, const std::string& types = {}) const {
    std::string m = "IR verifier (after " + std::string(stage_) + "): op '" + std::string(op_name(op.kind)) + "': " + rule;
    if (!types.empty()) m += " (" + types + ")";
    throw tile::error(m, op.loc, f_.name);
  }
  [[noreturn]] void fail_fn(const std::string& rule) const {
    throw tile::error("IR verifier (after " + std::string(stage_) + "): " + rule, f_.loc, f_.name);
  }

  void number(const Block& b) {
    for (auto& a : b.args) order_.emplace(a.get(), order_.size());
    for (auto& op : b.ops) {
      op_order_.emplace(op.get(), order_.size());
      for (auto& r : op->results) order_.emplace(r.get(), order_.size());
      for (auto& r : op->regions) number(*r);
    }
  }

  // ---- structure and dominance ---------------------------------------------------------------
  void block(const Block& b) {
    std::vector<const Value*> added;
    for (std::size_t i = 0; i < b.args.size(); ++i) {
      const Value* a = b.args[i].get();
      if (a->owner != &b || a->def || a->index != i) {
        if (b.parent) fail(*b.parent, "region argument " + std::to_string(i) + " has inconsistent owner links");
        fail_fn("kernel argument " + std::to_string(i) + " has inconsistent owner links");
      }
      check_extents(b.parent, a->type);
      check_layout(b.parent, a->type);
      visible_.insert(a);
      added.push_back(a);
    }
    if (b.ops.empty()) {
      if (b.parent) fail(*b.parent, "a region is empty; it must end with a terminator");
      return;
    }
    const Op* last = b.ops.back().get();
    for (auto& up : b.ops) {
      const Op& op = *up;
      if (op.parent != &b) fail(op, "the op's parent link does not name its block");
      if (is_terminator(op.kind) && &op != last) fail(op, "a terminator must be the last op of its block");
      if (!is_terminator(op.kind) && &op == last)
        fail(op, "the block does not end with a terminator (" + std::string(b.parent ? "yield or condition" : "return") +
                     " expected after it)");
      for (std::size_t i = 0; i < op.operands.size(); ++i) check_visible(op, i);
      for (std::size_t i = 0; i < op.results.size(); ++i) {
        const Value* r = op.results[i].get();
        if (r->def != &op || r->owner || r->index != i)
          fail(op, "result " + std::to_string(i) + " has inconsistent definition links");
        check_extents(&op, r->type);
        check_layout(&op, r->type);
      }
      check_op(op);
      if (std::string rule = gpu_op_rule(f_, op); !rule.empty()) fail(op, rule);
      for (auto& r : op.regions) {
        if (r->parent != &op) fail(op, "a region's parent link does not name its op");
        block(*r);
      }
      for (auto& r : op.results) {
        visible_.insert(r.get());
        added.push_back(r.get());
      }
    }
    check_terminator(b, *last);
    for (const Value* v : added) visible_.erase(v);
  }

  void check_visible(const Op& op, std::size_t i) {
    const Value* v = op.operands[i];
    std::string which = "operand #" + std::to_string(i);
    if (!v) fail(op, which + " is null");
    if (visible_.count(v)) return;
    auto it = order_.find(v);
    if (it == order_.end()) fail(op, which + " is not defined in this function", v->type.str());
    for (const Op* up = op.parent ? op.parent->parent : nullptr; up; up = up->parent ? up->parent->parent : nullptr)
      if (v->def == up)
        fail(op, which + " is a result of the enclosing '" + std::string(op_name(up->kind)) +
                     "', which is not visible inside its regions", v->type.str());
    if (it->second >= op_order_.at(&op)) fail(op, which + " is used before its definition", v->type.str());
    fail(op, which + " is defined inside a region that does not enclose this use", v->type.str());
  }

  void check_extents(const Op* op, const Type& t) {
    for (auto e : t.shape)
      if (e < 1) {
        if (op) fail(*op, "tile extents must be positive", t.str());
        fail_fn("tile extents must be positive (" + t.str() + ")");
      }
  }

  /// The terminator a block ends with must be the one its region expects.
  void check_terminator(const Block& b, const Op& t) {
    const Op* parent = b.parent;
    if (!parent) {
      if (t.kind != OpKind::ret) fail(t, "the kernel body must end with 'return'");
      return;
    }
    bool while_cond = parent->kind == OpKind::while_ && parent->regions.size() == 2 && parent->region(0) == &b;
    if (while_cond) {
      if (t.kind != OpKind::condition) fail(t, "the condition region of 'while' must end with 'condition'");
      return;
    }
    if (t.kind != OpKind::yield)
      fail(t, "a region of '" + std::string(op_name(parent->kind)) + "' must end with 'yield'");
    // what the yield must carry: the op's results (for, while, if) or their scalars (combine)
    std::vector<Type> scalars;
    std::vector<const Type*> want;
    switch (parent->kind) {
      case OpKind::for_:
      case OpKind::while_:
      case OpKind::if_:
        want = types_of(parent->results);
        break;
      case OpKind::reduce:
      case OpKind::scan:
        for (auto& r : parent->results) scalars.push_back(r->type.scalar());
        for (auto& sc : scalars) want.push_back(&sc);
        break;
      default:
        return;
    }
    auto got = types_of(t.operands);
    if (!same_types(got, want))
      fail(t, "yields (" + type_list(got) + ") where the enclosing '" + std::string(op_name(parent->kind)) +
                  "' expects (" + type_list(want) + ")");
  }

  // ---- per-op rules ----------------------------------------------------------------------------
  void counts(const Op& op, std::size_t operands, std::size_t results) {
    if (op.operands.size() != operands)
      fail(op, "expects " + std::to_string(operands) + " operands, got " + std::to_string(op.operands.size()));
    if (op.results.size() != results)
      fail(op, "expects " + std::to_string(results) + " results, got " + std::to_string(op.results.size()));
  }
  void ints(const Op& op, std::size_t n) {
    if (op.attrs.ints.size() < n)
      fail(op, "expects " + std::to_string(n) + " integer attributes, got " + std::to_string(op.attrs.ints.size()));
  }
  void range(const Op& op, std::size_t i, std::int64_t lo, std::int64_t hi, const char* what) {
    std::int64_t v = op.attrs.ints[i];
    if (v < lo || v > hi) fail(op, std::string(what) + " " + std::to_string(v) + " is out of range");
  }
  void flag(const Op& op, std::size_t i, const char* what) { range(op, i, 0, 1, what); }
  const Type& in(const Op& op, std::size_t i) { return op.operands[i]->type; }
  const Type& out(const Op& op, std::size_t i = 0) { return op.results[i]->type; }
  void same(const Op& op, const Type& a, const Type& b, const char* rule) {
    if (!a.same_data(b)) fail(op, rule, type_list({&a, &b}));
  }
  static Type pointee(const Type& p) { return Type{p.elem, false, p.shape}; }
  void scalar_of(const Op& op, std::size_t i, dtype e, const char* what) {
    if (!in(op, i).same_data(Type{e})) fail(op, std::string(what) + " must be a scalar " + std::string(name(e)), in(op, i).str());
  }
  void barriers_of(const Op& op, std::size_t i) {
    if (in(op, i).mem != smem::barriers) fail(op, "operand #" + std::to_string(i) + " must be copy barriers (a local_alloc of #smem<barriers>)", in(op, i).str());
  }

  void elementwise(const Op& op, std::size_t n) {
    counts(op, n, 1);
    for (std::size_t i = 0; i < n; ++i)
      if (in(op, i).shape != out(op).shape)
        fail(op, "operands and result of an elementwise op must have one shape", type_list(types_of(op.operands)) + " -> " + out(op).str());
  }
  void arithmetic(const Op& op, std::size_t n, bool ints_only, bool floats_only) {
    elementwise(op, n);
    for (std::size_t i = 0; i < n; ++i) {
      same(op, in(op, i), out(op), "operands and result must have the same type");
      const Type& t = in(op, i);
      if (t.ptr) fail(op, "operands must not be pointers", t.str());
      if (ints_only && !t.is_int()) fail(op, "operands must be integers", t.str());
      if (floats_only && !t.is_float()) fail(op, "operands must be floating point", t.str());
    }
  }

  void check_op(const Op& op) {
    bool regions_expected = op_flags(op.kind) & opflag::R;
    if (!regions_expected && !op.regions.empty()) fail(op, "this op has no regions, got " + std::to_string(op.regions.size()));
    const auto& at = op.attrs.ints;
    switch (op.kind) {
      case OpKind::constant: {
        counts(op, 0, 1);
        const Type& t = out(op);
        if (!t.is_float()) {
          ints(op, 1);
          if (t.elem == dtype::i1 && !t.ptr && at[0] != 0 && at[0] != 1)
            fail(op, "an i1 constant must be 0 or 1, got " + std::to_string(at[0]), t.str());
        }
        break;
      }
      case OpKind::program_id:
      case OpKind::num_programs:
        counts(op, 0, 1);
        ints(op, 1);
        range(op, 0, 0, 2, "axis");
        same(op, out(op), Type{dtype::i32, false, {}}, "the result must be i32");
        break;
      case OpKind::arange:
        counts(op, 0, 1);
        ints(op, 2);
        if (!out(op).same_data(Type{dtype::i32, false, {at[1] - at[0]}}))
          fail(op, "the result must be i32[end - start] for start " + std::to_string(at[0]) + ", end " + std::to_string(at[1]),
               out(op).str());
        break;
      case OpKind::splat:
        counts(op, 1, 1);
        if (!in(op, 0).is_scalar() || out(op).is_scalar() || !in(op, 0).same_data(out(op).scalar()))
          fail(op, "splat takes a scalar to a tile of its element type", type_list({&in(op, 0), &out(op)}));
        break;
      case OpKind::broadcast: {
        counts(op, 1, 1);
        const Type &a = in(op, 0), &r = out(op);
        bool ok = a.elem == r.elem && a.ptr == r.ptr && a.shape.size() == r.shape.size();
        for (std::size_t i = 0; ok && i < a.shape.size(); ++i) ok = a.shape[i] == r.shape[i] || a.shape[i] == 1;
        if (!ok) fail(op, "broadcast keeps the element type and rank and stretches only extents of 1", type_list({&a, &r}));
        break;
      }
      case OpKind::expand_dims: {
        counts(op, 1, 1);
        ints(op, 1);
        const Type& a = in(op, 0);
        range(op, 0, 0, static_cast<std::int64_t>(a.shape.size()), "axis");
        auto s = a.shape;
        s.insert(s.begin() + at[0], 1);
        if (!out(op).same_data(a.with_shape(s))) fail(op, "the result must insert an extent of 1 at the axis", type_list({&a, &out(op)}));
        break;
      }
      case OpKind::reshape:
        counts(op, 1, 1);
        if (in(op, 0).elem != out(op).elem || in(op, 0).ptr != out(op).ptr || in(op, 0).numel() != out(op).numel())
          fail(op, "reshape keeps the element type and the number of elements", type_list({&in(op, 0), &out(op)}));
        break;
      case OpKind::permute: {
        counts(op, 1, 1);
        const Type& a = in(op, 0);
        std::vector<std::int64_t> sorted = at;
        std::sort(sorted.begin(), sorted.end());
        bool ok = sorted.size() == a.shape.size();
        for (std::size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<std::int64_t>(i);
        if (!ok) fail(op, "the order attribute must be a permutation of the input's axes", a.str());
        std::vector<std::int64_t> s;
        for (auto i : at) s.push_back(a.shape[static_cast<std::size_t>(i)]);
        if (!out(op).same_data(a.with_shape(s))) fail(op, "the result shape must be the input's axes in the given order", type_list({&a, &out(op)}));
        break;
      }
      case OpKind::join: {
        counts(op, 2, 1);
        same(op, in(op, 0), in(op, 1), "both operands must have the same type");
        auto s = in(op, 0).shape;
        s.push_back(2);
        if (!out(op).same_data(in(op, 0).with_shape(s))) fail(op, "the result must be the operands' shape + [2]", type_list({&in(op, 0), &out(op)}));
        break;
      }
      case OpKind::split: {
        counts(op, 1, 2);
        const Type& a = in(op, 0);
        if (a.shape.empty() || a.shape.back() != 2) fail(op, "the operand's last extent must be 2", a.str());
        auto s = a.shape;
        s.pop_back();
        if (!out(op, 0).same_data(a.with_shape(s)) || !out(op, 1).same_data(a.with_shape(s)))
          fail(op, "both results must be the operand without its last axis", type_list({&a, &out(op, 0), &out(op, 1)}));
        break;
      }
      case OpKind::cast: {
        elementwise(op, 1);
        const Type &a = in(op, 0), &r = out(op);
        auto addr = [](const Type& t) { return !t.ptr && (t.elem == dtype::i64 || t.elem == dtype::u64); };
        if ((a.ptr && r.ptr) || (a.ptr && !addr(r)) || (r.ptr && !addr(a)))
          fail(op, "a pointer casts only to or from i64/u64", type_list({&a, &r}));
        break;
      }
      case OpKind::bitcast: {
        elementwise(op, 1);
        const Type &a = in(op, 0), &r = out(op);
        bool ok = a.ptr == r.ptr && (a.ptr || (bits(a.elem) == bits(r.elem) && a.elem != dtype::i1 && r.elem != dtype::i1));
        if (!ok) fail(op, "bitcast needs element types of one width (or two pointers)", type_list({&a, &r}));
        break;
      }
      case OpKind::add:
      case OpKind::sub:
      case OpKind::mul:
      case OpKind::div:
      case OpKind::rem:
      case OpKind::minimum:
      case OpKind::maximum:
        arithmetic(op, 2, false, false);
        break;
      case OpKind::bit_and:
      case OpKind::bit_or:
      case OpKind::bit_xor:
      case OpKind::shl:
      case OpKind::shr:
      case OpKind::umulhi:
        arithmetic(op, 2, true, false);
        break;
      case OpKind::neg:
      case OpKind::abs:
        arithmetic(op, 1, false, false);
        break;
      case OpKind::bit_not:
        arithmetic(op, 1, true, false);
        break;
      case OpKind::exp: case OpKind::exp2: case OpKind::log: case OpKind::log2: case OpKind::sqrt:
      case OpKind::rsqrt: case OpKind::sin: case OpKind::cos: case OpKind::floor: case OpKind::ceil:
      case OpKind::erf:
        arithmetic(op, 1, false, true);
        break;
      case OpKind::fma:
        arithmetic(op, 3, false, true);
        break;
      case OpKind::cmp:
        elementwise(op, 2);
        ints(op, 1);
        range(op, 0, 0, 5, "predicate");
        same(op, in(op, 0), in(op, 1), "both operands must have the same type");
        same(op, out(op), in(op, 0).with_elem(dtype::i1), "the result must be i1 of the operands' shape");
        break;
      case OpKind::addptr:
        elementwise(op, 2);
        if (!in(op, 0).ptr || !in(op, 1).is_int() || in(op, 1).elem == dtype::i1)
          fail(op, "addptr takes pointers and integer offsets", type_list({&in(op, 0), &in(op, 1)}));
        same(op, out(op), in(op, 0), "the result must have the pointers' type");
        break;
      case OpKind::select:
        elementwise(op, 3);
        if (in(op, 0).ptr || in(op, 0).elem != dtype::i1) fail(op, "the condition must be i1", in(op, 0).str());
        same(op, in(op, 1), in(op, 2), "both choices must have the same type");
        same(op, out(op), in(op, 1), "the result must have the choices' type");
        break;
      case OpKind::load: {
        ints(op, 5);
        flag(op, 0, "has_mask");
        flag(op, 1, "has_other");
        if (at[1] && !at[0]) fail(op, "has_other requires has_mask");
        range(op, 2, 0, 3, "cache modifier");
        range(op, 3, 0, 2, "eviction policy");
        flag(op, 4, "volatile");
        counts(op, static_cast<std::size_t>(1 + at[0] + at[1]), 1);
        const Type& p = in(op, 0);
        if (!p.ptr) fail(op, "operand #0 must be a pointer", p.str());
        mask_operand(op, 1, at[0] != 0);
        if (at[1]) same(op, in(op, 2), pointee(p), "`other` must have the pointee type");
        same(op, out(op), pointee(p), "the result must have the pointee type of the pointers' shape");
        break;
      }
      case OpKind::desc_load: {
        const std::size_t r = at.size();
        if (r < 1 || r > 5) fail(op, "a descriptor load has 1 to 5 block extents, got " + std::to_string(r));
        counts(op, 1 + 3 * r, 1);
        const Type& p = in(op, 0);
        if (!p.ptr || !p.is_scalar()) fail(op, "operand #0 must be a scalar pointer", p.str());
        for (std::size_t i = 1; i <= 3 * r; ++i) {
          const Type& t = in(op, i);
          if (!t.is_scalar() || !t.is_int() || t.elem == dtype::i1)
            fail(op, "shape, strides and offsets must be integer scalars, operand #" + std::to_string(i) + " is", t.str());
        }
        for (auto e : at)
          if (e < 1) fail(op, "block extents must be positive, got " + std::to_string(e));
        same(op, out(op), Type{p.elem, false, at}, "the result must be the block of the pointee type");
        break;
      }
      case OpKind::store: {
        ints(op, 3);
        flag(op, 0, "has_mask");
        range(op, 1, 0, 3, "cache modifier");
        range(op, 2, 0, 2, "eviction policy");
        counts(op, static_cast<std::size_t>(2 + at[0]), 0);
        const Type& p = in(op, 0);
        if (!p.ptr) fail(op, "operand #0 must be a pointer", p.str());
        same(op, in(op, 1), pointee(p), "the stored value must have the pointee type of the pointers' shape");
        mask_operand(op, 2, at[0] != 0);
        break;
      }
      case OpKind::atomic_rmw: {
        ints(op, 2);
        range(op, 0, 0, 6, "atomic kind");
        flag(op, 1, "has_mask");
        counts(op, static_cast<std::size_t>(2 + at[1]), 1);
        const Type& p = in(op, 0);
        if (!p.ptr) fail(op, "operand #0 must be a pointer", p.str());
        same(op, in(op, 1), pointee(p), "the value must have the pointee type of the pointers' shape");
        mask_operand(op, 2, at[1] != 0);
        same(op, out(op), pointee(p), "the result must have the pointee type of the pointers' shape");
        break;
      }
      case OpKind::atomic_cas: {
        counts(op, 3, 1);
        const Type& p = in(op, 0);
        if (!p.ptr) fail(op, "operand #0 must be a pointer", p.str());
        same(op, in(op, 1), pointee(p), "the compared value must have the pointee type of the pointers' shape");
        same(op, in(op, 2), pointee(p), "the value must have the pointee type of the pointers' shape");
        same(op, out(op), pointee(p), "the result must have the pointee type of the pointers' shape");
        break;
      }
      case OpKind::reduce:
      case OpKind::scan:
        combine(op);
        break;
      case OpKind::dot: {
        // (at the GPU level a warpgroup dot may take a fourth operand, an i1 guard: defer_dots)
        if (op.operands.size() == 4 && f_.gpu) {
          const Type& g = in(op, 3);
          if (!g.is_scalar() || g.elem != dtype::i1) fail(op, "a dot's guard must be an i1 scalar", g.str());
          if (op.attrs.ints.size() < 2 || op.attrs.ints[1] != 2) fail(op, "only a warpgroup dot takes a guard");
          if (op.results.size() != 1) fail(op, "expects 1 result, got " + std::to_string(op.results.size()));
        } else {
          counts(op, 3, 1);
        }
        ints(op, 1);
        range(op, 0, 0, 2, "precision");
        if (op.attrs.ints.size() > 4) range(op, 4, 0, 2, "groups a dot leaves in flight");
        const Type &a = in(op, 0), &b = in(op, 1), &c = in(op, 2);
        bool ok = !a.ptr && !b.ptr && !c.ptr && a.shape.size() == 2 && b.shape.size() == 2 && c.shape.size() == 2 &&
                  a.shape[1] == b.shape[0] && c.shape[0] == a.shape[0] && c.shape[1] == b.shape[1];
        if (!ok) fail(op, "dot takes [M,K] x [K,N] with an [M,N] accumulator", type_list({&a, &b, &c}));
        if (a.elem != b.elem) fail(op, "both inputs must have one element type", type_list({&a, &b}));
        same(op, out(op), c, "the result must have the accumulator's type");
        break;
      }
      case OpKind::for_: {
        if (op.operands.size() < 3) fail(op, "expects lower bound, upper bound and step operands");
        const Type& lo = in(op, 0);
        if (!lo.is_scalar() || !lo.is_int() || lo.elem == dtype::i1)
          fail(op, "the bounds and step must be integer scalars", lo.str());
        same(op, in(op, 1), lo, "the bounds and step must have one type");
        same(op, in(op, 2), lo, "the bounds and step must have one type");
        carried(op, 3, 1);
        const Block& body = *op.region(0);
        if (body.args.size() != op.operands.size() - 2)
          fail(op, "the body takes the induction variable and one argument per carried value, got " +
                       std::to_string(body.args.size()) + " arguments");
        same(op, body.arg(0)->type, lo, "the induction variable must have the bounds' type");
        if (!same_types(types_of(body.args, 1), types_of(op.operands, 3)))
          fail(op, "the body's carried arguments must have the initial values' types",
               type_list(types_of(body.args, 1)) + " vs " + type_list(types_of(op.operands, 3)));
        break;
      }
      case OpKind::while_: {
        carried(op, 0, 2);
        auto init = types_of(op.operands);
        for (unsigned r = 0; r < 2; ++r)
          if (!same_types(types_of(op.region(r)->args), init))
            fail(op, std::string("the ") + (r ? "body" : "condition") + " region's arguments must have the carried values' types",
                 type_list(types_of(op.region(r)->args)) + " vs " + type_list(init));
        break;
      }
      case OpKind::if_: {
        if (op.operands.size() != 1) fail(op, "expects 1 operand, got " + std::to_string(op.operands.size()));
        if (!in(op, 0).same_data(Type{dtype::i1, false, {}})) fail(op, "the condition must be an i1 scalar", in(op, 0).str());
        regions(op, 2);
        for (unsigned r = 0; r < 2; ++r)
          if (!op.region(r)->args.empty()) fail(op, "the branches of 'if' take no arguments");
        break;
      }
      case OpKind::yield:
        if (!op.results.empty()) fail(op, "a terminator has no results");
        break;
      case OpKind::condition:
        counts(op, 1, 0);
        if (!in(op, 0).same_data(Type{dtype::i1, false, {}})) fail(op, "the condition must be an i1 scalar", in(op, 0).str());
        break;
      case OpKind::ret:
        counts(op, 0, 0);
        break;
      case OpKind::print:
        if (!op.results.empty()) fail(op, "print has no results");
        ints(op, 1);
        flag(op, 0, "hex");
        break;
      case OpKind::assert_:
        counts(op, 1, 0);
        if (in(op, 0).ptr || in(op, 0).elem != dtype::i1) fail(op, "the condition must be i1", in(op, 0).str());
        break;
      case OpKind::local_alloc:
        if (op.operands.empty()) {  // a buffer nothing was stored in yet: a ring or copy barriers
          counts(op, 0, 1);
          ints(op, 1);
          if (!out(op).is_buffer()) fail(op, "local_alloc gives a shared-memory buffer", out(op).str());
          if (out(op).mem == smem::barriers ? out(op).shape.size() != 1 || out(op).elem != dtype::i64
                                            : out(op).shape.size() != 3 ||
                                                  (out(op).mem != smem::swizzled && out(op).mem != smem::swizzled_transposed))
            fail(op, "an empty buffer is a swizzled ring [buffers, rows, cols] (or a transposed one) or copy barriers i64[buffers]",
                 out(op).str());
          break;
        }
        counts(op, 1, 1);
        ints(op, 2);
        flag(op, 1, "tf32");
        if (at[1] && in(op, 0).elem != dtype::f32) fail(op, "only f32 elements are stored rounded to tf32", in(op, 0).str());
        same(op, out(op), in(op, 0), "the buffer holds the operand's elements");
        if (in(op, 0).shape.size() != 2 || in(op, 0).ptr) fail(op, "a buffer holds a 2-D tile of numbers", in(op, 0).str());
        break;
      case OpKind::buffer_index:
        counts(op, 2, 1);
        scalar_of(op, 1, dtype::u32, "the slot");
        {
          // one of the ring's buffers, or its transposed view: the same bytes as the transpose
          // [cols, rows] in the other swizzled arrangement (a load several dots read, one through
          // tl::trans)
          const Type& r = in(op, 0);
          const bool ring = (r.mem == smem::swizzled || r.mem == smem::swizzled_transposed) && r.shape.size() == 3;
          const bool plain = ring && out(op).mem == r.mem && out(op).shape == std::vector<std::int64_t>{r.shape[1], r.shape[2]};
          const smem flipped = r.mem == smem::swizzled ? smem::swizzled_transposed : smem::swizzled;
          const bool view = ring && out(op).mem == flipped && out(op).shape == std::vector<std::int64_t>{r.shape[2], r.shape[1]};
          if (!ring || out(op).elem != r.elem || (!plain && !view))
            fail(op, "buffer_index takes a ring [buffers, rows, cols] to one of its buffers [rows, cols] (or its transposed view [cols, rows] in the other swizzled arrangement)",
                 type_list({&in(op, 0), &out(op)}));
        }
        break;
      case OpKind::iter_ahead:
        counts(op, 3, 2);
        ints(op, 1);
        if (!in(op, 0).is_scalar() || !in(op, 0).is_int() || in(op, 0).elem == dtype::i1) fail(op, "iter_ahead takes a loop's integer bounds", in(op, 0).str());
        same(op, in(op, 1), in(op, 0), "the induction value, step and bound must have one type");
        same(op, in(op, 2), in(op, 0), "the induction value, step and bound must have one type");
        same(op, out(op, 0), in(op, 0), "the first result is an induction value");
        if (!(out(op, 1).same_data(Type{dtype::i1}))) fail(op, "the second result is i1", out(op, 1).str());
        if (op.attrs.ints[0] < 0) fail(op, "iterations ahead must be >= 0");
        break;
      case OpKind::async_copy: {
        if (op.operands.size() != 3 && op.operands.size() != 4) fail(op, "expects (buffer, pointers, valid [, mask])");
        counts(op, op.operands.size(), 1);
        if (!out(op, 0).token) fail(op, "async_copy gives its token", out(op, 0).str());
        ints(op, 2);
        flag(op, 1, "has_mask");
        if (op.operands.size() != 3 + static_cast<std::size_t>(op.attrs.ints[1])) fail(op, "has_mask disagrees with the operands");
        const Type& p = in(op, 1);
        const bool swizzled = in(op, 0).mem == smem::swizzled || in(op, 0).mem == smem::swizzled_transposed;
        if (!p.ptr || p.shape.size() != 2 || !swizzled || in(op, 0).shape != p.shape || in(op, 0).elem != p.elem)
          fail(op, "async_copy copies a 2-D tile of pointers into a swizzled buffer (or a transposed one) of its shape and type",
               type_list({&in(op, 0), &p}));
        scalar_of(op, 2, dtype::i1, "valid");
        if (op.attrs.ints[1] && (in(op, 3).elem != dtype::i1 || in(op, 3).shape != p.shape)) fail(op, "the mask must be i1 of the pointers' shape", in(op, 3).str());
        if (op.attrs.ints[0] < 1) fail(op, "a copy's run is at least one element");
        break;
      }
      case OpKind::copy_fence: counts(op, 0, 0); break;
      case OpKind::async_commit:
      case OpKind::async_wait: {
        const bool commit = op.kind == OpKind::async_commit;
        counts(op, op.operands.size(), commit ? 1 : 0);
        if (op.operands.empty()) fail(op, commit ? "async_commit groups the copies of its tokens" : "async_wait names the groups it waits for by their tokens");
        for (std::size_t i = 0; i < op.operands.size(); ++i)
          if (!in(op, i).token) fail(op, commit ? "async_commit groups the copies of its tokens" : "async_wait names the groups it waits for by their tokens", in(op, i).str());
        if (commit) {
          if (!out(op, 0).token) fail(op, "async_commit gives the group's token", out(op, 0).str());
          break;
        }
        ints(op, 1);
        range(op, 0, 0, 64, "pending groups");
        break;
      }
      case OpKind::tensor_copy:
        counts(op, 7, 0);
        ints(op, 2);
        if (!in(op, 0).ptr || !in(op, 0).is_scalar()) fail(op, "a tensor copy reads the tensor at a pointer", in(op, 0).str());
        if (in(op, 1).mem != smem::swizzled || in(op, 1).shape.size() != 2 || in(op, 1).elem != in(op, 0).elem)
          fail(op, "a tensor copy fills a swizzled 2-D buffer of its tensor's type", type_list({&in(op, 0), &in(op, 1)}));
        barriers_of(op, 2);
        scalar_of(op, 3, dtype::u32, "the slot");
        scalar_of(op, 4, dtype::i32, "the column");
        scalar_of(op, 5, dtype::i32, "the row");
        scalar_of(op, 6, dtype::i1, "valid");
        if (op.attrs.ints[0] < 0 || op.attrs.ints[1] < 1 || in(op, 1).shape[1] % op.attrs.ints[1] != 0)
          fail(op, "a tensor copy names a tensor map and boxes that divide the columns");
        break;
      case OpKind::copy_barrier_init:
      case OpKind::copy_barrier_inval:
        counts(op, op.kind == OpKind::copy_barrier_init ? std::max<std::size_t>(1, op.operands.size()) : 1, 0);
        barriers_of(op, 0);
        for (std::size_t i = 1; i < op.operands.size(); ++i)
          if (!in(op, i).ptr || !in(op, i).is_scalar()) fail(op, "the copies' tensors are pointers", in(op, i).str());
        if (op.kind == OpKind::copy_barrier_init) {
          ints(op, 1);
          range(op, 0, 1, 1 << 20, "arrivals");
        }
        break;
      case OpKind::copy_barrier_expect:
        counts(op, 3, 0);
        ints(op, 1);
        barriers_of(op, 0);
        scalar_of(op, 1, dtype::u32, "the slot");
        scalar_of(op, 2, dtype::i1, "valid");
        range(op, 0, 0, (std::int64_t{1} << 20) - 1, "expected bytes");
        break;
      case OpKind::copy_barrier_wait:
      case OpKind::barrier_arrive: {  // (barriers, slot, the parity waited for / where it arrives)
        const bool wait = op.kind == OpKind::copy_barrier_wait;
        counts(op, 3, 0);
        barriers_of(op, 0);
        scalar_of(op, 1, dtype::u32, "the slot");
        scalar_of(op, 2, wait ? dtype::u32 : dtype::i1, wait ? "the parity" : "valid");
        break;
      }
      case OpKind::warp_specialize:
        counts(op, 0, 0);
        regions(op, 2);
        ints(op, 3);
        range(op, 0, 1, 8, "producer warps");
        if ((op.attrs.ints[1] != 0 || op.attrs.ints[2] != 0) &&
            (op.attrs.ints[1] < 24 || op.attrs.ints[1] > 256 || op.attrs.ints[1] % 8 || op.attrs.ints[2] < 24 || op.attrs.ints[2] > 256 || op.attrs.ints[2] % 8))
          fail(op, "the partitions' registers are 0 (as launched) or multiples of 8 from 24 to 256");
        if (op.parent && op.parent->parent) fail(op, "warp_specialize is an op of the kernel's body");
        break;
      case OpKind::turn_wait:
      case OpKind::turn_pass: {
        counts(op, 0, 0);
        ints(op, 2);
        range(op, 0, 2, 4, "turns' warpgroups");
        range(op, 1, -1, op.attrs.ints[0] - 1, "the warpgroup taking part (-1: every one)");
        if (op.attrs.ints[0] * 4 != f_.num_warps) fail(op, "turns are taken by the consumers' warpgroups: num_warps / 4 of them");
        bool consumers = false;
        for (const Block* b = op.parent; b && b->parent && !consumers; b = b->parent->parent)
          consumers = b->parent->kind == OpKind::warp_specialize && b == b->parent->region(1);
        if (!consumers) fail(op, "turns are taken by a warp-specialized kernel's consumers (its warp_specialize op's second region)");
        break;
      }
      case OpKind::barrier:
        counts(op, 0, 0);
        ints(op, 2);
        range(op, 0, 0, 15, "barrier id");
        if (op.attrs.ints[1] != -1 && (op.attrs.ints[1] < 1 || op.attrs.ints[1] % 32 != 0)) fail(op, "a barrier's threads are -1 (all) or whole warps");
        break;
      case OpKind::shared_fence:
        counts(op, 0, 0);
        ints(op, 1);
        range(op, 0, 0, 2, "engine");
        break;
      case OpKind::mma_wait:
        counts(op, 1, 1);
        ints(op, 1);
        range(op, 0, 0, 8, "pending dots");
        same(op, out(op), in(op, 0), "mma_wait gives its operand back");
        break;
      case OpKind::convert_layout:
        counts(op, 1, 1);
        same(op, out(op), in(op, 0), "the result must have the operand's type (in another layout)");
        break;
      case OpKind::hint:
        counts(op, 1, 1);
        ints(op, 2);
        range(op, 0, 0, 1, "hint kind");
        same(op, out(op), in(op, 0), "the result must have the operand's type");
        break;
    }
  }

  void mask_operand(const Op& op, std::size_t i, bool present) {
    if (!present) return;
    const Type& m = in(op, i);
    if (!m.same_data(in(op, 0).with_elem(dtype::i1))) fail(op, "the mask must be i1 of the pointers' shape", type_list({&in(op, 0), &m}));
  }

  void regions(const Op& op, std::size_t n) {
    if (op.regions.size() != n)
      fail(op, "expects " + std::to_string(n) + " regions, got " + std::to_string(op.regions.size()));
  }

  /// for / while: results are the carried values, of the initial values' types.
  void carried(const Op& op, std::size_t first, std::size_t nregions) {
    regions(op, nregions);
    auto init = types_of(op.operands, first);
    auto res = types_of(op.results);
    if (!same_types(init, res))
      fail(op, "the results must have the types of the carried initial values", type_list(res) + " vs " + type_list(init));
  }

  /// reduce / scan: n tile inputs of one shape, n results, a combine region of 2n scalars.
  void combine(const Op& op) {
    bool reduce = op.kind == OpKind::reduce;
    regions(op, 1);
    std::size_t n = op.operands.size();
    if (n == 0) fail(op, "expects at least one input");
    if (op.results.size() != n)
      fail(op, "expects one result per input, got " + std::to_string(op.results.size()) + " for " + std::to_string(n));
    ints(op, reduce ? 1 : 2);
    const auto& shape = in(op, 0).shape;
    range(op, 0, 0, static_cast<std::int64_t>(shape.size()) - 1, "axis");
    if (!reduce) flag(op, 1, "reverse");
    for (std::size_t i = 0; i < n; ++i) {
      const Type& t = in(op, i);
      if (t.ptr || t.shape != shape) fail(op, "inputs must be non-pointer tiles of one shape", type_list(types_of(op.operands)));
      auto s = shape;
      if (reduce) s.erase(s.begin() + op.attrs.ints[0]);
      if (!out(op, i).same_data(t.with_shape(s)))
        fail(op, reduce ? "result " + std::to_string(i) + " must be input " + std::to_string(i) + " without axis " +
                              std::to_string(op.attrs.ints[0]) + " (" + shape_text(shape) + " -> " + shape_text(s) + ")"
                        : "result " + std::to_string(i) + " must have input " + std::to_string(i) + "'s type",
             type_list({&t, &out(op, i)}));
    }
    const Block& r = *op.region(0);
    bool ok = r.args.size() == 2 * n;
    for (std::size_t i = 0; ok && i < 2 * n; ++i) ok = r.args[i]->type.same_data(in(op, i % n).scalar());
    if (!ok)
      fail(op, "the combine region takes two scalars per input (a0..an-1, b0..bn-1)",
           type_list(types_of(r.args)) + " for inputs " + type_list(types_of(op.operands)));
  }
};

}  // namespace

void verify(const Function& f, std::string_view stage) { Verifier(f, stage).run(); }

}  // namespace tile::ir

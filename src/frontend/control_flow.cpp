// src/frontend/control_flow.cpp — layer: frontend. Runtime loops and branches.
//
// Loop-carried tiles are found without asking the user to list them. Every live tl::tensor that
// holds a value when the loop starts becomes a candidate: it enters the loop region as a block
// argument, and the body is traced once with the tensor objects pointing at those arguments.
// After the body, a candidate whose object still holds its own argument was not reassigned: its
// argument is replaced by the outer value and dropped. What remains is exactly the set of tiles
// the body reassigned; they are carried, and after the loop the tensor objects hold the loop's
// results. `if_` works the same way with the values each branch leaves in the objects.
//
// A body may destroy tensor objects that were alive when it started (a std::vector that grows
// moves its elements into new objects and destroys the old ones), and a new object may then take
// a destroyed one's address. So the objects are never read through the pointers kept from before
// the body; after it they are found again in the registry (LiveSince): one that is gone is not
// carried or assigned (nobody can observe it). One made in a loop's condition or body, or in a
// branch, is that region's own, like a tile first assigned there: after the region it holds
// nothing.
#include <algorithm>
#include <unordered_set>

#include "frontend/trace.hpp"

namespace tile::detail {

using frontend::InsertionGuard;
using frontend::live_tensors;
using frontend::Trace;
using frontend::V;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {
node*& slot(tl::tensor* t) { return tensor_access::value(*t); }

/// Which of the tensor objects alive when it was made are still alive. The registry of live
/// tensors is in order of construction (a new object goes first; a destroyed one leaves without
/// reordering the rest), so an object of its own, made at that moment, splits it: the objects
/// after it are exactly those alive since before it. An object made later at a destroyed one's
/// address comes before it, so it is never taken for the old one.
class LiveSince {
 public:
  LiveSince() = default;
  LiveSince(const LiveSince&) = delete;
  LiveSince& operator=(const LiveSince&) = delete;

  /// `objs` (all alive when this was made), with null in place of each one destroyed since.
  std::vector<tl::tensor*> alive(const std::vector<tl::tensor*>& objs) {
    std::unordered_set<const tl::tensor*> old;
    for (tl::tensor* t = tensor_access::next(mark_); t; t = tensor_access::next(*t)) old.insert(t);
    std::vector<tl::tensor*> out;
    out.reserve(objs.size());
    for (tl::tensor* t : objs) out.push_back(old.count(t) ? t : nullptr);
    return out;
  }

  /// The objects made since this was, where they outlive a loop's condition or body (a
  /// std::vector declared outside that grew there holds only such objects): their values belong
  /// to that region (a loop argument it may even drop), so after it they hold nothing.
  void clear_new() {
    for (tl::tensor* t = tensor_access::prev(mark_); t; t = tensor_access::prev(*t)) slot(t) = nullptr;
  }

 private:
  tl::tensor mark_;  // holds no value, so no loop carries it and no branch assigns it
};

/// A tile whose value `changed` (assigned in a body or branch) has another type than it must
/// keep: reported where `changed` was created (the user's assignment, for editors and CI to jump
/// to), the text naming `what` and its own line.
[[noreturn]] void type_change(const Trace& tr, const char* what, src_loc loc, const Value* changed,
                              const std::string& detail, const char* tail = "") {
  const src_loc created = changed->def ? changed->def->loc : src_loc{};
  std::string head = what;
  if (created.known() && loc.known()) head += " at " + frontend::loc_str(loc);
  tr.fail(head + ": " + detail + (created.known() ? " (the value assigned to it was created on this line)" : "") +
              tail,
          created.known() ? created : loc);
}

/// A loop-carried tile whose value `now` has another type than the loop's argument `arg`.
[[noreturn]] void carried_type_change(const Trace& tr, const char* loop, const Value* arg, const Value* now,
                                      src_loc loc) {
  type_change(tr, loop, loc, now,
              "a tile carried through the loop changes type from " + arg->type.str() + " to " + now->type.str(),
              "; a loop-carried tile keeps its shape and dtype");
}

Value* bound(const operand_data& o, src_loc loc, const char* what) {
  Type i32{dtype::i32, false, {}};
  Value* v = frontend::materialize(o, frontend::value_type(o) ? nullptr : &i32, loc);
  if (v->type.ptr || !v->type.is_int() || !v->type.is_scalar() || v->type.elem == dtype::i1)
    Trace::current(loc).fail(std::string("tl::for_range: the ") + what + " must be an integer scalar, got " + v->type.str(), loc);
  return v;
}

void add_result(ir::Op* op, Type t) {
  auto v = std::make_unique<Value>();
  v->type = std::move(t);
  v->def = op;
  v->index = static_cast<unsigned>(op->results.size());
  op->results.push_back(std::move(v));
}

/// Drop the carried values whose `keep` is false: their region arguments (at `arg_offset` in
/// each region) are replaced by the initial value, and their operand (at `operand_offset`),
/// result and yield operand are removed.
void prune(ir::Op* op, const std::vector<bool>& keep, unsigned operand_offset, unsigned arg_offset,
           const std::vector<ir::Block*>& yielding) {
  std::size_t n = keep.size();
  std::vector<Value*> inits(op->operands.begin() + operand_offset, op->operands.end());
  for (auto& region : op->regions)
    for (std::size_t i = 0; i < n; ++i)
      if (!keep[i]) ir::replace_all_uses(*region, region->arg(static_cast<unsigned>(arg_offset + i)), inits[i]);
  for (auto& region : op->regions) {
    std::vector<std::unique_ptr<Value>> args;
    for (std::size_t i = 0; i < region->args.size(); ++i)
      if (i < arg_offset || keep[i - arg_offset]) args.push_back(std::move(region->args[i]));
    region->args = std::move(args);
    for (std::size_t i = 0; i < region->args.size(); ++i) region->args[i]->index = static_cast<unsigned>(i);
  }
  for (ir::Block* b : yielding) {
    ir::Op* y = b->terminator();
    std::vector<Value*> ops;
    for (std::size_t i = 0; i < n; ++i)
      if (keep[i]) ops.push_back(y->operands[i]);
    y->operands = std::move(ops);
  }
  std::vector<Value*> operands(op->operands.begin(), op->operands.begin() + operand_offset);
  std::vector<std::unique_ptr<Value>> results;
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i]) {
      operands.push_back(inits[i]);
      results.push_back(std::move(op->results[i]));
    }
  op->operands = std::move(operands);
  op->results = std::move(results);
  for (std::size_t i = 0; i < op->results.size(); ++i) op->results[i]->index = static_cast<unsigned>(i);
}

/// Tensors that had no value before a region and got one inside it: the value belongs to the
/// region, so after it they hold nothing again (`alive`: those objects, null where destroyed).
void reset_undefined(const std::vector<tl::tensor*>& alive) {
  for (tl::tensor* t : alive)
    if (t) slot(t) = nullptr;
}

std::vector<tl::tensor*> undefined_tensors() {
  std::vector<tl::tensor*> out;
  for (tl::tensor* t : live_tensors(true))
    if (!t->defined()) out.push_back(t);
  return out;
}
}  // namespace

void for_range(const operand_data& lo, const operand_data& hi, const operand_data& step,
               const std::function<void(node* iv)>& body, src_loc loc) {
  auto& tr = Trace::current(loc);
  auto& b = tr.builder();
  Value* vlo = bound(lo, loc, "lower bound");
  Value* vhi = bound(hi, loc, "upper bound");
  Value* vstep = bound(step, loc, "step");
  dtype t = frontend::promote(frontend::promote(vlo->type.elem, vhi->type.elem), vstep->type.elem);
  vlo = frontend::convert(vlo, t, loc);
  vhi = frontend::convert(vhi, t, loc);
  vstep = frontend::convert(vstep, t, loc);

  std::vector<tl::tensor*> cands = live_tensors();
  std::vector<tl::tensor*> undefined = undefined_tensors();
  LiveSince since;
  std::vector<Value*> operands{vlo, vhi, vstep};
  std::vector<Type> types;
  for (tl::tensor* c : cands) {
    operands.push_back(V(slot(c)));
    types.push_back(V(slot(c))->type);
  }
  ir::Op* op = b.create(OpKind::for_, operands, types, {}, loc, 1);
  ir::Block* blk = op->region(0);
  Value* iv = blk->add_arg(Type{t, false, {}});
  for (tl::tensor* c : cands) slot(c) = blk->add_arg(V(slot(c))->type);
  std::vector<bool> keep(cands.size());
  std::vector<tl::tensor*> alive;
  {
    InsertionGuard guard(b);
    b.set_insertion_end(blk);
    body(iv);
    alive = since.alive(cands);
    std::vector<Value*> yields;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      Value* arg = blk->arg(static_cast<unsigned>(i + 1));
      if (!alive[i]) {  // destroyed in the body: not carried
        yields.push_back(arg);
        continue;
      }
      Value* now = V(slot(alive[i]));
      if (!now) tr.fail("tl::for_range: a tile carried through the loop was reset to no value in its body", loc);
      if (now->type != arg->type)
        carried_type_change(tr, "tl::for_range", arg, now, loc);
      keep[i] = now != arg;
      yields.push_back(now);
    }
    b.create(OpKind::yield, yields, {}, {}, loc);
  }
  prune(op, keep, 3, 1, {blk});
  for (std::size_t i = 0, j = 0; i < cands.size(); ++i)
    if (alive[i]) slot(alive[i]) = keep[i] ? op->result(static_cast<unsigned>(j++)) : operands[3 + i];
  reset_undefined(since.alive(undefined));
  since.clear_new();
}

void while_loop(const std::function<node*()>& cond, const std::function<void()>& body, src_loc loc) {
  auto& tr = Trace::current(loc);
  auto& b = tr.builder();
  std::vector<tl::tensor*> cands = live_tensors();
  std::vector<tl::tensor*> undefined = undefined_tensors();
  LiveSince since;
  std::vector<Value*> inits;
  std::vector<Type> types;
  for (tl::tensor* c : cands) {
    inits.push_back(V(slot(c)));
    types.push_back(V(slot(c))->type);
  }
  ir::Op* op = b.create(OpKind::while_, inits, types, {}, loc, 2);
  ir::Block* cb = op->region(0);
  ir::Block* bb = op->region(1);
  std::vector<bool> keep(cands.size());
  std::vector<tl::tensor*> alive;
  {
    InsertionGuard guard(b);
    b.set_insertion_end(cb);
    for (tl::tensor* c : cands) slot(c) = cb->add_arg(V(slot(c))->type);
    node* c = cond();
    alive = since.alive(cands);
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (alive[i] && slot(alive[i]) != cb->arg(static_cast<unsigned>(i)))
        tr.fail("tl::while_: the condition may not assign tiles (assign them in the body)", loc);
    if (!c) tr.fail("tl::while_: the condition returned an unassigned tensor", loc);
    Value* cv = V(c);
    if (!cv->type.is_scalar() || cv->type.ptr)
      tr.fail("tl::while_: the condition must be a scalar, got " + cv->type.str(), loc);
    cv = frontend::to_bool(cv, loc);
    b.create(OpKind::condition, {cv}, {}, {}, loc);
    since.clear_new();

    b.set_insertion_end(bb);
    for (std::size_t i = 0; i < cands.size(); ++i) {
      Value* arg = bb->add_arg(types[i]);
      if (alive[i]) slot(alive[i]) = arg;
    }
    body();
    alive = since.alive(cands);
    std::vector<Value*> yields;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      Value* arg = bb->arg(static_cast<unsigned>(i));
      if (!alive[i]) {  // destroyed in the condition or the body: not carried
        yields.push_back(arg);
        continue;
      }
      Value* now = V(slot(alive[i]));
      if (!now) tr.fail("tl::while_: a tile carried through the loop was reset to no value in its body", loc);
      if (now->type != arg->type)
        carried_type_change(tr, "tl::while_", arg, now, loc);
      keep[i] = now != arg;
      yields.push_back(now);
    }
    b.create(OpKind::yield, yields, {}, {}, loc);
  }
  prune(op, keep, 0, 0, {bb});
  for (std::size_t i = 0, j = 0; i < cands.size(); ++i)
    if (alive[i]) slot(alive[i]) = keep[i] ? op->result(static_cast<unsigned>(j++)) : inits[i];
  reset_undefined(since.alive(undefined));
  since.clear_new();
}

std::vector<node*> if_then_else(const operand_data& cond, const std::function<std::vector<node*>()>& then_fn,
                                const std::function<std::vector<node*>()>& else_fn, src_loc loc) {
  auto& tr = Trace::current(loc);
  auto& b = tr.builder();
  Value* c = frontend::materialize(cond, nullptr, loc);
  if (!c->type.is_scalar() || c->type.ptr)
    tr.fail("tl::if_: the condition must be a scalar (use tl::where for tiles), got " + c->type.str(), loc);
  c = frontend::to_bool(c, loc);
  std::vector<tl::tensor*> all = live_tensors(true);
  std::vector<node*> before;
  for (tl::tensor* t : all) before.push_back(slot(t));
  LiveSince since;
  ir::Op* op = b.create(OpKind::if_, {c}, {}, {}, loc, 2);

  // After each branch, `alive` holds the objects of `all` not destroyed so far; one destroyed in
  // a branch counts as left unchanged by both, and the if_ assigns nothing to it.
  std::vector<tl::tensor*> alive;
  auto trace_branch = [&](ir::Block* blk, const std::function<std::vector<node*>()>& fn,
                          std::vector<node*>& after) {
    InsertionGuard guard(b);
    b.set_insertion_end(blk);
    std::vector<node*> rets = fn();
    alive = since.alive(all);
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!alive[i]) {
        after.push_back(before[i]);
        continue;
      }
      after.push_back(slot(alive[i]));
      slot(alive[i]) = before[i];
    }
    return rets;
  };
  std::vector<node*> then_after, else_after;
  std::vector<node*> then_rets = trace_branch(op->region(0), then_fn, then_after);
  std::vector<node*> else_rets = trace_branch(op->region(1), else_fn, else_after);

  std::vector<Value*> then_y, else_y;
  for (std::size_t i = 0; i < then_rets.size(); ++i) {
    if (!then_rets[i] || !else_rets[i]) tr.fail("tl::if_: a branch returned an unassigned tensor", loc);
    Value* tv = V(then_rets[i]);
    Value* ev = V(else_rets[i]);
    if (tv->type != ev->type)
      tr.fail("tl::if_: the branches return different types, " + tv->type.str() + " and " + ev->type.str(), loc);
    then_y.push_back(tv);
    else_y.push_back(ev);
    add_result(op, tv->type);
  }
  std::vector<std::pair<tl::tensor*, unsigned>> assigned;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!alive[i]) continue;  // destroyed in a branch
    node* t = then_after[i];
    node* e = else_after[i];
    if (t == before[i] && e == before[i]) continue;
    if (!before[i] && (!t || !e)) continue;  // branch-local: holds nothing after the if
    Value* tv = V(t ? t : before[i]);
    Value* ev = V(e ? e : before[i]);
    if (!t || !e) tr.fail("tl::if_: a tile was reset to no value in one branch", loc);
    if (tv->type != ev->type)
      type_change(tr, "tl::if_", loc, tv == V(before[i] ? before[i] : t) ? ev : tv,
                  "a tile assigned in the branches has type " + tv->type.str() + " in one and " + ev->type.str() +
                      " in the other");
    then_y.push_back(tv);
    else_y.push_back(ev);
    assigned.push_back({alive[i], static_cast<unsigned>(op->results.size())});
    add_result(op, tv->type);
  }
  {
    InsertionGuard guard(b);
    b.set_insertion_end(op->region(0));
    b.create(OpKind::yield, then_y, {}, {}, loc);
    b.set_insertion_end(op->region(1));
    b.create(OpKind::yield, else_y, {}, {}, loc);
  }
  for (auto& [t, r] : assigned) slot(t) = op->result(r);
  since.clear_new();  // objects a branch made (a vector that grew there) are that branch's own
  std::vector<node*> out;
  for (std::size_t i = 0; i < then_rets.size(); ++i) out.push_back(op->result(static_cast<unsigned>(i)));
  return out;
}

}  // namespace tile::detail

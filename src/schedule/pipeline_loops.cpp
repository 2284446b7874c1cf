// src/schedule/pipeline_loops.cpp — layer: schedule. The pass pipeline_loops: each loop
// plan_pipelines chose (software_pipeline.hpp) rewritten as the GPU-level IR of its schedule, so
// that TILE_DUMP_IR shows the rings, the copies, their groups, waits and barriers, and the
// lowering translates each op on its own.
//
//   before the loop   a ring per pipelined load: local_alloc () -> T[buffers, rows, cols] #smem<swizzled>
//                     (or <swizzled_transposed>: the arrangement of the staging it replaces)
//                     (tensor copies: copy barriers i64[buffers], copy_barrier_init, barrier)
//   prologue          for s in 0 .. ahead-1: iter_ahead(lo, step, hi){s} -> (iv_s, valid_s); the
//                     ahead slice (the loads' addresses and masks, the carried values they advance)
//                     cloned for iv_s; one async_copy per load into buffer_index(ring, s), masked
//                     and zero-filled where !valid_s, each giving a token; async_commit of
//                     them gives the group's token (tensor copies: one
//                     copy_barrier_expect on barrier s and one tensor_copy per load)
//   the loop          carries the advanced values instead of the current ones, plus the slot
//                     (u32, the buffer iteration i reads: i % buffers) and the token of the
//                     latest group (for the copy barriers: the phase parity, i / buffers % 2)
//     head            async_wait(token){stages-2}; barrier: buffer `slot` complete for every
//                     thread, the one refilled next read by none.  Tensor copies: copy_barrier_wait(barriers, slot, phase)
//     issue           the slice cloned for iter_ahead(iv, step, hi){ahead} into buffer
//                     (slot + ahead) % buffers: at the head (warp dots: the copies fly
//                     while the dots compute), or after the body's ops when the dots are left in
//                     flight (their issue first) or the copies are tensor copies (after a barrier:
//                     every warp is done with the buffer they refill)
//     body            the original ops; each pipelined dot reads buffer_index(ring, slot) (the
//                     operands a ring feeds; others as they were), and is
//                     left in flight (dot ints[4] = 1) where plan says so; where the next
//                     iteration reads such a dot's carried value other than as its accumulator,
//                     an mma_wait{0} on it before its first use
//   after the loop    where dots are left in flight, the loop runs inside `if lo < hi`, whose
//                     then-branch ends with mma_wait{0} on each result such a dot makes and whose
//                     else-branch gives the initial values (wait_in_flight says why); the drain: async_wait(token){0}
//                     and a barrier (the copies past the end write zeros), or, for tensor copies
//                     (none issued past the end), a barrier, copy_barrier_inval and a barrier
// The loads and their staging local_allocs are erased; dce (run next) removes what only fed them.
//
// Warp-specialized (PipelinePlan::warp_specialized, schedule/warp_specialize.hpp): the kernel's
// body moves into a warp_specialize op's consumer region; the rings, their copy barriers and
// release barriers (i64[buffers], arrivals: every consumer thread) are made and set up before it.
//   producer region   per loop: its bounds and the scalars the ahead slice reads, computed again;
//                     for iv in lo .. hi: copy_barrier_wait(release, slot, phase ^ 1) (the
//                     consumers freed the buffer: at once in the first round); the ahead slice
//                     for iv; copy_barrier_expect and the tensor copies into buffer `slot`
//   the loop          no prologue, no copies: copy_barrier_wait(copies, slot, phase) at the head;
//                     before the yield, barrier_arrive(release, ...) on the buffer the dots are done
//                     with: this iteration's, or where a dot is left in flight the previous one's
//                     (none in the first iteration); no CTA barrier
//   after the loop    as above (the consumers' barriers), the release barriers retired too
#include "schedule/pipeline_loops.hpp"
#include "schedule/warp_specialize.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace tile::schedule {

using ir::OpKind;

namespace {

/// Rings the warp-specialized loops of one ring_signature share, in program order: each loop
/// starts at the slot and phase the one before it left (the producer's and the consumers' own),
/// and the last one retires the barriers.
struct RingGroup {
  std::vector<ir::Value*> rings;
  ir::Value* barriers = nullptr;
  ir::Value* release = nullptr;
  ir::Value* consumer_slot = nullptr, *consumer_phase = nullptr;  // (null: 0, no loop ran on it yet)
  ir::Value* producer_slot = nullptr, *producer_phase = nullptr;
  int loops_left = 0;
};

/// The warp_specialize op the kernel's body moved into, and what its producer computed so far.
struct Partitions {
  const ir::Function& f;
  ir::Op* op = nullptr;
  std::unordered_map<const ir::Value*, ir::Value*> producer_values;  // (producer_scalar's memo)
  int consumer_threads = 0;
  std::map<std::string, RingGroup> rings;  // by ring_key
  bool share = false;                      // (WarpSpecialization::share_rings)
  /// Which rings `loop` runs on: those of its ring_signature where loops share them, else its own.
  std::string ring_key(const ir::Op& loop, const PipelinedLoop& pl) const {
    return share ? ring_signature(pl) : ring_signature(pl) + "@" + std::to_string(reinterpret_cast<std::uintptr_t>(&loop));
  }
};

class Rewriter {
 public:
  Rewriter(ir::Op& loop, const PipelinedLoop& pl, Partitions* ws)
      : loop_(loop), pl_(pl), body_(*loop.region(0)), loc_(loop.loc), ws_(ws) {}

  void run() {
    if (ws_) return run_specialized();
    ir::Builder b(loop_.parent);
    b.set_insertion_before(&loop_);
    make_rings(b);
    // prologue: iterations 0 .. ahead - 1 (their carried values advanced in `cur`)
    const std::size_t nc = loop_.results.size();
    std::vector<ir::Value*> cur;
    for (std::size_t k = 0; k < nc; ++k) cur.push_back(loop_.operand(static_cast<unsigned>(3 + k)));
    const int ahead = pl_.distance();
    ir::Value* group = nullptr;  // the token of the prologue's last group
    for (int s = 0; s < ahead; ++s) group = issue(b, loop_.operand(0), s, b.constant_int(u32_, s, loc_), cur);
    if (!pl_.tensor_copy && !group) throw tile::error("schedule: internal error: a pipelined loop that copies nothing ahead", loc_);
    for (std::size_t k = 0; k < nc; ++k)
      if (pl_.ahead_arg[k] && !pl_.dup_arg[k]) loop_.operands[3 + k] = cur[k];
    // carried after the original values: the slot, then the copy barriers' phase parity or the
    // token of the latest group, then the ahead copies of the values also read in order
    const ir::Type second = pl_.tensor_copy ? u32_ : ir::Type::async_token();
    loop_.operands.push_back(u32(b, 0));
    loop_.operands.push_back(pl_.tensor_copy ? u32(b, 0) : group);
    std::vector<ir::Type> types{u32_, second};
    for (std::size_t k = 0; k < nc; ++k)
      if (pl_.dup_arg[k]) loop_.operands.push_back(cur[k]), types.push_back(cur[k]->type);
    ir::Value* slot = body_.add_arg(u32_);
    ir::Value* carried = body_.add_arg(second);
    std::vector<ir::Value*> dup(nc, nullptr);
    for (std::size_t k = 0; k < nc; ++k)
      if (pl_.dup_arg[k]) dup[k] = body_.add_arg(body_.arg(static_cast<unsigned>(k + 1))->type);
    for (const ir::Type& t : types) {
      auto v = std::make_unique<ir::Value>();
      v->type = t;
      v->def = &loop_;
      v->index = static_cast<unsigned>(loop_.results.size());
      loop_.results.push_back(std::move(v));
    }
    rewrite_body(slot, carried, ahead, dup);
    after_loop(nc);
  }

 private:
  ir::Op& loop_;
  const PipelinedLoop& pl_;
  ir::Block& body_;
  src_loc loc_;
  const ir::Type u32_{dtype::u32};
  const ir::Type i1_{dtype::i1};
  Partitions* ws_;
  std::vector<ir::Value*> rings_;
  ir::Value* barriers_ = nullptr;
  ir::Value* release_ = nullptr;  // (warp-specialized: the consumers' release barriers)
  RingGroup* group_ = nullptr;    // (warp-specialized: the rings it shares)

  /// The warp-specialized form (see the file comment): the rings before the partitions, the
  /// producer's loop in region 0, the consumers' loop waiting and releasing.
  void run_specialized() {
    group_ = &ws_->rings.at(ws_->ring_key(loop_, pl_));
    if (group_->rings.empty()) {  // (the first loop on these rings makes them)
      ir::Builder top(&body_of_kernel());
      top.set_insertion_before(ws_->op);
      make_rings(top);
      release_ = op1(top, OpKind::local_alloc, {}, ir::Type(dtype::i64, false, {pl_.buffers}, nullptr, ir::smem::barriers), {-1});
      op0(top, OpKind::copy_barrier_init, {release_}, {ws_->consumer_threads});
      group_->rings = rings_;
      group_->barriers = barriers_;
      group_->release = release_;
    } else {
      rings_ = group_->rings;
      barriers_ = group_->barriers;
      release_ = group_->release;
    }
    --group_->loops_left;
    producer_loop();
    // the consumers' loop carries the slot and the copy barriers' phase parity after its values;
    // their barrier before it (as where the rings are made in the other form: what the code
    // before the loop staged is complete for every warpgroup's dots)
    ir::Builder b(loop_.parent);
    b.set_insertion_before(&loop_);
    op0(b, OpKind::barrier, {}, {0, -1});
    loop_.operands.push_back(group_->consumer_slot ? group_->consumer_slot : u32(b, 0));
    loop_.operands.push_back(group_->consumer_phase ? group_->consumer_phase : u32(b, 0));
    ir::Value* slot = body_.add_arg(u32_);
    ir::Value* phase = body_.add_arg(u32_);
    for (int k = 0; k < 2; ++k) {
      auto v = std::make_unique<ir::Value>();
      v->type = u32_;
      v->def = &loop_;
      v->index = static_cast<unsigned>(loop_.results.size());
      loop_.results.push_back(std::move(v));
    }
    const std::size_t nc = loop_.results.size() - 2;
    ir::Builder hb(&body_);
    hb.set_insertion_before(body_.ops.front().get());
    op0(hb, OpKind::copy_barrier_wait, {barriers_, slot, phase});
    read_rings(slot);
    // the release: this iteration's buffer, or (a dot left in flight reads it until the next
    // iteration's wait) the previous one's, none in the first iteration
    ir::Op* yield = body_.terminator();
    ir::Builder eb(&body_);
    eb.set_insertion_before(yield);
    const std::int64_t R = pl_.buffers;
    if (pl_.async_mma) {
      ir::Value* first = op1(eb, OpKind::cmp, {slot, u32(eb, 0)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::eq)});
      ir::Value* prev = op1(eb, OpKind::select, {first, u32(eb, R - 1), op1(eb, OpKind::sub, {slot, u32(eb, 1)}, u32_)}, u32_);
      ir::Value* later = op1(eb, OpKind::cmp, {body_.arg(0), loop_.operand(0)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::ne)});
      op0(eb, OpKind::barrier_arrive, {release_, prev, later});
    } else {
      op0(eb, OpKind::barrier_arrive, {release_, slot, eb.constant_int(i1_, 1, loc_)});
    }
    auto [next, flip] = advance(eb, slot, phase);
    yield->operands.push_back(next);
    yield->operands.push_back(flip);
    erase_loads();
    after_loop(nc);
  }

  ir::Block& body_of_kernel() { return const_cast<ir::Block&>(ws_->f.body); }

  /// The next slot and phase parity after `slot` (the parity flips when the slot wraps).
  std::pair<ir::Value*, ir::Value*> advance(ir::Builder& b, ir::Value* slot, ir::Value* phase) {
    const std::int64_t R = pl_.buffers;
    ir::Value* next = op1(b, OpKind::add, {slot, u32(b, 1)}, u32_);
    ir::Value* wrap = op1(b, OpKind::cmp, {next, u32(b, R)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::eq)});
    next = op1(b, OpKind::select, {wrap, u32(b, 0), next}, u32_);
    ir::Value* flip = op1(b, OpKind::bit_xor, {phase, op1(b, OpKind::select, {wrap, u32(b, 1), u32(b, 0)}, u32_)}, u32_);
    return {next, flip};
  }

  /// The producer's loop for this loop, at the end of the producer region: one iteration per
  /// iteration of the consumers' loop, waiting for the buffer's release, then copying.
  void producer_loop() {
    ir::Block& region = *ws_->op->region(0);
    ir::Builder pb(&region);
    auto& memo = ws_->producer_values;
    auto scalar = [&](const ir::Value* v) {
      ir::Value* r = producer_scalar(ws_->f, v, pb, memo);
      if (!r) throw tile::error("schedule: internal error: a warp-specialized loop's producer needs a value it cannot compute", loc_);
      return r;
    };
    std::unordered_map<const ir::Value*, ir::Value*> map;  // the body's values as the producer's loop has them
    auto outside = [&](const ir::Value* v) { return v->owner != &body_ && (!v->def || v->def->parent != &body_); };
    for (const auto& o : body_.ops)
      if (pl_.ahead.count(o.get()))
        for (const ir::Value* v : o->operands)
          if (outside(v)) map[v] = scalar(v);
    for (const auto& l : pl_.loads)
      for (const ir::Value* v : l.load->operands)
        if (outside(v) && v->type.is_scalar()) map[v] = scalar(v);
    std::vector<ir::Value*> in{scalar(loop_.operand(0)), scalar(loop_.operand(1)), scalar(loop_.operand(2))};
    std::vector<ir::Type> types;
    std::vector<unsigned> carried;  // (the carried values the ahead slice advances)
    for (std::size_t k = 0; k < pl_.ahead_arg.size(); ++k)
      if (pl_.ahead_arg[k]) {
        carried.push_back(static_cast<unsigned>(k));
        in.push_back(scalar(loop_.operand(static_cast<unsigned>(3 + k))));
        types.push_back(in.back()->type);
      }
    in.push_back(group_->producer_slot ? group_->producer_slot : u32(pb, 0));
    in.push_back(group_->producer_phase ? group_->producer_phase : u32(pb, 0));
    types.push_back(u32_);
    types.push_back(u32_);
    ir::Op* loop = pb.create(OpKind::for_, in, types, {}, loc_, 1);
    group_->producer_slot = loop->result(static_cast<unsigned>(carried.size()));
    group_->producer_phase = loop->result(static_cast<unsigned>(carried.size() + 1));
    ir::Block& body = *loop->region(0);
    map[body_.arg(0)] = body.add_arg(loop_.operand(0)->type);
    for (unsigned k : carried) map[body_.arg(k + 1)] = body.add_arg(body_.arg(k + 1)->type);
    ir::Value* slot = body.add_arg(u32_);
    ir::Value* phase = body.add_arg(u32_);
    ir::Builder b(&body);
    op0(b, OpKind::copy_barrier_wait, {release_, slot, op1(b, OpKind::bit_xor, {phase, u32(b, 1)}, u32_)});
    for (const auto& o : body_.ops)
      if (pl_.ahead.count(o.get())) ir::clone_op(*o, b, map);
    auto m = [&](const ir::Value* v) {
      auto f = map.find(v);
      if (f == map.end()) throw tile::error("schedule: internal error: a tensor copy's coordinate the producer does not have", loc_);
      return f->second;
    };
    tensor_copies(b, slot, b.constant_int(i1_, 1, loc_), m);
    auto [next, flip] = advance(b, slot, phase);
    std::vector<ir::Value*> out;
    const ir::Op* yield = body_.terminator();
    for (unsigned k : carried) out.push_back(m(yield->operand(k)));
    out.push_back(next);
    out.push_back(flip);
    b.create(OpKind::yield, out, {}, {}, loc_);
  }

  /// Each pipelined dot reads buffer `slot` of its rings (left in flight where the plan says).
  void read_rings(ir::Value* slot) {
    for (const auto& [d, idx] : pl_.dots) {
      auto* dot = const_cast<ir::Op*>(d);
      ir::Builder db(&body_);
      db.set_insertion_before(dot);
      auto view = pl_.views.find(d);
      for (unsigned k = 0; k < 2; ++k)
        if (idx[k] >= 0) {
          const bool transposed = view != pl_.views.end() && view->second[k];
          const ir::Type t = slot_type(static_cast<std::size_t>(idx[k]), transposed);
          dot->operands[k] = op1(db, OpKind::buffer_index, {rings_[static_cast<std::size_t>(idx[k])], slot}, t);
        }
      if (pl_.in_flight.count(d)) {
        dot->attrs.ints.resize(5, 0);
        dot->attrs.ints[4] = 1;
      }
    }
    for (const ir::Op* d : pl_.wait_at_use) wait_before_first_use(*d);
  }

  /// The loads the rings replace, their staging buffers and the transposes between.
  void erase_loads() {
    for (const auto& l : pl_.loads) {
      if (l.staged) ir::erase(const_cast<ir::Op*>(l.staged));
      for (const ir::Op* x : l.also_staged) ir::erase(const_cast<ir::Op*>(x));
      for (const ir::Op* x : l.transposes) ir::erase(const_cast<ir::Op*>(x));
      ir::erase(const_cast<ir::Op*>(l.load));
    }
  }

  ir::Value* u32(ir::Builder& b, std::int64_t v) { return b.constant_int(u32_, v, loc_); }
  ir::Value* op1(ir::Builder& b, OpKind k, std::vector<ir::Value*> in, const ir::Type& t, std::vector<std::int64_t> ints = {}) {
    ir::Attrs a;
    a.ints = std::move(ints);
    return b.create(k, std::move(in), {t}, std::move(a), loc_)->result();
  }
  void op0(ir::Builder& b, OpKind k, std::vector<ir::Value*> in, std::vector<std::int64_t> ints = {}) {
    ir::Attrs a;
    a.ints = std::move(ints);
    b.create(k, std::move(in), {}, std::move(a), loc_);
  }

  void make_rings(ir::Builder& b) {
    for (const auto& l : pl_.loads) rings_.push_back(op1(b, OpKind::local_alloc, {}, pl_.ring_type(l), {-1}));
    if (pl_.tensor_copy) {
      barriers_ = op1(b, OpKind::local_alloc, {}, ir::Type(dtype::i64, false, {pl_.buffers}, nullptr, ir::smem::barriers), {-1});
      std::vector<ir::Value*> in{barriers_};
      for (const auto& l : pl_.loads) in.push_back(l.load->operand(0));
      op0(b, OpKind::copy_barrier_init, std::move(in), {1});
      if (!ws_) op0(b, OpKind::barrier, {}, {0, -1});
    }
  }

  /// The ahead slice for iteration k ahead of `iv` (the loop's lower bound or its induction
  /// value), the carried values it reads in `carried` (advanced on return); its copies into
  /// buffer `slot`. Returns the token of their group (null for tensor copies: their barrier
  /// completes them).
  ir::Value* issue(ir::Builder& b, ir::Value* iv, int k, ir::Value* slot, std::vector<ir::Value*>& carried) {
    const ir::Type& it = loop_.operand(0)->type;
    ir::Attrs a;
    a.ints = {k};
    ir::Op* at = b.create(OpKind::iter_ahead, {iv, loop_.operand(2), loop_.operand(1)}, {it, i1_}, std::move(a), loc_);
    ir::Value* valid = at->result(1);
    std::unordered_map<const ir::Value*, ir::Value*> map;
    map[body_.arg(0)] = at->result(0);
    for (std::size_t c = 0; c < carried.size(); ++c)
      if (pl_.ahead_arg[c]) map[body_.arg(static_cast<unsigned>(c + 1))] = carried[c];
    for (const auto& o : body_.ops)
      if (pl_.ahead.count(o.get())) ir::clone_op(*o, b, map);
    auto m = [&](ir::Value* v) {
      auto f = map.find(v);
      return f == map.end() ? v : f->second;
    };
    ir::Value* group = nullptr;
    if (pl_.tensor_copy) {
      tensor_copies(b, slot, valid, m);
    } else {
      std::vector<ir::Value*> copies;
      for (std::size_t n = 0; n < pl_.loads.size(); ++n) {
        const auto& l = pl_.loads[n];
        const bool masked = l.load->attrs.ints.at(0) != 0;
        ir::Value* buf = op1(b, OpKind::buffer_index, {rings_[n], slot}, slot_type(n));
        std::vector<ir::Value*> in{buf, m(l.load->operand(0)), valid};
        if (masked) in.push_back(m(l.load->operand(1)));
        copies.push_back(op1(b, OpKind::async_copy, std::move(in), ir::Type::async_token(), {l.run, masked ? 1 : 0}));
      }
      group = op1(b, OpKind::async_commit, copies, ir::Type::async_token());
    }
    const ir::Op* yield = body_.terminator();
    for (std::size_t c = 0; c < carried.size(); ++c)
      if (pl_.ahead_arg[c]) carried[c] = m(yield->operand(static_cast<unsigned>(c)));
    return group;
  }

  /// Where `valid`: copy barrier `slot` armed with the bytes of every load's tile, and each
  /// load's tile copied into buffer `slot` of its ring at the coordinates `m` gives for the load's
  /// offsets.
  void tensor_copies(ir::Builder& b, ir::Value* slot, ir::Value* valid, const std::function<ir::Value*(ir::Value*)>& m) {
    std::int64_t bytes = 0;
    for (const auto& l : pl_.loads) bytes += l.rows * l.cols * l.elem_bytes;
    op0(b, OpKind::copy_barrier_expect, {barriers_, slot, valid}, {bytes});
    for (std::size_t n = 0; n < pl_.loads.size(); ++n) {
      const auto& l = pl_.loads[n];
      const unsigned r = static_cast<unsigned>(l.load->attrs.ints.size());  // (the rank: base, extents, strides, offsets)
      ir::Value* buf = op1(b, OpKind::buffer_index, {rings_[n], slot}, slot_type(n));
      op0(b, OpKind::tensor_copy,
          {l.load->operand(0), buf, barriers_, slot, m(l.load->operand(1 + 2 * r + 1)), m(l.load->operand(1 + 2 * r)), valid},
          {l.tensor_map_param, l.box_cols});
    }
  }

  /// A buffer of ring n, or (transposed) its transposed view: the same bytes read as the
  /// transpose in the other swizzled arrangement.
  ir::Type slot_type(std::size_t n, bool transposed = false) const {
    const ir::Type& r = rings_[n]->type;
    if (!transposed) return ir::Type(r.elem, false, {r.shape[1], r.shape[2]}, nullptr, r.mem);
    const ir::smem m = r.mem == ir::smem::swizzled ? ir::smem::swizzled_transposed : ir::smem::swizzled;
    return ir::Type(r.elem, false, {r.shape[2], r.shape[1]}, nullptr, m);
  }

  /// `carried`: the copy barriers' phase parity, or the token of the latest group.
  /// `dup`: per carried value, the slot of its ahead copy (PipelinedLoop::dup_arg), else null.
  void rewrite_body(ir::Value* slot, ir::Value* carried, int ahead, const std::vector<ir::Value*>& dup) {
    ir::Op* first = body_.ops.front().get();
    ir::Builder b(&body_);
    b.set_insertion_before(first);
    if (pl_.tensor_copy) {
      op0(b, OpKind::copy_barrier_wait, {barriers_, slot, carried});
    } else {
      // (no shared_fence: the copies' writes are read by a warpgroup engine after the wait and
      // the barrier as they are, as Triton's and CUTLASS's copy-pipelined warpgroup loops read
      // them; NVIDIA's proxy fence there is a membar in every iteration)
      op0(b, OpKind::async_wait, {carried}, {pl_.stages - 2});
      op0(b, OpKind::barrier, {}, {0, -1});
    }
    // the buffer the copies of iteration i + ahead fill
    const std::int64_t R = pl_.buffers;
    ir::Value* ws = op1(b, OpKind::add, {slot, u32(b, ahead)}, u32_);
    ir::Value* over = op1(b, OpKind::cmp, {ws, u32(b, R)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::ge)});
    ws = op1(b, OpKind::select, {over, op1(b, OpKind::sub, {ws, u32(b, R)}, u32_), ws}, u32_);
    ir::Op* yield = body_.terminator();
    std::vector<ir::Value*> ahead_vals(yield->operands.begin(), yield->operands.end());
    for (std::size_t c = 0; c < ahead_vals.size(); ++c)
      if (pl_.ahead_arg[c]) ahead_vals[c] = dup[c] ? dup[c] : body_.arg(static_cast<unsigned>(c + 1));
    const bool late = pl_.async_mma || pl_.tensor_copy;
    ir::Value* group = nullptr;
    if (!late) group = issue(b, body_.arg(0), ahead, ws, ahead_vals);
    read_rings(slot);
    b.set_insertion_before(yield);
    if (pl_.tensor_copy) op0(b, OpKind::barrier, {}, {0, -1});
    if (late) group = issue(b, body_.arg(0), ahead, ws, ahead_vals);
    // the next slot, and the copy barriers' phase parity or the latest group
    ir::Value* next = nullptr, *second = group;
    if (pl_.tensor_copy) {
      std::tie(next, second) = advance(b, slot, carried);
    } else {
      next = op1(b, OpKind::add, {slot, u32(b, 1)}, u32_);
      ir::Value* wrap = op1(b, OpKind::cmp, {next, u32(b, R)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::eq)});
      next = op1(b, OpKind::select, {wrap, u32(b, 0), next}, u32_);
    }
    for (std::size_t c = 0; c < ahead_vals.size(); ++c)
      if (pl_.ahead_arg[c] && !dup[c]) yield->operands[c] = ahead_vals[c];
    yield->operands.push_back(next);
    yield->operands.push_back(second);
    for (std::size_t c = 0; c < ahead_vals.size(); ++c)
      if (dup[c]) yield->operands.push_back(ahead_vals[c]);
    erase_loads();
  }

  /// The dot `d` is left in flight into the next iteration, which reads its carried value other
  /// than as its accumulator: an mma_wait {0} on that value before the body's first op to read
  /// it (at any depth), the body reading the wait's result instead.
  void wait_before_first_use(const ir::Op& d) {
    const ir::Op* yield = body_.terminator();
    unsigned slot = 0;
    while (yield->operand(slot) != d.result()) ++slot;
    ir::Value* arg = body_.arg(slot + 1);
    auto uses = [&](ir::Op& o) {
      bool u = false;
      for (const ir::Value* v : o.operands) u |= v == arg;
      for (auto& r : o.regions)
        ir::walk(*r, [&](const ir::Op& x) {
          for (const ir::Value* v : x.operands) u |= v == arg;
        });
      return u;
    };
    for (auto& o : body_.ops) {
      if (!uses(*o)) continue;
      ir::Builder b(&body_);
      b.set_insertion_before(o.get());
      ir::Value* done = b.create(OpKind::mma_wait, {arg}, {arg->type}, ir::Attrs{{0}, 0.0, {}}, loc_)->result();
      ir::Op* wait = done->def;
      ir::replace_all_uses(body_, arg, done);
      wait->operands[0] = arg;  // (the wait itself reads the value in flight)
      return;
    }
  }

  void after_loop(std::size_t nc) {
    ir::Block& outer = *loop_.parent;
    auto it = std::find_if(outer.ops.begin(), outer.ops.end(), [&](const auto& o) { return o.get() == &loop_; });
    ir::Builder b(&outer, std::next(it));
    ir::Value* group = pl_.tensor_copy ? nullptr : loop_.result(static_cast<unsigned>(nc + 1));  // (the latest group's token)
    if (group_) {  // (warp-specialized: the slot and phase the next loop on these rings starts from)
      group_->consumer_slot = loop_.result(static_cast<unsigned>(nc));
      group_->consumer_phase = loop_.result(static_cast<unsigned>(nc + 1));
    }
    if (pl_.async_mma) wait_in_flight(outer, it, nc, b, group);
    if (group_ && group_->loops_left > 0) return;  // (a later loop runs on the rings: they stay)
    if (pl_.tensor_copy) {
      op0(b, OpKind::barrier, {}, {0, -1});
      op0(b, OpKind::copy_barrier_inval, {barriers_});
      if (release_) op0(b, OpKind::copy_barrier_inval, {release_});
    } else {
      op0(b, OpKind::async_wait, {group}, {0});
    }
    op0(b, OpKind::barrier, {}, {0, -1});
  }

  /// The dots left in flight: the loop runs inside `if (lo < hi)`, whose then-branch ends with an
  /// mma_wait on each accumulator and whose else-branch gives the initial values. The wait thus
  /// follows the loop on the one path that ran it: where a path that skips the loop met the
  /// loop's exit before the wait, the code giving the skipped loop's accumulators their initial
  /// values could land between the engine's last asynchronous dot and its wait (the assembler then
  /// serializes every asynchronous dot of the kernel). `b` is left after the if; `group` (the
  /// latest group's token, where there are groups), the if's result that gives it.
  void wait_in_flight(ir::Block& outer, std::list<std::unique_ptr<ir::Op>>::iterator at, std::size_t nc, ir::Builder& b, ir::Value*& group) {
    ir::Builder gb(&outer, at);
    ir::Value* runs = op1(gb, OpKind::cmp, {loop_.operand(0), loop_.operand(1)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::lt)});
    std::vector<ir::Type> types;
    for (std::size_t k = 0; k < nc; ++k) types.push_back(loop_.result(static_cast<unsigned>(k))->type);
    if (group) types.push_back(group->type);
    const bool shared = group_ && group_->loops_left > 0;  // (a later loop runs on these rings)
    if (shared) types.push_back(u32_), types.push_back(u32_);  // (the slot and phase after it)
    ir::Op* guard = gb.create(OpKind::if_, {runs}, types, {}, loc_, 2);
    // the loop moves into the then-branch
    ir::Block& then = *guard->region(0);
    std::unique_ptr<ir::Op> owned = std::move(*at);
    outer.ops.erase(at);
    owned->parent = &then;
    then.ops.push_back(std::move(owned));
    // (the uses after the if, before the then-branch has any)
    for (std::size_t k = 0; k < nc; ++k) ir::replace_all_uses(outer, loop_.result(static_cast<unsigned>(k)), guard->result(static_cast<unsigned>(k)));
    ir::Builder tb(&then);
    const ir::Op* yield = body_.terminator();
    std::vector<ir::Value*> out;
    for (std::size_t k = 0; k < nc; ++k) {
      ir::Value* r = loop_.result(static_cast<unsigned>(k));
      if (pl_.in_flight.count(yield->operand(static_cast<unsigned>(k))->def))
        r = tb.create(OpKind::mma_wait, {r}, {r->type}, ir::Attrs{{0}, 0.0, {}}, loc_)->result();
      out.push_back(r);
    }
    std::vector<ir::Value*> init;
    for (std::size_t k = 0; k < nc; ++k) init.push_back(loop_.operand(static_cast<unsigned>(3 + k)));
    if (group) {  // the loop's latest group, or the prologue's where it did not run
      out.push_back(group);
      init.push_back(loop_.operand(static_cast<unsigned>(3 + nc + 1)));
      group = guard->result(static_cast<unsigned>(nc));
    }
    if (shared) {
      // warp-specialized: the last iteration's buffer, which no iteration after it released, is
      // released once its dots are done (the producer of a later loop on these rings waits for it)
      const std::int64_t R = pl_.buffers;
      ir::Value* slot = group_->consumer_slot;
      ir::Value* first = op1(tb, OpKind::cmp, {slot, u32(tb, 0)}, i1_, {static_cast<std::int64_t>(ir::CmpPred::eq)});
      ir::Value* last = op1(tb, OpKind::select, {first, u32(tb, R - 1), op1(tb, OpKind::sub, {slot, u32(tb, 1)}, u32_)}, u32_);
      op0(tb, OpKind::barrier_arrive, {release_, last, tb.constant_int(i1_, 1, loc_)});
      out.push_back(group_->consumer_slot);
      out.push_back(group_->consumer_phase);
      init.push_back(loop_.operand(static_cast<unsigned>(3 + nc)));
      init.push_back(loop_.operand(static_cast<unsigned>(3 + nc + 1)));
      const unsigned at_slot = static_cast<unsigned>(nc + (group ? 1 : 0));
      group_->consumer_slot = guard->result(at_slot);
      group_->consumer_phase = guard->result(at_slot + 1);
    }
    tb.create(OpKind::yield, out, {}, {}, loc_);
    ir::Builder(guard->region(1)).create(OpKind::yield, init, {}, {}, loc_);
    auto after = std::find_if(outer.ops.begin(), outer.ops.end(), [&](const auto& o) { return o.get() == guard; });
    b = ir::Builder(&outer, std::next(after));
  }
};

/// The kernel's body (but its return) moved into the consumer region of a new warp_specialize op.
Partitions open_partitions(ir::Function& f, const WarpSpecialization& w) {
  ir::Builder b(&f.body);
  b.set_insertion_before(f.body.ops.front().get());
  ir::Attrs a;
  a.ints = {w.producer_warps, w.consumer_regs, w.producer_regs};
  ir::Op* op = b.create(OpKind::warp_specialize, {}, {}, std::move(a), f.loc, 2);
  ir::Block& consumers = *op->region(1);
  auto it = std::next(f.body.ops.begin());
  while (it != f.body.ops.end() && std::next(it) != f.body.ops.end()) {  // (the return stays)
    std::unique_ptr<ir::Op> owned = std::move(*it);
    it = f.body.ops.erase(it);
    owned->parent = &consumers;
    consumers.ops.push_back(std::move(owned));
  }
  Partitions p{f, op, {}, 32 * f.num_warps, {}, w.share_rings};
  return p;
}

/// Both regions end with a yield; the barriers made before them shown to every thread first.
void close_partitions(ir::Function& f, Partitions& p) {
  ir::Builder(p.op->region(0)).create(OpKind::yield, {}, {}, {}, f.loc);
  ir::Builder(p.op->region(1)).create(OpKind::yield, {}, {}, {}, f.loc);
  ir::Builder b(&f.body);
  b.set_insertion_before(p.op);
  ir::Attrs a;
  a.ints = {0, -1};
  b.create(OpKind::barrier, {}, {}, std::move(a), f.loc);
}

class PipelineLoops final : public transforms::Pass {
 public:
  explicit PipelineLoops(const PipelinePlan& plan) : plan_(plan) {}
  std::string_view name() const override { return "pipeline_loops"; }
  bool run(ir::Function& f) override {
    std::vector<ir::Op*> loops;  // (in program order: the dump's)
    ir::walk(f.body, [&](ir::Op& o) {
      if (plan_.loops.count(&o)) loops.push_back(&o);
    });
    std::optional<Partitions> ws;
    if (plan_.warp_specialized && !loops.empty()) {
      ws.emplace(open_partitions(f, *plan_.warp_specialized));
      for (ir::Op* l : loops) ++ws->rings[ws->ring_key(*l, plan_.loops.at(l))].loops_left;
    }
    for (ir::Op* l : loops) Rewriter(*l, plan_.loops.at(l), ws ? &*ws : nullptr).run();
    if (ws) close_partitions(f, *ws);
    return !loops.empty();
  }

 private:
  const PipelinePlan& plan_;
};

}  // namespace

std::unique_ptr<transforms::Pass> make_pipeline_loops(const PipelinePlan& plan) { return std::make_unique<PipelineLoops>(plan); }

}  // namespace tile::schedule

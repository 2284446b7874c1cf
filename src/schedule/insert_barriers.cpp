// src/schedule/insert_barriers.cpp — layer: schedule. See insert_barriers.hpp.
#include "schedule/insert_barriers.hpp"

#include <optional>

#include "analysis/pointer_origin.hpp"
#include "layout/mma_engine.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/shared_scratch.hpp"

namespace tile::schedule {

using ir::OpKind;
using layout::LinearLayout;

namespace {

/// Global accesses by where their pointers come from.
struct Reach {
  std::uint64_t own = 0;  // bit i: through kernel argument i, whose memory no other argument reaches
  bool shared = false;    // through an argument that may share memory with another
  bool unknown = false;   // through a pointer of no known origin (may be anywhere)
  bool any() const { return own || shared || unknown; }
  Reach& operator|=(const Reach& o) {
    own |= o.own, shared |= o.shared, unknown |= o.unknown;
    return *this;
  }
};

/// Whether an access reaching `r` may touch bytes the accesses `pending` touched. An argument's
/// own memory (noalias) is reached only through it: an access to it meets those through it and
/// those of unknown origin; an access through another argument meets none of an argument's own
/// memory; an access of unknown origin meets every one.
bool meets(const Reach& pending, const Reach& r) {
  return r.own      ? pending.unknown || (pending.own & r.own) != 0
         : r.shared ? pending.unknown || pending.shared
                    : pending.any();
}

/// The pointer tile `ptr` is a layout conversion of, if it is one (the same elements).
const ir::Value* unconverted(const ir::Value* ptr) {
  while (ptr->def && ptr->def->kind == OpKind::convert_layout) ptr = ptr->def->operand(0);
  return ptr;
}

struct PendingRead {
  Reach where;
  const ir::Value* ptr = nullptr;  // null: any thread, any element (a region's reads, a copy's)
  std::optional<LinearLayout> layout;
};

/// What was accessed since the last CTA barrier.
struct Pending {
  bool shared_read = false;   // a later shared-memory write waits
  bool buffer_written = false;  // a later reader of buffers (a tensor-core dot) waits
  bool unfenced = false;      // buffer stores the tensor-core engine may not see yet
  Reach global_written;
  std::vector<PendingRead> global_read;
  void barrier() {
    shared_read = buffer_written = false;
    global_written = {};
    global_read.clear();
  }
};

/// The threads a warp of `f`'s layouts (32 where no value has one).
int lanes_of(ir::Function& f) {
  int lanes = 0;
  ir::walk(f.body, [&](const ir::Op& op) {
    for (const auto& r : op.results)
      if (!lanes && r->type.layout) lanes = r->type.layout->num_lanes();
  });
  return lanes ? lanes : 32;
}

class InsertBarriers {
 public:
  explicit InsertBarriers(ir::Function& f) : f_(f), origins_(f), scalar_(layout::scalar_layout(f.num_warps, lanes_of(f))) {}

  bool run() {
    block(f_.body);
    return changed_;
  }

 private:
  Reach reach(const ir::Value* ptr) const {
    Reach w;
    const std::optional<unsigned> a = origins_.origin(ptr);
    const auto& info = f_.arg_info;
    if (!a) w.unknown = true;
    else if (*a < 64 && *a < info.size() && info[*a].noalias) w.own = std::uint64_t{1} << *a;
    else w.shared = true;
    return w;
  }
  const LinearLayout& layout_of(const ir::Value* v) const { return v->type.layout ? *v->type.layout : scalar_; }
  /// Where the loads (`reads`) or the stores of a region reach, atomics counted as both.
  Reach accesses(const ir::Block& b, bool reads) const {
    Reach w;
    ir::walk(const_cast<ir::Block&>(b), [&](const ir::Op& o) {
      const bool atomic = o.kind == OpKind::atomic_rmw || o.kind == OpKind::atomic_cas;
      if (atomic || o.kind == (reads ? OpKind::load : OpKind::store)) w |= reach(o.operand(0));
    });
    return w;
  }
  bool any_op(const ir::Block& b, bool (*pred)(const ir::Op&, int)) const {
    bool any = false;
    ir::walk(const_cast<ir::Block&>(b), [&](const ir::Op& o) { any = any || pred(o, f_.num_warps); });
    return any;
  }
  static bool makes_buffer(const ir::Op& o, int) { return o.kind == OpKind::local_alloc; }
  static bool fenced_reader(const ir::Op& o, int) {
    return o.kind == OpKind::dot && layout::engine_of(o) == layout::mma_engine::warpgroup;
  }

  bool read_waits(const ir::Value* ptr) const { return meets(p_.global_written, reach(ptr)); }
  bool write_waits(const ir::Value* ptr) const {
    const Reach w = reach(ptr);
    const LinearLayout& l = layout_of(ptr);
    const bool own_elements = !l.lane_dup_mask() && !l.warp_dup_mask();  // no element held twice
    for (const PendingRead& r : p_.global_read) {
      if (!meets(r.where, w)) continue;
      if (own_elements && r.ptr == unconverted(ptr) && r.layout && *r.layout == l) continue;  // each thread its own elements
      return true;
    }
    return false;
  }
  void note_read(const ir::Value* ptr, bool whole) {
    p_.global_read.push_back({reach(ptr), whole ? nullptr : unconverted(ptr), whole ? std::nullopt : std::optional<LinearLayout>(layout_of(ptr))});
  }

  void insert(ir::Op& before, OpKind k, std::vector<std::int64_t> ints) {
    ir::Builder b(before.parent);
    b.set_insertion_before(&before);
    ir::Attrs a;
    a.ints = std::move(ints);
    b.create(k, {}, {}, std::move(a), before.loc);
    changed_ = true;
  }

  void block(ir::Block& b) {
    std::vector<ir::Op*> ops;
    for (auto& op : b.ops) ops.push_back(op.get());
    for (ir::Op* op : ops) visit(*op);
  }

  void visit(ir::Op& op) {
    switch (op.kind) {
      case OpKind::for_:
      case OpKind::while_: return loop(op);
      case OpKind::if_: return branch(op);
      case OpKind::warp_specialize:
        // the consumers' code as the kernel's (their CTA barrier is theirs alone); the producer
        // only copies into rings it synchronizes with its barriers, and reads what no store of
        // the kernel reaches (schedule/warp_specialize.hpp)
        return block(*op.region(1));
      default: break;
    }
    const int phases = scratch_phases(op, f_.num_warps);
    const layout::mma_engine engine = layout::engine_of(op);
    bool wait = false, copy_fence = false;
    switch (op.kind) {
      case OpKind::load: wait = read_waits(op.operand(0)); break;
      case OpKind::store: wait = write_waits(op.operand(0)); break;
      case OpKind::atomic_rmw:
      case OpKind::atomic_cas: wait = read_waits(op.operand(0)) || write_waits(op.operand(0)); break;
      case OpKind::async_copy: wait = read_waits(op.operand(1)); break;
      case OpKind::tensor_copy: wait = copy_fence = read_waits(op.operand(0)); break;
      case OpKind::copy_barrier_init:
      case OpKind::copy_barrier_inval:
        for (unsigned k = 1; k < op.operands.size(); ++k) wait = copy_fence = copy_fence || read_waits(op.operand(k));
        break;
      case OpKind::local_alloc: wait = p_.shared_read; break;
      case OpKind::dot:
        if (engine == layout::mma_engine::none) break;
        if (p_.unfenced && layout::reads_shared_directly(engine)) insert(op, OpKind::shared_fence, {static_cast<std::int64_t>(engine)});
        p_.unfenced = false;
        wait = p_.buffer_written;
        break;
      default: break;
    }
    if (phases > 0) wait = wait || p_.shared_read;  // the first phase's stores wait for earlier reads
    if (copy_fence) insert(op, OpKind::copy_fence, {});
    if (wait) {
      insert(op, OpKind::barrier, {0, -1});
      p_.barrier();
    }
    // what the op leaves pending
    if (phases > 0) {  // its own barriers, then its reads
      p_.barrier();
      p_.shared_read = true;
    }
    switch (op.kind) {
      case OpKind::load: note_read(op.operand(0), false); break;
      case OpKind::store: p_.global_written |= reach(op.operand(0)); break;
      case OpKind::atomic_rmw:
      case OpKind::atomic_cas:
        note_read(op.operand(0), false);
        p_.global_written |= reach(op.operand(0));
        break;
      case OpKind::async_copy: note_read(op.operand(1), true); break;  // copied ahead: any element, any time
      case OpKind::tensor_copy: note_read(op.operand(0), true); break;
      case OpKind::copy_barrier_init:
      case OpKind::copy_barrier_inval:
        for (unsigned k = 1; k < op.operands.size(); ++k) note_read(op.operand(k), true);
        break;
      case OpKind::copy_barrier_wait: p_.shared_read = true; break;  // (the buffers' other users: the previous iteration's threads)
      case OpKind::local_alloc:
        if (!op.operands.empty()) p_.buffer_written = p_.unfenced = true;
        break;
      case OpKind::dot:
        if (engine != layout::mma_engine::none) p_.shared_read = true;
        break;
      case OpKind::barrier:
        if (op.attrs.ints.at(0) == 0 && op.attrs.ints.at(1) == -1) p_.barrier();  // (a named barrier orders only its threads)
        break;
      case OpKind::shared_fence: p_.unfenced = false; break;
      default: break;
    }
  }

  static void merge(Pending& into, const Pending& o) {
    into.shared_read = into.shared_read || o.shared_read;
    into.buffer_written = into.buffer_written || o.buffer_written;
    into.unfenced = into.unfenced || o.unfenced;
    into.global_written |= o.global_written;
    into.global_read.insert(into.global_read.end(), o.global_read.begin(), o.global_read.end());
  }

  void loop(ir::Op& op) {
    // buffers written before the loop that an engine inside reads directly: fenced once, before
    // the loop (the body fences again only what it writes itself)
    if (p_.unfenced)
      for (const auto& r : op.regions)
        if (any_op(*r, fenced_reader)) {
          insert(op, OpKind::shared_fence, {static_cast<std::int64_t>(layout::mma_engine::warpgroup)});
          p_.unfenced = false;
          break;
        }
    const Pending before = p_;
    bool uses_shared = false, allocs = false;
    Reach writes, reads;
    for (const auto& r : op.regions) {
      uses_shared = uses_shared || any_op(*r, touches_shared);
      allocs = allocs || any_op(*r, makes_buffer);
      writes |= accesses(*r, false);
      reads |= accesses(*r, true);
    }
    // every iteration after the first: the previous one's accesses
    auto previous_iteration = [&] {
      p_.buffer_written = p_.buffer_written || allocs;
      p_.unfenced = p_.unfenced || allocs;
      p_.global_written |= writes;
      p_.global_read.push_back({reads, nullptr, std::nullopt});
    };
    p_.shared_read = true;
    previous_iteration();
    for (const auto& r : op.regions) block(*r);
    // the exit: after the regions, or (no iteration) as before the loop
    previous_iteration();
    merge(p_, before);
    p_.shared_read = uses_shared || before.shared_read;
  }

  void branch(ir::Op& op) {
    const Pending before = p_;
    block(*op.region(0));
    const Pending then_end = p_;
    p_ = before;
    if (op.regions.size() > 1) block(*op.region(1));
    merge(p_, then_end);
  }

  ir::Function& f_;
  analysis::PointerOrigins origins_;
  LinearLayout scalar_;
  Pending p_;
  bool changed_ = false;
};

class InsertBarriersPass final : public transforms::Pass {
 public:
  std::string_view name() const override { return "insert_barriers"; }
  bool run(ir::Function& f) override {
    if (!f.gpu) return false;
    return InsertBarriers(f).run();
  }
};

}  // namespace

std::unique_ptr<transforms::Pass> make_insert_barriers() { return std::make_unique<InsertBarriersPass>(); }

void add_shared_memory_passes(transforms::PassManager& pm) {
  pm.add(make_allocate_shared());
  pm.add(make_insert_barriers());
}

}  // namespace tile::schedule

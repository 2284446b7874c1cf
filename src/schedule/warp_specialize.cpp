// src/schedule/warp_specialize.cpp — layer: schedule. See warp_specialize.hpp.
#include "schedule/warp_specialize.hpp"

#include <unordered_set>

#include "analysis/pointer_origin.hpp"
#include "schedule/allocate_shared.hpp"

namespace tile::schedule {

using ir::OpKind;

namespace {

/// The kernel's body, or (once pipeline_loops moved it there) the consumer region of its
/// warp_specialize op.
bool kernel_level(const ir::Function& f, const ir::Block* b) {
  if (b == &f.body) return true;
  return b && b->parent && b->parent->kind == OpKind::warp_specialize && b->parent->parent == &f.body && b == b->parent->region(1);
}

/// `v` as producer_scalar would compute it: an argument, or a scalar the body's pure ops make
/// from such values.
bool producer_computable(const ir::Function& f, const ir::Value* v, int depth = 0) {
  if (v->owner == &f.body) return true;  // a kernel argument
  if (!v->type.is_scalar() || v->type.token || !v->def || !kernel_level(f, v->def->parent) || depth > 64) return false;
  // (any pure op: the consumers compute it too, at the kernel's level, where nothing skips it)
  const ir::Op& d = *v->def;
  if (!(ir::op_flags(d.kind) & ir::opflag::P) || !d.regions.empty()) return false;
  for (const ir::Value* o : d.operands)
    if (!producer_computable(f, o, depth + 1)) return false;
  return true;
}

/// The values of `loop`'s body its producer reads from outside the body: the bounds, the
/// ahead slice's operands made outside it, the initial values of the carried values it
/// advances, the copied tensors' bases.
std::vector<const ir::Value*> producer_inputs(const ir::Op& loop, const PipelinedLoop& pl) {
  std::vector<const ir::Value*> in{loop.operand(0), loop.operand(1), loop.operand(2)};
  const ir::Block& body = *loop.region(0);
  for (const auto& o : body.ops)
    if (pl.ahead.count(o.get()))
      for (const ir::Value* v : o->operands)
        if (v->owner != &body && (!v->def || v->def->parent != &body)) in.push_back(v);
  for (std::size_t k = 0; k < pl.ahead_arg.size(); ++k)
    if (pl.ahead_arg[k]) in.push_back(loop.operand(static_cast<unsigned>(3 + k)));
  for (const auto& l : pl.loads) {
    const unsigned r = static_cast<unsigned>(l.load->attrs.ints.size());
    in.push_back(l.load->operand(0));
    for (unsigned k : {1 + 2 * r, 1 + 2 * r + 1}) {  // the coordinates: made in the body or outside
      const ir::Value* v = l.load->operand(k);
      if (v->owner != &body && (!v->def || v->def->parent != &body)) in.push_back(v);
    }
  }
  return in;
}

int floor8(int v) { return v / 8 * 8; }
/// What a thread of `warps` warps may be launched with, all of them on one SM (64K registers).
int launch_regs_for(int warps) { return floor8(std::min(255, 65536 / (32 * warps))); }

}  // namespace

std::string ring_signature(const PipelinedLoop& pl) {
  std::string s = std::to_string(pl.buffers);
  for (const auto& l : pl.loads)
    s += ";" + std::to_string(static_cast<int>(l.elem)) + "," + std::to_string(l.rows) + "x" + std::to_string(l.cols) + "," +
         std::to_string(static_cast<int>(l.arrangement));
  return s;
}

std::optional<WarpSpecialization> plan_warp_specialization(const ir::Function& f, const PipelinePlan& p, std::uint64_t smem_limit) {
  if (p.loops.empty() || f.num_warps % 4 != 0) return std::nullopt;
  WarpSpecialization ws;
  if (f.num_warps + ws.producer_warps > 32) return std::nullopt;
  std::uint64_t rings = 0, shared_rings = 0;  // (every loop its own rings; one set a ring_signature)
  std::unordered_set<std::string> shared;
  std::vector<const ir::Value*> bases;
  for (const auto& [loop, pl] : p.loops) {
    if (!pl.tensor_copy || !kernel_level(f, loop->parent)) return std::nullopt;
    // the producer's values: scalars it computes again
    for (const ir::Value* v : producer_inputs(*loop, pl))
      if (!producer_computable(f, v)) return std::nullopt;
    const ir::Block& body = *loop->region(0);
    for (const auto& o : body.ops)
      if (pl.ahead.count(o.get()))
        for (const auto& r : o->results)
          if (!r->type.is_scalar()) return std::nullopt;
    // the rings and copy barriers, and the release barriers
    const std::uint64_t bytes = pl.ring_bytes() + shared_bytes(ir::Type(dtype::i64, false, {pl.buffers}, nullptr, ir::smem::barriers));
    rings += bytes;
    if (shared.insert(ring_signature(pl)).second) shared_rings += bytes;
    for (const auto& l : pl.loads) bases.push_back(l.load->operand(0));
  }
  // every buffer but the stagings the rings replace, live beside every ring
  std::uint64_t others = 0;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
    if (o.kind != OpKind::local_alloc) return;
    for (const auto& [loop, pl] : p.loops)
      if (pl.is_pipelined_load(&o)) return;
    others += shared_bytes(o.result()->type);
  });
  // each loop its own rings where they fit (the producer fills a later loop's while the consumers
  // are in an earlier one), else loops of one ring_signature take turns on one set
  if (rings + others > smem_limit) {
    if (shared_rings + others > smem_limit) return std::nullopt;
    ws.share_rings = true;
  }
  // no store or atomic may reach what the copies read
  const analysis::PointerOrigins origins(f);
  bool reaches = false;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& o) {
    if (o.kind != OpKind::store && o.kind != OpKind::atomic_rmw && o.kind != OpKind::atomic_cas) return;
    for (const ir::Value* b : bases) reaches = reaches || origins.may_alias(o.operand(0), b);
  });
  if (reaches) return std::nullopt;
  // registers: the launch's per thread, then the producer's given to the consumers
  const int consumers = 32 * f.num_warps, producers = 32 * ws.producer_warps;
  const int launch = launch_regs_for(f.num_warps + ws.producer_warps);
  ws.producer_regs = 24;
  const int want = std::min(240, floor8((launch * (consumers + producers) - ws.producer_regs * producers) / consumers));
  if (want > launch) {
    ws.consumer_regs = want;
  } else {
    ws.producer_regs = 0;
  }
  return ws;
}

ir::Value* producer_scalar(const ir::Function& f, const ir::Value* v, ir::Builder& b, std::unordered_map<const ir::Value*, ir::Value*>& map) {
  if (auto it = map.find(v); it != map.end()) return it->second;
  if (v->owner == &f.body) return const_cast<ir::Value*>(v);
  if (!producer_computable(f, v)) return nullptr;
  for (const ir::Value* o : v->def->operands)
    if (!producer_scalar(f, o, b, map)) return nullptr;
  ir::clone_op(*v->def, b, map);
  return map.at(v);
}

const ir::Op* warp_specialize_op(const ir::Function& f) {
  for (const auto& o : f.body.ops)
    if (o->kind == OpKind::warp_specialize) return o.get();
  return nullptr;
}

int launch_registers(const ir::Function& f) {
  const ir::Op* ws = warp_specialize_op(f);
  return ws && ws->attrs.ints.at(1) > 0 ? launch_regs_for(launch_warps(f)) : 0;
}

int launch_warps(const ir::Function& f) {
  const ir::Op* ws = warp_specialize_op(f);
  return f.num_warps + (ws ? static_cast<int>(ws->attrs.ints.at(0)) : 0);
}

}  // namespace tile::schedule

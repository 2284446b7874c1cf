// src/schedule/shared_scratch.cpp — layer: schedule. See shared_scratch.hpp.
#include "schedule/shared_scratch.hpp"

#include <algorithm>

#include "layout/mma_engine.hpp"

namespace tile::schedule {

using ir::OpKind;
using layout::LinearLayout;

ScanLayout scan_layout(const std::vector<std::int64_t>& shape, int axis, int lanes, int num_warps) {
  const auto uax = static_cast<std::size_t>(axis);
  const std::size_t R = shape.size();
  // sequential: the whole axis in each thread's registers, the other axes over lanes and warps
  // fastest first (blocked, not default_blocked: that one caps the elements per thread)
  std::vector<int> order{axis};
  for (int d = static_cast<int>(R) - 1; d >= 0; --d)
    if (d != axis) order.push_back(d);
  std::vector<int> spt(R, 1), tpw(R, 1), wpc(R, 1);
  spt[uax] = static_cast<int>(shape[uax]);
  int lanes_left = lanes, warps = num_warps;
  for (int d : order) {
    if (d == axis) continue;
    const auto ud = static_cast<std::size_t>(d);
    tpw[ud] = static_cast<int>(std::min<std::int64_t>(lanes_left, shape[ud]));
    lanes_left /= tpw[ud];
  }
  for (int d : order) {
    if (d == axis) continue;
    const auto ud = static_cast<std::size_t>(d);
    wpc[ud] = static_cast<int>(std::min<std::int64_t>(warps, shape[ud] / tpw[ud] > 0 ? shape[ud] / tpw[ud] : 1));
    warps /= wpc[ud];
  }
  tpw[uax] *= lanes_left;  // the rest hold copies (their bases wrap to 0)
  wpc[uax] *= warps;
  LinearLayout T = layout::blocked(shape, spt, tpw, wpc, order);
  const std::int64_t len = shape[uax];
  if (T.num_regs() <= kScanSequentialRegs || len < std::int64_t{lanes} * num_warps) return {std::move(T), false};
  // parallel: the axis fastest, a chunk of len / (lanes · warps) a thread, then the lanes, then the
  // warps; every other axis in each thread's registers
  std::vector<int> pspt(R), ptpw(R, 1), pwpc(R, 1), porder{axis};
  for (std::size_t d = 0; d < R; ++d) pspt[d] = static_cast<int>(shape[d]);
  pspt[uax] = static_cast<int>(len / (std::int64_t{lanes} * num_warps));
  ptpw[uax] = lanes;
  pwpc[uax] = num_warps;
  for (int d = static_cast<int>(R) - 1; d >= 0; --d)
    if (d != axis) porder.push_back(d);
  return {layout::blocked(shape, pspt, ptpw, pwpc, porder), true};
}

bool moves_between_threads(const LinearLayout& from, const LinearLayout& to) {
  return !(from == to) && !layout::register_map(from, to);
}

namespace {

/// The threads a warp of the layouts `op` uses (32 where it has no tile).
int lanes_of(const ir::Op& op) {
  for (const ir::Value* v : op.operands)
    if (v->type.layout) return v->type.layout->num_lanes();
  for (const auto& r : op.results)
    if (r->type.layout) return r->type.layout->num_lanes();
  return 32;
}

}  // namespace

int scratch_phases(const ir::Op& op, int num_warps) {
  switch (op.kind) {  // (most ops: none, decided before any layout is built)
    case OpKind::convert_layout:
    case OpKind::reduce:
    case OpKind::scan:
    case OpKind::join:
    case OpKind::split:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: break;
    case OpKind::dot: return layout::engine_of(op) == layout::mma_engine::none ? 1 : 0;
    default: return 0;
  }
  const int lanes = lanes_of(op);
  const LinearLayout scalar = layout::scalar_layout(num_warps, lanes);
  auto lay = [&](const ir::Value* v) -> const LinearLayout& { return v->type.layout ? *v->type.layout : scalar; };
  auto moves = [&](const ir::Value* v, const LinearLayout& to) { return !v->type.shape.empty() && moves_between_threads(lay(v), to); };
  switch (op.kind) {
    case OpKind::convert_layout: return moves(op.operand(0), lay(op.result())) ? 1 : 0;
    case OpKind::reduce: {
      const LinearLayout& P = lay(op.operand(0));
      int n = 0;
      for (std::size_t k = 1; k < op.operands.size(); ++k) n += moves(op.operands[k], P);
      const auto ax = static_cast<std::size_t>(op.attrs.ints.at(0));
      const bool across_warps = std::any_of(P.warp.begin(), P.warp.end(), [&](const layout::Coords& c) { return c.at(ax) != 0; });
      return n + (across_warps ? 1 : 0);
    }
    case OpKind::scan: {
      const ScanLayout s = scan_layout(op.operand(0)->type.shape, static_cast<int>(op.attrs.ints.at(0)), lanes, num_warps);
      int n = 0;
      for (const ir::Value* v : op.operands) n += moves(v, s.layout);
      if (s.parallel && num_warps > 1) ++n;
      for (const auto& r : op.results) n += !r->type.shape.empty() && moves_between_threads(s.layout, lay(r.get()));
      return n;
    }
    case OpKind::join: {
      const LinearLayout& l = lay(op.result());
      const auto halves = layout::split(l);
      const LinearLayout opl = halves ? *halves : lay(op.operand(0));
      return moves(op.operand(0), opl) + moves(op.operand(1), opl) + (moves_between_threads(layout::join(opl), l) ? 1 : 0);
    }
    case OpKind::split: return moves(op.operand(0), layout::join(lay(op.result(0)))) ? 1 : 0;
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: {
      const LinearLayout& l = lay(op.operand(0));
      return l.lane_dup_mask() || l.warp_dup_mask() ? 1 : 0;
    }
    default: return 0;
  }
}

bool touches_shared(const ir::Op& op, int num_warps) {
  switch (op.kind) {
    case OpKind::local_alloc: return !op.operands.empty();
    case OpKind::dot: return true;  // (a tensor-core dot reads its buffers; the others stage their operands)
    case OpKind::async_copy:
    case OpKind::tensor_copy:
    case OpKind::copy_barrier_init:
    case OpKind::copy_barrier_expect:
    case OpKind::copy_barrier_wait:
    case OpKind::copy_barrier_inval: return true;
    default: return scratch_phases(op, num_warps) > 0;
  }
}

}  // namespace tile::schedule

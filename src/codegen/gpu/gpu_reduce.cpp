// src/codegen/gpu/gpu_reduce.cpp — layer: codegen (gpu). reduce and scan.
//
// reduce along axis a of operands in layout P (the result's layout is slice(P, a)):
//   1. in the thread: the registers that differ only along a are combined, in order of a;
//   2. across lanes: for each lane bit whose basis moves along a, a butterfly shuffle
//      (a butterfly lane shuffle) and a combine — afterwards every lane of the group holds the result;
//   3. across warps (when warps split a): each warp's partial goes to shared memory, a barrier,
//      and every thread combines the partials of its elements in order of the warp index; for a
//      single result, each lane reads one warp's partial and the warp folds them by shuffles.
// The combine function is the op's region (sum, max, argmax's pair, a user's), inlined at each
// step; like Triton's it is taken to be associative and commutative.
// scan along a, rows that fit a thread (at most schedule::kScanSequentialRegs registers): the operands move
// to a layout where a lies in each thread's registers (shared memory), each thread scans its
// rows sequentially — the interpreter's order exactly — and the results move back.
// scan along a, longer rows (a of at least lanes · num_warps elements): a layout with a as the
// fastest axis over registers (a chunk per thread), then lanes, then warps;
//   1. in the thread: each chunk scanned sequentially;
//   2. across lanes: an inclusive scan of the chunk totals, log2(lanes) steps of an upward lane shuffle (down
//      for a reverse scan) and a combine;
//   3. across warps: each warp's total goes to shared memory, a barrier, and each thread folds
//      the totals of the warps before its own, in warp order;
//   4. every element: combine(the prefix of everything before its chunk, its in-chunk value).
// The association differs from the sequential fold (the combine is taken to be associative, as
// Triton's), so float results differ by rounding there.
#include <algorithm>
#include <map>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using layout::Coords;
using layout::LinearLayout;

std::vector<llvm::Value*> GpuLowering::combine(const ir::Block& region, const std::vector<llvm::Value*>& a,
                                               const std::vector<llvm::Value*>& bv, const std::vector<ir::Type>& types) {
  std::vector<DV> args;
  for (std::size_t i = 0; i < a.size(); ++i) args.push_back(scalar_dv(a[i], types[i]));
  for (std::size_t i = 0; i < bv.size(); ++i) args.push_back(scalar_dv(bv[i], types[i]));
  std::vector<DV> out = lower_region(region, args);
  std::vector<llvm::Value*> r;
  for (auto& d : out) r.push_back(d.regs.at(0));
  return r;
}

void GpuLowering::lower_reduce(const ir::Op& op) {
  auto& B = b();
  const int ax = static_cast<int>(op.attrs.ints.at(0));
  const auto uax = static_cast<std::size_t>(ax);
  const std::size_t n = op.operands.size();
  std::vector<DV> in;
  for (unsigned k = 0; k < n; ++k) in.push_back(operand(op, k));
  const LinearLayout& P = in[0].layout;
  for (auto& d : in)
    if (!(d.layout == P)) d = convert(d, P);
  const LinearLayout Rl = layout::slice(P, ax);
  std::vector<ir::Type> types;
  for (auto& d : in) types.push_back(d.type.scalar());
  const ir::Block& region = *op.region(0);

  // 1. in the thread
  const int nr = Rl.num_regs();
  std::vector<std::vector<llvm::Value*>> acc(static_cast<std::size_t>(nr));  // per result reg: n values
  std::vector<std::vector<std::pair<std::int64_t, int>>> groups(static_cast<std::size_t>(nr));
  for (int r = 0; r < P.num_regs(); ++r) {
    Coords c = P.coords(r, 0, 0);
    const std::int64_t along = c[uax];
    c.erase(c.begin() + ax);
    auto j = layout::register_of(Rl, c);
    if (!j) throw tile::error("codegen (gpu): internal error: reduce's registers do not map onto its result layout");
    groups[static_cast<std::size_t>(*j)].push_back({along, r});
  }
  for (int j = 0; j < nr; ++j) {
    auto& g = groups[static_cast<std::size_t>(j)];
    std::sort(g.begin(), g.end());
    std::vector<llvm::Value*> cur;
    for (std::size_t i = 0; i < g.size(); ++i) {
      std::vector<llvm::Value*> x;
      for (auto& d : in) x.push_back(d.regs.at(static_cast<std::size_t>(g[i].second)));
      cur = i == 0 ? x : combine(region, cur, x, types);
    }
    acc[static_cast<std::size_t>(j)] = cur;
  }
  // 2. across lanes
  for (std::size_t i = 0; i < P.lane.size(); ++i) {
    if (P.lane[i][uax] == 0) continue;
    for (auto& a : acc) {
      std::vector<llvm::Value*> other;
      for (llvm::Value* v : a) other.push_back(shuffle_xor(v, 1 << i));
      a = combine(region, a, other, types);
    }
  }
  // 3. across warps
  std::vector<int> wbits;
  for (std::size_t i = 0; i < P.warp.size(); ++i)
    if (P.warp[i][uax] != 0) wbits.push_back(static_cast<int>(i));
  if (!wbits.empty()) {
    const int nwa = 1 << wbits.size();
    std::int64_t slots = 1;
    for (auto e : Rl.shape) slots *= e;
    // the warp's index along the axis
    llvm::Value* wa = B.getInt32(0);
    for (std::size_t k = 0; k < wbits.size(); ++k)
      wa = B.CreateOr(wa, B.CreateShl(B.CreateAnd(B.CreateLShr(warp, B.getInt32(static_cast<std::uint32_t>(wbits[k]))), B.getInt32(1)),
                                      B.getInt32(static_cast<std::uint32_t>(k))));
    std::vector<std::uint64_t> base(n);
    std::uint64_t total = 0;
    std::vector<llvm::Type*> mty;
    for (std::size_t k = 0; k < n; ++k) {
      mty.push_back(S.storage_type(types[k]));
      const std::uint64_t es = S.mod->getDataLayout().getTypeAllocSize(mty[k]);
      total = (total + es - 1) / es * es;
      base[k] = total;
      total += es * static_cast<std::uint64_t>(nwa * slots);
    }
    reserve(total);
    auto flat = [&](int j) {
      llvm::Value* f = B.getInt32(0);
      for (std::size_t d = 0; d < Rl.shape.size(); ++d)
        f = B.CreateAdd(B.CreateMul(f, B.getInt32(static_cast<std::uint32_t>(Rl.shape[d]))), coord(Rl, j, static_cast<int>(d)));
      return f;
    };
    auto slot = [&](std::size_t k, llvm::Value* w, llvm::Value* f) {
      const std::uint64_t es = S.mod->getDataLayout().getTypeAllocSize(mty[k]);
      llvm::Value* idx = B.CreateAdd(B.CreateMul(w, B.getInt32(static_cast<std::uint32_t>(slots))), f);
      return smem_at(B.CreateAdd(B.getInt64(base[k]), B.CreateMul(B.CreateZExt(idx, B.getInt64Ty()), B.getInt64(es))));
    };
    scratch_phase();
    for (int j = 0; j < nr; ++j) {
      llvm::Value* f = flat(j);
      for (std::size_t k = 0; k < n; ++k) B.CreateStore(S.to_storage(acc[static_cast<std::size_t>(j)][k], types[k]), slot(k, wa, f));
    }
    barrier();
    for (int j = 0; j < nr; ++j) {
      llvm::Value* f = flat(j);
      auto partial = [&](llvm::Value* w) {  // warp w's partial of element f
        std::vector<llvm::Value*> x;
        for (std::size_t k = 0; k < n; ++k) x.push_back(S.from_storage(B.CreateLoad(mty[k], slot(k, w, f)), types[k]));
        return x;
      };
      std::vector<llvm::Value*> cur;
      if (slots == 1 && nwa <= lanes) {
        // one result (a row's sum or max): lane l reads warp l % nwa's partial and the warp folds
        // them in log2(nwa) shuffles, every lane ending with the same bits (each step combines
        // the same two values in every lane); where each thread would read and fold all nwa
        // partials, nwa - 1 combines deep (softmax on 16 warps: 19 instructions, 9 this way)
        cur = partial(B.CreateAnd(lane, B.getInt32(static_cast<std::uint32_t>(nwa - 1))));
        for (int m = 1; m < nwa; m <<= 1) {
          std::vector<llvm::Value*> other;
          for (llvm::Value* v : cur) other.push_back(shuffle_xor(v, m));
          cur = combine(region, cur, other, types);
        }
      } else {
        for (int w = 0; w < nwa; ++w) {
          auto x = partial(B.getInt32(static_cast<std::uint32_t>(w)));
          cur = w == 0 ? x : combine(region, cur, x, types);
        }
      }
      acc[static_cast<std::size_t>(j)] = cur;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Type& t = op.result(static_cast<unsigned>(k))->type;
    DV d{t.shape.empty() ? scalar_ : Rl, {}, t};
    for (int j = 0; j < nr; ++j) d.regs.push_back(acc[static_cast<std::size_t>(j)][k]);
    set(op.result(static_cast<unsigned>(k)), std::move(d));
  }
}

GpuLowering::ThreadScan GpuLowering::scan_in_thread(const ir::Op& op, const LinearLayout& l) {
  const auto uax = static_cast<std::size_t>(op.attrs.ints.at(0));
  const bool reverse = op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  ThreadScan ts;
  for (unsigned k = 0; k < op.operands.size(); ++k) {
    ts.out.push_back(convert(operand(op, k), l));
    ts.types.push_back(ts.out.back().type.scalar());
  }
  const std::vector<DV> in = ts.out;
  // runs: registers sharing every coordinate but the axis, in scan order along it
  std::map<Coords, std::vector<std::pair<std::int64_t, int>>> runs;
  for (int r = 0; r < l.num_regs(); ++r) {
    Coords c = l.coords(r, 0, 0);
    const std::int64_t along = c[uax];
    c[uax] = 0;
    runs[c].push_back({along, r});
  }
  for (auto& [key, regs] : runs) {
    std::sort(regs.begin(), regs.end());
    if (reverse) std::reverse(regs.begin(), regs.end());
    std::vector<llvm::Value*> cur;
    ts.runs.emplace_back();
    for (std::size_t i = 0; i < regs.size(); ++i) {
      const auto r = static_cast<std::size_t>(regs[i].second);
      std::vector<llvm::Value*> x;
      for (auto& d : in) x.push_back(d.regs.at(r));
      cur = i == 0 ? x : combine(*op.region(0), cur, x, ts.types);
      for (std::size_t k = 0; k < cur.size(); ++k) ts.out[k].regs[r] = cur[k];
      ts.runs.back().push_back(regs[i].second);
    }
    ts.totals.push_back(cur);
  }
  return ts;
}

void GpuLowering::lower_scan(const ir::Op& op) {
  const int ax = static_cast<int>(op.attrs.ints.at(0));
  const auto uax = static_cast<std::size_t>(ax);
  const std::size_t n = op.operands.size();
  const auto& shape = op.operand(0)->type.shape;
  // the whole axis in each thread's registers, unless the rows are long (schedule/shared_scratch.hpp)
  const schedule::ScanLayout sl = schedule::scan_layout(shape, ax, lanes, num_warps);
  if (sl.parallel) {
    lower_scan_parallel(op, sl.layout);
    return;
  }
  const LinearLayout& T = sl.layout;
  if (T.num_regs() > kMaxRegsPerThread)
    unsupported(op, "a scan along an axis of " + std::to_string(shape[uax]) + " elements holds each row in one thread (" +
                        std::to_string(T.num_regs()) + " registers), over the GPU backend's " + std::to_string(kMaxRegsPerThread));
  ThreadScan ts = scan_in_thread(op, T);
  for (const auto& run : ts.runs)
    if (static_cast<std::int64_t>(run.size()) != shape[uax])
      throw tile::error("codegen (gpu): internal error: scan's layout does not hold whole rows in one thread");
  std::vector<DV>& out = ts.out;
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Value* r = op.result(static_cast<unsigned>(k));
    out[k].type = r->type;
    set(r, convert(out[k], layout_of(r)));
  }
}

void GpuLowering::lower_scan_parallel(const ir::Op& op, const LinearLayout& P) {
  auto& B = b();
  const int ax = static_cast<int>(op.attrs.ints.at(0));
  const bool reverse = op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  const std::size_t n = op.operands.size();
  const auto& shape = op.operand(0)->type.shape;
  const int W = num_warps;
  const std::int64_t len = shape[static_cast<std::size_t>(ax)];
  // P: a fastest, a chunk of len / (L·W) per thread, then the L lanes, then the warps; every
  // other axis in each thread's registers
  const int L = lanes;
  if (P.num_regs() > kMaxRegsPerThread)
    unsupported(op, "a scan of a " + std::to_string(len) + "-element axis holds " + std::to_string(P.num_regs()) +
                        " registers a thread, over the GPU backend's " + std::to_string(kMaxRegsPerThread));
  const ir::Block& region = *op.region(0);
  // 1. in the thread: each chunk (registers sharing every coordinate but a) sequentially
  ThreadScan ts = scan_in_thread(op, P);
  std::vector<DV>& out = ts.out;
  const std::vector<ir::Type>& types = ts.types;
  const std::vector<std::vector<llvm::Value*>>& totals = ts.totals;
  // a value's predecessor in scan order is lane - d (forward) or lane + d (reverse)
  auto has_pred = [&](int d) {
    return reverse ? B.CreateICmpULT(lane, B.getInt32(static_cast<std::uint32_t>(L - d)))
                   : B.CreateICmpUGE(lane, B.getInt32(static_cast<std::uint32_t>(d)));
  };
  auto select = [&](llvm::Value* c, const std::vector<llvm::Value*>& a, const std::vector<llvm::Value*>& b2) {
    std::vector<llvm::Value*> r;
    for (std::size_t k = 0; k < a.size(); ++k) r.push_back(B.CreateSelect(c, a[k], b2[k]));
    return r;
  };
  // 2. across lanes: inclusive scan of the chunk totals
  std::vector<std::vector<llvm::Value*>> lane_incl = totals;
  for (auto& v : lane_incl)
    for (int d = 1; d < L; d *= 2) {
      std::vector<llvm::Value*> t;
      for (auto* x : v) t.push_back(shuffle_shift(x, d, !reverse));
      v = select(has_pred(d), combine(region, t, v, types), v);
    }
  // the exclusive lane prefix: the inclusive value of the predecessor lane (valid where it exists)
  std::vector<std::vector<llvm::Value*>> prefix(totals.size());
  llvm::Value* has_prefix = has_pred(1);
  std::vector<llvm::Value*> warp_has;  // per chunk: whether a warp before this one exists
  for (std::size_t c = 0; c < totals.size(); ++c)
    for (auto* x : lane_incl[c]) prefix[c].push_back(shuffle_shift(x, 1, !reverse));
  // 3. across warps
  if (W > 1) {
    const std::uint64_t slot_bytes = 8;  // every scalar type fits (i1 … i64, f64, pointers)
    const std::uint64_t per_k = slot_bytes * static_cast<std::uint64_t>(W) * totals.size();
    reserve(per_k * n);
    auto slot = [&](std::size_t k, std::size_t c, llvm::Value* w) {
      llvm::Value* idx = B.CreateAdd(B.CreateMul(B.getInt64(c), B.getInt64(static_cast<std::uint64_t>(W))),
                                     B.CreateZExt(w, B.getInt64Ty()));
      return smem_at(B.CreateAdd(B.getInt64(per_k * k), B.CreateMul(idx, B.getInt64(slot_bytes))));
    };
    scratch_phase();
    // the warp's total: its last lane in scan order stores it
    llvm::Value* last = B.CreateICmpEQ(lane, B.getInt32(reverse ? 0u : static_cast<std::uint32_t>(L - 1)));
    S.if_else(last, [&]() -> llvm::Value* {
      for (std::size_t c = 0; c < totals.size(); ++c)
        for (std::size_t k = 0; k < n; ++k) B.CreateStore(lane_incl[c][k], slot(k, c, warp));
      return nullptr;
    }, {}, "scan.total");
    barrier();
    for (std::size_t c = 0; c < totals.size(); ++c) {
      // the fold, in scan order, of the totals of the warps before this thread's (a prefix of
      // the scan order: once a warp is not before ours, no later one is)
      std::vector<llvm::Value*> acc;
      llvm::Value* has = B.getFalse();
      for (int i = 0; i < W; ++i) {
        const int w = reverse ? W - 1 - i : i;
        std::vector<llvm::Value*> x;
        for (std::size_t k = 0; k < n; ++k)
          x.push_back(B.CreateLoad(lane_incl[c][k]->getType(), slot(k, c, B.getInt32(static_cast<std::uint32_t>(w)))));
        llvm::Value* before = reverse ? B.CreateICmpUGT(B.getInt32(static_cast<std::uint32_t>(w)), warp)
                                      : B.CreateICmpULT(B.getInt32(static_cast<std::uint32_t>(w)), warp);
        if (acc.empty()) {
          acc = x;
        } else {
          auto cand = select(has, combine(region, acc, x, types), x);
          acc = select(before, cand, acc);
        }
        has = B.CreateOr(has, before);
      }
      // this thread's prefix: the warps' fold, then the lanes' before it in this warp
      llvm::Value* both = B.CreateAnd(has, has_prefix);
      auto merged = combine(region, acc, prefix[c], types);
      prefix[c] = select(both, merged, select(has, acc, prefix[c]));
      warp_has.push_back(has);
    }
  }
  // 4. every element: combine(prefix, its in-chunk value), where there is a prefix
  for (std::size_t c = 0; c < ts.runs.size(); ++c) {
    llvm::Value* valid = has_prefix;
    if (W > 1) valid = B.CreateOr(valid, warp_has[c]);
    for (int r : ts.runs[c]) {
      std::vector<llvm::Value*> x;
      for (std::size_t k = 0; k < n; ++k) x.push_back(out[k].regs[static_cast<std::size_t>(r)]);
      auto y = select(valid, combine(region, prefix[c], x, types), x);
      for (std::size_t k = 0; k < n; ++k) out[k].regs[static_cast<std::size_t>(r)] = y[k];
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Value* r = op.result(static_cast<unsigned>(k));
    out[k].type = r->type;
    set(r, convert(out[k], layout_of(r)));
  }
}

}  // namespace tile::codegen::gpu

// src/codegen/gpu/gpu_reduce.cpp — layer: codegen (gpu). reduce and scan.
//
// reduce along axis a of operands in layout P (the result's layout is slice(P, a)):
//   1. in the thread: the registers that differ only along a are combined, in order of a;
//   2. across lanes: for each lane bit whose basis moves along a, a butterfly shuffle
//      (shfl.sync.bfly) and a combine — afterwards every lane of the group holds the result;
//   3. across warps (when warps split a): each warp's partial goes to shared memory, a barrier,
//      and every thread combines the partials of its elements in order of the warp index.
// The combine function is the op's region (sum, max, argmax's pair, a user's), inlined at each
// step; like Triton's it is taken to be associative and commutative.
// scan along a: the operands move to a layout where a lies in each thread's registers (shared
// memory), each thread scans its rows sequentially, and the results move back.
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
    barrier_before_write();
    for (int j = 0; j < nr; ++j) {
      llvm::Value* f = flat(j);
      for (std::size_t k = 0; k < n; ++k) B.CreateStore(S.to_storage(acc[static_cast<std::size_t>(j)][k], types[k]), slot(k, wa, f));
    }
    barrier();
    for (int j = 0; j < nr; ++j) {
      llvm::Value* f = flat(j);
      std::vector<llvm::Value*> cur;
      for (int w = 0; w < nwa; ++w) {
        std::vector<llvm::Value*> x;
        for (std::size_t k = 0; k < n; ++k) x.push_back(S.from_storage(B.CreateLoad(mty[k], slot(k, B.getInt32(static_cast<std::uint32_t>(w)), f)), types[k]));
        cur = w == 0 ? x : combine(region, cur, x, types);
      }
      acc[static_cast<std::size_t>(j)] = cur;
    }
    note_smem_read();
  }
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Type& t = op.result(static_cast<unsigned>(k))->type;
    DV d{t.shape.empty() ? layout::scalar_layout(plan.num_warps) : Rl, {}, t};
    for (int j = 0; j < nr; ++j) d.regs.push_back(acc[static_cast<std::size_t>(j)][k]);
    set(op.result(static_cast<unsigned>(k)), std::move(d));
  }
}

void GpuLowering::lower_scan(const ir::Op& op) {
  const int ax = static_cast<int>(op.attrs.ints.at(0));
  const auto uax = static_cast<std::size_t>(ax);
  const bool reverse = op.attrs.ints.size() > 1 && op.attrs.ints[1] != 0;
  const std::size_t n = op.operands.size();
  const auto& shape = op.operand(0)->type.shape;
  // the whole axis in each thread's registers
  std::vector<int> order{ax};
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d)
    if (d != ax) order.push_back(d);
  // (blocked, not default_blocked: that one caps the elements per thread to spread a tile)
  const std::size_t R = shape.size();
  std::vector<int> spt(R, 1), tpw(R, 1), wpc(R, 1);
  spt[uax] = static_cast<int>(shape[uax]);
  int lanes = 32, warps = plan.num_warps;
  for (int d : order) {
    if (d == ax) continue;
    const auto ud = static_cast<std::size_t>(d);
    tpw[ud] = static_cast<int>(std::min<std::int64_t>(lanes, shape[ud]));
    lanes /= tpw[ud];
  }
  for (int d : order) {
    if (d == ax) continue;
    const auto ud = static_cast<std::size_t>(d);
    wpc[ud] = static_cast<int>(std::min<std::int64_t>(warps, shape[ud] / tpw[ud] > 0 ? shape[ud] / tpw[ud] : 1));
    warps /= wpc[ud];
  }
  tpw[uax] *= lanes;  // the rest hold copies (their bases wrap to 0)
  wpc[uax] *= warps;
  const LinearLayout T = layout::blocked(shape, spt, tpw, wpc, order);
  if (T.num_regs() > kMaxRegsPerThread)
    unsupported(op, "a scan along an axis of " + std::to_string(shape[uax]) + " elements holds each row in one thread (" +
                        std::to_string(T.num_regs()) + " registers), over the GPU backend's " + std::to_string(kMaxRegsPerThread));
  std::vector<DV> in;
  std::vector<ir::Type> types;
  for (unsigned k = 0; k < n; ++k) {
    in.push_back(convert(operand(op, k), T));
    types.push_back(in.back().type.scalar());
  }
  // rows: registers sharing every coordinate but the axis, in order along it
  std::map<Coords, std::vector<std::pair<std::int64_t, int>>> rows;
  for (int r = 0; r < T.num_regs(); ++r) {
    Coords c = T.coords(r, 0, 0);
    const std::int64_t along = c[uax];
    c[uax] = 0;
    rows[c].push_back({along, r});
  }
  std::vector<DV> out = in;
  for (auto& [key, regs] : rows) {
    if (static_cast<std::int64_t>(regs.size()) != shape[uax])
      throw tile::error("codegen (gpu): internal error: scan's layout does not hold whole rows in one thread");
    std::sort(regs.begin(), regs.end());
    if (reverse) std::reverse(regs.begin(), regs.end());
    std::vector<llvm::Value*> cur;
    for (std::size_t i = 0; i < regs.size(); ++i) {
      std::vector<llvm::Value*> x;
      for (auto& d : in) x.push_back(d.regs.at(static_cast<std::size_t>(regs[i].second)));
      cur = i == 0 ? x : combine(*op.region(0), cur, x, types);
      for (std::size_t k = 0; k < n; ++k) out[k].regs[static_cast<std::size_t>(regs[i].second)] = cur[k];
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Value* r = op.result(static_cast<unsigned>(k));
    out[k].type = r->type;
    set(r, convert(out[k], plan.at(r)));
  }
}

}  // namespace tile::codegen::gpu

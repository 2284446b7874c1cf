// src/codegen/gpu/gpu_kernel.cpp — layer: codegen (gpu). The GPU lowering's driver: the kernel
// function, thread indices, op dispatch, constants, program ids, arange, elementwise ops.
#include <bit>
#include <utility>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using ir::OpKind;

GpuLowering::GpuLowering(llvm::LLVMContext& ctx, const GpuTargetHooks& t, int lanes_, const analysis::AxisAnalysis& a)
    : S(ctx, t), target(t), axis(a), lanes(lanes_) {
  S.native_min_max = true;
  S.native_f16_nan = true;
  S.native_bf16 = true;  // every NVIDIA target is sm_80 or later
}

const DV& GpuLowering::get(const ir::Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw tile::error("codegen (gpu): internal error: a value is used before it is lowered");
  return it->second;
}

DV GpuLowering::scalar_dv(llvm::Value* v, const ir::Type& t) const {
  return DV{scalar_, {v}, t};
}

DV GpuLowering::splat(llvm::Value* v, const ir::Type& t, const layout::LinearLayout& l) const {
  return DV{l, std::vector<llvm::Value*>(static_cast<std::size_t>(l.num_regs()), v), t};
}

const layout::LinearLayout& GpuLowering::layout_of(const ir::Value* v) const {
  if (v->type.shape.empty()) return scalar_;
  if (!v->type.layout) throw tile::error("codegen (gpu): internal error: a tile without a layout (not the GPU level of the IR)");
  return *v->type.layout;
}

const MmaEngine& GpuLowering::mma() const {
  if (const MmaEngine* e = target.mma()) return *e;
  throw tile::error("codegen (gpu): internal error: a tensor-core dot for a target without a tensor-core engine");
}

const AsyncCopyEngine& GpuLowering::copies() const {
  if (const AsyncCopyEngine* e = target.async_copy()) return *e;
  throw tile::error("codegen (gpu): internal error: a pipelined loop for a target without an asynchronous-copy engine");
}

DV GpuLowering::get_as(const ir::Value* v, const layout::LinearLayout& l) {
  const DV& d = get(v);
  if (d.scalar() || d.layout == l) return d;
  return convert(d, l);
}

std::unique_ptr<llvm::Module> GpuLowering::run(const ir::Function& f, const std::string& symbol) {
  if (!f.gpu) throw tile::error("codegen (gpu): internal error: kernel '" + f.name + "' is not at the GPU level of the IR");
  num_warps = f.num_warps;
  scalar_ = layout::scalar_layout(num_warps, lanes);
  auto& ctx = S.ctx;
  auto m = std::make_unique<llvm::Module>(symbol, ctx);
  S.mod = m.get();
  S.ir_fn = &f;
  S.fp_contract = f.fp_fusion;
  target.configure_module(*m);
  S.fn = target.declare_kernel(*m, f, symbol);
  S.entry = llvm::BasicBlock::Create(ctx, "entry", S.fn);
  auto* body = llvm::BasicBlock::Create(ctx, "body", S.fn);
  S.b = std::make_unique<llvm::IRBuilder<>>(body);
  tid = target.thread_id(S);
  // the warp size is the target's (the lanes the layouts of the IR have, checked per result)
  lane = b().CreateAnd(tid, b().getInt32(static_cast<std::uint32_t>(lanes - 1)), "lane");
  warp = b().CreateLShr(tid, b().getInt32(static_cast<std::uint32_t>(std::countr_zero(static_cast<unsigned>(lanes)))), "warp");
  thread_ip_ = warp;
  thread_coords_.clear();
  for (unsigned i = 0; i < f.body.args.size(); ++i) {
    const ir::Value* a = f.body.arg(i);
    set(a, scalar_dv(target.kernel_arg(S, i, S.reg_type(a->type)), a->type));
  }
  smem_bytes_ = shared_ ? shared_->top : 0;
  smem_floor_ = 0;
  scratch_phases_ = 0;
  lower_block(f.body);
  llvm::IRBuilder<> eb(S.entry);
  eb.CreateBr(body);
  target.finish_kernel(S, smem_bytes_);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*S.fn, &os))
    throw tile::error("codegen (gpu): internal error: invalid LLVM IR for kernel '" + f.name + "': " + os.str());
  values_.clear();
  S.mod = nullptr;
  S.fn = nullptr;
  return m;
}

void GpuLowering::lower_block(const ir::Block& blk) {
  for (const auto& op : blk.ops) lower_op(*op);
}

std::vector<DV> GpuLowering::lower_region(const ir::Block& region, const std::vector<DV>& args) {
  for (std::size_t i = 0; i < args.size() && i < region.args.size(); ++i) set(region.arg(static_cast<unsigned>(i)), args[i]);
  lower_block(region);
  std::vector<DV> out;
  if (const ir::Op* t = region.terminator())
    for (const ir::Value* v : t->operands) out.push_back(get(v));
  return out;
}

void GpuLowering::lower_op(const ir::Op& op) {
  const int outer_phases = std::exchange(scratch_phases_, 0);  // (the op whose region this op is in)
  lower_op_body(op);
  // the barriers before and between its phases through shared memory are where
  // schedule/insert_barriers.cpp expects them only if it runs as many as the contract says
  if (const int want = schedule::scratch_phases(op, num_warps); want != scratch_phases_)
    unsupported(op, "internal error: the lowering moved elements through shared memory " + std::to_string(scratch_phases_) +
                        " times in this op where schedule/shared_scratch.hpp says " + std::to_string(want));
  scratch_phases_ = outer_phases;
  // every result is in the layout its type names: its users read its registers by that layout
  for (const auto& r : op.results) {
    if (r->type.shape.empty() || r->type.is_buffer() || !values_.count(r.get())) continue;
    if (layout_of(r.get()).num_lanes() != lanes)
      unsupported(op, "a layout of " + std::to_string(layout_of(r.get()).num_lanes()) + " lanes a warp for a target of " + std::to_string(lanes));
    if (!(get(r.get()).layout == layout_of(r.get())))
      unsupported(op, "internal error: the lowering made a result in another layout than its type's (" + get(r.get()).layout.str() +
                          " for " + r->type.str() + ")");
  }
}

void GpuLowering::lower_op_body(const ir::Op& op) {
  const auto rt = [&]() -> const ir::Type& { return op.result()->type; };
  // every register of a tile is an LLVM value: past a few hundred per thread, LLVM and the assembler
  // take minutes and the kernel spills anyway — a clear error instead
  for (const auto& r : op.results)
    if (!r->type.shape.empty() && !r->type.is_buffer() && layout_of(r.get()).num_regs() > kMaxRegsPerThread)
      unsupported(op, "a tile of " + std::to_string(r->type.numel()) + " elements is " + std::to_string(layout_of(r.get()).num_regs()) +
                          " registers per thread with num_warps = " + std::to_string(num_warps) + ", over the GPU backend's " +
                          std::to_string(kMaxRegsPerThread) + "; use more warps or smaller tiles");
  if (shared_) smem_floor_ = shared_->floor(op);  // what the op uses itself goes above the live buffers
  switch (op.kind) {
    case OpKind::constant: {
      const ir::Type& t = rt();
      llvm::Type* ty = S.reg_type(t.scalar());
      llvm::Value* c;
      if (t.ptr)
        c = llvm::ConstantExpr::getIntToPtr(llvm::ConstantInt::get(b().getInt64Ty(), static_cast<std::uint64_t>(op.attrs.ints.at(0))), ty);
      else if (t.is_float())
        c = S.from_compute(llvm::ConstantFP::get(S.compute_type(t.elem), op.attrs.f), t.elem);
      else
        c = llvm::ConstantInt::get(ty, static_cast<std::uint64_t>(op.attrs.ints.at(0)), is_signed(t.elem));
      set(op.result(), t.is_scalar() ? scalar_dv(c, t) : splat(c, t, layout_of(op.result())));
      return;
    }
    case OpKind::program_id:
      set(op.result(), scalar_dv(target.program_id(S, static_cast<int>(op.attrs.ints.at(0))), rt()));
      return;
    case OpKind::num_programs:
      set(op.result(), scalar_dv(target.num_programs(S, static_cast<int>(op.attrs.ints.at(0))), rt()));
      return;
    case OpKind::arange: {
      const layout::LinearLayout& l = layout_of(op.result());
      DV d{l, {}, rt()};
      const auto start = static_cast<std::int32_t>(op.attrs.ints.at(0));
      for (int r = 0; r < l.num_regs(); ++r) d.regs.push_back(b().CreateAdd(coord(l, r, 0), b().getInt32(static_cast<std::uint32_t>(start))));
      set(op.result(), std::move(d));
      return;
    }
    case OpKind::hint: set(op.result(), operand(op, 0)); return;
    case OpKind::convert_layout: set(op.result(), convert(get(op.operand(0)), layout_of(op.result()))); return;
    case OpKind::local_alloc: lower_local_alloc(op); return;
    case OpKind::buffer_index:
    case OpKind::iter_ahead:
    case OpKind::async_copy:
    case OpKind::async_commit:
    case OpKind::async_wait:
    case OpKind::tensor_copy:
    case OpKind::copy_barrier_init:
    case OpKind::copy_barrier_expect:
    case OpKind::copy_barrier_wait:
    case OpKind::copy_barrier_inval:
    case OpKind::barrier:
    case OpKind::shared_fence:
    case OpKind::copy_fence:
    case OpKind::barrier_arrive:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
    case OpKind::mma_wait: lower_async(op); return;
    case OpKind::warp_specialize: lower_partitions(op); return;
    case OpKind::splat: {
      const DV& s = get(op.operand(0));
      set(op.result(), splat(s.regs.at(0), rt(), layout_of(op.result())));
      return;
    }
    case OpKind::broadcast:
    case OpKind::expand_dims:
    case OpKind::reshape:
    case OpKind::permute:
    case OpKind::join:
    case OpKind::split: lower_shape(op); return;
    case OpKind::load:
    case OpKind::store:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas: lower_memory(op); return;
    case OpKind::desc_load:  // the compile pipeline keeps only those a tensor-copy ring copies
      unsupported(op, "internal error: a descriptor load outside a loop pipelined with tensor copies");
    case OpKind::reduce: lower_reduce(op); return;
    case OpKind::scan: lower_scan(op); return;
    case OpKind::dot: lower_dot(op); return;
    case OpKind::for_:
    case OpKind::while_:
    case OpKind::if_: lower_control(op); return;
    case OpKind::print:
    case OpKind::assert_: lower_debug(op); return;
    case OpKind::ret: target.emit_return(S); return;
    case OpKind::yield:
    case OpKind::condition: return;
    default: break;
  }
  if (!ir::is_elementwise(op.kind)) unsupported(op, "no lowering for this op");
  std::vector<DV> in;
  for (unsigned k = 0; k < op.operands.size(); ++k) in.push_back(operand(op, k));
  const ir::Type& t = rt();
  DV out{t.is_scalar() ? scalar_ : layout_of(op.result()), {}, t};
  const std::size_t n = in.empty() ? 1 : in[0].regs.size();
  const std::size_t same = t.is_scalar() ? 1 : equal_registers(out.layout, op.result());
  auto args_of = [&](std::size_t r) {
    std::vector<llvm::Value*> args;
    for (const DV& d : in) args.push_back(d.regs.size() == 1 ? d.regs[0] : d.regs.at(r));
    return args;
  };
  // exp and IEEE division: the target may compute the thread's registers as one batch
  std::vector<llvm::Value*> batch;
  if (Lowering::has_batch_form(op)) {
    std::vector<std::vector<llvm::Value*>> batch_in(in.size());
    for (std::size_t r = 0; r < n; r += same) {
      const std::vector<llvm::Value*> a = args_of(r);
      for (std::size_t k = 0; k < a.size(); ++k) batch_in[k].push_back(a[k]);
    }
    batch = S.batch_op(op, batch_in);
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (r % same)  // proven equal to the first register of its run: computed once
      out.regs.push_back(out.regs[r - r % same]);
    else
      out.regs.push_back(batch.empty() ? S.scalar_op(op, args_of(r)) : batch.at(r / same));
  }
  set(op.result(), std::move(out));
}

std::size_t GpuLowering::equal_registers(const layout::LinearLayout& l, const ir::Value* v) const {
  // the leading register bits that step one element along one axis
  if (l.reg.empty()) return 1;
  int ax = -1;
  for (std::size_t d = 0; d < l.reg[0].size(); ++d)
    if (l.reg[0][d] == 1) ax = static_cast<int>(d);
  if (ax < 0) return 1;
  const auto ua = static_cast<std::size_t>(ax);
  const auto& c = axis.at(v).constancy;
  if (ua >= c.size() || c[ua] <= 1) return 1;
  std::size_t n = 0;
  for (const auto& b : l.reg) {
    layout::Coords want(b.size(), 0);
    want[ua] = std::int64_t{1} << n;
    if (b != want || (std::int64_t{2} << n) > c[ua]) break;
    ++n;
  }
  if (n == 0) return 1;
  // the run starts at a multiple of its length only if no other basis moves the low bits of
  // the axis coordinate (constancy counts runs from coordinate 0)
  const std::int64_t low = (std::int64_t{1} << n) - 1;
  auto clean = [&](const std::vector<layout::Coords>& bases, std::size_t from) {
    for (std::size_t i = from; i < bases.size(); ++i)
      if (bases[i][ua] & low) return false;
    return true;
  };
  if (!clean(l.reg, n) || !clean(l.lane, 0) || !clean(l.warp, 0)) return 1;
  return std::size_t{1} << n;
}

}  // namespace tile::codegen::gpu

// src/codegen/lower_kernel.cpp — layer: codegen. The lowering's driver: the kernel function,
// its arguments, op dispatch, constants, program ids and arange.
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/lowering.hpp"

#include <algorithm>

namespace tile::codegen {

using ir::OpKind;

Lowering::Lowering(llvm::LLVMContext& c, const TargetHooks& t) : ctx(c), target(t) {}

llvm::Value* Lowering::i64(std::int64_t x) const { return llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), static_cast<std::uint64_t>(x), true); }
llvm::Value* Lowering::i32(std::int32_t x) const { return llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), static_cast<std::uint64_t>(static_cast<std::int64_t>(x)), true); }

void Lowering::unsupported(const ir::Op& op, const std::string& why) const {
  throw tile::error("the " + target.name() + " backend cannot lower '" + std::string(ir::op_name(op.kind)) + "' (" + why +
                        ")" + (ir_fn ? " in kernel '" + ir_fn->name + "'" : std::string()),
                    op.loc);
}

bool Lowering::fusible(const ir::Value* v) const {
  auto it = uses_.find(v);
  return it != uses_.end() && it->second == 1 && !used_elsewhere_.count(v);
}

void Lowering::flush_reads(const std::vector<const ir::Value*>& keep) {
  std::vector<const ir::Value*> pending;
  pending.swap(pending_reads_);
  for (const ir::Value* v : pending) {
    if (std::find(keep.begin(), keep.end(), v) != keep.end()) continue;
    auto it = values_.find(v);
    if (it != values_.end() && it->second.k == TV::K::lazy) it->second = materialize(it->second);
  }
}

const TV& Lowering::get(const ir::Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw tile::error("codegen: internal error: a value is used before it is lowered");
  return it->second;
}

std::unique_ptr<llvm::Module> Lowering::run(const ir::Function& f, const std::string& symbol) {
  auto m = std::make_unique<llvm::Module>(symbol, ctx);
  mod = m.get();
  ir_fn = &f;
  target.configure_module(*m);
  uses_.clear();
  used_elsewhere_.clear();
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
    for (const ir::Value* v : op.operands) {
      ++uses_[v];
      const ir::Block* home = v->def ? v->def->parent : v->owner;
      if (home != op.parent) used_elsewhere_[v] = true;
    }
  });
  fn = target.declare_kernel(*m, f, symbol);
  entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
  b = std::make_unique<llvm::IRBuilder<>>(body);
  for (unsigned i = 0; i < f.body.args.size(); ++i) {
    const ir::Value* a = f.body.arg(i);
    llvm::Value* v = target.kernel_arg(*this, i, reg_type(a->type));
    set(a, scalar(v, a->type));
  }
  scratch_bytes_ = 0;
  scratch_base_ = nullptr;
  lower_block(f.body);
  llvm::IRBuilder<> eb(entry);
  eb.CreateBr(body);
  target.finish_kernel(*this, scratch_bytes_);
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*fn, &os))
    throw tile::error("codegen: internal error: invalid LLVM IR for kernel '" + f.name + "': " + os.str());
  values_.clear();
  pending_reads_.clear();
  mod = nullptr;
  fn = nullptr;
  return m;
}

void Lowering::lower_block(const ir::Block& blk) {
  // lazies are used in their own block: none outlives it (a nested block's must not be
  // materialized later outside it)
  const std::size_t outer = pending_reads_.size();
  for (const auto& op : blk.ops) {
    lower_op(*op);
    // an op consumed its lazy operands: they are no longer pending
    std::erase_if(pending_reads_, [&](const ir::Value* v) {
      return std::find(op->operands.begin(), op->operands.end(), v) != op->operands.end();
    });
  }
  if (pending_reads_.size() > outer) pending_reads_.resize(outer);
}

void Lowering::lower_op(const ir::Op& op) {
  // ops that may write memory (or contain ops that do) see every earlier load done
  switch (op.kind) {
    case OpKind::store:
    case OpKind::atomic_rmw:
    case OpKind::atomic_cas:
    case OpKind::for_:
    case OpKind::while_:
    case OpKind::if_: {
      std::vector<const ir::Value*> keep;
      if (op.kind == OpKind::store) keep.assign(op.operands.begin(), op.operands.end());
      flush_reads(keep);
      break;
    }
    default: break;
  }
  const auto& rt = [&]() -> const ir::Type& { return op.result()->type; };
  switch (op.kind) {
    case OpKind::constant: {
      const ir::Type& t = rt();
      llvm::Type* ty = reg_type(t.scalar());
      llvm::Value* c;
      if (t.ptr)
        c = llvm::ConstantExpr::getIntToPtr(llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), static_cast<std::uint64_t>(op.attrs.ints.at(0))), ty);
      else if (t.is_float())
        c = from_compute(llvm::ConstantFP::get(compute_type(t.elem), op.attrs.f), t.elem);
      else
        c = llvm::ConstantInt::get(ty, static_cast<std::uint64_t>(op.attrs.ints.at(0)), is_signed(t.elem));
      // f16 constants: fold the conversion to a constant
      if (auto* k = llvm::dyn_cast<llvm::Constant>(c)) c = k;
      set(op.result(), t.is_scalar() ? scalar(c, t) : uniform(c, t));
      return;
    }
    case OpKind::program_id:
      set(op.result(), scalar(target.program_id(*this, static_cast<int>(op.attrs.ints.at(0))), rt()));
      return;
    case OpKind::num_programs:
      set(op.result(), scalar(target.num_programs(*this, static_cast<int>(op.attrs.ints.at(0))), rt()));
      return;
    case OpKind::arange: {
      TV r{TV::K::affine, i32(static_cast<std::int32_t>(op.attrs.ints.at(0))), {1}, rt()};
      set(op.result(), std::move(r));
      return;
    }
    case OpKind::hint: set(op.result(), get(op.operand(0))); return;
    case OpKind::splat:
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
    case OpKind::reduce:
    case OpKind::scan: lower_reduce(op); return;
    case OpKind::dot: lower_dot(op); return;
    case OpKind::for_:
    case OpKind::while_:
    case OpKind::if_: lower_control(op); return;
    case OpKind::print:
    case OpKind::assert_: lower_debug(op); return;
    case OpKind::ret: target.emit_return(*this); return;
    case OpKind::yield:
    case OpKind::condition: return;  // read by the op that owns the region
    default: break;
  }
  if (ir::is_elementwise(op.kind)) return lower_elementwise(op);
  unsupported(op, "no lowering for this op");
}

std::vector<TV> Lowering::lower_region(const ir::Block& region, std::span<const TV> args) {
  for (std::size_t i = 0; i < args.size() && i < region.args.size(); ++i) set(region.arg(static_cast<unsigned>(i)), args[i]);
  lower_block(region);
  std::vector<TV> out;
  if (const ir::Op* t = region.terminator())
    for (const ir::Value* v : t->operands) out.push_back(get(v));
  return out;
}

}  // namespace tile::codegen

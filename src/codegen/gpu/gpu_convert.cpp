// src/codegen/gpu/gpu_convert.cpp — layer: codegen (gpu). Coordinates of a thread's elements,
// layout conversions, shape ops (register renumbering), shared memory and barriers, shuffles.
//
// A conversion that moves elements between threads goes through shared memory: the threads that
// own the elements (replicated copies skip the write) store them at their row-major position,
// with one element of padding per row of 32 or more so that a column access hits 32 banks
// rather than one; a barrier; every thread reads the elements of the new layout (one scratch
// phase: schedule/shared_scratch.hpp; the barrier before it is the IR's, insert_barriers').
// Where both layouts keep runs of elements along the last axis in a thread and rows are a
// multiple of 128 bytes (an accumulator to the store's 16-byte layout), convert_swizzled moves
// whole runs instead — vector stores and loads, rows unpadded, 16-byte chunks XOR-swizzled by row.
#include <bit>

#include "codegen/gpu/gpu_lowering.hpp"

namespace tile::codegen::gpu {

using layout::Coords;
using layout::LinearLayout;

llvm::Value* GpuLowering::thread_coord(const LinearLayout& l, int d) {
  const auto ud = static_cast<std::size_t>(d);
  // computed once a kernel for each distinct set of bases, right after lane and warp (which
  // dominates every use): not again for each register of each layout (thousands of shifts and
  // XORs for LLVM to clean up in a matmul's epilogue)
  std::vector<std::int64_t> key;
  for (const auto* v : {&l.lane, &l.warp})
    for (const auto& bb : *v) key.push_back(bb.empty() ? 0 : bb[ud]);
  if (auto it = thread_coords_.find(key); it != thread_coords_.end()) return it->second;
  auto* at = llvm::cast<llvm::Instruction>(thread_ip_);
  llvm::IRBuilder<> pb(at->getParent(), std::next(at->getIterator()));
  // The coordinate is the XOR of base[i] over the set bits i of the thread index (lane bit i is
  // tid bit i, warp bit i is tid bit log2(lanes) + i). Consecutive tid bits whose bases double from a power
  // of two (a blocked layout's lanes and warps: 4, 8, …, 1024) make one term, (tid >> i & mask)
  // << log2 base, where bit by bit they cost a shift, an and, a multiply and a XOR each: this
  // arithmetic comes before a program's first load, so it is on every program's critical path.
  // Terms whose bits do not overlap combine with a disjoint OR (an add, which addresses fold).
  struct term {
    unsigned bit, len;
    std::uint64_t base;  // of the lowest bit
  };
  std::vector<term> terms;
  auto collect = [&](const std::vector<Coords>& bases, unsigned first_bit) {
    for (std::size_t i = 0; i < bases.size(); ++i) {
      const std::int64_t v = bases[i].empty() ? 0 : bases[i][ud];
      if (!v) continue;
      const unsigned bit = first_bit + static_cast<unsigned>(i);
      const auto uv = static_cast<std::uint64_t>(v) & 0xffffffffu;
      if (!terms.empty()) {
        term& t = terms.back();
        if (t.bit + t.len == bit && std::has_single_bit(t.base) && (t.base << t.len) == uv) {
          ++t.len;
          continue;
        }
      }
      terms.push_back({bit, 1, uv});
    }
  };
  collect(l.lane, 0);
  collect(l.warp, static_cast<unsigned>(l.lane.size()));  // (tid = warp · lanes + lane)
  llvm::Value* c = nullptr;
  std::uint64_t covered = 0;  // the bits the terms so far may set
  for (const term& t : terms) {
    llvm::Value* x = t.bit ? pb.CreateLShr(tid, pb.getInt32(t.bit)) : tid;
    x = pb.CreateAnd(x, pb.getInt32(static_cast<std::uint32_t>((std::uint64_t{1} << t.len) - 1)));
    std::uint64_t bits;
    if (std::has_single_bit(t.base)) {
      const auto sh = static_cast<unsigned>(std::countr_zero(t.base));
      if (sh) x = pb.CreateShl(x, pb.getInt32(sh));
      bits = ((std::uint64_t{1} << t.len) - 1) << sh;
    } else {  // one bit: 0 or the base
      x = pb.CreateMul(x, pb.getInt32(static_cast<std::uint32_t>(t.base)));
      bits = std::bit_ceil(t.base + 1) - 1;
    }
    if (!c) {
      c = x;
    } else if ((bits & covered) == 0) {
      c = pb.CreateOr(c, x);
      llvm::cast<llvm::PossiblyDisjointInst>(c)->setIsDisjoint(true);
    } else {
      c = pb.CreateXor(c, x);
    }
    covered |= bits;
  }
  if (!c) c = pb.getInt32(0);
  if (llvm::isa<llvm::Instruction>(c)) thread_ip_ = c;  // the last instruction made: the next go after it
  thread_coords_.emplace(std::move(key), c);
  return c;
}

llvm::Value* GpuLowering::coord(const LinearLayout& l, int r, int d) {
  const auto ud = static_cast<std::size_t>(d);
  const std::int64_t k = l.coords(r, 0, 0).at(ud);
  // the bits a thread part may set along d; when the register's bits are disjoint from them
  // (blocked layouts), XOR is an add, which LLVM folds into addresses as constant offsets
  std::int64_t thread_bits = 0;
  for (const auto* v : {&l.lane, &l.warp})
    for (const auto& bb : *v) thread_bits |= bb.empty() ? 0 : bb[ud];
  llvm::Value* t = thread_coord(l, d);
  if ((k & thread_bits) == 0) return b().CreateAdd(t, b().getInt32(static_cast<std::uint32_t>(k)), "", true, true);
  return b().CreateXor(t, b().getInt32(static_cast<std::uint32_t>(k)));
}

llvm::Value* GpuLowering::is_writer(const LinearLayout& l) {
  const std::uint32_t lm = l.lane_dup_mask(), wm = l.warp_dup_mask();
  llvm::Value* ok = b().getTrue();
  if (lm) ok = b().CreateICmpEQ(b().CreateAnd(lane, b().getInt32(lm)), b().getInt32(0));
  if (wm) ok = b().CreateAnd(ok, b().CreateICmpEQ(b().CreateAnd(warp, b().getInt32(wm)), b().getInt32(0)));
  return ok;
}

llvm::Value* GpuLowering::smem_at(llvm::Value* byte_offset) {
  if (smem_floor_) byte_offset = b().CreateAdd(byte_offset, llvm::ConstantInt::get(byte_offset->getType(), smem_floor_));
  return smem_abs(byte_offset);
}

llvm::Value* GpuLowering::smem_abs(llvm::Value* byte_offset) {
  return b().CreateGEP(b().getInt8Ty(), target.shared_base(S), byte_offset);
}

void GpuLowering::barrier() {
  if (consumer_threads_) target.barrier(S, kConsumerBarrier, consumer_threads_);  // (a warp-specialized kernel's consumers)
  else target.barrier(S, 0, 0);
}

void GpuLowering::scratch_phase() {
  if (scratch_phases_++ > 0) barrier();  // the op's previous phase's loads are done
}

namespace {

/// Row-major element offset with one element of padding per row (rows of >= 32 elements).
struct Padded {
  std::int64_t row = 0;  // elements per row; 0: no padding
  std::int64_t numel = 1;
  Padded(const std::vector<std::int64_t>& shape) {
    for (auto e : shape) numel *= e;
    if (shape.size() >= 2 && shape.back() >= 32) row = shape.back();
  }
  std::int64_t size() const { return numel + (row ? numel / row : 0); }
};

}  // namespace

DV GpuLowering::convert(const DV& x, const LinearLayout& to) {
  if (x.scalar() || x.layout == to) return x;
  if (auto map = layout::register_map(x.layout, to)) {
    DV out{to, {}, x.type};
    for (int r : *map) out.regs.push_back(x.regs.at(static_cast<std::size_t>(r)));
    return out;
  }
  if (auto v = convert_swizzled(x, to)) return std::move(*v);
  // through shared memory
  const ir::Type st = x.type.scalar();
  llvm::Type* mty = S.storage_type(st);
  const std::int64_t es = static_cast<std::int64_t>(S.mod->getDataLayout().getTypeAllocSize(mty));
  const Padded pad(x.type.shape);
  reserve(static_cast<std::uint64_t>(pad.size() * es));
  const int R = static_cast<int>(x.type.shape.size());
  auto offset = [&](const LinearLayout& l, int r) {
    llvm::Value* flat = b().getInt32(0);
    for (int d = 0; d < R; ++d)
      flat = b().CreateAdd(b().CreateMul(flat, b().getInt32(static_cast<std::uint32_t>(x.type.shape[static_cast<std::size_t>(d)]))), coord(l, r, d));
    if (pad.row) flat = b().CreateAdd(flat, b().CreateLShr(flat, b().getInt32(static_cast<std::uint32_t>(std::countr_zero(static_cast<std::uint64_t>(pad.row))))));
    return b().CreateMul(b().CreateZExt(flat, b().getInt64Ty()), b().getInt64(static_cast<std::uint64_t>(es)));
  };
  scratch_phase();
  llvm::Value* writer = is_writer(x.layout);
  auto* wr = llvm::BasicBlock::Create(S.ctx, "cvt.write", S.fn);
  auto* done = llvm::BasicBlock::Create(S.ctx, "cvt.written", S.fn);
  b().CreateCondBr(writer, wr, done);
  b().SetInsertPoint(wr);
  for (int r = 0; r < x.layout.num_regs(); ++r)
    b().CreateStore(S.to_storage(x.regs.at(static_cast<std::size_t>(r)), st), smem_at(offset(x.layout, r)));
  b().CreateBr(done);
  b().SetInsertPoint(done);
  barrier();
  DV out{to, {}, x.type};
  for (int r = 0; r < to.num_regs(); ++r) out.regs.push_back(S.from_storage(b().CreateLoad(mty, smem_at(offset(to, r))), st));
  return out;
}

std::optional<DV> GpuLowering::convert_swizzled(const DV& x, const LinearLayout& to) {
  auto& B = b();
  const ir::Type st = x.type.scalar();
  llvm::Type* mty = S.storage_type(st);
  const std::int64_t es = static_cast<std::int64_t>(S.mod->getDataLayout().getTypeAllocSize(mty));
  const int R = static_cast<int>(x.type.shape.size());
  const std::int64_t cols = x.type.shape.back(), row_bytes = cols * es;
  if (st.ptr || row_bytes % 128 != 0 || 16 % es != 0 || x.regs.size() == 1) return std::nullopt;
  // elements a store (a load) moves: the layout's run of registers along the last axis, at most
  // one 16-byte chunk (runs start at multiples of their length: never across a chunk)
  auto width = [&](const LinearLayout& l) {
    auto [run, ax] = register_run(l);
    return ax == R - 1 ? static_cast<int>(std::min<std::int64_t>(run, 16 / es)) : 1;
  };
  const int ws = width(x.layout), wl = width(to);
  // both sides move runs: a side moving single elements down a column would meet 4-way bank
  // conflicts here (8 chunk positions for 32 rows), where the padded path has none
  if (ws < 2 || wl < 2) return std::nullopt;
  std::int64_t numel = 1;
  for (auto e : x.type.shape) numel *= e;
  reserve(static_cast<std::uint64_t>(numel * es));
  auto* i64 = B.getInt64Ty();
  // byte offset of register r's element: row-major rows of row_bytes, 16-byte chunks XOR-ed with
  // the row's low 3 bits, so 8 consecutive rows reach 8 different chunks of a 128-byte line
  auto offset = [&](const LinearLayout& l, int r) {
    llvm::Value* row = B.getInt32(0);
    for (int d = 0; d + 1 < R; ++d)
      row = B.CreateAdd(B.CreateMul(row, B.getInt32(static_cast<std::uint32_t>(x.type.shape[static_cast<std::size_t>(d)]))), coord(l, r, d));
    llvm::Value* cb = B.CreateMul(B.CreateZExt(coord(l, r, R - 1), i64), B.getInt64(static_cast<std::uint64_t>(es)));
    llvm::Value* rw = B.CreateZExt(row, i64);
    llvm::Value* sw = B.CreateShl(B.CreateAnd(rw, B.getInt64(7)), B.getInt64(4));
    return B.CreateAdd(B.CreateMul(rw, B.getInt64(static_cast<std::uint64_t>(row_bytes))), B.CreateXor(cb, sw));
  };
  scratch_phase();
  S.if_else(is_writer(x.layout), [&]() -> llvm::Value* {
    for (int r = 0; r < x.layout.num_regs(); r += ws) {
      llvm::Value* v = storage_run(x, static_cast<std::size_t>(r), ws, st);  // before the address, in this order
      B.CreateAlignedStore(v, smem_at(offset(x.layout, r)), llvm::Align(static_cast<std::uint64_t>(ws * es)));
    }
    return nullptr;
  }, nullptr, "cvt.swizzled");
  barrier();
  DV out{to, {}, x.type};
  auto* load_ty = llvm::FixedVectorType::get(mty, static_cast<unsigned>(wl));
  for (int r = 0; r < to.num_regs(); r += wl) {
    llvm::Value* v = B.CreateAlignedLoad(load_ty, smem_at(offset(to, r)), llvm::Align(static_cast<std::uint64_t>(wl * es)));
    for (int e = 0; e < wl; ++e)
      out.regs.push_back(S.from_storage(B.CreateExtractElement(v, B.getInt32(static_cast<std::uint32_t>(e))), st));
  }
  return out;
}

DV GpuLowering::remap(const DV& src, const LinearLayout& result, const ir::Type& t,
                      const std::function<Coords(const Coords&)>& to_src) {
  DV out{result, {}, t};
  for (int r = 0; r < result.num_regs(); ++r) {
    auto idx = layout::register_of(src.layout, to_src(result.coords(r, 0, 0)));
    if (!idx) throw tile::error("codegen (gpu): internal error: a shape op's operand layout does not hold its elements in "
                                "the same threads (" + src.layout.str() + " -> " + result.str() + ")");
    out.regs.push_back(src.regs.at(static_cast<std::size_t>(*idx)));
  }
  return out;
}

using ir::OpKind;

std::function<Coords(const Coords&)> GpuLowering::shape_map(const ir::Op& op, const LinearLayout& result) {
  const auto& ss = op.operand(0)->type.shape;
  switch (op.kind) {
    case OpKind::broadcast:
      return [ss](const Coords& c) {
        Coords s = c;
        for (std::size_t d = 0; d < s.size(); ++d)
          if (ss[d] == 1) s[d] = 0;
        return s;
      };
    case OpKind::expand_dims: {
      const auto ax = static_cast<std::ptrdiff_t>(op.attrs.ints.at(0));
      return [ax](const Coords& c) {
        Coords s = c;
        s.erase(s.begin() + ax);
        return s;
      };
    }
    case OpKind::reshape:
      return [ss, result](const Coords& c) {
        std::int64_t f = result.flat(c);
        Coords s(ss.size());
        for (std::size_t d = ss.size(); d-- > 0;) {
          s[d] = f % ss[d];
          f /= ss[d];
        }
        return s;
      };
    default: throw tile::error("codegen (gpu): internal error: shape_map of a non-shape op");
  }
}

void GpuLowering::lower_shape(const ir::Op& op) {
  using ir::OpKind;
  const ir::Type& rt = op.result()->type;
  switch (op.kind) {
    case OpKind::broadcast:
    case OpKind::reshape:
      set(op.result(), remap(operand(op, 0), layout_of(op.result()), rt, shape_map(op, layout_of(op.result()))));
      return;
    case OpKind::expand_dims: {
      DV x = operand(op, 0);
      if (x.scalar()) {
        set(op.result(), splat(x.regs[0], rt, layout_of(op.result())));
        return;
      }
      set(op.result(), remap(x, layout_of(op.result()), rt, shape_map(op, layout_of(op.result()))));
      return;
    }
    case OpKind::permute: {
      DV x = operand(op, 0);
      set(op.result(), remap(x, layout_of(op.result()), rt, [&](const Coords& c) {
        Coords s(c.size());
        for (std::size_t i = 0; i < c.size(); ++i) s[static_cast<std::size_t>(op.attrs.ints[i])] = c[i];
        return s;
      }));
      return;
    }
    case OpKind::join: {
      const LinearLayout& l = layout_of(op.result());
      auto s = layout::split(l);
      const LinearLayout opl = s ? *s : layout_of(op.operand(0));
      DV a = get_as(op.operand(0), opl), c = get_as(op.operand(1), opl);
      // the result as the join of the operands' layout, then in the planned one
      const LinearLayout jl = layout::join(opl);
      DV j{jl, {}, rt};
      for (int r = 0; r < jl.num_regs(); ++r) {
        const Coords co = jl.coords(r, 0, 0);
        Coords src(co.begin(), co.end() - 1);
        const DV& from = co.back() ? c : a;
        auto idx = layout::register_of(opl, src);
        j.regs.push_back(from.regs.at(static_cast<std::size_t>(idx.value_or(0))));
      }
      set(op.result(), convert(j, l));
      return;
    }
    case OpKind::split: {
      // the halves of a [2] tile are scalars: every thread then holds both elements
      const LinearLayout l = op.result(0)->type.shape.empty() ? scalar_ : layout_of(op.result(0));
      DV x = get_as(op.operand(0), layout::join(l));
      for (unsigned h = 0; h < 2; ++h)
        set(op.result(h), remap(x, l, op.result(h)->type, [&](const Coords& c) {
          Coords s = c;
          s.push_back(h);
          return s;
        }));
      return;
    }
    default: unsupported(op, "not a shape op");
  }
}

llvm::Value* GpuLowering::shuffle_xor(llvm::Value* v, int mask) {
  return shuffle_any(v, [&](llvm::Value* w) { return target.shuffle_xor_i32(S, w, mask); });
}

llvm::Value* GpuLowering::shuffle_shift(llvm::Value* v, int delta, bool up) {
  return shuffle_any(v, [&](llvm::Value* w) { return target.shuffle_shift_i32(S, w, delta, up); });
}

llvm::Value* GpuLowering::shuffle_any(llvm::Value* v, const std::function<llvm::Value*(llvm::Value*)>& shuffle32) {
  llvm::Type* ty = v->getType();
  auto& B = b();
  if (ty->isPointerTy()) return B.CreateIntToPtr(shuffle_any(B.CreatePtrToInt(v, B.getInt64Ty()), shuffle32), ty);
  const unsigned bits = static_cast<unsigned>(ty->getPrimitiveSizeInBits());
  llvm::Type* ity = B.getIntNTy(bits);
  llvm::Value* i = ty->isIntegerTy() ? v : B.CreateBitCast(v, ity);
  llvm::Value* out;
  if (bits == 64) {
    llvm::Value* lo = B.CreateTrunc(i, B.getInt32Ty());
    llvm::Value* hi = B.CreateTrunc(B.CreateLShr(i, 32), B.getInt32Ty());
    lo = shuffle32(lo);
    hi = shuffle32(hi);
    out = B.CreateOr(B.CreateZExt(lo, B.getInt64Ty()), B.CreateShl(B.CreateZExt(hi, B.getInt64Ty()), 32));
  } else if (bits == 32) {
    out = shuffle32(i);
  } else {
    out = B.CreateTrunc(shuffle32(B.CreateZExt(i, B.getInt32Ty())), ity);
  }
  return ty->isIntegerTy() ? out : B.CreateBitCast(out, ty);
}

}  // namespace tile::codegen::gpu

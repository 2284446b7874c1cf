// test/interp/build_helpers.hpp — helpers for the interpreter tests: building small kernels by
// hand with ir::Builder, host buffers with their memory regions, and launching interp::Program.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "drivers/interpreter/interpreter.hpp"
#include "ir/ir.hpp"

namespace it {

using namespace tile;
using namespace tile::ir;
using tile::detail::atomic_kind;
using tile::detail::precision;
using tile::interp::ArgValue;
using tile::interp::Grid;
using tile::interp::Program;
using tile::interp::Region;
using tile::interp::RunOptions;

inline Type T(dtype e, std::vector<std::int64_t> s = {}) { return Type{e, false, std::move(s)}; }
inline Type P(dtype e, std::vector<std::int64_t> s = {}) { return Type{e, true, std::move(s)}; }

inline src_loc L(std::uint32_t line, const char* file = "/home/user/kernels/kern.cpp") {
  src_loc l;
  l.file = file;
  l.line = line;
  return l;
}

inline Attrs A(std::vector<std::int64_t> ints, std::string str = {}, double f = 0.0) {
  Attrs a;
  a.ints = std::move(ints);
  a.str = std::move(str);
  a.f = f;
  return a;
}

/// A kernel under construction: arguments first, then ops appended at `b`'s insertion point.
struct K {
  std::shared_ptr<Function> fn = std::make_shared<Function>();
  Builder b{&fn->body};

  explicit K(std::string name = "k", std::vector<Type> args = {}) {
    fn->name = std::move(name);
    for (std::size_t i = 0; i < args.size(); ++i) {
      fn->body.add_arg(args[i]);
      fn->arg_info.push_back({"arg" + std::to_string(i), 1});
    }
  }
  Value* arg(unsigned i) { return fn->body.arg(i); }
  Op* op(OpKind k, std::vector<Value*> operands, std::vector<Type> results, Attrs a = {}, src_loc loc = {},
         unsigned regions = 0) {
    return b.create(k, std::move(operands), std::move(results), std::move(a), loc, regions);
  }
  Value* v(OpKind k, std::vector<Value*> operands, Type result, Attrs a = {}, src_loc loc = {}) {
    return op(k, std::move(operands), {std::move(result)}, std::move(a), loc)->result();
  }
  Value* ci(Type t, std::int64_t x) { return b.constant_int(t, x); }
  Value* cf(Type t, double x) { return b.constant_float(t, x); }
  Value* splat(Value* x, std::vector<std::int64_t> shape) { return v(OpKind::splat, {x}, x->type.with_shape(shape)); }
  Value* arange(std::int64_t n, std::int64_t start = 0) {
    return v(OpKind::arange, {}, T(dtype::i32, {n}), A({start, start + n}));
  }
  Value* bin(OpKind k, Value* a, Value* c) { return v(k, {a, c}, a->type); }
  Value* cmp(CmpPred p, Value* a, Value* c) {
    return v(OpKind::cmp, {a, c}, a->type.with_elem(dtype::i1), A({static_cast<std::int64_t>(p)}));
  }
  Value* cast(Value* x, dtype to) { return v(OpKind::cast, {x}, x->type.with_elem(to)); }
  /// ptr + offsets (offsets a tile: the pointer is splat to its shape first).
  Value* addptr(Value* p, Value* offs) {
    if (p->type.shape != offs->type.shape) p = splat(p, offs->type.shape);
    return v(OpKind::addptr, {p, offs}, p->type);
  }
  /// p + arange(n): the first n elements of a buffer.
  Value* ptrs(Value* p, std::int64_t n) { return addptr(p, arange(n)); }
  Value* load(Value* ptr, Value* mask = nullptr, Value* other = nullptr, src_loc loc = {}) {
    std::vector<Value*> ops{ptr};
    if (mask) ops.push_back(mask);
    if (other) ops.push_back(other);
    Type t{ptr->type.elem, false, ptr->type.shape};
    return v(OpKind::load, ops, t, A({mask != nullptr, other != nullptr, 0, 0, 0}), loc);
  }
  void store(Value* ptr, Value* val, Value* mask = nullptr, src_loc loc = {}) {
    std::vector<Value*> ops{ptr, val};
    if (mask) ops.push_back(mask);
    op(OpKind::store, ops, {}, A({mask != nullptr, 0, 0}), loc);
  }
  Op* yield(std::vector<Value*> vs) { return op(OpKind::yield, std::move(vs), {}); }
  Op* ret() { return op(OpKind::ret, {}, {}); }

  /// The finished kernel (a `return` appended). Not verified: these tests build IR exactly as
  /// ops.def specifies and must not depend on the verifier.
  std::shared_ptr<const Function> done() {
    auto* t = fn->body.terminator();
    if (!t || t->kind != OpKind::ret) ret();
    return fn;
  }
};

/// Sets the builder to append to `blk` while alive, then back to the block it appended to before.
struct In {
  K& k;
  Block* prev;
  In(K& kk, Block* blk) : k(kk), prev(kk.b.block()) { k.b.set_insertion_end(blk); }
  ~In() { k.b.set_insertion_end(prev); }
  In(const In&) = delete;
  In& operator=(const In&) = delete;
};

/// i32[m, n] offsets r * n + c (row-major positions of an [m, n] tile).
inline Value* offsets2d(K& k, std::int64_t m, std::int64_t n) {
  Value* rows = k.v(OpKind::expand_dims, {k.arange(m)}, T(dtype::i32, {m, 1}), A({1}));
  Value* cols = k.v(OpKind::expand_dims, {k.arange(n)}, T(dtype::i32, {1, n}), A({0}));
  rows = k.bin(OpKind::mul, k.v(OpKind::broadcast, {rows}, T(dtype::i32, {m, n})), k.splat(k.ci(T(dtype::i32), n), {m, n}));
  return k.bin(OpKind::add, rows, k.v(OpKind::broadcast, {cols}, T(dtype::i32, {m, n})));
}

/// A reduce (or scan) over `xs` along `axis`, its combine region built by `combine(a, b)`.
template <class Fn>
std::vector<Value*> combine_op(K& k, std::vector<Value*> xs, std::int64_t axis, Fn combine, bool scan = false,
                               bool reverse = false) {
  std::vector<Type> rts;
  for (auto* x : xs) {
    auto s = x->type.shape;
    if (!scan) s.erase(s.begin() + axis);
    rts.push_back(x->type.with_shape(s));
  }
  Attrs a = scan ? A({axis, reverse}) : A({axis});
  Op* op = k.op(scan ? OpKind::scan : OpKind::reduce, xs, rts, a, {}, 1);
  std::vector<Value*> lhs, rhs;
  for (auto* x : xs) lhs.push_back(op->region(0)->add_arg(x->type.scalar()));
  for (auto* x : xs) rhs.push_back(op->region(0)->add_arg(x->type.scalar()));
  {
    In in(k, op->region(0));
    k.yield(combine(lhs, rhs));
  }
  std::vector<Value*> out;
  for (auto& r : op->results) out.push_back(r.get());
  return out;
}

/// A host buffer passed to a kernel: its contents and its memory region.
template <class E>
struct Buf {
  std::vector<E> data;
  std::string what;
  explicit Buf(std::vector<E> d, std::string w = "a buffer") : data(std::move(d)), what(std::move(w)) {}
  Buf(std::size_t n, E fill, std::string w = "a buffer") : data(n, fill), what(std::move(w)) {}
  ArgValue arg() const { return ArgValue{static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(data.data())), 0.0}; }
  Region region() const {
    return Region{reinterpret_cast<std::uintptr_t>(data.data()), data.size() * sizeof(E), what};
  }
};

inline ArgValue I(std::int64_t i) { return ArgValue{i, 0.0}; }
inline ArgValue F(double f) { return ArgValue{0, f}; }

/// Runs a kernel once per program of `grid`.
inline void launch(const std::shared_ptr<const Function>& f, Grid grid, std::vector<ArgValue> args,
                   std::vector<Region> mem, unsigned threads = 0, std::ostream* print = nullptr) {
  Program prog(f);
  RunOptions o;
  o.threads = threads;
  o.print = print;
  prog.run(grid, args, mem, o);
}

/// Runs an elementwise op on host vectors: out[i] = op(in0[i], in1[i], ...), through loads and
/// a store (so memory round trips are exercised too). All inputs share dtype `ti`.
template <class R, class E>
std::vector<R> ew(OpKind k, dtype ti, const std::vector<std::vector<E>>& ins, dtype tr, Attrs a = {}) {
  const auto n = static_cast<std::int64_t>(ins.at(0).size());
  std::vector<Type> args;
  for (std::size_t i = 0; i < ins.size(); ++i) args.push_back(P(ti));
  args.push_back(P(tr));
  K k_("ew", args);
  std::vector<Value*> xs;
  for (unsigned i = 0; i < ins.size(); ++i) xs.push_back(k_.load(k_.ptrs(k_.arg(i), n)));
  Value* r = k_.v(k, xs, T(tr, {n}), std::move(a));
  k_.store(k_.ptrs(k_.arg(static_cast<unsigned>(ins.size())), n), r);
  std::vector<Buf<E>> bufs;
  for (auto& v : ins) bufs.emplace_back(v);
  Buf<R> out(static_cast<std::size_t>(n), R{});
  std::vector<ArgValue> av;
  std::vector<Region> mem;
  for (auto& bf : bufs) av.push_back(bf.arg()), mem.push_back(bf.region());
  av.push_back(out.arg());
  mem.push_back(out.region());
  launch(k_.done(), {}, av, mem, 1);
  return out.data;
}

template <class R, class E>
std::vector<R> ew1(OpKind k, dtype ti, std::vector<E> a, dtype tr) {
  return ew<R, E>(k, ti, {std::move(a)}, tr);
}
template <class R, class E>
std::vector<R> ew2(OpKind k, dtype ti, std::vector<E> a, std::vector<E> b, dtype tr) {
  return ew<R, E>(k, ti, {std::move(a), std::move(b)}, tr);
}
template <class E>
std::vector<std::uint8_t> cmp2(CmpPred p, dtype ti, std::vector<E> a, std::vector<E> b) {
  return ew<std::uint8_t, E>(OpKind::cmp, ti, {std::move(a), std::move(b)}, dtype::i1,
                             A({static_cast<std::int64_t>(p)}));
}

/// The raw bits of a half / bfloat16 vector (for exact comparisons).
template <class H>
std::vector<std::uint16_t> bits_of(const std::vector<H>& v) {
  std::vector<std::uint16_t> r;
  for (auto& h : v) r.push_back(h.bits);
  return r;
}
inline tile::half H(float f) { return tile::half(f); }
inline tile::bfloat16 BF(float f) { return tile::bfloat16(f); }

/// The message of the tile::error `f` throws (fails the test when it throws none).
template <class Fn>
std::string error_of(Fn&& f) {
  try {
    f();
  } catch (const tile::error& e) {
    return e.what();
  }
  FAIL("expected a tile::error");
  return {};
}

}  // namespace it

// test/ir/ir_test.hpp — helpers for the IR tests: building small kernels by hand, running a
// pass with verification, and catching verifier errors.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "transforms/pass_manager.hpp"

namespace irt {

using namespace tile;
using namespace tile::ir;

inline Type T(dtype e, std::vector<std::int64_t> s = {}) { return Type{e, false, std::move(s)}; }
inline Type P(dtype e, std::vector<std::int64_t> s = {}) { return Type{e, true, std::move(s)}; }

/// A location in a (fake) user file; the printer shows its basename.
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
  std::unique_ptr<Function> fn = std::make_unique<Function>();
  Builder b{&fn->body};

  explicit K(std::string name = "k", std::vector<Type> args = {}, std::vector<std::int64_t> div = {}) {
    fn->name = std::move(name);
    for (std::size_t i = 0; i < args.size(); ++i) {
      fn->body.add_arg(args[i]);
      ArgInfo ai;
      ai.name = "arg" + std::to_string(i);
      ai.divisibility = i < div.size() ? div[i] : 1;
      fn->arg_info.push_back(ai);
    }
  }
  Function& f() { return *fn; }
  Value* arg(unsigned i) { return fn->body.arg(i); }
  Op* op(OpKind k, std::vector<Value*> operands, std::vector<Type> results, Attrs a = {}, src_loc loc = {},
         unsigned regions = 0) {
    return b.create(k, std::move(operands), std::move(results), std::move(a), loc, regions);
  }
  Value* v(OpKind k, std::vector<Value*> operands, Type result, Attrs a = {}, src_loc loc = {}) {
    return op(k, std::move(operands), {std::move(result)}, std::move(a), loc)->result();
  }
  Value* ci(Type t, std::int64_t x, src_loc loc = {}) { return b.constant_int(t, x, loc); }
  Value* cf(Type t, double x, src_loc loc = {}) { return b.constant_float(t, x, loc); }
  Value* splat(Value* x, std::vector<std::int64_t> shape) { return v(OpKind::splat, {x}, x->type.with_shape(shape)); }
  /// A use that no pass removes (print has side effects).
  Op* sink(std::vector<Value*> vs, src_loc loc = {}) { return op(OpKind::print, std::move(vs), {}, A({0}, "v"), loc); }
  Op* ret(src_loc loc = {}) { return op(OpKind::ret, {}, {}, {}, loc); }
};

inline std::size_t count_ops(const Function& f, OpKind k) {
  std::size_t n = 0;
  walk(const_cast<Block&>(f.body), [&](Op& op) { n += op.kind == k; });
  return n;
}
inline std::size_t count_all(const Function& f) {
  std::size_t n = 0;
  walk(const_cast<Block&>(f.body), [&](Op&) { ++n; });
  return n;
}

/// Run one pass, then verify (a pass must leave verifiable IR). Returns the pass's answer.
inline bool run_pass(std::unique_ptr<tile::transforms::Pass> p, Function& f) {
  bool changed = p->run(f);
  verify(f, p->name());
  return changed;
}

/// The message of the tile::error `fn` throws ("" when it throws none), and where it points.
struct Caught {
  bool thrown = false;
  std::string message, what, kernel;
  src_loc where;
};
template <class F>
Caught catch_error(F&& fn) {
  Caught c;
  try {
    fn();
  } catch (const tile::error& e) {
    c.thrown = true;
    c.message = e.message();
    c.what = e.what();
    c.kernel = e.kernel();
    c.where = e.where();
  }
  return c;
}

// ---- sample kernels (sample_kernels.cpp) -------------------------------------------------------
/// Vector add with a loop carrying a tile and a branch: program_id, arange, splat, cmp, addptr,
/// masked load with `other`, for, if, neg, masked store (locations in "/src/app/add.cpp").
std::unique_ptr<Function> add_kernel();
/// Everything else: while, reduce and scan with combine regions, dot, expand_dims, broadcast,
/// permute, join, split, bitcast, cast, hint, atomic_rmw, print, assert, float constants.
std::unique_ptr<Function> misc_kernel();

}  // namespace irt

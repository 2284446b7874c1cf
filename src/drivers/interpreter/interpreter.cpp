// src/drivers/interpreter/interpreter.cpp — layer: drivers (interpreter). The executor of tile
// IR: the reference semantics every compiled backend is tested against. This file holds the
// contract (below), the preparation of a kernel (every IR value numbered into a slot once), the
// execution of structured control flow, reductions, scans, print and assert, and the parallel
// launch. Elementwise ops are in interp_math.cpp, shapes and dot in interp_tiles.cpp, memory in
// interp_memory.cpp; the value representation in interp_values.hpp.
//
// ---- Semantics -------------------------------------------------------------------------------
// Values: a scalar or a tile (a flat row-major array; the shape is the IR type's). Each op runs
// on the whole array at once. Elementwise operands have identical types, except select (i1
// condition), addptr (pointer, integer offsets) and cmp (result i1).
// Integers: two's complement at the dtype's width (i1 is 0/1 and computes as the low bit of u8;
//   u8..u64 are unsigned). div truncates toward zero; div or rem by zero gives 0; INT_MIN / -1
//   wraps to INT_MIN with rem 0. The shift amount is read as its unsigned bit pattern: shl by
//   >= width gives 0; shr is arithmetic for signed types (>= width: 0 or -1) and logical for
//   unsigned ones (>= width: 0). umulhi is the high half of the full unsigned product of the bit
//   patterns. abs(INT_MIN) = INT_MIN; not on i1 is logical not. Unsigned types and pointers
//   compare unsigned.
// Floats: f32 computes in float, f64 in double, f16/bf16 in float rounded to nearest even after
//   every op. Comparisons are ordered (NaN: false, except ne: true). minimum/maximum are IEEE
//   minNum/maxNum (a NaN operand yields the other; -0 orders below +0). rem is fmod; rsqrt is
//   1/sqrt in the compute type; exp, exp2, log, log2, sqrt, sin, cos, erf, floor, ceil are
//   <cmath> in the compute type; fma is std::fma in the compute type, then rounded. A NaN result
//   is some NaN: its sign, payload and quiet bit are unspecified (compiled backends, like GPUs,
//   may return another NaN than the interpreter does); every other result is bit-exact.
// cast: float -> int truncates toward zero, NaN -> 0, out of range saturates; int -> float and
//   float -> float round to nearest even, correctly (no double rounding); int -> int truncates
//   or extends by the source's signedness; anything -> i1 is (x != 0), so NaN -> 1; a pointer
//   <-> i64/u64 keeps the address. bitcast reinterprets the bits between types of one width
//   (pointers count 64; i1 is rejected); bitcast keeps NaN payloads.
// constant: attrs.ints[0] (ints wrap to the width, pointers) or attrs.f (rounded to the dtype);
//   a tile constant is a splat. program_id/num_programs from the grid; arange {start, end}.
// Shapes: splat; broadcast stretches extents of 1; expand_dims/reshape keep the row-major
//   order; permute: result axis i = input axis attrs.ints[i]; join interleaves a, b on a new
//   minor axis of 2; split is its inverse.
// addptr: address + offset * size_of(pointee), the offset sign- or zero-extended by its dtype,
//   modulo 2^64.
// load/store/atomics: only lanes whose mask is true (all lanes without a mask) touch memory;
//   every access [addr, addr + size) must lie inside one Region of the launch — inside the
//   region of the pointer argument it was derived from, when the driver says regions follow the
//   pointer arguments and the pointer's origin is known (addptr, select and the shape ops keep
//   it: Val::origin; "…, inside <region> although the pointer was derived from <region>") —,
//   else tile::error
//   "out-of-bounds load|store|atomic: program (x, y, z), element [i] (of T[shape]) reads|writes
//   N bytes at 0x…, D bytes past the end of|before the start of <region>" (or "…, which is not
//   inside any buffer passed to the kernel" when no region is within max(its size, 4 KiB)),
//   located at the op, naming the kernel. All lanes are checked before any is accessed.
//   Masked-off loads give `other` (or 0). i1 is one byte in memory (nonzero reads as 1);
//   f16/bf16 are their 16-bit patterns. atomic_rmw (add, max, min, xchg, and, or, xor) applies
//   the active lanes in row-major order under one process-wide mutex and returns the old values
//   (0 for masked-off lanes); float add is in the type (f16: float, rounded); float max/min are
//   maxNum/minNum. atomic_cas stores `value` where the old bits equal `cmp`'s bits; returns old.
// reduce: a sequential left fold along the axis, element 0 first (acc = x[0]; acc =
//   combine(acc, x[i])); the axis is removed (a 1-D input gives a scalar). scan: inclusive,
//   sequential from the start (from the end when reverse). The combine region runs once per
//   step on whole slices (all positions of the other axes together) when it holds only scalar
//   elementwise ops and constants; otherwise once per position and step.
// dot: out = acc + a @ b with k in order from 0, products and sums in the accumulator's type:
//   float for f16/bf16/f32 accumulators (an f16/bf16 sum is rounded to its dtype after every
//   step), double for f64, wrapping integers for integer accumulators (inputs extended by their
//   signedness). f32 inputs with precision tf32 are first rounded to tf32 (10 mantissa bits,
//   nearest even); tf32x3 and ieee are exact f32.
// for_: iv (lo's type) = lo; while iv < hi (signed or unsigned by the type): body, then stop if
//   iv + step (exactly) >= hi, else iv += step. step <= 0 is tile::error "for_range step must be
//   positive, got <n>". while_: the condition region gives an i1; the results are the carried
//   values at exit. if_: runs region 0 or 1.
// print: one line per element of each operand, written whole under a mutex:
//   "pid (x, y, z) idx (i, j) <prefix><value>" (scalars "idx ()"; with several operands
//   "<prefix>(operand k) <value>"); floats in the fewest %g digits that read back to the same
//   value of the dtype, integral ones below 1e16 in full ("65504", "-0"); nan, inf, -inf;
//   pointers and hex as the raw bits (0x…, zero-padded to the dtype's width). assert_: tile::error "device_assert failed:
//   <message> (program (x, y, z), element [i])" for the first false element.
// Launch: program ids [0, x*y*z) (x fastest) run on min(threads or hardware_concurrency,
//   programs) threads taking ids from an atomic counter, each with its own value slots. The
//   first exception stops the others (between programs and loop iterations) and is rethrown.
#include "drivers/interpreter/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "drivers/interpreter/interp_values.hpp"

namespace tile::interp {

namespace {
using ir::OpKind;

// ---- preparation -------------------------------------------------------------------------------

struct PBlock;

/// An op with its operands and results resolved to slot numbers.
struct POp {
  const ir::Op* op = nullptr;
  std::vector<std::uint32_t> in, out;
  std::vector<PBlock> regions;
  Val constant;             // constant and arange: computed once
  bool vectorized = false;  // reduce/scan: the combine region runs on whole slices
};

struct PBlock {
  std::vector<std::uint32_t> args;
  std::vector<POp> ops;                // without the terminator
  std::vector<std::uint32_t> term_in;  // the terminator's operands
};

class Preparer {
 public:
  std::uint32_t slots = 0;

  PBlock block(const ir::Block& b) {
    PBlock pb;
    for (auto& a : b.args) pb.args.push_back(number(a.get()));
    for (auto& op : b.ops) {
      if (ir::is_terminator(op->kind)) {
        for (auto* v : op->operands) pb.term_in.push_back(slot(v, *op));
        break;
      }
      pb.ops.push_back(prepare(*op));
    }
    return pb;
  }

 private:
  std::unordered_map<const ir::Value*, std::uint32_t> map_;

  std::uint32_t number(const ir::Value* v) {
    map_[v] = slots;
    return slots++;
  }
  std::uint32_t slot(const ir::Value* v, const ir::Op& user) const {
    auto it = map_.find(v);
    if (it == map_.end())
      throw tile::error("interpreter: op '" + std::string(ir::op_name(user.kind)) +
                            "' uses a value that is not defined before it",
                        user.loc);
    return it->second;
  }

  POp prepare(const ir::Op& op) {
    POp p;
    p.op = &op;
    for (auto* v : op.operands) p.in.push_back(slot(v, op));
    for (auto& r : op.regions) p.regions.push_back(block(*r));
    for (auto& r : op.results) p.out.push_back(number(r.get()));
    if (op.kind == OpKind::constant) p.constant = eval_constant(op);
    if (op.kind == OpKind::arange) p.constant = eval_arange(op);
    if (op.kind == OpKind::reduce || op.kind == OpKind::scan) p.vectorized = sliceable(*op.region(0));
    return p;
  }

  /// True when every op of a combine region is a scalar elementwise op or constant, so that the
  /// region computes the same on arrays of slice positions as on scalars.
  static bool sliceable(const ir::Block& b) {
    for (auto& op : b.ops) {
      const bool ok_kind = ir::is_elementwise(op->kind) || op->kind == OpKind::constant ||
                           op->kind == OpKind::program_id || op->kind == OpKind::num_programs ||
                           op->kind == OpKind::hint || op->kind == OpKind::yield;
      if (!ok_kind || !op->regions.empty()) return false;
      for (auto* v : op->operands)
        if (!v->type.is_scalar()) return false;
      for (auto& r : op->results)
        if (!r->type.is_scalar()) return false;
    }
    return true;
  }
};

// ---- execution ---------------------------------------------------------------------------------

/// Thrown inside a worker when another one failed: unwinds without being reported.
struct Stopped {};

std::mutex& print_mutex() {
  static std::mutex m;
  return m;
}

std::size_t numel(const ir::Type& t) { return static_cast<std::size_t>(t.numel()); }

/// x[idx[j]] for each j.
Val take(const Val& x, const std::vector<std::size_t>& idx) {
  return with_storage(x, [&](auto t) {
    using S = typename decltype(t)::type;
    const S* p = x.p<S>();
    std::vector<S> r(idx.size());
    for (std::size_t j = 0; j < idx.size(); ++j) r[j] = p[idx[j]];
    return make_val(x.elem, x.ptr, std::move(r));
  });
}

/// A zero-filled array for a value of type t.
Storage zeros(const ir::Type& t) {
  return with_storage(t.elem, t.ptr, [&](auto tg) {
    using S = typename decltype(tg)::type;
    return Storage{std::vector<S>(numel(t))};
  });
}

/// dst[idx[j]] = v[j] (v of one element broadcasts).
void scatter(Storage& dst, const std::vector<std::size_t>& idx, const Val& v) {
  with_storage(v, [&](auto t) {
    using S = typename decltype(t)::type;
    auto& d = std::get<std::vector<S>>(dst);
    const S* p = v.p<S>();
    const std::size_t s = v.stride();
    for (std::size_t j = 0; j < idx.size(); ++j) d[idx[j]] = p[j * s];
  });
}

/// An integer scalar as int64 (signed types) or its uint64 bit pattern (unsigned ones).
std::int64_t scalar_int(const Val& v) {
  return with_storage(v, [&](auto t) -> std::int64_t {
    using S = typename decltype(t)::type;
    if constexpr (std::is_integral_v<S>)
      return static_cast<std::int64_t>(v.p<S>()[0]);
    else
      return 0;
  });
}

template <class S>
Val scalar_of(dtype elem, bool ptr, S x) {
  return make_val(elem, ptr, std::vector<S>{x});
}

class Executor {
 public:
  Executor(const PBlock& body, std::uint32_t slots, Context cx, const std::atomic<bool>& stop)
      : body_(body), slots_(slots), cx_(cx), stop_(stop) {}

  Context& context() { return cx_; }
  void set(std::uint32_t slot, Val v) { slots_[slot] = std::move(v); }
  void run_program() { run(body_); }

 private:
  const PBlock& body_;
  std::vector<Val> slots_;
  Context cx_;
  const std::atomic<bool>& stop_;

  void run(const PBlock& b) {
    for (const POp& p : b.ops) exec(p);
  }
  void check_stop() const {
    if (stop_.load(std::memory_order_relaxed)) throw Stopped{};
  }
  const Val& in(const POp& p, std::size_t i) const { return slots_[p.in[i]]; }
  std::vector<Val> yielded(const PBlock& b) const {
    std::vector<Val> r;
    r.reserve(b.term_in.size());
    for (auto s : b.term_in) r.push_back(slots_[s]);
    return r;
  }
  void bind(const PBlock& b, std::size_t first, const std::vector<Val>& vs) {
    for (std::size_t i = 0; i < vs.size(); ++i) slots_[b.args[first + i]] = vs[i];
  }
  void results(const POp& p, std::vector<Val>& vs) {
    for (std::size_t i = 0; i < p.out.size(); ++i) slots_[p.out[i]] = std::move(vs[i]);
  }

  void exec(const POp& p) {
    const ir::Op& op = *p.op;
    switch (op.kind) {
      case OpKind::constant:
      case OpKind::arange: slots_[p.out[0]] = p.constant; return;
      case OpKind::program_id:
      case OpKind::num_programs: {
        const auto ax = static_cast<std::size_t>(op.attrs.ints.at(0));
        const std::uint32_t grid[3] = {cx_.grid.x, cx_.grid.y, cx_.grid.z};
        const std::uint32_t v = op.kind == OpKind::program_id ? cx_.pid[ax] : grid[ax];
        const ir::Type& t = op.result()->type;
        slots_[p.out[0]] = with_storage(t.elem, false, [&](auto tg) {
          using S = typename decltype(tg)::type;
          return scalar_of<S>(t.elem, false, static_cast<S>(v));
        });
        return;
      }
      case OpKind::splat: slots_[p.out[0]] = splat_val(in(p, 0), numel(op.result()->type)); return;
      case OpKind::broadcast:
        slots_[p.out[0]] = eval_broadcast(in(p, 0), op.operand(0)->type.shape, op.result()->type.shape);
        return;
      case OpKind::expand_dims:
      case OpKind::reshape:
      case OpKind::convert_layout:  // (the GPU level's: the same elements; the interpreter runs it as tile IR)
      case OpKind::hint: slots_[p.out[0]] = in(p, 0); return;
      case OpKind::permute:
        slots_[p.out[0]] = eval_permute(in(p, 0), op.operand(0)->type.shape, op.attrs.ints);
        return;
      case OpKind::join: slots_[p.out[0]] = eval_join(in(p, 0), in(p, 1)); return;
      case OpKind::split: {
        auto [lo, hi] = eval_split(in(p, 0));
        slots_[p.out[0]] = std::move(lo);
        slots_[p.out[1]] = std::move(hi);
        return;
      }
      case OpKind::load: {
        const bool has_mask = op.attrs.ints.at(0), has_other = op.attrs.ints.at(1);
        slots_[p.out[0]] = eval_load(op, cx_, in(p, 0), has_mask ? &in(p, 1) : nullptr,
                                     has_other ? &in(p, 2) : nullptr);
        return;
      }
      case OpKind::store:
        eval_store(op, cx_, in(p, 0), in(p, 1), op.attrs.ints.at(0) ? &in(p, 2) : nullptr);
        return;
      case OpKind::atomic_rmw:
        slots_[p.out[0]] = eval_atomic_rmw(op, cx_, in(p, 0), in(p, 1), op.attrs.ints.at(1) ? &in(p, 2) : nullptr);
        return;
      case OpKind::atomic_cas: slots_[p.out[0]] = eval_atomic_cas(op, cx_, in(p, 0), in(p, 1), in(p, 2)); return;
      case OpKind::reduce:
      case OpKind::scan: return combine(p);
      case OpKind::dot: slots_[p.out[0]] = eval_dot(op, in(p, 0), in(p, 1), in(p, 2)); return;
      case OpKind::for_: return for_loop(p);
      case OpKind::while_: return while_loop(p);
      case OpKind::if_: {
        const std::size_t which = in(p, 0).p<std::uint8_t>()[0] ? 0 : 1;
        if (which >= p.regions.size()) return;  // no else region: an if without results
        const PBlock& r = p.regions[which];
        run(r);
        auto vs = yielded(r);
        return results(p, vs);
      }
      case OpKind::print: return print(p);
      case OpKind::assert_: return device_assert(p);
      case OpKind::yield:
      case OpKind::condition:
      case OpKind::ret: return;  // terminators are not in the op lists
      default: break;
    }
    if (!ir::is_elementwise(op.kind))
      throw tile::error("interpreter: unhandled op '" + std::string(ir::op_name(op.kind)) + "'", op.loc);
    const Val* args[3] = {nullptr, nullptr, nullptr};
    const std::size_t n = std::min<std::size_t>(p.in.size(), 3);
    for (std::size_t i = 0; i < n; ++i) args[i] = &slots_[p.in[i]];
    slots_[p.out[0]] = eval_elementwise(op, std::span<const Val* const>(args, n));
  }

  // ---- reduce and scan ----

  void combine(const POp& p) {
    const ir::Op& op = *p.op;
    const bool is_scan = op.kind == OpKind::scan;
    const std::size_t n_in = p.in.size();
    const auto& shape = op.operand(0)->type.shape;
    const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
    const bool reverse = is_scan && op.attrs.ints.size() > 1 && op.attrs.ints[1];
    std::size_t outer = 1, inner = 1;
    const auto len = static_cast<std::size_t>(shape[axis]);
    for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(shape[d]);
    for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<std::size_t>(shape[d]);
    const std::size_t P = outer * inner;
    const PBlock& region = p.regions[0];

    std::vector<Storage> outs;
    for (std::size_t i = 0; i < n_in; ++i) outs.push_back(zeros(op.result(static_cast<unsigned>(i))->type));

    // one fold over the given slice positions (all of them at once, or one at a time)
    std::vector<std::size_t> idx;
    auto at = [&](const std::vector<std::size_t>& pos, std::size_t t) {
      idx.resize(pos.size());
      for (std::size_t j = 0; j < pos.size(); ++j) idx[j] = ((pos[j] / inner) * len + t) * inner + pos[j] % inner;
    };
    auto fold = [&](const std::vector<std::size_t>& pos) {
      if (len == 0) return;
      std::vector<Val> acc(n_in), cur(n_in);
      std::size_t t = reverse ? len - 1 : 0;
      at(pos, t);
      for (std::size_t i = 0; i < n_in; ++i) acc[i] = take(in(p, i), idx);
      if (is_scan)
        for (std::size_t i = 0; i < n_in; ++i) scatter(outs[i], idx, acc[i]);
      for (std::size_t step = 1; step < len; ++step) {
        t = reverse ? len - 1 - step : step;
        at(pos, t);
        for (std::size_t i = 0; i < n_in; ++i) cur[i] = take(in(p, i), idx);
        bind(region, 0, acc);
        bind(region, n_in, cur);
        run(region);
        acc = yielded(region);
        if (is_scan)
          for (std::size_t i = 0; i < n_in; ++i) scatter(outs[i], idx, acc[i]);
      }
      if (!is_scan)
        for (std::size_t i = 0; i < n_in; ++i) scatter(outs[i], pos, acc[i]);
    };
    if (p.vectorized) {
      std::vector<std::size_t> all(P);
      for (std::size_t j = 0; j < P; ++j) all[j] = j;
      fold(all);
    } else {
      std::vector<std::size_t> one(1);
      for (std::size_t j = 0; j < P; ++j) {
        one[0] = j;
        fold(one);
      }
    }
    for (std::size_t i = 0; i < n_in; ++i) {
      const ir::Type& t = op.result(static_cast<unsigned>(i))->type;
      Val v;
      v.elem = t.elem;
      v.ptr = t.ptr;
      v.n = numel(t);
      v.data = std::make_shared<const Storage>(std::move(outs[i]));
      slots_[p.out[i]] = std::move(v);
    }
  }

  // ---- control flow ----

  void for_loop(const POp& p) {
    const ir::Op& op = *p.op;
    const ir::Type& it = op.operand(0)->type;
    const bool u = is_unsigned(it.elem);
    const std::int64_t lo = scalar_int(in(p, 0)), hi = scalar_int(in(p, 1)), step = scalar_int(in(p, 2));
    if (u ? step == 0 : step <= 0) {
      const std::string s = u ? std::to_string(static_cast<std::uint64_t>(step)) : std::to_string(step);
      cx_.fail(op, "for_range step must be positive, got " + s);
    }
    auto less = [u](std::int64_t a, std::int64_t b) {
      return u ? static_cast<std::uint64_t>(a) < static_cast<std::uint64_t>(b) : a < b;
    };
    std::vector<Val> carried;
    for (std::size_t i = 3; i < p.in.size(); ++i) carried.push_back(in(p, i));
    const PBlock& body = p.regions[0];
    for (std::int64_t iv = lo; less(iv, hi);) {
      check_stop();
      slots_[body.args[0]] = with_storage(it.elem, false, [&](auto tg) {
        using S = typename decltype(tg)::type;
        return scalar_of<S>(it.elem, false, static_cast<S>(iv));
      });
      bind(body, 1, carried);
      run(body);
      carried = yielded(body);
      // stop when iv + step >= hi, computed without overflow: hi - iv is exact as unsigned
      const std::uint64_t dist = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(iv);
      if (static_cast<std::uint64_t>(step) >= dist) break;
      iv = static_cast<std::int64_t>(static_cast<std::uint64_t>(iv) + static_cast<std::uint64_t>(step));
    }
    results(p, carried);
  }

  void while_loop(const POp& p) {
    std::vector<Val> carried;
    for (std::size_t i = 0; i < p.in.size(); ++i) carried.push_back(in(p, i));
    const PBlock& cond = p.regions[0];
    const PBlock& body = p.regions[1];
    for (;;) {
      check_stop();
      bind(cond, 0, carried);
      run(cond);
      if (!slots_[cond.term_in.at(0)].p<std::uint8_t>()[0]) break;
      bind(body, 0, carried);
      run(body);
      carried = yielded(body);
    }
    results(p, carried);
  }

  // ---- debugging ----

  void print(const POp& p) {
    const ir::Op& op = *p.op;
    const bool hex = !op.attrs.ints.empty() && op.attrs.ints[0];
    const std::string pid =
        "pid (" + std::to_string(cx_.pid[0]) + ", " + std::to_string(cx_.pid[1]) + ", " + std::to_string(cx_.pid[2]) + ")";
    std::string text;
    if (p.in.empty()) text = pid + " " + op.attrs.str + "\n";
    for (std::size_t o = 0; o < p.in.size(); ++o) {
      const Val& v = in(p, o);
      const auto& shape = op.operand(static_cast<unsigned>(o))->type.shape;
      for (std::size_t k = 0; k < v.n; ++k) {
        text += pid + " idx (" + index_text(k, shape) + ") " + op.attrs.str;
        if (p.in.size() > 1) text += "(operand " + std::to_string(o) + ") ";
        text += format_element(v, k, hex);
        text += '\n';
      }
    }
    std::lock_guard lock(print_mutex());
    std::ostream& os = cx_.out ? *cx_.out : std::cout;
    os << text << std::flush;
  }

  void device_assert(const POp& p) {
    const ir::Op& op = *p.op;
    const Val& c = in(p, 0);
    const std::uint8_t* b = c.p<std::uint8_t>();
    const auto& shape = op.operand(0)->type.shape;
    for (std::size_t k = 0; k < c.n; ++k)
      if (!b[k]) {
        std::string where = cx_.program();
        if (!shape.empty()) where += ", element [" + index_text(k, shape) + "]";
        cx_.fail(op, "device_assert failed: " + op.attrs.str + " (" + where + ")");
      }
  }
};

/// A launch argument as the value of a kernel argument of type t.
Val arg_value(const ir::Type& t, const ArgValue& a) {
  return with_storage(t.elem, t.ptr, [&](auto tg) {
    using S = typename decltype(tg)::type;
    S x{};
    if (t.ptr) {
      x = static_cast<S>(a.i);
    } else if (is_float(t.elem)) {
      if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, std::uint16_t>)
        x = double_to_float_storage<S>(a.f, t.elem);
    } else if (t.elem == dtype::i1) {
      x = static_cast<S>(a.i != 0);
    } else {
      x = static_cast<S>(a.i);
    }
    return scalar_of<S>(t.elem, t.ptr, x);
  });
}

}  // namespace

struct Program::Impl {
  PBlock body;
  std::uint32_t slots = 0;
};

Program::Program(std::shared_ptr<const ir::Function> f) : fn_(std::move(f)), impl_(std::make_unique<Impl>()) {
  Preparer prep;
  impl_->body = prep.block(fn_->body);
  impl_->slots = prep.slots;
}

Program::~Program() = default;

void Program::run(Grid grid, std::span<const ArgValue> args, std::span<const Region> memory,
                  const RunOptions& opts) const {
  const std::uint64_t total = std::uint64_t{grid.x} * grid.y * grid.z;
  const auto& params = fn_->body.args;
  if (args.size() != params.size())
    throw tile::error("interpreter: launched with " + std::to_string(args.size()) + " arguments, the kernel takes " +
                          std::to_string(params.size()),
                      fn_->loc, fn_->name);
  if (total == 0) return;
  std::vector<Val> arg_vals;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!params[i]->type.is_scalar())
      throw tile::error("interpreter: kernel argument " + std::to_string(i) + " has tile type " +
                            params[i]->type.str() + "; arguments must be scalars or pointers",
                        fn_->loc, fn_->name);
    arg_vals.push_back(arg_value(params[i]->type, args[i]));
  }
  if (opts.regions_follow_pointer_args) {
    int k = 0;
    for (std::size_t i = 0; i < arg_vals.size(); ++i)
      if (params[i]->type.ptr && static_cast<std::size_t>(k) < memory.size()) arg_vals[i].origin = k++;
  }

  unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, total));
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first;
  std::mutex first_mutex;

  auto worker = [&] {
    Context cx;
    cx.fn = fn_.get();
    cx.grid = grid;
    cx.mem = memory;
    cx.out = opts.print;
    try {
      Executor ex(impl_->body, impl_->slots, cx, stop);
      for (std::size_t i = 0; i < arg_vals.size(); ++i) ex.set(impl_->body.args[i], arg_vals[i]);
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) return;
        const std::uint64_t id = next.fetch_add(1);
        if (id >= total) return;
        Context& c = ex.context();
        c.pid[0] = static_cast<std::uint32_t>(id % grid.x);
        c.pid[1] = static_cast<std::uint32_t>(id / grid.x % grid.y);
        c.pid[2] = static_cast<std::uint32_t>(id / (std::uint64_t{grid.x} * grid.y));
        ex.run_program();
      }
    } catch (const Stopped&) {
    } catch (const tile::error& e) {
      // errors raised below the executor (an op on a dtype it is not defined for) learn the
      // kernel's name and, without a location of their own, the launch's
      std::lock_guard lock(first_mutex);
      if (!first)
        first = e.kernel().empty()
                    ? std::make_exception_ptr(tile::error(e.message(), e.where().known() ? e.where() : fn_->loc, fn_->name))
                    : std::current_exception();
      stop = true;
    } catch (...) {
      std::lock_guard lock(first_mutex);
      if (!first) first = std::current_exception();
      stop = true;
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tile::interp

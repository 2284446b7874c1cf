// src/drivers/interpreter/interpreter.cpp — layer: drivers (interpreter). The executor of tile
// IR: the reference semantics every compiled backend is tested against.
//
// Semantics (the contract; interp_math.cpp implements the elementwise part):
// - Integers wrap two's complement at their width (i1 is 0/1; u* are unsigned). Integer
//   division truncates toward zero; division or remainder by zero yields 0; INT_MIN / -1 wraps
//   to INT_MIN with remainder 0. shl by >= width gives 0; shr is arithmetic for signed types
//   (>= width: 0 or -1) and logical for unsigned ones. umulhi is the high half of the full
//   unsigned product. Unsigned types and pointers compare unsigned.
// - f32 computes in float, f64 in double, f16/bf16 in float rounded to nearest even after every
//   op. Float comparisons are ordered (NaN: false, except ne). minimum/maximum ignore a NaN
//   operand (IEEE minNum/maxNum). Math functions use <cmath> in the compute precision.
// - Casts: float->int truncates, NaN -> 0, out-of-range saturates; int->float and float->float
//   round to nearest even; int->int wraps or extends by the source's signedness; ->i1 is != 0.
// - load/store/atomics touch only lanes whose mask is true; each access must lie inside one of
//   the memory regions of the launch (the buffers passed to the kernel), else a tile::error
//   names the kernel, the program, the element and the op's source line. Masked-off loads give
//   `other` (or 0). Atomics are atomic across programs (one process-wide lock), applied to the
//   active lanes in row-major order; each returns the old value (0 for masked-off lanes).
// - reduce is a sequential left fold along its axis (element 0 first); scan is inclusive and
//   sequential (from the end when reversed). Their combine regions run on whole slices.
// - dot accumulates k in order in the accumulator's dtype (f32 for f16/bf16/f32 inputs, i32
//   wrapping for 8-bit ints, f64 for f64); f32 inputs are first rounded to tf32 (10 mantissa
//   bits, nearest even) when the precision is tf32.
// - for_ runs iv = lo; iv < hi; iv += step (step <= 0 is an error); while_ loops while its
//   condition region's i1 is true; if_ runs one region.
// - device_print writes one line per element: `pid (x, y, z) idx (i, j) <prefix><value>`
//   (with several operands `<prefix>(operand k) <value>`); a failed device_assert is a
//   tile::error naming the program and the first failing element.
// Program instances run in parallel on a pool of threads; the first error stops the launch.
#include "drivers/interpreter/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "drivers/interpreter/interp_math.hpp"

namespace tile::interp {

namespace {
using ir::OpKind;

std::mutex& atomic_lock() {
  static std::mutex m;
  return m;
}
std::mutex& print_lock() {
  static std::mutex m;
  return m;
}

std::int64_t numel(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

std::string index_str(std::size_t k, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> idx(shape.size());
  auto r = static_cast<std::int64_t>(k);
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = r % shape[d];
    r /= shape[d];
  }
  std::string s;
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s;
}

Val make(const ir::Type& t, std::size_t n) {
  Val v;
  v.is_float = t.is_float();
  v.shape = t.shape;
  if (v.is_float) v.f.assign(n, 0.0); else v.i.assign(n, 0);
  return v;
}

float to_tf32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) {
    u += 0xfffu + ((u >> 13) & 1u);
    u &= 0xffffe000u;
  }
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

using SlotMap = std::unordered_map<const ir::Value*, std::size_t>;

struct Program::Impl {
  SlotMap slot;
};

namespace {
struct Frame {
  const ir::Function& fn;
  const SlotMap& slots;
  std::vector<Val> vals;
  std::uint32_t pid[3];
  Grid grid;
  std::span<const Region> mem;
  std::ostream* out;

  Val& get(const ir::Value* v) { return vals[slots.at(v)]; }
  void set(const ir::Value* v, Val x) { vals[slots.at(v)] = std::move(x); }

  [[noreturn]] void fail(const ir::Op& op, const std::string& m) const { throw tile::error(m, op.loc, fn.name); }
  std::string program() const {
    return "program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " + std::to_string(pid[2]) + ")";
  }

  void check(const ir::Op& op, const char* what, const char* verb, std::uint64_t addr, std::uint64_t size,
             std::size_t k, const ir::Type& t) const {
    for (auto& r : mem)
      if (addr >= r.base && addr + size <= r.base + r.bytes && addr + size >= addr) return;
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
    std::string m = std::string("out-of-bounds ") + what + ": " + program() + ", element [" + index_str(k, t.shape) +
                    "] (of " + ir::Type{t.elem, false, t.shape}.str() + ") " + verb + " " + std::to_string(size) +
                    " bytes at " + buf;
    const Region* best = nullptr;
    std::uint64_t dist = ~std::uint64_t{0};
    for (auto& r : mem) {
      std::uint64_t d = addr < r.base ? r.base - addr : addr + size - (r.base + r.bytes);
      if (d < dist) dist = d, best = &r;
    }
    if (best && dist <= (std::uint64_t{1} << 20)) {
      if (addr < best->base)
        m += ", " + std::to_string(best->base - addr) + " bytes before the start of " + best->what;
      else
        m += ", " + std::to_string(addr + size - (best->base + best->bytes)) + " bytes past the end of " + best->what;
    } else {
      m += ", which is not inside any buffer passed to the kernel";
    }
    fail(op, m);
  }
};

void read_elem(Val& r, std::size_t k, std::uint64_t addr, dtype t) {
  const void* p = reinterpret_cast<const void*>(addr);
  switch (t) {
    case dtype::i1: r.i[k] = *static_cast<const std::uint8_t*>(p) != 0; break;
    case dtype::i8: r.i[k] = *static_cast<const std::int8_t*>(p); break;
    case dtype::i16: { std::int16_t v; std::memcpy(&v, p, 2); r.i[k] = v; break; }
    case dtype::i32: { std::int32_t v; std::memcpy(&v, p, 4); r.i[k] = v; break; }
    case dtype::i64: case dtype::u64: { std::int64_t v; std::memcpy(&v, p, 8); r.i[k] = v; break; }
    case dtype::u8: r.i[k] = *static_cast<const std::uint8_t*>(p); break;
    case dtype::u16: { std::uint16_t v; std::memcpy(&v, p, 2); r.i[k] = v; break; }
    case dtype::u32: { std::uint32_t v; std::memcpy(&v, p, 4); r.i[k] = v; break; }
    case dtype::f16: { std::uint16_t v; std::memcpy(&v, p, 2); r.f[k] = tile::half::to_float(v); break; }
    case dtype::bf16: { std::uint16_t v; std::memcpy(&v, p, 2); r.f[k] = tile::bfloat16::to_float(v); break; }
    case dtype::f32: { float v; std::memcpy(&v, p, 4); r.f[k] = v; break; }
    case dtype::f64: { double v; std::memcpy(&v, p, 8); r.f[k] = v; break; }
  }
}

void write_elem(const Val& v, std::size_t k, std::uint64_t addr, dtype t) {
  void* p = reinterpret_cast<void*>(addr);
  switch (t) {
    case dtype::i1: *static_cast<std::uint8_t*>(p) = v.i[k] != 0; break;
    case dtype::i8: case dtype::u8: *static_cast<std::uint8_t*>(p) = static_cast<std::uint8_t>(v.i[k]); break;
    case dtype::i16: case dtype::u16: { auto x = static_cast<std::uint16_t>(v.i[k]); std::memcpy(p, &x, 2); break; }
    case dtype::i32: case dtype::u32: { auto x = static_cast<std::uint32_t>(v.i[k]); std::memcpy(p, &x, 4); break; }
    case dtype::i64: case dtype::u64: std::memcpy(p, &v.i[k], 8); break;
    case dtype::f16: { std::uint16_t x = tile::half(static_cast<float>(v.f[k])).bits; std::memcpy(p, &x, 2); break; }
    case dtype::bf16: { std::uint16_t x = tile::bfloat16(static_cast<float>(v.f[k])).bits; std::memcpy(p, &x, 2); break; }
    case dtype::f32: { auto x = static_cast<float>(v.f[k]); std::memcpy(p, &x, 4); break; }
    case dtype::f64: std::memcpy(p, &v.f[k], 8); break;
  }
}

std::string format_elem(const Val& v, std::size_t k, dtype t, bool hex) {
  char buf[64];
  if (hex) {
    std::uint64_t raw;
    if (v.is_float) {
      if (t == dtype::f64) std::memcpy(&raw, &v.f[k], 8);
      else if (t == dtype::f32) { float x = static_cast<float>(v.f[k]); std::uint32_t u; std::memcpy(&u, &x, 4); raw = u; }
      else if (t == dtype::f16) raw = tile::half(static_cast<float>(v.f[k])).bits;
      else raw = tile::bfloat16(static_cast<float>(v.f[k])).bits;
    } else {
      raw = static_cast<std::uint64_t>(v.i[k]);
    }
    int digits = std::max(1, bits(t) / 4);
    if (bits(t) < 64) raw &= (std::uint64_t{1} << bits(t)) - 1;
    std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, digits, raw);
  } else if (v.is_float) {
    std::snprintf(buf, sizeof buf, t == dtype::f64 ? "%.17g" : "%.9g", v.f[k]);
  } else if (t == dtype::u64) {
    std::snprintf(buf, sizeof buf, "%" PRIu64, static_cast<std::uint64_t>(v.i[k]));
  } else {
    std::snprintf(buf, sizeof buf, "%" PRId64, v.i[k]);
  }
  return buf;
}

class Executor {
 public:
  explicit Executor(Frame& f) : f_(f) {}

  /// Runs a block; returns its terminator (yield, condition or return).
  const ir::Op* run(const ir::Block& b) {
    for (auto& op : b.ops) {
      if (ir::is_terminator(op->kind)) return op.get();
      exec(*op);
    }
    return nullptr;
  }

 private:
  Frame& f_;

  std::vector<Val> values(const ir::Op* term) {
    std::vector<Val> out;
    for (auto* v : term->operands) out.push_back(f_.get(v));
    return out;
  }
  void bind(const ir::Block& b, std::size_t first, std::vector<Val>& vs) {
    for (std::size_t i = 0; i < vs.size(); ++i) f_.set(b.args[first + i].get(), vs[i]);
  }

  void exec(const ir::Op& op) {
    const ir::Type& rt = op.results.empty() ? op.operands.at(0)->type : op.result()->type;
    switch (op.kind) {
      case OpKind::constant: {
        Val v = make(rt, static_cast<std::size_t>(numel(rt.shape)));
        if (v.is_float) std::fill(v.f.begin(), v.f.end(), round_to(op.attrs.f, rt.elem));
        else std::fill(v.i.begin(), v.i.end(), rt.ptr ? op.attrs.ints.at(0) : wrap(op.attrs.ints.at(0), rt.elem));
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::program_id:
      case OpKind::num_programs: {
        Val v = make(rt, 1);
        auto ax = op.attrs.ints.at(0);
        std::uint32_t g[3] = {f_.grid.x, f_.grid.y, f_.grid.z};
        v.i[0] = op.kind == OpKind::program_id ? f_.pid[ax] : g[ax];
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::arange: {
        Val v = make(rt, static_cast<std::size_t>(numel(rt.shape)));
        for (std::size_t k = 0; k < v.i.size(); ++k) v.i[k] = op.attrs.ints[0] + static_cast<std::int64_t>(k);
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::splat: {
        const Val& a = f_.get(op.operand(0));
        Val v = make(rt, static_cast<std::size_t>(numel(rt.shape)));
        if (v.is_float) std::fill(v.f.begin(), v.f.end(), a.f[0]); else std::fill(v.i.begin(), v.i.end(), a.i[0]);
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::broadcast: return broadcast(op);
      case OpKind::expand_dims:
      case OpKind::reshape:
      case OpKind::hint: {
        Val v = f_.get(op.operand(0));
        v.shape = rt.shape;
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::permute: return permute(op);
      case OpKind::join: {
        const Val &a = f_.get(op.operand(0)), &b = f_.get(op.operand(1));
        Val v = make(rt, a.size() * 2);
        for (std::size_t k = 0; k < a.size(); ++k) {
          if (v.is_float) v.f[2 * k] = a.f[k], v.f[2 * k + 1] = b.f[k];
          else v.i[2 * k] = a.i[k], v.i[2 * k + 1] = b.i[k];
        }
        return f_.set(op.result(), std::move(v));
      }
      case OpKind::split: {
        const Val& a = f_.get(op.operand(0));
        Val lo = make(rt, a.size() / 2), hi = make(rt, a.size() / 2);
        for (std::size_t k = 0; k < a.size() / 2; ++k) {
          if (lo.is_float) lo.f[k] = a.f[2 * k], hi.f[k] = a.f[2 * k + 1];
          else lo.i[k] = a.i[2 * k], hi.i[k] = a.i[2 * k + 1];
        }
        f_.set(op.result(0), std::move(lo));
        return f_.set(op.result(1), std::move(hi));
      }
      case OpKind::load: return load(op);
      case OpKind::store: return store(op);
      case OpKind::atomic_rmw:
      case OpKind::atomic_cas: return atomic(op);
      case OpKind::reduce:
      case OpKind::scan: return reduce_or_scan(op);
      case OpKind::dot: return dot(op);
      case OpKind::for_: return for_loop(op);
      case OpKind::while_: return while_loop(op);
      case OpKind::if_: {
        bool c = f_.get(op.operand(0)).i[0] != 0;
        auto vs = values(run(*op.region(c ? 0 : 1)));
        for (std::size_t i = 0; i < vs.size(); ++i) f_.set(op.result(static_cast<unsigned>(i)), std::move(vs[i]));
        return;
      }
      case OpKind::print: return print(op);
      case OpKind::assert_: {
        const Val& c = f_.get(op.operand(0));
        for (std::size_t k = 0; k < c.i.size(); ++k)
          if (!c.i[k])
            f_.fail(op, "device_assert failed: " + op.attrs.str + " (" + f_.program() + ", element [" +
                            index_str(k, op.operand(0)->type.shape) + "])");
        return;
      }
      default: {
        std::vector<const Val*> in;
        for (auto* v : op.operands) in.push_back(&f_.get(v));
        return f_.set(op.result(), elementwise(op, in));
      }
    }
  }

  void broadcast(const ir::Op& op) {
    const Val& a = f_.get(op.operand(0));
    const auto& is = op.operand(0)->type.shape;
    const auto& os = op.result()->type.shape;
    Val v = make(op.result()->type, static_cast<std::size_t>(numel(os)));
    std::vector<std::int64_t> istride(is.size());
    std::int64_t s = 1;
    for (std::size_t d = is.size(); d-- > 0;) istride[d] = is[d] == 1 ? 0 : s, s *= is[d];
    for (std::size_t k = 0; k < v.size(); ++k) {
      std::int64_t r = static_cast<std::int64_t>(k), src = 0;
      for (std::size_t d = os.size(); d-- > 0;) src += (r % os[d]) * istride[d], r /= os[d];
      if (v.is_float) v.f[k] = a.f[static_cast<std::size_t>(src)];
      else v.i[k] = a.i[static_cast<std::size_t>(src)];
    }
    f_.set(op.result(), std::move(v));
  }

  void permute(const ir::Op& op) {
    const Val& a = f_.get(op.operand(0));
    const auto& is = op.operand(0)->type.shape;
    const auto& os = op.result()->type.shape;
    std::vector<std::int64_t> istride(is.size());
    std::int64_t s = 1;
    for (std::size_t d = is.size(); d-- > 0;) istride[d] = s, s *= is[d];
    Val v = make(op.result()->type, a.size());
    for (std::size_t k = 0; k < v.size(); ++k) {
      std::int64_t r = static_cast<std::int64_t>(k), src = 0;
      for (std::size_t d = os.size(); d-- > 0;) {
        src += (r % os[d]) * istride[static_cast<std::size_t>(op.attrs.ints[d])];
        r /= os[d];
      }
      if (v.is_float) v.f[k] = a.f[static_cast<std::size_t>(src)];
      else v.i[k] = a.i[static_cast<std::size_t>(src)];
    }
    f_.set(op.result(), std::move(v));
  }

  void load(const ir::Op& op) {
    const Val& p = f_.get(op.operand(0));
    bool has_mask = op.attrs.ints.at(0), has_other = op.attrs.ints.at(1);
    const Val* m = has_mask ? &f_.get(op.operand(1)) : nullptr;
    const Val* o = has_other ? &f_.get(op.operand(2)) : nullptr;
    const ir::Type& rt = op.result()->type;
    Val v = make(rt, p.size());
    auto size = static_cast<std::uint64_t>(size_of(rt.elem));
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (m && !m->i[k]) {
        if (o) {
          if (v.is_float) v.f[k] = o->f[k]; else v.i[k] = o->i[k];
        }
        continue;
      }
      auto addr = static_cast<std::uint64_t>(p.i[k]);
      f_.check(op, "load", "reads", addr, size, k, op.operand(0)->type);
      read_elem(v, k, addr, rt.elem);
    }
    f_.set(op.result(), std::move(v));
  }

  void store(const ir::Op& op) {
    const Val& p = f_.get(op.operand(0));
    const Val& x = f_.get(op.operand(1));
    const Val* m = op.attrs.ints.at(0) ? &f_.get(op.operand(2)) : nullptr;
    dtype t = op.operand(0)->type.elem;
    auto size = static_cast<std::uint64_t>(size_of(t));
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (m && !m->i[k]) continue;
      auto addr = static_cast<std::uint64_t>(p.i[k]);
      f_.check(op, "store", "writes", addr, size, k, op.operand(0)->type);
      write_elem(x, k, addr, t);
    }
  }

  void atomic(const ir::Op& op) {
    const Val& p = f_.get(op.operand(0));
    const ir::Type& pt = op.operand(0)->type;
    const ir::Type& rt = op.result()->type;
    dtype t = pt.elem;
    bool cas = op.kind == OpKind::atomic_cas;
    const Val& x = f_.get(op.operand(cas ? 2 : 1));
    const Val* cmpv = cas ? &f_.get(op.operand(1)) : nullptr;
    const Val* m = !cas && op.attrs.ints.at(1) ? &f_.get(op.operand(2)) : nullptr;
    auto kind = cas ? 0 : op.attrs.ints.at(0);
    Val old = make(rt, p.size());
    auto size = static_cast<std::uint64_t>(size_of(t));
    for (std::size_t k = 0; k < p.size(); ++k)
      if (!m || m->i[k]) f_.check(op, "atomic", "writes", static_cast<std::uint64_t>(p.i[k]), size, k, pt);
    std::lock_guard lock(atomic_lock());
    Val cur = make(rt, 1), nv = make(rt, 1);
    for (std::size_t k = 0; k < p.size(); ++k) {
      if (m && !m->i[k]) continue;
      auto addr = static_cast<std::uint64_t>(p.i[k]);
      read_elem(cur, 0, addr, t);
      if (old.is_float) old.f[k] = cur.f[0]; else old.i[k] = cur.i[0];
      if (cas) {
        bool eq = cur.is_float ? cur.f[0] == cmpv->f[k] : cur.i[0] == cmpv->i[k];
        if (eq) write_elem(x, k, addr, t);
        continue;
      }
      if (cur.is_float) {
        double a = cur.f[0], b = x.f[k], r = b;
        switch (kind) {
          case 0: r = t == dtype::f64 ? a + b : round_to(static_cast<float>(a) + static_cast<float>(b), t); break;
          case 1: r = std::fmax(a, b); break;
          case 2: r = std::fmin(a, b); break;
          default: break;  // xchg
        }
        nv.f[0] = r;
      } else {
        std::int64_t a = cur.i[0], b = x.i[k], r = b;
        bool u = is_unsigned(t);
        auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
        switch (kind) {
          case 0: r = wrap(static_cast<std::int64_t>(ua + ub), t); break;
          case 1: r = u ? (ua > ub ? a : b) : std::max(a, b); break;
          case 2: r = u ? (ua < ub ? a : b) : std::min(a, b); break;
          case 3: r = b; break;
          case 4: r = a & b; break;
          case 5: r = a | b; break;
          case 6: r = a ^ b; break;
          default: break;
        }
        nv.i[0] = r;
      }
      write_elem(nv, 0, addr, t);
    }
    f_.set(op.result(), std::move(old));
  }

  void reduce_or_scan(const ir::Op& op) {
    const bool is_scan = op.kind == OpKind::scan;
    const std::size_t n_in = op.operands.size();
    const auto& shape = op.operand(0)->type.shape;
    const auto axis = static_cast<std::size_t>(op.attrs.ints.at(0));
    const bool reverse = is_scan && op.attrs.ints.at(1);
    std::size_t outer = 1, inner = 1, len = static_cast<std::size_t>(shape[axis]);
    for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(shape[d]);
    for (std::size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<std::size_t>(shape[d]);
    const std::size_t P = outer * inner;
    const ir::Block& region = *op.region(0);
    auto index = [&](std::size_t p, std::size_t t) { return ((p / inner) * len + t) * inner + p % inner; };
    auto slice = [&](std::size_t i, std::size_t t) {
      const Val& x = f_.get(op.operand(static_cast<unsigned>(i)));
      Val s = make(op.operand(static_cast<unsigned>(i))->type.scalar(), P);
      for (std::size_t p = 0; p < P; ++p) {
        if (s.is_float) s.f[p] = x.f[index(p, t)]; else s.i[p] = x.i[index(p, t)];
      }
      return s;
    };
    std::vector<Val> outs;
    if (is_scan)
      for (std::size_t i = 0; i < n_in; ++i) outs.push_back(make(op.result(static_cast<unsigned>(i))->type, P * len));
    auto emit = [&](std::vector<Val>& acc, std::size_t t) {
      if (!is_scan) return;
      for (std::size_t i = 0; i < n_in; ++i)
        for (std::size_t p = 0; p < P; ++p) {
          std::size_t src = acc[i].size() == 1 ? 0 : p;
          if (outs[i].is_float) outs[i].f[index(p, t)] = acc[i].f[src];
          else outs[i].i[index(p, t)] = acc[i].i[src];
        }
    };
    std::size_t first = reverse ? len - 1 : 0;
    std::vector<Val> acc;
    for (std::size_t i = 0; i < n_in; ++i) acc.push_back(slice(i, first));
    emit(acc, first);
    for (std::size_t step = 1; step < len; ++step) {
      std::size_t t = reverse ? len - 1 - step : step;
      std::vector<Val> cur;
      for (std::size_t i = 0; i < n_in; ++i) cur.push_back(slice(i, t));
      bind(region, 0, acc);
      bind(region, n_in, cur);
      acc = values(run(region));
      emit(acc, t);
    }
    for (std::size_t i = 0; i < n_in; ++i) {
      Val r = is_scan ? std::move(outs[i]) : std::move(acc[i]);
      const ir::Type& t = op.result(static_cast<unsigned>(i))->type;
      if (r.size() == 1 && static_cast<std::size_t>(numel(t.shape)) > 1) {  // a constant combine result
        Val b = make(t, static_cast<std::size_t>(numel(t.shape)));
        if (b.is_float) std::fill(b.f.begin(), b.f.end(), r.f[0]); else std::fill(b.i.begin(), b.i.end(), r.i[0]);
        r = std::move(b);
      }
      r.shape = t.shape;
      f_.set(op.result(static_cast<unsigned>(i)), std::move(r));
    }
  }

  void dot(const ir::Op& op) {
    const Val &a = f_.get(op.operand(0)), &b = f_.get(op.operand(1));
    Val c = f_.get(op.operand(2));
    const auto& as = op.operand(0)->type.shape;
    const auto& bs = op.operand(1)->type.shape;
    const std::size_t M = static_cast<std::size_t>(as[0]), K = static_cast<std::size_t>(as[1]),
                      N = static_cast<std::size_t>(bs[1]);
    dtype in = op.operand(0)->type.elem, out = op.result()->type.elem;
    bool tf32 = in == dtype::f32 && op.attrs.ints.at(0) == 0;
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        if (out == dtype::i32) {
          std::int64_t s = c.i[i * N + j];
          for (std::size_t k = 0; k < K; ++k) s = wrap(s + a.i[i * K + k] * b.i[k * N + j], dtype::i32);
          c.i[i * N + j] = s;
        } else if (out == dtype::f64) {
          double s = c.f[i * N + j];
          for (std::size_t k = 0; k < K; ++k) {
            double p = a.f[i * K + k] * b.f[k * N + j];
            s = s + p;
          }
          c.f[i * N + j] = s;
        } else {
          float s = static_cast<float>(c.f[i * N + j]);
          for (std::size_t k = 0; k < K; ++k) {
            float x = static_cast<float>(a.f[i * K + k]), y = static_cast<float>(b.f[k * N + j]);
            if (tf32) x = to_tf32(x), y = to_tf32(y);
            float p = x * y;
            s = s + p;
          }
          c.f[i * N + j] = s;
        }
      }
    c.shape = op.result()->type.shape;
    f_.set(op.result(), std::move(c));
  }

  void for_loop(const ir::Op& op) {
    const ir::Type& it = op.operand(0)->type;
    std::int64_t lo = f_.get(op.operand(0)).i[0], hi = f_.get(op.operand(1)).i[0], step = f_.get(op.operand(2)).i[0];
    bool u = is_unsigned(it.elem);
    if (u ? step == 0 : step <= 0) f_.fail(op, "for_range step must be positive, got " + std::to_string(step));
    std::vector<Val> carried;
    for (std::size_t i = 3; i < op.operands.size(); ++i) carried.push_back(f_.get(op.operands[i]));
    const ir::Block& body = *op.region(0);
    for (std::int64_t iv = lo; u ? static_cast<std::uint64_t>(iv) < static_cast<std::uint64_t>(hi) : iv < hi;) {
      Val ivv = make(it.scalar(), 1);
      ivv.i[0] = iv;
      f_.set(body.arg(0), std::move(ivv));
      bind(body, 1, carried);
      carried = values(run(body));
      std::int64_t next = wrap(static_cast<std::int64_t>(static_cast<std::uint64_t>(iv) + static_cast<std::uint64_t>(step)), it.elem);
      if (u ? static_cast<std::uint64_t>(next) <= static_cast<std::uint64_t>(iv) : next <= iv) break;  // wrapped around
      iv = next;
    }
    for (std::size_t i = 0; i < carried.size(); ++i) f_.set(op.result(static_cast<unsigned>(i)), std::move(carried[i]));
  }

  void while_loop(const ir::Op& op) {
    std::vector<Val> carried;
    for (auto* v : op.operands) carried.push_back(f_.get(v));
    const ir::Block& cond = *op.region(0);
    const ir::Block& body = *op.region(1);
    for (;;) {
      bind(cond, 0, carried);
      const ir::Op* c = run(cond);
      if (!f_.get(c->operand(0)).i[0]) break;
      bind(body, 0, carried);
      carried = values(run(body));
    }
    for (std::size_t i = 0; i < carried.size(); ++i) f_.set(op.result(static_cast<unsigned>(i)), std::move(carried[i]));
  }

  void print(const ir::Op& op) {
    std::string text;
    const bool hex = !op.attrs.ints.empty() && op.attrs.ints[0];
    std::string pid = "pid (" + std::to_string(f_.pid[0]) + ", " + std::to_string(f_.pid[1]) + ", " + std::to_string(f_.pid[2]) + ")";
    if (op.operands.empty()) text += pid + " " + op.attrs.str + "\n";
    for (std::size_t o = 0; o < op.operands.size(); ++o) {
      const Val& v = f_.get(op.operands[o]);
      const ir::Type& t = op.operands[o]->type;
      for (std::size_t k = 0; k < v.size(); ++k) {
        text += pid + " idx (" + (t.shape.empty() ? std::string() : index_str(k, t.shape)) + ") " + op.attrs.str;
        if (op.operands.size() > 1) text += "(operand " + std::to_string(o) + ") ";
        text += format_elem(v, k, t.ptr ? dtype::u64 : t.elem, hex) + "\n";
      }
    }
    std::lock_guard lock(print_lock());
    (*f_.out) << text << std::flush;
  }
};
}  // namespace

Program::Program(std::shared_ptr<const ir::Function> f) : fn_(std::move(f)), impl_(std::make_unique<Impl>()) {
  std::size_t n = 0;
  auto number_block = [&](auto&& self, const ir::Block& b) -> void {
    for (auto& a : b.args) impl_->slot[a.get()] = n++;
    for (auto& op : b.ops) {
      for (auto& r : op->results) impl_->slot[r.get()] = n++;
      for (auto& r : op->regions) self(self, *r);
    }
  };
  number_block(number_block, fn_->body);
}

Program::~Program() = default;

void Program::run(Grid grid, std::span<const ArgValue> args, std::span<const Region> memory,
                  const RunOptions& opts) const {
  const std::uint64_t total = std::uint64_t{grid.x} * grid.y * grid.z;
  if (total == 0) return;
  if (args.size() != fn_->body.args.size())
    throw tile::error("interpreter: launched with " + std::to_string(args.size()) + " arguments, the kernel has " +
                          std::to_string(fn_->body.args.size()), fn_->loc, fn_->name);
  unsigned threads = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, total));
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first;
  std::mutex err_mu;
  auto worker = [&] {
    Frame f{*fn_, impl_->slot, std::vector<Val>(impl_->slot.size()), {0, 0, 0}, grid, memory,
            opts.print ? opts.print : &std::cout};
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ir::Type& t = fn_->body.args[i]->type;
      Val v = make(t, 1);
      if (v.is_float) v.f[0] = round_to(args[i].f, t.elem);
      else v.i[0] = t.ptr ? args[i].i : wrap(args[i].i, t.elem);
      f.set(fn_->body.args[i].get(), std::move(v));
    }
    Executor ex(f);
    for (;;) {
      if (stop.load(std::memory_order_relaxed)) return;
      std::uint64_t p = next.fetch_add(1);
      if (p >= total) return;
      f.pid[0] = static_cast<std::uint32_t>(p % grid.x);
      f.pid[1] = static_cast<std::uint32_t>((p / grid.x) % grid.y);
      f.pid[2] = static_cast<std::uint32_t>(p / (std::uint64_t{grid.x} * grid.y));
      try {
        ex.run(fn_->body);
      } catch (...) {
        std::lock_guard lock(err_mu);
        if (!first) first = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace tile::interp

// test/codegen/codegen_helpers.hpp — helpers for the CPU backend's differential tests: every
// kernel is built by hand (test/interp/build_helpers.hpp's K), run once on the interpreter
// (interp::Program, the reference) and once compiled for the host (jit::compile_cpu, launched
// through drivers::make_cpu_driver()), on two identical copies of its buffers; the buffers
// afterwards are compared bit for bit.
//
// Buffers are raw bytes tagged with a dtype (Arr): f16/bf16 as their 16-bit patterns, i1 as one
// byte. The one leniency (same_bits): two NaNs of a float dtype compare equal whatever their
// bits — the contract (src/drivers/interpreter/interpreter.cpp) leaves a NaN's sign, payload and
// quiet bit unspecified, and they do differ: the interpreter built at -O0 quiets a signalling
// NaN where the -O2 build keeps it. Every other value must match bit for bit.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../interp/build_helpers.hpp"
#include "drivers/cpu/cpu_module.hpp"
#include "drivers/driver.hpp"
#include "jit/compile.hpp"

namespace cg {

using namespace it;
using i8 = std::int8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

/// These tests compile every kernel afresh: no compile cache (meson's env says so too; a direct
/// run of the executable gets the same unless the caller set TILE_CACHE itself).
inline const bool g_no_cache = [] {
  ::setenv("TILE_CACHE", "0", 0);
  return true;
}();

inline constexpr dtype kInts[] = {dtype::i1, dtype::i8, dtype::i16, dtype::i32, dtype::i64,
                                  dtype::u8, dtype::u16, dtype::u32, dtype::u64};
inline constexpr dtype kFloats[] = {dtype::f16, dtype::bf16, dtype::f32, dtype::f64};

// ---- host arrays --------------------------------------------------------------------------------

/// A host array of one dtype, as raw bytes.
struct Arr {
  dtype t = dtype::i32;
  std::vector<unsigned char> bytes;

  Arr() = default;
  Arr(dtype type, std::size_t n, unsigned char fill = 0) : t(type), bytes(n * static_cast<std::size_t>(size_of(type)), fill) {}
  std::size_t n() const { return bytes.size() / static_cast<std::size_t>(size_of(t)); }
  std::size_t width() const { return static_cast<std::size_t>(size_of(t)); }
  /// Element i's bits, zero-extended.
  u64 bits(std::size_t i) const {
    u64 r = 0;
    std::memcpy(&r, bytes.data() + i * width(), width());  // little endian
    return r;
  }
  void set_bits(std::size_t i, u64 b) { std::memcpy(bytes.data() + i * width(), &b, width()); }
  template <class E>
  E get(std::size_t i) const {
    E e;
    static_assert(std::is_trivially_copyable_v<E>);
    std::memcpy(&e, bytes.data() + i * sizeof(E), sizeof(E));
    return e;
  }
};

/// An array of dtype t from host values (their size must be t's).
template <class E>
Arr arr(dtype t, const std::vector<E>& v) {
  REQUIRE(sizeof(E) == static_cast<std::size_t>(size_of(t)));
  Arr a(t, v.size());
  if (!v.empty()) std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}
/// An array of dtype t from bit patterns (truncated to the width; i1: the low bit).
inline Arr arr_bits(dtype t, const std::vector<u64>& v) {
  Arr a(t, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) a.set_bits(i, t == dtype::i1 ? (v[i] & 1) : v[i]);
  return a;
}
/// An array of float dtype t from doubles, each rounded to t by the host (nearest even; via f32
/// for f16/bf16, which is fine for building inputs).
inline Arr arr_floats(dtype t, const std::vector<double>& v) {
  Arr a(t, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    switch (t) {
      case dtype::f64: a.set_bits(i, std::bit_cast<u64>(v[i])); break;
      case dtype::f32: a.set_bits(i, std::bit_cast<u32>(static_cast<float>(v[i]))); break;
      case dtype::f16: a.set_bits(i, tile::half::from_float(static_cast<float>(v[i]))); break;
      case dtype::bf16: a.set_bits(i, tile::bfloat16::from_float(static_cast<float>(v[i]))); break;
      default: FAIL("arr_floats: not a float dtype");
    }
  }
  return a;
}

/// Element i of a float array as a double (exact).
inline double as_double(const Arr& a, std::size_t i) {
  switch (a.t) {
    case dtype::f64: return a.get<double>(i);
    case dtype::f32: return a.get<float>(i);
    case dtype::f16: return tile::half::to_float(static_cast<u16>(a.bits(i)));
    case dtype::bf16: return tile::bfloat16::to_float(static_cast<u16>(a.bits(i)));
    default: return 0.0;
  }
}

inline bool is_nan_bits(dtype t, u64 b) {
  switch (t) {
    case dtype::f16: return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    case dtype::bf16: return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
    case dtype::f32: return (b & 0x7fffffffu) > 0x7f800000u;
    case dtype::f64: return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default: return false;
  }
}

/// A signalling NaN (the quiet bit, the mantissa's top bit, clear).
inline bool is_snan_bits(dtype t, u64 b) {
  if (!is_nan_bits(t, b)) return false;
  switch (t) {
    case dtype::f16: return !(b & 0x200u);
    case dtype::bf16: return !(b & 0x40u);
    case dtype::f32: return !(b & 0x400000u);
    default: return !(b & 0x0008000000000000ull);
  }
}

inline std::string hex(u64 b, std::size_t width_bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(width_bytes * 2), static_cast<unsigned long long>(b));
  return buf;
}

// ---- running a kernel on both backends -----------------------------------------------------------

/// A kernel argument: a buffer (its contents), or a scalar of dtype t.
struct Arg {
  enum class Kind { buffer, integer, floating };
  Kind k = Kind::buffer;
  Arr buf;
  dtype t = dtype::i32;
  i64 i = 0;
  double f = 0.0;
};
inline Arg buffer(Arr a) {
  Arg r;
  r.k = Arg::Kind::buffer;
  r.t = a.t;
  r.buf = std::move(a);
  return r;
}
/// An integer argument (the value as the ABI wants it: sign- or zero-extended by its dtype).
inline Arg integer(dtype t, i64 v) {
  Arg r;
  r.k = Arg::Kind::integer;
  r.t = t;
  r.i = v;
  return r;
}
inline Arg floating(dtype t, double v) {
  Arg r;
  r.k = Arg::Kind::floating;
  r.t = t;
  r.f = v;
  return r;
}

/// The buffer arguments (in argument order) after each backend's run.
struct Both {
  std::vector<Arr> interp, cpu;
};

inline tile::drivers::driver& cpu_driver() {
  static std::unique_ptr<tile::drivers::driver> d = tile::drivers::make_cpu_driver();
  return *d;
}

/// Compile `f` for the host and launch it over `grid` on `args` (buffers updated in place).
inline void run_cpu(const std::shared_ptr<const Function>& f, std::vector<Arg>& args, Grid grid = {}) {
  std::unique_ptr<tile::drivers::module> m = tile::jit::compile_cpu(f);
  std::vector<tile::drivers::kernel_arg> ka;
  for (std::size_t i = 0; i < args.size(); ++i) {
    Arg& a = args[i];
    tile::drivers::kernel_arg k;
    k.t = a.t;
    switch (a.k) {
      case Arg::Kind::buffer:
        k.k = tile::drivers::kernel_arg::kind::pointer;
        k.addr = reinterpret_cast<u64>(a.buf.bytes.data());
        k.extent_bytes = a.buf.bytes.size();
        break;
      case Arg::Kind::integer:
        k.k = tile::drivers::kernel_arg::kind::integer;
        k.i = a.i;
        break;
      case Arg::Kind::floating:
        k.k = tile::drivers::kernel_arg::kind::floating;
        k.f = a.f;
        break;
    }
    ka.push_back(std::move(k));
  }
  tile::drivers::launch_config cfg;
  cfg.grid[0] = grid.x;
  cfg.grid[1] = grid.y;
  cfg.grid[2] = grid.z;
  cfg.kernel = f->name;
  cpu_driver().launch(*m, cfg, ka);
}

/// Run `f` on the interpreter over `grid` on `args` (buffers updated in place).
inline void run_interp(const std::shared_ptr<const Function>& f, std::vector<Arg>& args, Grid grid = {}) {
  std::vector<ArgValue> av;
  std::vector<Region> mem;
  for (std::size_t i = 0; i < args.size(); ++i) {
    Arg& a = args[i];
    switch (a.k) {
      case Arg::Kind::buffer: {
        const auto addr = reinterpret_cast<std::uintptr_t>(a.buf.bytes.data());
        av.push_back(ArgValue{static_cast<i64>(addr), 0.0});
        mem.push_back(Region{addr, a.buf.bytes.size(), "argument " + std::to_string(i)});
        break;
      }
      case Arg::Kind::integer: av.push_back(ArgValue{a.i, 0.0}); break;
      case Arg::Kind::floating: av.push_back(ArgValue{0, a.f}); break;
    }
  }
  Program prog(f);
  prog.run(grid, av, mem, RunOptions{});
}

/// Run `f` on both backends, each on its own copy of `args`; the buffers afterwards.
inline Both run_both(const std::shared_ptr<const Function>& f, const std::vector<Arg>& args, Grid grid = {}) {
  std::vector<Arg> a = args, c = args;
  run_interp(f, a, grid);
  run_cpu(f, c, grid);
  Both r;
  for (auto& x : a)
    if (x.k == Arg::Kind::buffer) r.interp.push_back(std::move(x.buf));
  for (auto& x : c)
    if (x.k == Arg::Kind::buffer) r.cpu.push_back(std::move(x.buf));
  return r;
}

// ---- comparing -------------------------------------------------------------------------------------

/// Elements a comparison leaves out (by index) because a test of their own checks them strictly
/// (see the may_fail tests: known disagreements are isolated there, not hidden).
using Skip = std::function<bool(std::size_t)>;

/// Bit-for-bit comparison of the interpreter's and the CPU's version of one output array (two
/// NaNs of a float dtype are equal: see the file comment). On a mismatch, fails the current test
/// with the count and the first `show` mismatches as (index, input bits…, interp bits, cpu bits);
/// `inputs` are arrays of the same length whose elements produced each output element.
inline bool same_bits(const std::string& what, const Arr& interp, const Arr& cpu, const std::vector<const Arr*>& inputs = {},
                      int show = 6, const Skip& skip = nullptr) {
  REQUIRE(interp.t == cpu.t);
  REQUIRE(interp.bytes.size() == cpu.bytes.size());
  if (std::memcmp(interp.bytes.data(), cpu.bytes.data(), interp.bytes.size()) == 0) return true;
  const bool fl = is_float(interp.t);
  std::size_t bad = 0;
  std::string text;
  for (std::size_t i = 0; i < interp.n(); ++i) {
    const u64 x = interp.bits(i), y = cpu.bits(i);
    if (x == y) continue;
    if (fl && is_nan_bits(interp.t, x) && is_nan_bits(interp.t, y)) continue;  // see the file comment
    if (skip && skip(i)) continue;
    if (static_cast<int>(bad) < show) {
      text += "\n  [" + std::to_string(i) + "] input";
      for (const Arr* in : inputs)
        if (in && i < in->n()) text += " " + std::string(name(in->t)) + ":" + hex(in->bits(i), in->width());
      text += " -> interp " + hex(x, interp.width()) + ", cpu " + hex(y, cpu.width());
    }
    ++bad;
  }
  if (bad == 0) return true;
  FAIL_CHECK(what << " (" << name(interp.t) << "): " << bad << " of " << interp.n()
                  << " elements differ between the interpreter and the cpu backend:" << text);
  return false;
}

/// Compare every buffer of a run (the inputs are compared too: a kernel must not write them).
inline bool same_all(const std::string& what, const Both& r, const std::vector<const Arr*>& inputs = {}) {
  REQUIRE(r.interp.size() == r.cpu.size());
  bool ok = true;
  for (std::size_t i = 0; i < r.interp.size(); ++i)
    ok = same_bits(what + ", buffer " + std::to_string(i), r.interp[i], r.cpu[i], inputs) && ok;
  return ok;
}

/// Distance in units in the last place between two f32/f64 values (0 when the bits are equal;
/// a huge number when exactly one is NaN, or both are NaNs with different bits).
inline u64 ulp_distance(dtype t, u64 a, u64 b) {
  if (a == b) return 0;
  if (is_nan_bits(t, a) || is_nan_bits(t, b)) return ~u64{0};
  const int w = bits(t);
  const u64 sign = u64{1} << (w - 1);
  auto ordered = [&](u64 x) -> i64 {  // monotonic in the value, -0 and +0 both 0
    return (x & sign) ? -static_cast<i64>(x & (sign - 1)) : static_cast<i64>(x);
  };
  const i64 d = ordered(a) - ordered(b);
  return static_cast<u64>(d < 0 ? -d : d);
}

// ---- elementwise kernels ---------------------------------------------------------------------------

/// One output of an elementwise kernel: a value computed from the loaded inputs.
using OutFn = std::function<Value*(K&, const std::vector<Value*>&)>;

/// A kernel over arrays of n elements in blocks of `block`: program p loads in_j[p*block + arange]
/// (masked by < n), computes each output from those tiles and stores it (masked) to out_k.
/// Arguments: the input pointers, n (i32), then the output pointers.
inline std::shared_ptr<const Function> ew_kernel(const std::string& name, const std::vector<dtype>& ins,
                                                 const std::vector<OutFn>& outs, std::int64_t block = 1024) {
  std::vector<Type> args;
  for (dtype t : ins) args.push_back(P(t));
  args.push_back(T(dtype::i32));
  K k(name, args);
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}));
  Value* offs = k.bin(OpKind::add, k.splat(k.bin(OpKind::mul, pid, k.ci(T(dtype::i32), block)), {block}), k.arange(block));
  Value* mask = k.cmp(CmpPred::lt, offs, k.splat(k.arg(static_cast<unsigned>(ins.size())), {block}));
  std::vector<Value*> xs;
  for (unsigned i = 0; i < ins.size(); ++i) xs.push_back(k.load(k.addptr(k.arg(i), offs), mask));
  for (const OutFn& f : outs) {
    Value* r = f(k, xs);
    Value* p = k.fn->body.add_arg(P(r->type.elem));
    k.fn->arg_info.push_back({"out" + std::to_string(k.fn->arg_info.size()), 1});
    k.store(k.addptr(p, offs), r, mask);
  }
  return k.done();
}

/// Run an elementwise kernel on `ins` (all of one length n) on both backends; returns the runs
/// (inputs first, then the outputs, each output initialized to the byte 0xcd).
inline Both run_ew(const std::string& name, const std::vector<Arr>& ins, const std::vector<OutFn>& outs,
                   std::int64_t block = 1024) {
  REQUIRE(!ins.empty());
  const std::size_t n = ins[0].n();
  std::vector<dtype> types;
  for (auto& a : ins) {
    REQUIRE(a.n() == n);
    types.push_back(a.t);
  }
  auto f = ew_kernel(name, types, outs, block);
  std::vector<Arg> args;
  for (auto& a : ins) args.push_back(buffer(a));
  args.push_back(integer(dtype::i32, static_cast<i64>(n)));
  for (std::size_t j = ins.size() + 1; j < f->body.args.size(); ++j) args.push_back(buffer(Arr(f->body.arg(static_cast<unsigned>(j))->type.elem, n, 0xcd)));
  const auto grid = static_cast<std::uint32_t>((static_cast<std::int64_t>(n) + block - 1) / block);
  return run_both(f, args, Grid{grid, 1, 1});
}

/// Output makers.
inline OutFn cast_to(dtype to, unsigned in = 0) {
  return [to, in](K& k, const std::vector<Value*>& x) { return k.cast(x[in], to); };
}
inline OutFn unary(OpKind op, unsigned in = 0) {
  return [op, in](K& k, const std::vector<Value*>& x) { return k.v(op, {x[in]}, x[in]->type); };
}
inline OutFn binary(OpKind op) {
  return [op](K& k, const std::vector<Value*>& x) { return k.bin(op, x[0], x[1]); };
}
inline OutFn compare(CmpPred p) {
  return [p](K& k, const std::vector<Value*>& x) { return k.cmp(p, x[0], x[1]); };
}

/// Compare the outputs of an elementwise run: buffer j (from `first_out` on) named names[j].
/// `skip(j, i)`: leave element i of output j out (checked strictly by a test of its own).
inline bool same_outputs(const std::string& what, const Both& r, std::size_t first_out, const std::vector<std::string>& names,
                         const std::function<bool(std::size_t, std::size_t)>& skip = nullptr) {
  std::vector<const Arr*> inputs;
  for (std::size_t i = 0; i < first_out; ++i) inputs.push_back(&r.interp[i]);
  bool ok = true;
  for (std::size_t i = 0; i < r.interp.size(); ++i) {
    const std::string label = what + ": " + (i < first_out ? "input " + std::to_string(i) : names.at(i - first_out));
    Skip s;
    if (skip && i >= first_out) s = [&skip, j = i - first_out](std::size_t e) { return skip(j, e); };
    ok = same_bits(label, r.interp[i], r.cpu[i], inputs, 6, s) && ok;
  }
  return ok;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(0x7111e5eedull);
  return g;
}

}  // namespace cg

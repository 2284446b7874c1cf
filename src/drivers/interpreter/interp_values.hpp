// src/drivers/interpreter/interp_values.hpp — layer: drivers (interpreter). The runtime value of
// the interpreter (a scalar or a tile held as one typed, flat, row-major array), dispatch from a
// dtype to its storage type, exact element conversions, and the entry points the executor
// (interpreter.cpp) calls into its op files (interp_math.cpp, interp_memory.cpp, interp_tiles.cpp).
//
// Storage is the memory representation of the dtype, so loads and stores are plain copies:
//   i1 -> uint8_t (0 or 1)      i8..i64 -> int8_t..int64_t      u8..u64 -> uint8_t..uint64_t
//   f16, bf16 -> uint16_t (the bit pattern)   f32 -> float   f64 -> double
//   pointers (any pointee) -> uint64_t (the address)
// A value's shape is not stored: it is the shape of its IR type. Values are immutable once made
// and share their array (reshape, hint and loop-carried values copy no elements).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "drivers/interpreter/interpreter.hpp"
#include "ir/ir.hpp"

namespace tile::interp {

using detail::atomic_kind;
using detail::precision;

using Storage = std::variant<std::vector<std::uint8_t>, std::vector<std::int8_t>, std::vector<std::int16_t>,
                             std::vector<std::int32_t>, std::vector<std::int64_t>, std::vector<std::uint16_t>,
                             std::vector<std::uint32_t>, std::vector<std::uint64_t>, std::vector<float>,
                             std::vector<double>>;

/// A runtime value: `n` elements of dtype `elem` (pointers when `ptr`). Inside the combine region
/// of a reduce or scan, values typed as scalars hold one element per slice position; a value of
/// one element then stands for all positions (see `stride`).
struct Val {
  dtype elem = dtype::i32;
  bool ptr = false;
  std::size_t n = 0;
  std::shared_ptr<const Storage> data;
  /// Pointers: the index of the memory region (the pointer argument) every element was derived
  /// from, or -1 when unknown or mixed. An access through it must stay inside that region.
  int origin = -1;

  template <class T>
  const T* p() const {
    return std::get<std::vector<T>>(*data).data();
  }
  /// 0 for a value of one element (it broadcasts), else 1.
  std::size_t stride() const { return n == 1 ? 0 : 1; }
  bool valid() const { return data != nullptr; }
};

template <class T>
Val make_val(dtype elem, bool ptr, std::vector<T> v) {
  Val r;
  r.elem = elem;
  r.ptr = ptr;
  r.n = v.size();
  r.data = std::make_shared<const Storage>(std::move(v));
  return r;
}

template <class T>
struct tag {
  using type = T;
};

/// Calls f(tag<S>{}) with S the storage type of (elem, ptr).
template <class F>
decltype(auto) with_storage(dtype elem, bool ptr, F&& f) {
  if (ptr) return f(tag<std::uint64_t>{});
  switch (elem) {
    case dtype::i1:
    case dtype::u8: return f(tag<std::uint8_t>{});
    case dtype::i8: return f(tag<std::int8_t>{});
    case dtype::i16: return f(tag<std::int16_t>{});
    case dtype::i32: return f(tag<std::int32_t>{});
    case dtype::i64: return f(tag<std::int64_t>{});
    case dtype::u16:
    case dtype::f16:
    case dtype::bf16: return f(tag<std::uint16_t>{});
    case dtype::u32: return f(tag<std::uint32_t>{});
    case dtype::u64: return f(tag<std::uint64_t>{});
    case dtype::f32: return f(tag<float>{});
    case dtype::f64: break;
  }
  return f(tag<double>{});
}
template <class F>
decltype(auto) with_storage(const Val& v, F&& f) {
  return with_storage(v.elem, v.ptr, std::forward<F>(f));
}

/// A value of `n` copies of element 0 of `v` (for splat and for constants).
inline Val splat_val(const Val& v, std::size_t n) {
  return with_storage(v, [&](auto t) {
    using S = typename decltype(t)::type;
    Val r = make_val(v.elem, v.ptr, std::vector<S>(n, v.p<S>()[0]));
    r.origin = v.origin;
    return r;
  });
}

// ---- element conversions --------------------------------------------------------------------

inline float f16_to_float(std::uint16_t b) { return tile::half::to_float(b); }
inline float bf16_to_float(std::uint16_t b) { return tile::bfloat16::to_float(b); }
inline std::uint16_t float_to_f16(float f) { return tile::half::from_float(f); }
inline std::uint16_t float_to_bf16(float f) { return tile::bfloat16::from_float(f); }

/// A double rounded to float with round-to-odd: a later round-to-nearest-even to a format of at
/// most 22 significant bits (f16, bf16) then gives the correctly rounded result of the double.
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::isinf(f)) f = std::copysign(3.40282347e38f, f);  // truncation of an overflow: FLT_MAX (odd)
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  auto u = std::bit_cast<std::uint32_t>(f) | 1u;
  return std::bit_cast<float>(u);
}

/// An integer magnitude rounded to `p` significant bits (nearest even), as an exact double.
inline double round_magnitude(std::uint64_t m, int p) {
  if (m == 0) return 0.0;
  const int msb = 63 - std::countl_zero(m);
  if (msb < p) return static_cast<double>(m);
  const int shift = msb - (p - 1);
  std::uint64_t q = m >> shift;
  const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (q & 1))) ++q;
  return std::ldexp(static_cast<double>(q), shift);
}

/// Significant bits of a float dtype.
constexpr int mantissa_bits(dtype t) {
  return t == dtype::f16 ? 11 : t == dtype::bf16 ? 8 : t == dtype::f32 ? 24 : 53;
}

/// The storage element of float dtype `to` nearest (ties to even) to a double.
template <class S>
S double_to_float_storage(double d, dtype to) {
  if constexpr (std::is_same_v<S, double>) {
    return d;
  } else if constexpr (std::is_same_v<S, float>) {
    return static_cast<float>(d);
  } else {
    float f = round_to_odd_float(d);
    return to == dtype::f16 ? float_to_f16(f) : float_to_bf16(f);
  }
}

/// A float storage element of dtype `from` as a double (exact).
template <class S>
double float_storage_to_double(S s, dtype from) {
  if constexpr (std::is_same_v<S, std::uint16_t>)
    return from == dtype::f16 ? f16_to_float(s) : bf16_to_float(s);
  else
    return static_cast<double>(s);
}

/// The storage element of float dtype `to` nearest (ties to even) to an integer.
template <class S, class I>
S int_to_float_storage(I v, dtype to) {
  const bool neg = std::is_signed_v<I> && v < 0;
  const std::uint64_t m = neg ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  double d = round_magnitude(m, mantissa_bits(to));
  if (neg) d = -d;
  return double_to_float_storage<S>(d, to);  // exact now (or an overflow to inf)
}

/// A float (as a double) converted to integer storage S: truncation toward zero, NaN -> 0,
/// saturation at the bounds of the dtype; i1 is (x != 0).
template <class S>
S float_to_int_storage(double d, dtype to) {
  if (to == dtype::i1) return static_cast<S>(d != 0.0);
  if (std::isnan(d)) return 0;
  d = std::trunc(d);
  constexpr int w = static_cast<int>(sizeof(S) * 8);
  if constexpr (std::is_signed_v<S>) {
    if (d >= std::ldexp(1.0, w - 1)) return std::numeric_limits<S>::max();
    if (d < -std::ldexp(1.0, w - 1)) return std::numeric_limits<S>::min();
  } else {
    if (d >= std::ldexp(1.0, w)) return std::numeric_limits<S>::max();
    if (d < 0) return 0;
  }
  return static_cast<S>(d);
}

/// IEEE minNum / maxNum: a NaN operand yields the other; -0 orders below +0.
template <class C>
inline C min_num(C a, C b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a < b) return a;
  if (b < a) return b;
  return std::signbit(a) ? a : b;  // -0 < +0
}
template <class C>
inline C max_num(C a, C b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  if (a > b) return a;
  if (b > a) return b;
  return std::signbit(a) ? b : a;
}

/// tf32: f32 rounded to 10 explicit mantissa bits, nearest even.
inline float round_tf32(float f) {
  auto u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;  // inf, NaN
  u += 0xfffu + ((u >> 13) & 1u);
  u &= 0xffffe000u;
  return std::bit_cast<float>(u);
}

// ---- per-instance context and the op entry points --------------------------------------------

/// What an op needs to know about the program instance running it (for messages and program_id).
struct Context {
  const ir::Function* fn = nullptr;
  std::uint32_t pid[3] = {0, 0, 0};
  Grid grid;
  std::span<const Region> mem;
  std::ostream* out = nullptr;

  std::string program() const {
    return "program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " + std::to_string(pid[2]) +
           ")";
  }
  [[noreturn]] void fail(const ir::Op& op, const std::string& message) const {
    throw tile::error(message, op.loc, fn ? fn->name : std::string());
  }
};

/// "i, j" for flat index k of `shape` (row-major).
std::string index_text(std::size_t k, const std::vector<std::int64_t>& shape);
/// One element formatted for device_print: integers in decimal, floats in the shortest form that
/// reads back to the same value, pointers and `hex` as the raw bits (0x, the dtype's width).
std::string format_element(const Val& v, std::size_t k, bool hex);

// interp_math.cpp: every elementwise op (cast, bitcast, arithmetic, cmp, addptr, math, select,
// fma) on whole arrays; operands of one element broadcast against longer ones.
Val eval_elementwise(const ir::Op& op, std::span<const Val* const> in);

// interp_tiles.cpp: values and shapes.
Val eval_constant(const ir::Op& op);
Val eval_arange(const ir::Op& op);
Val eval_broadcast(const Val& x, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to);
Val eval_permute(const Val& x, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& order);
Val eval_join(const Val& a, const Val& b);
std::pair<Val, Val> eval_split(const Val& x);
Val eval_dot(const ir::Op& op, const Val& a, const Val& b, const Val& acc);

// interp_memory.cpp: checked memory access.
Val eval_load(const ir::Op& op, const Context& cx, const Val& ptr, const Val* mask, const Val* other);
void eval_store(const ir::Op& op, const Context& cx, const Val& ptr, const Val& value, const Val* mask);
Val eval_atomic_rmw(const ir::Op& op, const Context& cx, const Val& ptr, const Val& value, const Val* mask);
Val eval_atomic_cas(const ir::Op& op, const Context& cx, const Val& ptr, const Val& cmp, const Val& value);

}  // namespace tile::interp

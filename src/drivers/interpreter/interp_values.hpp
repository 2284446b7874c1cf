// src/drivers/interpreter/interp_values.hpp — layer: drivers (interpreter). The runtime value of
// the interpreter and element-level conversions shared by its executor and its math.
//
// A value is a scalar or a tile: a flat row-major array and a shape. Integers, i1 and pointers
// are held as int64 normalized to their dtype (sign- or zero-extended; u64 as its bit pattern);
// floats as double holding a value already rounded to the dtype (f16/bf16/f32/f64).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/ir.hpp"

namespace tile::interp {

struct Val {
  std::vector<std::int64_t> i;  // ints, i1, pointers
  std::vector<double> f;        // floats
  std::vector<std::int64_t> shape;
  bool is_float = false;
  std::size_t size() const { return is_float ? f.size() : i.size(); }
};

/// Normalize an integer to dtype t (wrap to its width, extend by its signedness).
inline std::int64_t wrap(std::int64_t v, dtype t) {
  switch (t) {
    case dtype::i1: return v & 1;
    case dtype::i8: return static_cast<std::int8_t>(v);
    case dtype::i16: return static_cast<std::int16_t>(v);
    case dtype::i32: return static_cast<std::int32_t>(v);
    case dtype::u8: return static_cast<std::uint8_t>(v);
    case dtype::u16: return static_cast<std::uint16_t>(v);
    case dtype::u32: return static_cast<std::uint32_t>(v);
    default: return v;
  }
}

/// Round a double to float dtype t.
inline double round_to(double v, dtype t) {
  switch (t) {
    case dtype::f16: return static_cast<float>(tile::half(static_cast<float>(v)));
    case dtype::bf16: return static_cast<float>(tile::bfloat16(static_cast<float>(v)));
    case dtype::f32: return static_cast<double>(static_cast<float>(v));
    default: return v;
  }
}

/// Saturating float -> int conversion (NaN -> 0), then normalized.
inline std::int64_t float_to_int(double v, dtype t) {
  if (std::isnan(v)) return 0;
  if (t == dtype::i1) return v != 0.0;
  v = std::trunc(v);
  if (is_unsigned(t)) {
    double hi = t == dtype::u64 ? 18446744073709551615.0 : std::ldexp(1.0, bits(t)) - 1;
    if (v <= 0) return 0;
    if (v >= hi) return t == dtype::u64 ? static_cast<std::int64_t>(~std::uint64_t{0}) : static_cast<std::int64_t>(hi);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(v));
  }
  double lo = -std::ldexp(1.0, bits(t) - 1), hi = std::ldexp(1.0, bits(t) - 1) - 1;
  if (v <= lo) return static_cast<std::int64_t>(lo);
  if (v >= hi) return bits(t) == 64 ? INT64_MAX : static_cast<std::int64_t>(hi);
  return static_cast<std::int64_t>(v);
}

/// An integer of dtype `from` (normalized) as a double.
inline double int_to_double(std::int64_t v, dtype from) {
  if (from == dtype::u64) return static_cast<double>(static_cast<std::uint64_t>(v));
  return static_cast<double>(v);
}

}  // namespace tile::interp

// src/runtime/arg_class.hpp — layer: runtime (internal). What a launch specializes a runtime
// argument on, decided once: the specialization key stores the class (one byte an argument) and
// the trace derives the argument's facts (ir::ArgInfo, an integer equal to 1 made a constant)
// from the class alone, never from the raw value again, so the key cannot miss anything the
// traced code depends on.
#pragma once

#include <cstddef>

#include "ir/ir.hpp"
#include "tile/runtime/kernel.hpp"

namespace tile::detail {

/// The byte is the key's. Pointers: whether the buffer shares no byte with another pointer
/// argument's (ir::ArgInfo::noalias) and whether the address is 16-byte aligned. Integers: 1,
/// 0, a multiple of 16, other; the last two split by sign. Floats are not specialized.
enum class arg_class : char {
  ptr_disjoint_aligned = 'P',
  ptr_disjoint = 'p',
  ptr_aligned = 'A',
  ptr = 'a',
  floating = 'f',
  int_one = '1',
  int_zero = '0',
  int_16n = 'D',      // a positive multiple of 16
  int_neg_16n = 'd',  // a negative multiple of 16
  int_pos = 'i',      // positive, not a multiple of 16, not 1
  int_neg = 'm',      // negative, not a multiple of 16
};

/// The class of argument `a` for parameter `q` (already checked against each other);
/// `disjoint`: the launch found a pointer's buffer disjoint from the other pointers'.
inline arg_class classify(const param_desc& q, const launch_arg& a, bool disjoint) {
  if (q.k == param_desc::kind::pointer) {
    const bool aligned = a.addr % 16 == 0;
    return disjoint ? (aligned ? arg_class::ptr_disjoint_aligned : arg_class::ptr_disjoint)
                    : (aligned ? arg_class::ptr_aligned : arg_class::ptr);
  }
  if (is_float(q.t)) return arg_class::floating;
  if (a.i == 1) return arg_class::int_one;
  if (a.i == 0) return arg_class::int_zero;
  const bool nonneg = a.i >= 0 || is_unsigned(q.t);  // an unsigned value's bits may read as negative
  if (a.i % 16 == 0) return nonneg ? arg_class::int_16n : arg_class::int_neg_16n;
  return nonneg ? arg_class::int_pos : arg_class::int_neg;
}

/// What the compiler may assume of an argument of class `c` (named "arg<index>").
inline ir::ArgInfo arg_info(arg_class c, std::size_t index) {
  ir::ArgInfo info;
  info.name = "arg" + std::to_string(index);
  switch (c) {
    case arg_class::ptr_disjoint_aligned: info.divisibility = 16, info.noalias = true; break;
    case arg_class::ptr_disjoint: info.noalias = true; break;
    case arg_class::ptr_aligned: info.divisibility = 16; break;
    case arg_class::ptr:
    case arg_class::floating: break;
    case arg_class::int_one: info.nonneg = info.positive = true; break;
    case arg_class::int_zero: info.divisibility = 16, info.nonneg = true; break;
    case arg_class::int_16n: info.divisibility = 16, info.nonneg = info.positive = true; break;
    case arg_class::int_neg_16n: info.divisibility = 16; break;
    case arg_class::int_pos: info.nonneg = info.positive = true; break;
    case arg_class::int_neg: break;
  }
  return info;
}

/// How a specialization's text names the class (after the parameter's type): "" for a float,
/// " 16-byte-aligned noalias" for a pointer, " = 1", " multiple of 16", " negative" …
inline const char* describe(arg_class c) {
  switch (c) {
    case arg_class::ptr_disjoint_aligned: return " 16-byte-aligned noalias";
    case arg_class::ptr_disjoint: return " unaligned noalias";
    case arg_class::ptr_aligned: return " 16-byte-aligned aliased";
    case arg_class::ptr: return " unaligned aliased";
    case arg_class::floating: return "";
    case arg_class::int_one: return " = 1";
    case arg_class::int_zero: return " = 0";
    case arg_class::int_16n: return " positive multiple of 16";
    case arg_class::int_neg_16n: return " negative multiple of 16";
    case arg_class::int_pos: return " positive";
    case arg_class::int_neg: return " negative";
  }
  return "";
}

/// An integer argument of this class is traced as the constant 1.
constexpr bool traced_as_one(arg_class c) { return c == arg_class::int_one; }

}  // namespace tile::detail

// tile/tl/creation.hpp — layer: language (public). Values that start a computation:
// program_id, num_programs, arange, full/zeros, and conversions (cast, bitcast).
#pragma once

#include <limits>

#include "tile/tl/types.hpp"

namespace tl {

/// Index of this program instance along grid axis 0, 1 or 2 (an i32 scalar).
inline tensor program_id(int axis, std::source_location l = std::source_location::current()) {
  return tensor(tile::detail::program_id(axis, l));
}
/// Number of program instances along grid axis 0, 1 or 2.
inline tensor num_programs(int axis, std::source_location l = std::source_location::current()) {
  return tensor(tile::detail::num_programs(axis, l));
}
/// [start, start+1, …, end-1] as an i32 tile; end - start must be a power of two.
inline tensor arange(std::int64_t start, std::int64_t end,
                     std::source_location l = std::source_location::current()) {
  return tensor(tile::detail::arange(start, end, l));
}
/// A tile of `shape` filled with `value`, of element type T.
template <class T>
tensor full(const shape_t& shape, const operand& value) {
  return tensor(tile::detail::full(shape, dtype_v<T>, value.d, value.loc));
}
inline tensor full(const shape_t& shape, const operand& value, tile::dtype t) {
  return tensor(tile::detail::full(shape, t, value.d, value.loc));
}
template <class T>
tensor zeros(const shape_t& shape, std::source_location l = std::source_location::current()) {
  return full<T>(shape, operand(0, l));
}
inline tensor zeros(const shape_t& shape, tile::dtype t,
                    std::source_location l = std::source_location::current()) {
  return full(shape, operand(0, l), t);
}
inline tensor zeros_like(const tensor& x, std::source_location l = std::source_location::current()) {
  return full(x.shape(), operand(0, l), x.dtype());
}
inline tensor full_like(const tensor& x, const operand& v) { return full(x.shape(), v, x.dtype()); }
/// A scalar constant of element type T (tl::constant<float>(1.5)).
template <class T>
tensor constant(const operand& v) {
  constexpr tile::dtype t = dtype_v<T>;
  return tensor(tile::detail::literal(v.d, &t, v.loc));
}
/// +infinity of a floating-point element type, as a scalar.
template <class T = float>
tensor inf(std::source_location l = std::source_location::current()) {
  return constant<T>(operand(std::numeric_limits<double>::infinity(), l));
}

/// Value conversion to element type T (rounding to nearest for floats, truncation toward zero
/// from float to int, wrap-around between ints).
template <class T>
tensor cast(const operand& x) {
  return tensor(tile::detail::cast(x.d, dtype_v<T>, false, x.loc));
}
inline tensor cast(const operand& x, tile::dtype t) {
  return tensor(tile::detail::cast(x.d, t, false, x.loc));
}
/// Reinterpret the bits as element type T (same width).
template <class T>
tensor bitcast(const operand& x) {
  return tensor(tile::detail::cast(x.d, dtype_v<T>, true, x.loc));
}
/// Reinterpret a pointer tile as pointing to T.
template <class T>
tensor pointer_cast(const operand& x) {
  return tensor(tile::detail::pointer_cast(x.d, dtype_v<T>, x.loc));
}

}  // namespace tl

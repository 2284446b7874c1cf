// tile/tl/tensor.hpp — layer: language (public). tl::tensor, the value every kernel computes
// with: a scalar or a tile (shape known at trace time) of numbers or pointers. Operators build
// the kernel's graph as they run; each captures the user's source line.
#pragma once

#include <cstdint>
#include <source_location>
#include <type_traits>
#include <vector>

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"
#include "tile/core/fixed_string.hpp"
#include "tile/tl/detail/api.hpp"

namespace tile::detail {
struct tensor_access;
}

namespace tl {

using tile::dtype;
using shape_t = std::vector<std::int64_t>;

/// Index markers for x(_, newaxis) — Triton's x[:, None].
struct all_t {};
struct newaxis_t {};
inline constexpr all_t _{};
inline constexpr newaxis_t newaxis{};

template <tile::fixed_string Name, class T = std::int64_t>
struct constexpr_;

class tensor {
 public:
  tensor() noexcept { tile::detail::track(this); }
  explicit tensor(tile::detail::node* n) noexcept : node_(n) { tile::detail::track(this); }
  tensor(const tensor& o) noexcept : node_(o.node_) { tile::detail::track(this); }
  tensor& operator=(const tensor& o) noexcept {
    node_ = o.node_;
    return *this;
  }
  ~tensor() { tile::detail::untrack(this); }

  /// The traced value (null for a tensor never assigned).
  tile::detail::node* node() const { return node_; }
  bool defined() const { return node_ != nullptr; }
  /// Element dtype (for a pointer tile: the pointee's).
  tile::dtype dtype(std::source_location l = std::source_location::current()) const {
    return tile::detail::node_dtype(node_, l);
  }
  bool is_pointer(std::source_location l = std::source_location::current()) const {
    return tile::detail::node_is_pointer(node_, l);
  }
  shape_t shape(std::source_location l = std::source_location::current()) const {
    auto s = tile::detail::node_shape(node_, l);
    return {s.begin(), s.end()};
  }
  int rank(std::source_location l = std::source_location::current()) const {
    return static_cast<int>(tile::detail::node_shape(node_, l).size());
  }
  std::int64_t numel(std::source_location l = std::source_location::current()) const {
    std::int64_t n = 1;
    for (auto e : tile::detail::node_shape(node_, l)) n *= e;
    return n;
  }
  bool is_scalar(std::source_location l = std::source_location::current()) const { return rank(l) == 0; }

  /// The first index of x(_, newaxis): converting to it records the user's line.
  struct first_index {
    std::uint8_t keep;
    tile::src_loc loc;
    first_index(all_t, std::source_location l = std::source_location::current()) : keep(1), loc(l) {}  // NOLINT
    first_index(newaxis_t, std::source_location l = std::source_location::current()) : keep(0), loc(l) {}  // NOLINT
  };
  /// x(_, newaxis): keep an axis with `_`, insert one with `newaxis`.
  template <class... I>
    requires((std::is_same_v<I, all_t> || std::is_same_v<I, newaxis_t>) && ...)
  tensor operator()(first_index first, I...) const {
    const std::uint8_t kinds[] = {first.keep, (std::is_same_v<I, all_t> ? std::uint8_t{1} : std::uint8_t{0})...};
    return tensor(tile::detail::index(node_, kinds, first.loc));
  }
#if __cplusplus > 202002L && defined(__cpp_multidimensional_subscript)
  template <class... I>
    requires((std::is_same_v<I, all_t> || std::is_same_v<I, newaxis_t>) && ...)
  tensor operator[](first_index first, I... i) const {
    const std::uint8_t kinds[] = {first.keep, (std::is_same_v<I, all_t> ? std::uint8_t{1} : std::uint8_t{0})...};
    return tensor(tile::detail::index(node_, kinds, first.loc));
  }
#endif

  // Compound assignment (defined below, after operand): reassigning a tile declared outside a
  // tl::for_range body makes it loop-carried.
  tensor& operator+=(const struct operand& b);
  tensor& operator-=(const struct operand& b);
  tensor& operator*=(const struct operand& b);
  tensor& operator/=(const struct operand& b);
  tensor& operator%=(const struct operand& b);
  tensor& operator&=(const struct operand& b);
  tensor& operator|=(const struct operand& b);
  tensor& operator^=(const struct operand& b);
  tensor& operator<<=(const struct operand& b);
  tensor& operator>>=(const struct operand& b);

 private:
  friend struct tile::detail::tensor_access;
  tile::detail::node* node_ = nullptr;
  tensor* prev_ = nullptr;  // intrusive list of live tensors (see detail::track)
  tensor* next_ = nullptr;
};

/// Any operand of a tl:: op: a tensor or a C++ arithmetic literal. Converting to it captures the
/// user's source location, which is how operators (which cannot take a defaulted argument) know
/// the line they were written on.
struct operand {
  tile::detail::operand_data d;
  tile::src_loc loc;

  operand() = default;  // absent (e.g. no mask)
  operand(const tensor& t, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    if (!t.defined()) tile::detail::trace_error("use of a tensor that was never assigned", loc);
    d.k = tile::detail::operand_data::kind::value;
    d.n = t.node();
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  operand(T v, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    set_literal(v);
  }
  operand(tile::half v, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    set_literal(static_cast<float>(v));
  }
  operand(tile::bfloat16 v, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    set_literal(static_cast<float>(v));
  }
  template <tile::fixed_string N, class T>
  operand(const constexpr_<N, T>& c, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    set_literal(c.value);
  }
  bool present() const { return d.present(); }
  /// An operand for `t` attributed to `l` (for ops the headers compose from other ops).
  static operand of(const tensor& t, tile::src_loc l) {
    operand o;
    o.loc = l;
    if (!t.defined()) tile::detail::trace_error("use of a tensor that was never assigned", l);
    o.d.k = tile::detail::operand_data::kind::value;
    o.d.n = t.node();
    return o;
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  static operand of(T v, tile::src_loc l) {
    operand o;
    o.loc = l;
    o.set_literal(v);
    return o;
  }

 private:
  template <class T>
  void set_literal(T v) {
    using K = tile::detail::operand_data::kind;
    if constexpr (std::is_same_v<T, bool>) {
      d.k = K::bool_lit;
      d.i = v;
    } else if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
        if (v > static_cast<T>(INT64_MAX)) tile::detail::trace_error("integer literal does not fit in i64", loc);
      }
      d.k = K::int_lit;
      d.i = static_cast<std::int64_t>(v);
    } else {
      d.k = K::float_lit;
      d.f = static_cast<double>(v);
    }
  }
};

namespace detail {
inline tensor bin(tile::detail::binop op, const operand& a, const operand& b) {
  return tensor(tile::detail::binary(op, a.d, b.d, a.loc));
}
}  // namespace detail

// Arithmetic. Integer `/` and `%` truncate like C++ (Triton's `//` and `%`); on floats `/` is
// IEEE division.
inline tensor operator+(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::add, a, b); }
inline tensor operator-(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::sub, a, b); }
inline tensor operator*(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::mul, a, b); }
inline tensor operator/(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::div, a, b); }
inline tensor operator%(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::rem, a, b); }
inline tensor operator&(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::bit_and, a, b); }
inline tensor operator|(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::bit_or, a, b); }
inline tensor operator^(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::bit_xor, a, b); }
inline tensor operator<<(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::shl, a, b); }
inline tensor operator>>(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::shr, a, b); }
inline tensor operator&&(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::logical_and, a, b); }
inline tensor operator||(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::logical_or, a, b); }
// Comparisons give i1 tiles (masks).
inline tensor operator==(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::eq, a, b); }
inline tensor operator!=(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::ne, a, b); }
inline tensor operator<(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::lt, a, b); }
inline tensor operator<=(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::le, a, b); }
inline tensor operator>(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::gt, a, b); }
inline tensor operator>=(const operand& a, const operand& b) { return detail::bin(tile::detail::binop::ge, a, b); }
// Unary.
inline tensor operator-(const operand& a) { return tensor(tile::detail::unary(tile::detail::unop::neg, a.d, a.loc)); }
inline tensor operator+(const operand& a) { return tensor(tile::detail::literal(a.d, nullptr, a.loc)); }
inline tensor operator~(const operand& a) { return tensor(tile::detail::unary(tile::detail::unop::bit_not, a.d, a.loc)); }
inline tensor operator!(const operand& a) { return tensor(tile::detail::unary(tile::detail::unop::logical_not, a.d, a.loc)); }

namespace detail {
inline tensor compound(tile::detail::binop op, const tensor& self, const operand& b) {
  tile::detail::operand_data a;
  a.k = tile::detail::operand_data::kind::value;
  a.n = self.node();
  if (!a.n) tile::detail::trace_error("compound assignment to a tensor that was never assigned", b.loc);
  return tensor(tile::detail::binary(op, a, b.d, b.loc));
}
}  // namespace detail

inline tensor& tensor::operator+=(const operand& b) { return *this = detail::compound(tile::detail::binop::add, *this, b); }
inline tensor& tensor::operator-=(const operand& b) { return *this = detail::compound(tile::detail::binop::sub, *this, b); }
inline tensor& tensor::operator*=(const operand& b) { return *this = detail::compound(tile::detail::binop::mul, *this, b); }
inline tensor& tensor::operator/=(const operand& b) { return *this = detail::compound(tile::detail::binop::div, *this, b); }
inline tensor& tensor::operator%=(const operand& b) { return *this = detail::compound(tile::detail::binop::rem, *this, b); }
inline tensor& tensor::operator&=(const operand& b) { return *this = detail::compound(tile::detail::binop::bit_and, *this, b); }
inline tensor& tensor::operator|=(const operand& b) { return *this = detail::compound(tile::detail::binop::bit_or, *this, b); }
inline tensor& tensor::operator^=(const operand& b) { return *this = detail::compound(tile::detail::binop::bit_xor, *this, b); }
inline tensor& tensor::operator<<=(const operand& b) { return *this = detail::compound(tile::detail::binop::shl, *this, b); }
inline tensor& tensor::operator>>=(const operand& b) { return *this = detail::compound(tile::detail::binop::shr, *this, b); }

}  // namespace tl

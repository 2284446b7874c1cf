// tile/tl/types.hpp — layer: language (public). The typed values that appear in a kernel's
// signature: tl::ptr<T> (a pointer argument), tl::scalar<T> and its aliases tl::i32, tl::f32, …
// (scalar arguments), and tl::constexpr_<"NAME"> (a named meta-parameter, a trace-time
// constant). Their static types are what host-side launches are checked against.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tile/tl/tensor.hpp"

namespace tl {

/// A scalar kernel argument of element type T (also usable as an element-type tag, as in
/// tl::cast<tl::f16>(x)).
template <class T>
class scalar : public tensor {
 public:
  using element_type = T;
  scalar() = default;
  explicit scalar(tile::detail::node* n) : tensor(n) {}
};

/// A pointer kernel argument whose pointee is T (const T accepted, same pointee).
template <class T>
class ptr : public tensor {
 public:
  using element_type = std::remove_const_t<T>;
  ptr() = default;
  explicit ptr(tile::detail::node* n) : tensor(n) {}
  /// A pointer tile computed from this one (p + offsets) may be assigned back: checked at trace
  /// time to be a pointer with the same pointee.
  ptr(const tensor& t, std::source_location l = std::source_location::current())  // NOLINT
      : tensor(tile::detail::ptr_value(t.node(), tile::dtype_of<element_type>, l)) {}
  // Assignment cannot capture the user's line (operators take no defaulted argument, and a
  // converting parameter would be ambiguous with copy assignment): a value that is no pointer to
  // element_type is reported at the line of the tl:: call that created it.
  ptr& operator=(const tensor& t) {
    tensor::operator=(tensor(tile::detail::ptr_value(t.node(), tile::dtype_of<element_type>, {})));
    return *this;
  }
};

using i1 = scalar<bool>;
using i8 = scalar<std::int8_t>;
using i16 = scalar<std::int16_t>;
using i32 = scalar<std::int32_t>;
using i64 = scalar<std::int64_t>;
using u8 = scalar<std::uint8_t>;
using u16 = scalar<std::uint16_t>;
using u32 = scalar<std::uint32_t>;
using u64 = scalar<std::uint64_t>;
using f16 = scalar<tile::half>;
using bf16 = scalar<tile::bfloat16>;
using f32 = scalar<float>;
using f64 = scalar<double>;

/// A named meta-parameter: its value is known when the kernel is traced (Triton's
/// tl.constexpr). Passed at launch as "NAME"_c = value; a misspelt or missing name is a compile
/// error. Converts to its value, so BLOCK * 2 is plain C++ arithmetic.
template <tile::fixed_string Name, class T>
struct constexpr_ {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, double> ||
                    std::is_same_v<T, bool>,
                "a meta-parameter holds an int64_t, a double or a bool");
  static constexpr tile::fixed_string name = Name;
  using value_type = T;
  T value{};
  constexpr operator T() const { return value; }  // NOLINT: used as its value
};

// Arithmetic between two meta-parameters is plain C++ on their values (exact matches here keep
// tl::operand's operators, which would also accept them, out of the way).
#define TILE_TL_META_BINOP(op)                                                             \
  template <tile::fixed_string A, class TA, tile::fixed_string B, class TB>                \
  constexpr auto operator op(const constexpr_<A, TA>& a, const constexpr_<B, TB>& b) {    \
    return a.value op b.value;                                                             \
  }
TILE_TL_META_BINOP(+)
TILE_TL_META_BINOP(-)
TILE_TL_META_BINOP(*)
TILE_TL_META_BINOP(/)
TILE_TL_META_BINOP(%)
TILE_TL_META_BINOP(==)
TILE_TL_META_BINOP(!=)
TILE_TL_META_BINOP(<)
TILE_TL_META_BINOP(<=)
TILE_TL_META_BINOP(>)
TILE_TL_META_BINOP(>=)
TILE_TL_META_BINOP(&&)
TILE_TL_META_BINOP(||)
#undef TILE_TL_META_BINOP
template <tile::fixed_string A, class T>
constexpr auto operator-(const constexpr_<A, T>& a) { return -a.value; }
template <tile::fixed_string A, class T>
constexpr auto operator!(const constexpr_<A, T>& a) { return !a.value; }

/// The dtype named by an element-type tag: a C++ element type (float, std::int32_t, tile::half)
/// or a tl scalar alias (tl::f16, tl::i32).
template <class T> struct elem_of { using type = T; };
template <class T> struct elem_of<scalar<T>> { using type = T; };
template <class T>
inline constexpr tile::dtype dtype_v = tile::dtype_of<typename elem_of<std::remove_cvref_t<T>>::type>;

}  // namespace tl

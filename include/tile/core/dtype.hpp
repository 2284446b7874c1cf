// tile/core/dtype.hpp — layer: core (public). Element types shared by the language (tl::) and the
// host side (tile::): the dtype enum, its properties, the host storage types for f16/bf16 and the
// mapping from C++ types to dtypes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace tile {

/// Element types of tiles. Pointers are not a dtype of their own: a pointer tile carries the
/// dtype of its pointee and a pointer flag (see tl::tensor::is_pointer()).
enum class dtype : std::uint8_t { i1, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64 };

constexpr std::string_view name(dtype t) {
  constexpr std::string_view names[] = {"i1",  "i8",  "i16", "i32",  "i64", "u8", "u16",
                                        "u32", "u64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(t)];
}
constexpr bool is_float(dtype t) { return t >= dtype::f16; }
constexpr bool is_int(dtype t) { return t <= dtype::u64; }
constexpr bool is_bool(dtype t) { return t == dtype::i1; }
constexpr bool is_signed(dtype t) { return (t >= dtype::i8 && t <= dtype::i64) || is_float(t); }
constexpr bool is_unsigned(dtype t) { return t >= dtype::u8 && t <= dtype::u64; }
/// Width in bits (i1 counts 1; it is stored in one byte).
constexpr int bits(dtype t) {
  constexpr int b[] = {1, 8, 16, 32, 64, 8, 16, 32, 64, 16, 16, 32, 64};
  return b[static_cast<int>(t)];
}
/// Size in bytes of one element in memory.
constexpr int size_of(dtype t) { return t == dtype::i1 ? 1 : bits(t) / 8; }

/// Host storage type for IEEE binary16. Conversions round to nearest even.
struct half {
  std::uint16_t bits = 0;
  half() = default;
  half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a float
  operator float() const { return to_float(bits); }  // NOLINT
  static std::uint16_t from_float(float f);
  static float to_float(std::uint16_t h);
};

/// Host storage type for bfloat16 (the top 16 bits of an f32). Conversions round to nearest even.
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  bfloat16(float f) : bits(from_float(f)) {}  // NOLINT
  operator float() const { return to_float(bits); }  // NOLINT
  static std::uint16_t from_float(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
  }
  static float to_float(std::uint16_t b) {
    std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

inline float half::to_float(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400u));
      u = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
    }
  } else {
    u = sign | (exp + 112) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline std::uint16_t half::from_float(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  std::uint32_t sign = (u >> 16) & 0x8000u;
  std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    // value = abs_float; half subnormal unit is 2^-24
    float af;
    std::memcpy(&af, &abs, 4);
    float scaled = af * 16777216.0f;  // exact: multiply by 2^24
    // round to nearest even integer
    std::uint32_t r = static_cast<std::uint32_t>(scaled);
    float frac = scaled - static_cast<float>(r);
    if (frac > 0.5f || (frac == 0.5f && (r & 1u))) ++r;
    return static_cast<std::uint16_t>(sign | r);
  }
  std::uint32_t man = abs & 0x7fffffu;
  std::uint32_t exp = (abs >> 23) - 112;
  std::uint32_t h = (exp << 10) | (man >> 13);
  std::uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(sign | h);
}

/// dtype_of<T>: the dtype of a C++ element type (compile error for anything else).
template <class T> struct dtype_of_t;
template <> struct dtype_of_t<bool> : std::integral_constant<dtype, dtype::i1> {};
template <> struct dtype_of_t<std::int8_t> : std::integral_constant<dtype, dtype::i8> {};
template <> struct dtype_of_t<std::int16_t> : std::integral_constant<dtype, dtype::i16> {};
template <> struct dtype_of_t<std::int32_t> : std::integral_constant<dtype, dtype::i32> {};
template <> struct dtype_of_t<std::int64_t> : std::integral_constant<dtype, dtype::i64> {};
template <> struct dtype_of_t<std::uint8_t> : std::integral_constant<dtype, dtype::u8> {};
template <> struct dtype_of_t<std::uint16_t> : std::integral_constant<dtype, dtype::u16> {};
template <> struct dtype_of_t<std::uint32_t> : std::integral_constant<dtype, dtype::u32> {};
template <> struct dtype_of_t<std::uint64_t> : std::integral_constant<dtype, dtype::u64> {};
template <> struct dtype_of_t<half> : std::integral_constant<dtype, dtype::f16> {};
template <> struct dtype_of_t<bfloat16> : std::integral_constant<dtype, dtype::bf16> {};
template <> struct dtype_of_t<float> : std::integral_constant<dtype, dtype::f32> {};
template <> struct dtype_of_t<double> : std::integral_constant<dtype, dtype::f64> {};
template <class T> struct dtype_of_t<const T> : dtype_of_t<T> {};
// `long long` differs from int64_t on some ABIs.
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
           !std::is_same_v<T, std::int8_t> && !std::is_same_v<T, std::int16_t> &&
           !std::is_same_v<T, std::int32_t> && !std::is_same_v<T, std::int64_t> &&
           !std::is_same_v<T, std::uint8_t> && !std::is_same_v<T, std::uint16_t> &&
           !std::is_same_v<T, std::uint32_t> && !std::is_same_v<T, std::uint64_t> &&
           !std::is_same_v<T, char>)
struct dtype_of_t<T>
    : std::integral_constant<dtype, std::is_signed_v<T> ? (sizeof(T) == 8 ? dtype::i64 : dtype::i32)
                                                        : (sizeof(T) == 8 ? dtype::u64 : dtype::u32)> {};

template <class T>
concept element = requires { dtype_of_t<std::remove_cvref_t<T>>::value; };

template <class T> inline constexpr dtype dtype_of = dtype_of_t<std::remove_cvref_t<T>>::value;

}  // namespace tile

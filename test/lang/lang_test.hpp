// test/lang/lang_test.hpp — shared helpers of the end-to-end language tests (test/lang/*.cpp):
// dtype lists, host-side references (Triton's promotion, value conversions, f16/bf16 rounding),
// dtype-generic device buffers (bool is kept as one byte a lane on the host), data generators,
// elementwise runners (map1/map2/map3: out[i] = body(a[i], …) over a host vector) and
// comparisons that name the first mismatching element.
//
// Every kernel runs on tile::device::best(): test/lang/meson.build runs the suite twice, with
// TILE_BACKEND=interpreter (the oracle) and TILE_BACKEND=cpu (compiled code must agree).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <tile/tile.hpp>

#include "../requires.hpp"

namespace lt {

using tile::bfloat16;
using tile::dtype;
using tile::half;
using namespace tile::literals;

/// The device every test runs on.
inline tile::device dev() {
  static const tile::device d = tile::device::best();  // TILE_BACKEND: interpreter or cpu (meson.build)
  return d;
}

// ---- type lists ------------------------------------------------------------------------------
template <class T>
struct tag {
  using type = T;
};
template <class... T>
struct types {};
template <class... T, class F>
void for_each(types<T...>, F&& f) {
  (f(tag<T>{}), ...);
}
/// The dtypes of the binary-op matrix (the brief's list).
using arith_types = types<std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint32_t,
                         half, bfloat16, float, double>;
/// Every dtype.
using all_types = types<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                        std::uint32_t, std::uint64_t, half, bfloat16, float, double>;
using float_types = types<half, bfloat16, float, double>;

template <class T>
inline constexpr bool is_half_like = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr bool is_fp = is_half_like<T> || std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
std::string tname() {
  return std::string(tile::name(tile::dtype_of<T>));
}

/// dtype -> C++ element type.
template <dtype D> struct cpp_of;
template <> struct cpp_of<dtype::i1> { using type = bool; };
template <> struct cpp_of<dtype::i8> { using type = std::int8_t; };
template <> struct cpp_of<dtype::i16> { using type = std::int16_t; };
template <> struct cpp_of<dtype::i32> { using type = std::int32_t; };
template <> struct cpp_of<dtype::i64> { using type = std::int64_t; };
template <> struct cpp_of<dtype::u8> { using type = std::uint8_t; };
template <> struct cpp_of<dtype::u16> { using type = std::uint16_t; };
template <> struct cpp_of<dtype::u32> { using type = std::uint32_t; };
template <> struct cpp_of<dtype::u64> { using type = std::uint64_t; };
template <> struct cpp_of<dtype::f16> { using type = half; };
template <> struct cpp_of<dtype::bf16> { using type = bfloat16; };
template <> struct cpp_of<dtype::f32> { using type = float; };
template <> struct cpp_of<dtype::f64> { using type = double; };
template <dtype D>
using cpp_t = typename cpp_of<D>::type;

/// Host storage of one element in a std::vector (std::vector<bool> has no data()).
template <class T>
using host_t = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>;
template <class T>
using hvec = std::vector<host_t<T>>;

// ---- Triton's promotion, as docs/LANGUAGE.md states it ----------------------------------------
constexpr bool ref_is_float(dtype t) {
  return t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64;
}
constexpr bool ref_is_unsigned(dtype t) {
  return t == dtype::u8 || t == dtype::u16 || t == dtype::u32 || t == dtype::u64;
}
constexpr int ref_width(dtype t) {
  switch (t) {
    case dtype::i1: return 1;
    case dtype::i8: case dtype::u8: return 8;
    case dtype::i16: case dtype::u16: case dtype::f16: case dtype::bf16: return 16;
    case dtype::i32: case dtype::u32: case dtype::f32: return 32;
    default: return 64;
  }
}
/// f64 > f32 > f16/bf16 (f16 with bf16 -> f32); int with float -> the float; two ints: C's usual
/// arithmetic conversions without integer promotion (same signedness: the wider; mixed: the
/// unsigned one if at least as wide, else the signed one). i1 counts as a 1-bit signed integer.
constexpr dtype ref_promote(dtype a, dtype b) {
  if (a == b) return a;
  if (ref_is_float(a) || ref_is_float(b)) {
    if (a == dtype::f64 || b == dtype::f64) return dtype::f64;
    if (a == dtype::f32 || b == dtype::f32) return dtype::f32;
    if (ref_is_float(a) && ref_is_float(b)) return dtype::f32;
    return ref_is_float(a) ? a : b;
  }
  bool ua = ref_is_unsigned(a), ub = ref_is_unsigned(b);
  if (ua == ub) return ref_width(a) >= ref_width(b) ? a : b;
  dtype u = ua ? a : b, s = ua ? b : a;
  return ref_width(u) >= ref_width(s) ? u : s;
}
template <class A, class B>
using promote_t = cpp_t<ref_promote(tile::dtype_of<A>, tile::dtype_of<B>)>;

// ---- host values ------------------------------------------------------------------------------
template <class T>
double to_double(T v) {
  if constexpr (is_half_like<T>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

/// Round a float to element type T (f16/bf16: round to nearest even, as the interpreter does
/// after every f16/bf16 op).
template <class T>
T from_float(float f) {
  if constexpr (is_half_like<T>)
    return T(f);
  else
    return static_cast<T>(f);
}

/// An integer (or bool) converted to a float type, rounded once to nearest even (as LLVM's
/// sitofp/uitofp): rounding through f64 or f32 first could round a tie twice.
template <class D, class S>
D int_to_fp(S s) {
  if constexpr (std::is_same_v<D, double>) {
    return static_cast<double>(s);  // the compiler's conversion rounds once
  } else {
    bool neg = false;
    std::uint64_t mag;
    if constexpr (std::is_signed_v<S>) {
      neg = s < 0;
      mag = neg ? std::uint64_t{0} - static_cast<std::uint64_t>(s) : static_cast<std::uint64_t>(s);
    } else {
      mag = static_cast<std::uint64_t>(s);
    }
    constexpr int p = std::is_same_v<D, half> ? 11 : std::is_same_v<D, bfloat16> ? 8 : 24;  // significand bits
    float m = 0.f;
    const int msb = mag ? 63 - std::countl_zero(mag) : 0;
    if (msb < p) {
      m = static_cast<float>(mag);  // exact
    } else {
      const int sh = msb - p + 1;
      std::uint64_t keep = mag >> sh, rest = mag & ((std::uint64_t{1} << sh) - 1), tie = std::uint64_t{1} << (sh - 1);
      if (rest > tie || (rest == tie && (keep & 1u))) ++keep;
      m = std::ldexp(static_cast<float>(keep), sh);  // exact: keep has at most p + 1 bits
    }
    return from_float<D>(neg ? -m : m);
  }
}

/// A double rounded once to f16/bf16/f32 (nearest even): through f32 with round-to-odd, which
/// keeps enough bits for the final rounding to be the correct one.
template <class D>
D round_double(double v) {
  float r = static_cast<float>(v);
  if constexpr (is_half_like<D>) {
    if (std::isfinite(v) && static_cast<double>(r) != v) {
      if (std::fabs(static_cast<double>(r)) > std::fabs(v)) r = std::nextafter(r, 0.0f);
      r = std::bit_cast<float>(std::bit_cast<std::uint32_t>(r) | 1u);
    }
  }
  return from_float<D>(r);
}

/// tl::cast's value conversion, rounded once: ints wrap; float -> int truncates toward zero,
/// saturates, NaN -> 0; anything -> i1 is `!= 0` (NaN -> 1); i1 -> number is 0/1; int -> float
/// and float -> float round to nearest even, once.
template <class D, class S>
D conv(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (is_fp<S>)
      return to_double(s) != 0.0;  // NaN != 0
    else
      return s != 0;
  } else if constexpr (is_fp<D>) {
    if constexpr (std::is_same_v<D, double>) {
      if constexpr (is_fp<S>)
        return to_double(s);
      else
        return static_cast<double>(s);
    } else if constexpr (std::is_same_v<S, double>) {
      return round_double<D>(s);
    } else if constexpr (is_fp<S>) {
      return from_float<D>(static_cast<float>(s));  // f16/bf16/f32 are exact in f32
    } else {
      return int_to_fp<D>(s);
    }
  } else {  // D is an integer
    if constexpr (is_fp<S>) {
      double v = to_double(s);
      if (std::isnan(v)) return D{0};
      v = std::trunc(v);
      constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());
      constexpr double hi_excl = std::is_signed_v<D> ? -lo : 2.0 * (static_cast<double>(std::numeric_limits<D>::max() / 2) + 1.0);
      if (v <= lo) return std::numeric_limits<D>::min();
      if (v >= hi_excl) return std::numeric_limits<D>::max();
      return static_cast<D>(v);
    } else {
      return static_cast<D>(s);  // wraps (C++20), bool -> 0/1
    }
  }
}

/// Equal, or both NaN (floats); -0 == +0.
template <class T>
bool same(T got, T want) {
  if constexpr (is_fp<T>) {
    double g = to_double(got), w = to_double(want);
    return (std::isnan(g) && std::isnan(w)) || g == w;
  } else {
    return got == want;
  }
}

/// Bit for bit the same float (so -0 and +0 differ), or both NaN.
inline bool same_bits(float got, float want) {
  return (std::isnan(got) && std::isnan(want)) || std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want);
}

template <class T>
std::string show(T v) {
  std::ostringstream os;
  if constexpr (is_half_like<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g (0x%04x)", static_cast<double>(static_cast<float>(v)), v.bits);
    os << buf;
  } else if constexpr (std::is_same_v<T, float>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(v), std::bit_cast<std::uint32_t>(v));
    os << buf;
  } else if constexpr (std::is_same_v<T, double>) {
    char buf[80];
    std::snprintf(buf, sizeof buf, "%.17g (0x%016llx)", v,
                  static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
    os << buf;
  } else if constexpr (sizeof(T) == 1) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}

/// Distance in units in the last place between two finite floats of the same sign region.
inline std::int64_t ulp_distance(float a, float b) {
  if (a == b) return 0;
  auto key = [](float f) {
    std::int32_t i = std::bit_cast<std::int32_t>(f);
    return i < 0 ? static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::min()) - i : static_cast<std::int64_t>(i);
  };
  std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}
inline std::int64_t ulp_distance(double a, double b) {
  if (a == b) return 0;
  auto key = [](double f) {
    std::int64_t i = std::bit_cast<std::int64_t>(f);
    return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
  };
  std::int64_t ka = key(a), kb = key(b);
  return ka > kb ? ka - kb : kb - ka;
}
/// As same(), allowing `ulps` units in the last place of T (NaN must match NaN, inf must match).
template <class T>
bool close_ulps(T got, T want, int ulps) {
  if (same(got, want)) return true;
  if (ulps == 0) return false;
  if constexpr (is_half_like<T>) {
    double g = to_double(got), w = to_double(want);
    if (std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w)) return false;
    std::int32_t a = got.bits & 0x8000 ? -(got.bits & 0x7fff) : got.bits;
    std::int32_t b = want.bits & 0x8000 ? -(want.bits & 0x7fff) : want.bits;
    return std::abs(a - b) <= ulps;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(got) || std::isnan(want) || std::isinf(got) || std::isinf(want)) return false;
    return ulp_distance(got, want) <= ulps;
  } else {
    return false;
  }
}

/// Check got == want elementwise (NaN matches NaN); one CHECK that names the first mismatches.
template <class T>
bool check_equal(const std::vector<T>& got, const std::vector<T>& want, const std::string& what = "",
                 int ulps = 0) {
  if (got.size() != want.size()) {
    FAIL_CHECK(what << ": got " << got.size() << " elements, want " << want.size());
    return false;
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (close_ulps(got[i], want[i], ulps)) continue;
    if (bad < 4) first += "\n  [" + std::to_string(i) + "] got " + show(got[i]) + ", want " + show(want[i]);
    ++bad;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " elements differ" << first);
  return bad == 0;
}
/// As check_equal, with the inputs of the first mismatches printed too.
template <class T, class A>
bool check_equal_in(const std::vector<T>& got, const std::vector<T>& want, const std::vector<A>& in,
                    const std::string& what = "", int ulps = 0) {
  if (got.size() != want.size()) {
    FAIL_CHECK(what << ": got " << got.size() << " elements, want " << want.size());
    return false;
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (close_ulps(got[i], want[i], ulps)) continue;
    if (bad < 4)
      first += "\n  [" + std::to_string(i) + "] x = " + show(in[i]) + ": got " + show(got[i]) + ", want " +
               show(want[i]);
    ++bad;
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " elements differ" << first);
  return bad == 0;
}

// ---- device buffers ---------------------------------------------------------------------------
template <class T>
tile::buffer<T> upload(const hvec<T>& v) {
  tile::buffer<T> b = dev().alloc<T>(v.size());
  if constexpr (std::is_same_v<T, bool>) {
    std::unique_ptr<bool[]> tmp(new bool[v.size() ? v.size() : 1]);
    for (std::size_t i = 0; i < v.size(); ++i) tmp[i] = v[i] != 0;
    b.copy_from(std::span<const bool>(tmp.get(), v.size()));
  } else {
    b.copy_from(v);
  }
  return b;
}
/// The buffer's contents; bools come back as their raw bytes (a stored i1 must be 0 or 1).
template <class T>
hvec<T> download(const tile::buffer<T>& b) {
  if constexpr (std::is_same_v<T, bool>) {
    // buffer<bool>::to_host() cannot compile (std::vector<bool> has no data()): read the bytes.
    std::vector<std::uint8_t> out(b.size());
    if (b.size()) tile::detail::copy_to_host(*b.allocation(), 0, out.data(), b.size());
    return out;
  } else {
    return b.to_host();
  }
}
/// A buffer of n elements, each `fill`.
template <class T>
tile::buffer<T> filled(std::size_t n, host_t<T> fill) {
  return upload<T>(hvec<T>(n, fill));
}

// ---- data -------------------------------------------------------------------------------------
/// Random values of T: `small` keeps integers within ±1000 (exact in every float type, safe to
/// mix with floats); otherwise integers use their whole range with the extremes included. Floats
/// are in [-100, 100] with, if `specials`, 0, -0, ±1, ±inf, NaN, huge and tiny values mixed in.
template <class T>
hvec<T> gen(std::size_t n, unsigned seed, bool small = false, bool specials = true) {
  std::mt19937_64 rng(seed * 7919u + 17u + static_cast<unsigned>(tile::dtype_of<T>));
  hvec<T> v(n);
  if constexpr (std::is_same_v<T, bool>) {
    for (auto& x : v) x = static_cast<std::uint8_t>(rng() & 1u);
  } else if constexpr (is_integer<T>) {
    using L = std::numeric_limits<T>;
    const T sp[] = {T(0), T(1), static_cast<T>(-1), L::min(), L::max(), static_cast<T>(L::min() + 1),
                    static_cast<T>(L::max() - 1), T(2), T(7), static_cast<T>(-7), static_cast<T>(100)};
    for (std::size_t i = 0; i < n; ++i) {
      if (small) {
        std::int64_t lo = std::max<std::int64_t>(static_cast<std::int64_t>(L::min()), -1000);
        std::int64_t hi = static_cast<std::int64_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(L::max()), 1000));
        v[i] = static_cast<T>(lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1)));
      } else if (i < std::size(sp) && i % 2 == 0) {
        v[i] = sp[i];
      } else if (rng() % 4 == 0) {
        v[i] = sp[rng() % std::size(sp)];
      } else if (rng() % 2 == 0) {
        v[i] = static_cast<T>(static_cast<std::int64_t>(rng() % 2001) - 1000);  // small values too
      } else {
        v[i] = static_cast<T>(rng());  // any bit pattern
      }
    }
  } else {
    const float big = std::is_same_v<T, half> ? 60000.f : 3.0e38f;
    const float sp[] = {0.f, -0.f, 1.f, -1.f, 0.5f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                        big, -big, 1.0e-3f, 3.0f};
    std::uniform_real_distribution<float> d(-100.f, 100.f);
    for (std::size_t i = 0; i < n; ++i) {
      float f;
      if (specials && ((i < std::size(sp) && i % 2 == 1) || rng() % 6 == 0))
        f = sp[rng() % std::size(sp)];
      else if (rng() % 3 == 0)
        f = static_cast<float>(static_cast<int>(rng() % 41) - 20) * 0.25f;  // exact small values
      else
        f = d(rng);
      if constexpr (std::is_same_v<T, double>)
        v[i] = static_cast<double>(f) + (std::isfinite(f) && rng() % 2 ? 1e-9 * static_cast<double>(f) : 0.0);
      else
        v[i] = from_float<T>(f);
    }
  }
  return v;
}

// ---- running kernels --------------------------------------------------------------------------
/// Run `f`; a tile::error is reported as a failed check (naming `what`) and returns false.
template <class F>
bool run(F&& f, const std::string& what = "") {
  try {
    f();
    return true;
  } catch (const tile::error& e) {
    FAIL_CHECK(what << (what.empty() ? "" : ": ") << "unexpected tile::error: " << e.what());
    return false;
  }
}

/// Does tracing/launching `f` throw a tile::error?
template <class F>
bool throws_tile_error(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const tile::error& e) {
    if (message) *message = e.what();
    return true;
  }
  return false;
}

/// out[i] = body(load(a[i])) over a host vector, in programs of `block` lanes (the last block
/// masked). The result must have dtype R (a store through ptr<R>): this checks the dtype too.
template <class R, class A, class F>
hvec<R> map1(const hvec<A>& a, F body, int block = 32) {
  auto k = tile::kernel("map1", [body](tl::ptr<A> pa, tl::ptr<R> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(out + offs, body(tl::load(pa + offs, m)), m);
  });
  auto ba = upload<A>(a);
  auto out = dev().alloc<R>(a.size());
  int n = static_cast<int>(a.size());
  if (!run([&] { k[{tile::cdiv(n, block)}](ba, out, n, "BLOCK"_c = block); },
           "map1<" + tname<A>() + " -> " + tname<R>() + ">"))
    return {};
  return download(out);
}

template <class R, class A, class B, class F>
hvec<R> map2(const hvec<A>& a, const hvec<B>& b, F body, int block = 32) {
  auto k = tile::kernel("map2", [body](tl::ptr<A> pa, tl::ptr<B> pb, tl::ptr<R> out, tl::i32 n,
                                       tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(out + offs, body(tl::load(pa + offs, m), tl::load(pb + offs, m)), m);
  });
  auto ba = upload<A>(a);
  auto bb = upload<B>(b);
  auto out = dev().alloc<R>(a.size());
  int n = static_cast<int>(a.size());
  if (!run([&] { k[{tile::cdiv(n, block)}](ba, bb, out, n, "BLOCK"_c = block); },
           "map2<" + tname<A>() + ", " + tname<B>() + " -> " + tname<R>() + ">"))
    return {};
  return download(out);
}

template <class R, class A, class B, class C, class F>
hvec<R> map3(const hvec<A>& a, const hvec<B>& b, const hvec<C>& c, F body, int block = 32) {
  auto k = tile::kernel("map3", [body](tl::ptr<A> pa, tl::ptr<B> pb, tl::ptr<C> pc, tl::ptr<R> out, tl::i32 n,
                                       tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto m = offs < n;
    tl::store(out + offs, body(tl::load(pa + offs, m), tl::load(pb + offs, m), tl::load(pc + offs, m)), m);
  });
  auto ba = upload<A>(a);
  auto bb = upload<B>(b);
  auto bc = upload<C>(c);
  auto out = dev().alloc<R>(a.size());
  int n = static_cast<int>(a.size());
  if (!run([&] { k[{tile::cdiv(n, block)}](ba, bb, bc, out, n, "BLOCK"_c = block); },
           "map3<" + tname<A>() + ", " + tname<B>() + ", " + tname<C>() + " -> " + tname<R>() + ">"))
    return {};
  return download(out);
}

/// Row-major offsets r * C + c of an [R, C] tile (i32), built from aranges.
inline tl::tensor offsets_2d(std::int64_t rows, std::int64_t cols) {
  auto r = tl::arange(0, rows);
  auto c = tl::arange(0, cols);
  return r(tl::_, tl::newaxis) * cols + c(tl::newaxis, tl::_);
}
/// Row-major offsets of an [A, B, C] tile.
inline tl::tensor offsets_3d(std::int64_t a, std::int64_t b, std::int64_t c) {
  auto i = tl::arange(0, a);
  auto j = tl::arange(0, b);
  auto k = tl::arange(0, c);
  return i(tl::_, tl::newaxis, tl::newaxis) * (b * c) + j(tl::newaxis, tl::_, tl::newaxis) * c +
         k(tl::newaxis, tl::newaxis, tl::_);
}

}  // namespace lt

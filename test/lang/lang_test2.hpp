// test/lang/lang_test2.hpp — small helpers for the reduce/dot/random/control/debug tests
// (test_reduce.cpp, test_dot.cpp, test_random.cpp, test_control.cpp, test_debug.cpp): the
// interpreter device, data generators, host arithmetic in a kernel's element type (wrapping
// integers, f16/bf16 rounded after every op, as the interpreter computes) and a vector
// comparison that reports the first mismatch as one assertion.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <source_location>
#include <sstream>
#include <string>
#include <tile/tile.hpp>

#include "../requires.hpp"
#include <type_traits>
#include <vector>

using namespace tile::literals;

namespace lt2 {
inline tile::device dev() {
  static const tile::device d = tile::device::best();  // TILE_BACKEND: interpreter or cpu (meson.build)
  return d;
}

/// Whether the device folds reductions in the interpreter's order (a sequential left fold along
/// the axis): the interpreter and the CPU backend do; the GPU backends reduce within a thread,
/// then across lanes and warps in a tree, so float sums and products there differ from the
/// sequential fold by rounding, and a combine function that is not associative and commutative
/// gives an order-dependent result (docs/LANGUAGE.md, "Reductions").
inline bool ordered_folds() {
  const std::string b = dev().backend();
  return b == "interpreter" || b == "cpu";
}

/// A size_t index from an int (the tests index host vectors with ints).
constexpr std::size_t ix(long long i) { return static_cast<std::size_t>(i); }

template <class T>
inline constexpr bool is_half_like = std::is_same_v<T, tile::half> || std::is_same_v<T, tile::bfloat16>;
template <class T>
inline constexpr bool is_fp = is_half_like<T> || std::is_floating_point_v<T>;

/// The value of an element as a double (exact for every element type but 64-bit integers
/// beyond 2^53, which the tests compare as integers instead).
template <class T>
double to_d(T v) {
  if constexpr (is_half_like<T>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

/// Printable form of an element (int8 as a number, f16/bf16 as their value).
template <class T>
auto show(T v) {
  if constexpr (is_half_like<T>)
    return static_cast<float>(v);
  else if constexpr (std::is_same_v<T, bool>)
    return static_cast<int>(v);
  else if constexpr (std::is_integral_v<T> && sizeof(T) < 4)
    return static_cast<int>(v);
  else
    return v;
}

/// Uniform values in [lo, hi]: integers (wrapping to T), or floats rounded to T.
template <class T>
std::vector<T> random_vec(std::size_t n, unsigned seed, double lo = -4, double hi = 4) {
  std::mt19937 g(seed);
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(d(g));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = static_cast<T>(static_cast<float>(d(g)));
  }
  return v;
}

/// Integers over T's whole range (every bit pattern equally likely).
template <class T>
std::vector<T> random_bits(std::size_t n, unsigned seed) {
  static_assert(std::is_integral_v<T>);
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(g());
  return v;
}

// ---- host arithmetic in the element type, as the interpreter computes ---------------------------
template <class T>
T add(T a, T b) {
  if constexpr (is_half_like<T>)
    return T(static_cast<float>(a) + static_cast<float>(b));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else
    return a + b;
}
template <class T>
T mul(T a, T b) {
  if constexpr (is_half_like<T>)
    return T(static_cast<float>(a) * static_cast<float>(b));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else
    return a * b;
}
/// a < b on values (f16/bf16 through float).
template <class T>
bool less(T a, T b) {
  if constexpr (is_half_like<T>)
    return static_cast<float>(a) < static_cast<float>(b);
  else
    return a < b;
}

/// Equality of two elements: integers exactly, floats by value (both NaN counts as equal).
template <class A, class B>
bool same(A a, B b) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    return a == b;
  } else {
    double x = to_d(a), y = to_d(b);
    return x == y || (std::isnan(x) && std::isnan(y));
  }
}

/// One assertion for a whole vector: the count of mismatches and the first one, reported at the
/// caller's line.
template <class A, class B>
void check_same(const std::vector<A>& got, const std::vector<B>& want, const std::string& what = "values",
                std::source_location at = std::source_location::current()) {
  REQUIRE(got.size() == want.size());
  std::size_t first = got.size(), bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!same(got[i], want[i])) {
      if (!bad) first = i;
      ++bad;
    }
  if (bad) {
    std::ostringstream os;
    os.precision(17);
    os << what << ": " << bad << " of " << got.size() << " differ; first at [" << first << "]: got "
       << show(got[first]) << ", want " << show(want[first]);
    ADD_FAIL_CHECK_AT(at.file_name(), static_cast<int>(at.line()), os.str());
  } else {
    CHECK(bad == 0);
  }
}

/// The sum of `terms` as the device may compute it in any order: within (n - 1) · eps(T) · Σ|x|
/// of the exact sum (the bound for every summation order with rounding to T after each addition,
/// with a factor 2 to spare: eps is twice the unit roundoff). Integers must be exact. On the
/// interpreter and the CPU (ordered folds) `got` must equal `sequential` bit for bit.
template <class T>
bool sum_matches(T got, T sequential, const std::vector<T>& terms) {
  if (ordered_folds() || !is_fp<T>) return same(got, sequential);
  double exact = 0, mag = 0;
  for (T t : terms) exact += to_d(t), mag += std::fabs(to_d(t));
  double eps = std::is_same_v<T, tile::half>       ? 0x1p-10
               : std::is_same_v<T, tile::bfloat16> ? 0x1p-7
               : std::is_same_v<T, float>          ? 0x1p-23
                                                   : 0x1p-52;
  const double tol = double(terms.size() > 1 ? terms.size() - 1 : 1) * eps * mag;
  return std::fabs(to_d(got) - exact) <= tol;
}

/// For the sums at got[at + o] (o < seq.size()): where a sum is within sum_matches' bound of
/// its terms, replace it by the sequential fold's value, so that a following check_same compares
/// everything else in `got` exactly; a sum out of bounds is left as it is and fails there.
template <class T>
void accept_sums(std::vector<T>& got, std::size_t at, const std::vector<T>& seq,
                 const std::vector<std::vector<T>>& terms) {
  for (std::size_t o = 0; o < seq.size(); ++o)
    if (at + o < got.size() && sum_matches(got[at + o], seq[o], terms[o])) got[at + o] = seq[o];
}

/// For the products at got[at + o]: as accept_sums, within 2 · (n - 1) · eps(T) of the
/// sequential product, relatively (the bound for any order of n - 1 rounded multiplications).
template <class T>
void accept_products(std::vector<T>& got, std::size_t at, const std::vector<T>& seq, std::size_t n) {
  if (ordered_folds() || !is_fp<T>) return;
  const double eps = std::is_same_v<T, float> ? 0x1p-23 : std::is_same_v<T, double> ? 0x1p-52 : 0x1p-7;
  for (std::size_t o = 0; o < seq.size(); ++o)
    if (at + o < got.size() &&
        std::fabs(to_d(got[at + o]) - to_d(seq[o])) <= 2.0 * double(n) * eps * std::fabs(to_d(seq[o])))
      got[at + o] = seq[o];
}

/// Round an f32 to tf32 (10 mantissa bits, nearest even), as the interpreter does for dot.
inline float tf32(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;
  u += 0xfffu + ((u >> 13) & 1u);
  u &= 0xffffe000u;
  std::memcpy(&f, &u, 4);
  return f;
}

/// The correctly rounded f32 product a * b (the double product of two floats is exact), so the
/// reference does not depend on whether the compiler contracts a * b + c into an fma.
inline float mul_f32(float a, float b) { return static_cast<float>(static_cast<double>(a) * static_cast<double>(b)); }

/// Whether `text` contains `part` (with the text in the failure message).
inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace lt2

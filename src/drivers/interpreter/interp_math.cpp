// src/drivers/interpreter/interp_math.cpp — layer: drivers (interpreter). The exact semantics of
// every elementwise op (the rules are listed at the top of interpreter.cpp). Each op switches once
// on its kind and dtype and then runs one typed loop over the whole array; an operand of one
// element broadcasts against longer ones (combine regions run on whole slices).
#include <algorithm>
#include <limits>

#include "drivers/interpreter/interp_values.hpp"

namespace tile::interp {

namespace {
using ir::OpKind;

[[noreturn]] void unsupported(const ir::Op& op, const Val& v) {
  throw tile::error("interpreter: op '" + std::string(ir::op_name(op.kind)) + "' is not defined on " +
                        ir::Type{v.elem, v.ptr, {}}.str(),
                    op.loc);
}

std::size_t out_len(std::span<const Val* const> in) {
  std::size_t n = 1;
  for (auto* v : in) n = std::max(n, v->n);
  return n;
}

/// r[i] = f(a[i], b[i]) over n elements, broadcasting one-element operands.
template <class R, class A, class B, class F>
std::vector<R> map2(const Val& a, const Val& b, std::size_t n, F f) {
  std::vector<R> r(n);
  const A* pa = a.p<A>();
  const B* pb = b.p<B>();
  const std::size_t sa = a.stride(), sb = b.stride();
  for (std::size_t i = 0; i < n; ++i) r[i] = f(pa[i * sa], pb[i * sb]);
  return r;
}
template <class R, class A, class F>
std::vector<R> map1(const Val& a, F f) {
  std::vector<R> r(a.n);
  const A* pa = a.p<A>();
  for (std::size_t i = 0; i < a.n; ++i) r[i] = f(pa[i]);
  return r;
}

// ---- floats: a view of any float value in its compute type -----------------------------------

/// The elements of a float value in compute type C (float for f16/bf16/f32, double for f64).
template <class C>
struct FloatIn {
  std::vector<C> tmp;
  const C* p = nullptr;
  std::size_t stride = 0;
  explicit FloatIn(const Val& v) : stride(v.stride()) {
    if constexpr (std::is_same_v<C, double>) {
      p = v.p<double>();
    } else if (v.elem == dtype::f32) {
      p = v.p<float>();
    } else {
      const std::uint16_t* b = v.p<std::uint16_t>();
      tmp.resize(v.n);
      if (v.elem == dtype::f16)
        for (std::size_t i = 0; i < v.n; ++i) tmp[i] = f16_to_float(b[i]);
      else
        for (std::size_t i = 0; i < v.n; ++i) tmp[i] = bf16_to_float(b[i]);
      p = tmp.data();
    }
  }
  C operator[](std::size_t i) const { return p[i * stride]; }
};

/// A result computed in compute type C, rounded (nearest even) to float dtype t.
template <class C>
Val float_out(dtype t, std::vector<C> r) {
  if constexpr (std::is_same_v<C, double>) {
    return make_val(t, false, std::move(r));
  } else {
    if (t == dtype::f32) return make_val(t, false, std::move(r));
    std::vector<std::uint16_t> b(r.size());
    if (t == dtype::f16)
      for (std::size_t i = 0; i < r.size(); ++i) b[i] = float_to_f16(r[i]);
    else
      for (std::size_t i = 0; i < r.size(); ++i) b[i] = float_to_bf16(r[i]);
    return make_val(t, false, std::move(b));
  }
}

/// Calls f(C{}) with C the compute type of float dtype t.
template <class F>
Val with_compute(dtype t, F f) {
  if (t == dtype::f64) return f(double{});
  return f(float{});
}

Val float_binary(const ir::Op& op, const Val& a, const Val& b) {
  const std::size_t n = std::max(a.n, b.n);
  return with_compute(a.elem, [&](auto c) -> Val {
    using C = decltype(c);
    FloatIn<C> x(a), y(b);
    std::vector<C> r(n);
    auto loop = [&](auto f) {
      for (std::size_t i = 0; i < n; ++i) r[i] = f(x[i], y[i]);
    };
    switch (op.kind) {
      case OpKind::add: loop([](C u, C v) { return u + v; }); break;
      case OpKind::sub: loop([](C u, C v) { return u - v; }); break;
      case OpKind::mul: loop([](C u, C v) { return u * v; }); break;
      case OpKind::div: loop([](C u, C v) { return u / v; }); break;
      case OpKind::rem: loop([](C u, C v) { return std::fmod(u, v); }); break;
      case OpKind::minimum: loop([](C u, C v) { return min_num(u, v); }); break;
      case OpKind::maximum: loop([](C u, C v) { return max_num(u, v); }); break;
      default: unsupported(op, a);
    }
    return float_out(a.elem, std::move(r));
  });
}

Val float_unary(const ir::Op& op, const Val& a) {
  return with_compute(a.elem, [&](auto c) -> Val {
    using C = decltype(c);
    FloatIn<C> x(a);
    std::vector<C> r(a.n);
    auto loop = [&](auto f) {
      for (std::size_t i = 0; i < a.n; ++i) r[i] = f(x[i]);
    };
    switch (op.kind) {
      case OpKind::neg: loop([](C u) { return -u; }); break;
      case OpKind::abs: loop([](C u) { return std::fabs(u); }); break;
      case OpKind::exp: loop([](C u) { return std::exp(u); }); break;
      case OpKind::exp2: loop([](C u) { return std::exp2(u); }); break;
      case OpKind::log: loop([](C u) { return std::log(u); }); break;
      case OpKind::log2: loop([](C u) { return std::log2(u); }); break;
      case OpKind::sqrt: loop([](C u) { return std::sqrt(u); }); break;
      case OpKind::rsqrt: loop([](C u) { return C(1) / std::sqrt(u); }); break;
      case OpKind::sin: loop([](C u) { return std::sin(u); }); break;
      case OpKind::cos: loop([](C u) { return std::cos(u); }); break;
      case OpKind::floor: loop([](C u) { return std::floor(u); }); break;
      case OpKind::ceil: loop([](C u) { return std::ceil(u); }); break;
      case OpKind::erf: loop([](C u) { return std::erf(u); }); break;
      default: unsupported(op, a);
    }
    return float_out(a.elem, std::move(r));
  });
}

Val float_fma(const Val& a, const Val& b, const Val& c3, std::size_t n) {
  return with_compute(a.elem, [&](auto c) -> Val {
    using C = decltype(c);
    FloatIn<C> x(a), y(b), z(c3);
    std::vector<C> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = std::fma(x[i], y[i], z[i]);
    return float_out(a.elem, std::move(r));
  });
}

// ---- integers ---------------------------------------------------------------------------------

/// The type integer arithmetic wraps in without promotion to (signed) int.
template <class T>
using wide_unsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

/// i1 lives in uint8_t; its arithmetic is u8's reduced to the low bit.
void mask_i1(std::vector<std::uint8_t>& r) {
  for (auto& x : r) x &= 1u;
}
template <class T>
Val int_out(dtype t, std::vector<T> r) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    if (t == dtype::i1) mask_i1(r);
  return make_val(t, false, std::move(r));
}

template <class T>
T umulhi(T a, T b) {
  using U = std::make_unsigned_t<T>;
  const auto ua = static_cast<U>(a), ub = static_cast<U>(b);
  if constexpr (sizeof(T) < 8) {
    return static_cast<T>((std::uint64_t{ua} * std::uint64_t{ub}) >> (sizeof(T) * 8));
  } else {
    const std::uint64_t al = ua & 0xffffffffu, ah = ua >> 32, bl = ub & 0xffffffffu, bh = ub >> 32;
    const std::uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return static_cast<T>(hh + (lh >> 32) + (hl >> 32) + (mid >> 32));
  }
}

template <class T>
Val int_binary_typed(const ir::Op& op, const Val& a, const Val& b, std::size_t n) {
  using W = wide_unsigned<T>;
  using U = std::make_unsigned_t<T>;
  constexpr unsigned width = sizeof(T) * 8;
  auto m = [&](auto f) { return int_out(a.elem, map2<T, T, T>(a, b, n, f)); };
  switch (op.kind) {
    case OpKind::add: return m([](T x, T y) { return static_cast<T>(static_cast<W>(x) + static_cast<W>(y)); });
    case OpKind::sub: return m([](T x, T y) { return static_cast<T>(static_cast<W>(x) - static_cast<W>(y)); });
    case OpKind::mul: return m([](T x, T y) { return static_cast<T>(static_cast<W>(x) * static_cast<W>(y)); });
    case OpKind::div:
      return m([](T x, T y) -> T {
        if (y == 0) return 0;
        if constexpr (std::is_signed_v<T>)
          if (y == T(-1)) return static_cast<T>(W(0) - static_cast<W>(x));  // INT_MIN / -1 wraps
        return static_cast<T>(x / y);
      });
    case OpKind::rem:
      return m([](T x, T y) -> T {
        if (y == 0) return 0;
        if constexpr (std::is_signed_v<T>)
          if (y == T(-1)) return 0;
        return static_cast<T>(x % y);
      });
    case OpKind::bit_and: return m([](T x, T y) { return static_cast<T>(x & y); });
    case OpKind::bit_or: return m([](T x, T y) { return static_cast<T>(x | y); });
    case OpKind::bit_xor: return m([](T x, T y) { return static_cast<T>(x ^ y); });
    case OpKind::shl:
      return m([](T x, T y) -> T {
        const auto s = static_cast<U>(y);  // the amount's bit pattern: negative amounts are huge
        if (s >= width) return 0;
        return static_cast<T>(static_cast<W>(x) << s);
      });
    case OpKind::shr:
      return m([](T x, T y) -> T {
        const auto s = static_cast<U>(y);
        if (s >= width) {
          if constexpr (std::is_signed_v<T>) return x < 0 ? T(-1) : T(0);
          return 0;
        }
        return static_cast<T>(x >> s);  // arithmetic for signed T (C++20)
      });
    case OpKind::minimum: return m([](T x, T y) { return std::min(x, y); });
    case OpKind::maximum: return m([](T x, T y) { return std::max(x, y); });
    case OpKind::umulhi: return m([](T x, T y) { return umulhi(x, y); });
    default: unsupported(op, a);
  }
}

template <class T>
Val int_unary_typed(const ir::Op& op, const Val& a) {
  using W = wide_unsigned<T>;
  auto m = [&](auto f) { return int_out(a.elem, map1<T, T>(a, f)); };
  switch (op.kind) {
    case OpKind::neg: return m([](T x) { return static_cast<T>(W(0) - static_cast<W>(x)); });
    case OpKind::bit_not: return m([](T x) { return static_cast<T>(~x); });
    case OpKind::abs:
      return m([](T x) -> T {
        if constexpr (std::is_signed_v<T>)
          if (x < 0) return static_cast<T>(W(0) - static_cast<W>(x));  // abs(INT_MIN) = INT_MIN
        return x;
      });
    default: unsupported(op, a);
  }
}

Val int_binary(const ir::Op& op, const Val& a, const Val& b) {
  const std::size_t n = std::max(a.n, b.n);
  return with_storage(a, [&](auto t) -> Val {
    using T = typename decltype(t)::type;
    if constexpr (std::is_integral_v<T>)
      return int_binary_typed<T>(op, a, b, n);
    else
      unsupported(op, a);
  });
}

// ---- comparisons, select, addptr --------------------------------------------------------------

template <class T>
std::vector<std::uint8_t> compare(ir::CmpPred p, const T* x, std::size_t sx, const T* y, std::size_t sy,
                                  std::size_t n) {
  std::vector<std::uint8_t> r(n);
  auto loop = [&](auto f) {
    for (std::size_t i = 0; i < n; ++i) r[i] = f(x[i * sx], y[i * sy]) ? 1 : 0;
  };
  switch (p) {
    case ir::CmpPred::eq: loop([](T u, T v) { return u == v; }); break;
    case ir::CmpPred::ne: loop([](T u, T v) { return u != v; }); break;
    case ir::CmpPred::lt: loop([](T u, T v) { return u < v; }); break;
    case ir::CmpPred::le: loop([](T u, T v) { return u <= v; }); break;
    case ir::CmpPred::gt: loop([](T u, T v) { return u > v; }); break;
    case ir::CmpPred::ge: loop([](T u, T v) { return u >= v; }); break;
  }
  return r;
}

Val eval_cmp(const ir::Op& op, const Val& a, const Val& b) {
  const auto p = static_cast<ir::CmpPred>(op.attrs.ints.at(0));
  const std::size_t n = std::max(a.n, b.n);
  std::vector<std::uint8_t> r;
  if (!a.ptr && is_float(a.elem)) {
    with_compute(a.elem, [&](auto c) -> Val {
      using C = decltype(c);
      FloatIn<C> x(a), y(b);
      r = compare<C>(p, x.p, x.stride, y.p, y.stride, n);
      return {};
    });
  } else {
    with_storage(a, [&](auto t) {
      using T = typename decltype(t)::type;
      r = compare<T>(p, a.p<T>(), a.stride(), b.p<T>(), b.stride(), n);
    });
  }
  return make_val(dtype::i1, false, std::move(r));
}

Val eval_select(const Val& c, const Val& a, const Val& b, std::size_t n) {
  const std::uint8_t* pc = c.p<std::uint8_t>();
  const std::size_t sc = c.stride();
  return with_storage(a, [&](auto t) {
    using T = typename decltype(t)::type;
    const T* pa = a.p<T>();
    const T* pb = b.p<T>();
    const std::size_t sa = a.stride(), sb = b.stride();
    std::vector<T> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = pc[i * sc] ? pa[i * sa] : pb[i * sb];
    Val v = make_val(a.elem, a.ptr, std::move(r));
    if (a.ptr && a.origin == b.origin) v.origin = a.origin;
    return v;
  });
}

Val eval_addptr(const Val& p, const Val& off, std::size_t n) {
  const auto size = static_cast<std::uint64_t>(size_of(p.elem));
  return with_storage(off, [&](auto t) {
    using T = typename decltype(t)::type;
    std::vector<std::uint64_t> r;
    if constexpr (std::is_integral_v<T>) {
      r = map2<std::uint64_t, std::uint64_t, T>(p, off, n, [size](std::uint64_t a, T o) {
        // sign- or zero-extended by the offset's own type, then modulo 2^64
        const auto wide = std::is_signed_v<T> ? static_cast<std::uint64_t>(static_cast<std::int64_t>(o))
                                              : static_cast<std::uint64_t>(o);
        return a + wide * size;
      });
    }
    Val v = make_val(p.elem, true, std::move(r));
    v.origin = p.origin;
    return v;
  });
}

// ---- conversions ------------------------------------------------------------------------------

/// Storage types that may hold a float dtype (f16/bf16 bits live in uint16_t).
template <class S>
constexpr bool can_be_float = std::is_floating_point_v<S> || std::is_same_v<S, std::uint16_t>;

template <class D, class S>
std::vector<D> convert_elems(const Val& a, dtype from, dtype to) {
  const S* s = a.p<S>();
  std::vector<D> r(a.n);
  const bool from_float = is_float(from), to_float = is_float(to);
  if (from_float && to_float) {
    if constexpr (can_be_float<S> && can_be_float<D>)
      for (std::size_t i = 0; i < a.n; ++i) r[i] = double_to_float_storage<D>(float_storage_to_double(s[i], from), to);
  } else if (from_float) {
    if constexpr (can_be_float<S> && std::is_integral_v<D>)
      for (std::size_t i = 0; i < a.n; ++i) r[i] = float_to_int_storage<D>(float_storage_to_double(s[i], from), to);
  } else if (to_float) {
    if constexpr (std::is_integral_v<S> && can_be_float<D>)
      for (std::size_t i = 0; i < a.n; ++i) r[i] = int_to_float_storage<D>(s[i], to);
  } else if (to == dtype::i1) {
    for (std::size_t i = 0; i < a.n; ++i) r[i] = s[i] != 0 ? 1 : 0;
  } else {
    if constexpr (std::is_integral_v<S> && std::is_integral_v<D>)
      for (std::size_t i = 0; i < a.n; ++i) r[i] = static_cast<D>(s[i]);  // truncate, or extend by the source's signedness
  }
  return r;
}

Val eval_cast(const Val& a, const ir::Type& to) {
  if (a.ptr || to.ptr) {  // pointer <-> i64/u64 (or pointer <-> pointer): the address
    std::vector<std::uint64_t> r(a.n);
    with_storage(a, [&](auto st) {
      using S = typename decltype(st)::type;
      if constexpr (std::is_integral_v<S>)
        for (std::size_t i = 0; i < a.n; ++i) r[i] = static_cast<std::uint64_t>(a.p<S>()[i]);
    });
    if (to.ptr || to.elem == dtype::u64) return make_val(to.elem, to.ptr, std::move(r));
    std::vector<std::int64_t> s(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) s[i] = static_cast<std::int64_t>(r[i]);
    return make_val(dtype::i64, false, std::move(s));
  }
  return with_storage(to.elem, false, [&](auto dt) {
    using D = typename decltype(dt)::type;
    return with_storage(a, [&](auto st) {
      using S = typename decltype(st)::type;
      return make_val(to.elem, false, convert_elems<D, S>(a, a.elem, to.elem));
    });
  });
}

Val eval_bitcast(const ir::Op& op, const Val& a, const ir::Type& to) {
  if ((!a.ptr && a.elem == dtype::i1) || (!to.ptr && to.elem == dtype::i1))
    throw tile::error("interpreter: bitcast to or from i1 (" + ir::Type{a.elem, a.ptr, {}}.str() + " to " +
                          to.scalar().str() + ")",
                      op.loc);
  return with_storage(to.elem, to.ptr, [&](auto dt) {
    using D = typename decltype(dt)::type;
    return with_storage(a, [&](auto st) -> Val {
      using S = typename decltype(st)::type;
      if constexpr (sizeof(S) == sizeof(D)) {
        return make_val(to.elem, to.ptr, map1<D, S>(a, [](S x) { return std::bit_cast<D>(x); }));
      } else {
        throw tile::error("interpreter: bitcast between types of different widths (" +
                              ir::Type{a.elem, a.ptr, {}}.str() + " to " + to.scalar().str() + ")",
                          op.loc);
      }
    });
  });
}

}  // namespace

Val eval_elementwise(const ir::Op& op, std::span<const Val* const> in) {
  const Val& a = *in[0];
  const bool fl = !a.ptr && is_float(a.elem);
  switch (op.kind) {
    case OpKind::cast: return eval_cast(a, op.result()->type);
    case OpKind::bitcast: return eval_bitcast(op, a, op.result()->type);
    case OpKind::cmp: return eval_cmp(op, a, *in[1]);
    case OpKind::select: return eval_select(a, *in[1], *in[2], out_len(in));
    case OpKind::addptr: return eval_addptr(a, *in[1], out_len(in));
    case OpKind::fma:
      if (!fl) unsupported(op, a);
      return float_fma(a, *in[1], *in[2], out_len(in));
    case OpKind::add:
    case OpKind::sub:
    case OpKind::mul:
    case OpKind::div:
    case OpKind::rem:
    case OpKind::minimum:
    case OpKind::maximum:
      return fl ? float_binary(op, a, *in[1]) : int_binary(op, a, *in[1]);
    case OpKind::bit_and:
    case OpKind::bit_or:
    case OpKind::bit_xor:
    case OpKind::shl:
    case OpKind::shr:
    case OpKind::umulhi:
      if (fl) unsupported(op, a);
      return int_binary(op, a, *in[1]);
    case OpKind::neg:
    case OpKind::abs:
    case OpKind::bit_not:
      if (fl) return float_unary(op, a);
      return with_storage(a, [&](auto t) -> Val {
        using T = typename decltype(t)::type;
        if constexpr (std::is_integral_v<T>)
          return int_unary_typed<T>(op, a);
        else
          unsupported(op, a);
      });
    case OpKind::exp: case OpKind::exp2: case OpKind::log: case OpKind::log2: case OpKind::sqrt:
    case OpKind::rsqrt: case OpKind::sin: case OpKind::cos: case OpKind::floor: case OpKind::ceil:
    case OpKind::erf:
      if (!fl) unsupported(op, a);
      return float_unary(op, a);
    default: break;
  }
  throw tile::error("interpreter: op '" + std::string(ir::op_name(op.kind)) + "' is not elementwise", op.loc);
}

}  // namespace tile::interp

// src/drivers/interpreter/interp_tiles.cpp — layer: drivers (interpreter). Values and shapes:
// constants, arange, broadcast, permute, join/split, dot, and the formatting of one element for
// device_print.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "drivers/interpreter/interp_values.hpp"

namespace tile::interp {

namespace {

std::size_t count(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (auto e : shape) n *= static_cast<std::size_t>(e);
  return n;
}

/// Row-major strides of a shape.
std::vector<std::size_t> strides_of(const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> s(shape.size());
  std::size_t acc = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= static_cast<std::size_t>(shape[d]);
  }
  return s;
}

/// out[k] = x[src(k)] where src walks the output shape with the given source strides per axis.
Val gather_strided(const Val& x, const std::vector<std::int64_t>& out_shape, const std::vector<std::size_t>& src_stride) {
  const std::size_t n = count(out_shape), rank = out_shape.size();
  std::vector<std::size_t> idx(rank, 0);
  return with_storage(x, [&](auto t) {
    using S = typename decltype(t)::type;
    const S* p = x.p<S>();
    std::vector<S> r(n);
    std::size_t src = 0;
    for (std::size_t k = 0; k < n; ++k) {
      r[k] = p[src];
      for (std::size_t d = rank; d-- > 0;) {  // odometer increment
        src += src_stride[d];
        if (++idx[d] < static_cast<std::size_t>(out_shape[d])) break;
        src -= src_stride[d] * idx[d];
        idx[d] = 0;
      }
    }
    Val v = make_val(x.elem, x.ptr, std::move(r));
    v.origin = x.origin;
    return v;
  });
}

}  // namespace

std::string index_text(std::size_t k, const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = k % static_cast<std::size_t>(shape[d]);
    k /= static_cast<std::size_t>(shape[d]);
  }
  std::string s;
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s;
}

Val eval_constant(const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  const std::size_t n = count(t.shape);
  return with_storage(t.elem, t.ptr, [&](auto tg) {
    using S = typename decltype(tg)::type;
    S v{};
    if (!t.ptr && is_float(t.elem)) {
      if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, std::uint16_t>)
        v = double_to_float_storage<S>(op.attrs.f, t.elem);
    } else {
      if constexpr (std::is_integral_v<S>) {
        v = static_cast<S>(op.attrs.ints.at(0));  // two's complement at the width
        if (t.elem == dtype::i1 && !t.ptr) v = static_cast<S>(v & 1);
      }
    }
    return make_val(t.elem, t.ptr, std::vector<S>(n, v));
  });
}

Val eval_arange(const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  const std::int64_t start = op.attrs.ints.at(0);
  const std::size_t n = count(t.shape);
  return with_storage(t.elem, false, [&](auto tg) {
    using S = typename decltype(tg)::type;
    std::vector<S> r(n);
    if constexpr (std::is_integral_v<S>)
      for (std::size_t k = 0; k < n; ++k) r[k] = static_cast<S>(start + static_cast<std::int64_t>(k));
    return make_val(t.elem, false, std::move(r));
  });
}

Val eval_broadcast(const Val& x, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& to) {
  auto s = strides_of(from);
  for (std::size_t d = 0; d < from.size(); ++d)
    if (from[d] == 1) s[d] = 0;
  return gather_strided(x, to, s);
}

Val eval_permute(const Val& x, const std::vector<std::int64_t>& from, const std::vector<std::int64_t>& order) {
  const auto in_strides = strides_of(from);
  std::vector<std::int64_t> out_shape(order.size());
  std::vector<std::size_t> s(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto ax = static_cast<std::size_t>(order[i]);
    out_shape[i] = from[ax];
    s[i] = in_strides[ax];
  }
  return gather_strided(x, out_shape, s);
}

Val eval_join(const Val& a, const Val& b) {
  return with_storage(a, [&](auto t) {
    using S = typename decltype(t)::type;
    const S* pa = a.p<S>();
    const S* pb = b.p<S>();
    std::vector<S> r(2 * a.n);
    for (std::size_t k = 0; k < a.n; ++k) {
      r[2 * k] = pa[k];
      r[2 * k + 1] = pb[k];
    }
    Val v = make_val(a.elem, a.ptr, std::move(r));
    if (a.origin == b.origin) v.origin = a.origin;
    return v;
  });
}

std::pair<Val, Val> eval_split(const Val& x) {
  return with_storage(x, [&](auto t) {
    using S = typename decltype(t)::type;
    const S* p = x.p<S>();
    std::vector<S> lo(x.n / 2), hi(x.n / 2);
    for (std::size_t k = 0; k < x.n / 2; ++k) {
      lo[k] = p[2 * k];
      hi[k] = p[2 * k + 1];
    }
    std::pair<Val, Val> r{make_val(x.elem, x.ptr, std::move(lo)), make_val(x.elem, x.ptr, std::move(hi))};
    r.first.origin = r.second.origin = x.origin;
    return r;
  });
}

// ---- dot ----------------------------------------------------------------------------------------

namespace {

/// The elements of `v` as doubles (exact for floats; integers by their signedness).
std::vector<double> as_doubles(const Val& v) {
  std::vector<double> r(v.n);
  with_storage(v, [&](auto t) {
    using S = typename decltype(t)::type;
    const S* p = v.p<S>();
    for (std::size_t i = 0; i < v.n; ++i) {
      if (is_float(v.elem)) {
        if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, std::uint16_t>)
          r[i] = float_storage_to_double(p[i], v.elem);
      } else {
        r[i] = static_cast<double>(p[i]);
      }
    }
  });
  return r;
}

/// Float accumulation: out = acc + a @ b, k in order, in compute type C; the running sum is rounded
/// to the accumulator's dtype after every step (a no-op for f32 with C = float and f64).
template <class C>
Val dot_float(const Val& a, const Val& b, const Val& acc, std::size_t M, std::size_t K, std::size_t N, bool tf32) {
  const auto ad = as_doubles(a), bd = as_doubles(b), cd = as_doubles(acc);
  std::vector<C> A(ad.size()), B(bd.size()), R(cd.size());
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = static_cast<C>(ad[i]);
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = static_cast<C>(bd[i]);
  for (std::size_t i = 0; i < R.size(); ++i) R[i] = static_cast<C>(cd[i]);
  if constexpr (std::is_same_v<C, float>) {
    if (tf32) {
      for (auto& x : A) x = round_tf32(x);
      for (auto& x : B) x = round_tf32(x);
    }
  }
  const dtype out = acc.elem;
  const bool narrow = out == dtype::f16 || out == dtype::bf16;
  for (std::size_t i = 0; i < M; ++i) {
    C* row = &R[i * N];
    for (std::size_t k = 0; k < K; ++k) {
      const C x = A[i * K + k];
      const C* brow = &B[k * N];
      for (std::size_t j = 0; j < N; ++j) {
        C p = x * brow[j];
        row[j] = row[j] + p;
        if (narrow) {
          const auto bits = double_to_float_storage<std::uint16_t>(row[j], out);
          row[j] = static_cast<C>(float_storage_to_double(bits, out));
        }
      }
    }
  }
  return with_storage(out, false, [&](auto t) {
    using S = typename decltype(t)::type;
    std::vector<S> r(R.size());
    if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, std::uint16_t>)
      for (std::size_t i = 0; i < R.size(); ++i) r[i] = double_to_float_storage<S>(R[i], out);
    return make_val(out, false, std::move(r));
  });
}

/// Integer accumulation in the accumulator's type, wrapping; inputs extended by their signedness.
template <class S>
Val dot_int(const Val& a, const Val& b, const Val& acc, std::size_t M, std::size_t K, std::size_t N) {
  using U = std::conditional_t<(sizeof(S) < sizeof(unsigned)), unsigned, std::make_unsigned_t<S>>;
  auto widen = [](const Val& v) {
    std::vector<U> r(v.n);
    with_storage(v, [&](auto t) {
      using T = typename decltype(t)::type;
      if constexpr (std::is_integral_v<T>)
        for (std::size_t i = 0; i < v.n; ++i)
          r[i] = static_cast<U>(std::is_signed_v<T> ? static_cast<std::uint64_t>(static_cast<std::int64_t>(v.p<T>()[i]))
                                                     : static_cast<std::uint64_t>(v.p<T>()[i]));
    });
    return r;
  };
  const auto A = widen(a), B = widen(b);
  std::vector<S> R(acc.p<S>(), acc.p<S>() + acc.n);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j)
        R[i * N + j] = static_cast<S>(static_cast<U>(R[i * N + j]) + A[i * K + k] * B[k * N + j]);
  return make_val(acc.elem, false, std::move(R));
}

}  // namespace

Val eval_dot(const ir::Op& op, const Val& a, const Val& b, const Val& acc) {
  const auto& as = op.operand(0)->type.shape;
  const auto& bs = op.operand(1)->type.shape;
  const auto M = static_cast<std::size_t>(as[0]), K = static_cast<std::size_t>(as[1]),
             N = static_cast<std::size_t>(bs[1]);
  if (!is_float(acc.elem)) {
    if (is_float(a.elem))
      throw tile::error("interpreter: dot of float inputs into an integer accumulator", op.loc);
    return with_storage(acc, [&](auto t) -> Val {
      using S = typename decltype(t)::type;
      if constexpr (std::is_integral_v<S>)
        return dot_int<S>(a, b, acc, M, K, N);
      else
        return {};
    });
  }
  const bool tf32 = a.elem == dtype::f32 && op.attrs.ints.at(0) == static_cast<std::int64_t>(precision::tf32);
  if (acc.elem == dtype::f64) return dot_float<double>(a, b, acc, M, K, N, false);
  return dot_float<float>(a, b, acc, M, K, N, tf32);
}

// ---- device_print -------------------------------------------------------------------------------

namespace {

/// `v` in the fewest significant digits (%g) that read back to the same value of its dtype
/// (`same`); integral values below 1e16 in full ("65504", "-0"), as Python's repr does.
std::string shortest(double v, int max_digits, auto&& same) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // 512: %.*g of a double needs at most ~330 characters; GCC's -Wformat-truncation cannot
  // see that |v| < 1e16 or that max_digits <= 17, so the buffer covers the full range.
  char buf[512];
  if (std::fabs(v) < 1e16 && std::trunc(v) == v) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int prec = 1; prec <= max_digits; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (same(std::strtod(buf, nullptr))) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*g", max_digits, v);
  return buf;
}

}  // namespace

std::string format_element(const Val& v, std::size_t k, bool hex) {
  char buf[128];
  return with_storage(v, [&](auto t) -> std::string {
    using S = typename decltype(t)::type;
    const S x = v.p<S>()[k];
    if (hex || v.ptr) {
      std::uint64_t raw = 0;
      std::memcpy(&raw, &x, sizeof(S));
      const int digits = v.ptr ? 16 : std::max(1, bits(v.elem) / 4);
      std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, digits, raw);
      return buf;
    }
    if constexpr (std::is_same_v<S, float>) {
      return shortest(x, 9, [&](double d) { return static_cast<float>(d) == x; });
    } else if constexpr (std::is_same_v<S, double>) {
      return shortest(x, 17, [&](double d) { return d == x; });
    } else if constexpr (std::is_same_v<S, std::uint16_t>) {
      if (is_float(v.elem)) {
        const double d = float_storage_to_double(x, v.elem);
        return shortest(d, 9, [&](double e) {
          return double_to_float_storage<std::uint16_t>(e, v.elem) == x;
        });
      }
      return std::to_string(x);
    } else if constexpr (std::is_signed_v<S>) {
      return std::to_string(static_cast<long long>(x));
    } else {
      return std::to_string(static_cast<unsigned long long>(x));
    }
  });
}

}  // namespace tile::interp

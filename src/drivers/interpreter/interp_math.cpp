// src/drivers/interpreter/interp_math.cpp — layer: drivers (interpreter). The exact semantics of
// every elementwise op (see interpreter.cpp's header for the rules).
#include "drivers/interpreter/interp_math.hpp"

#include <algorithm>

namespace tile::interp {

namespace {
using ir::OpKind;

std::size_t out_size(const std::vector<const Val*>& in) {
  std::size_t n = 1;
  for (auto* v : in) n = std::max(n, v->size());
  return n;
}
inline std::size_t at(const Val& v, std::size_t k) { return v.size() == 1 ? 0 : k; }

std::uint64_t umulhi(std::uint64_t a, std::uint64_t b, int width) {
  if (width <= 32) return ((a & 0xffffffffu) * (b & 0xffffffffu)) >> 32;
  // 64 x 64 -> high 64 bits, from 32-bit halves
  std::uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  std::uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

std::int64_t int_binary(OpKind k, std::int64_t a, std::int64_t b, dtype t) {
  const bool u = is_unsigned(t);
  const int w = bits(t);
  const std::uint64_t ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
  auto umask = [&](std::uint64_t v) { return w == 64 ? v : (v & ((std::uint64_t{1} << w) - 1)); };
  switch (k) {
    case OpKind::add: return wrap(static_cast<std::int64_t>(ua + ub), t);
    case OpKind::sub: return wrap(static_cast<std::int64_t>(ua - ub), t);
    case OpKind::mul: return wrap(static_cast<std::int64_t>(ua * ub), t);
    case OpKind::div:
      if (b == 0) return 0;
      if (u) return wrap(static_cast<std::int64_t>(umask(ua) / umask(ub)), t);
      if (b == -1) return wrap(static_cast<std::int64_t>(std::uint64_t{0} - ua), t);
      return wrap(a / b, t);
    case OpKind::rem:
      if (b == 0) return 0;
      if (u) return wrap(static_cast<std::int64_t>(umask(ua) % umask(ub)), t);
      if (b == -1) return 0;
      return wrap(a % b, t);
    case OpKind::bit_and: return wrap(a & b, t);
    case OpKind::bit_or: return wrap(a | b, t);
    case OpKind::bit_xor: return wrap(a ^ b, t);
    case OpKind::shl: {
      std::uint64_t s = u ? umask(ub) : ub;
      if ((!u && b < 0) || s >= static_cast<std::uint64_t>(w)) return 0;
      return wrap(static_cast<std::int64_t>(ua << s), t);
    }
    case OpKind::shr: {
      std::uint64_t s = u ? umask(ub) : ub;
      if (u) return s >= static_cast<std::uint64_t>(w) ? 0 : wrap(static_cast<std::int64_t>(umask(ua) >> s), t);
      if (b < 0 || s >= static_cast<std::uint64_t>(w)) return a < 0 ? wrap(-1, t) : 0;
      return wrap(a >> s, t);
    }
    case OpKind::minimum:
      return u ? (umask(ua) < umask(ub) ? a : b) : std::min(a, b);
    case OpKind::maximum:
      return u ? (umask(ua) > umask(ub) ? a : b) : std::max(a, b);
    case OpKind::umulhi: return wrap(static_cast<std::int64_t>(umulhi(umask(ua), umask(ub), w)), t);
    default: break;
  }
  throw tile::error("interpreter: unhandled integer op " + std::string(ir::op_name(k)));
}

double float_binary(OpKind k, double a, double b, dtype t) {
  double r;
  if (t == dtype::f64) {
    switch (k) {
      case OpKind::add: r = a + b; break;
      case OpKind::sub: r = a - b; break;
      case OpKind::mul: r = a * b; break;
      case OpKind::div: r = a / b; break;
      case OpKind::rem: r = std::fmod(a, b); break;
      case OpKind::minimum: r = std::fmin(a, b); break;
      case OpKind::maximum: r = std::fmax(a, b); break;
      default: throw tile::error("interpreter: unhandled float op " + std::string(ir::op_name(k)));
    }
    return r;
  }
  float x = static_cast<float>(a), y = static_cast<float>(b), z;
  switch (k) {
    case OpKind::add: z = x + y; break;
    case OpKind::sub: z = x - y; break;
    case OpKind::mul: z = x * y; break;
    case OpKind::div: z = x / y; break;
    case OpKind::rem: z = std::fmod(x, y); break;
    case OpKind::minimum: z = std::fmin(x, y); break;
    case OpKind::maximum: z = std::fmax(x, y); break;
    default: throw tile::error("interpreter: unhandled float op " + std::string(ir::op_name(k)));
  }
  return round_to(z, t);
}

double float_unary(OpKind k, double a, dtype t) {
  if (t == dtype::f64) {
    switch (k) {
      case OpKind::neg: return -a;
      case OpKind::exp: return std::exp(a);
      case OpKind::exp2: return std::exp2(a);
      case OpKind::log: return std::log(a);
      case OpKind::log2: return std::log2(a);
      case OpKind::sqrt: return std::sqrt(a);
      case OpKind::rsqrt: return 1.0 / std::sqrt(a);
      case OpKind::sin: return std::sin(a);
      case OpKind::cos: return std::cos(a);
      case OpKind::abs: return std::fabs(a);
      case OpKind::floor: return std::floor(a);
      case OpKind::ceil: return std::ceil(a);
      case OpKind::erf: return std::erf(a);
      default: break;
    }
  } else {
    float x = static_cast<float>(a), z;
    switch (k) {
      case OpKind::neg: z = -x; break;
      case OpKind::exp: z = std::exp(x); break;
      case OpKind::exp2: z = std::exp2(x); break;
      case OpKind::log: z = std::log(x); break;
      case OpKind::log2: z = std::log2(x); break;
      case OpKind::sqrt: z = std::sqrt(x); break;
      case OpKind::rsqrt: z = 1.0f / std::sqrt(x); break;
      case OpKind::sin: z = std::sin(x); break;
      case OpKind::cos: z = std::cos(x); break;
      case OpKind::abs: z = std::fabs(x); break;
      case OpKind::floor: z = std::floor(x); break;
      case OpKind::ceil: z = std::ceil(x); break;
      case OpKind::erf: z = std::erf(x); break;
      default: throw tile::error("interpreter: unhandled float op " + std::string(ir::op_name(k)));
    }
    return round_to(z, t);
  }
  throw tile::error("interpreter: unhandled float op " + std::string(ir::op_name(k)));
}

bool compare(ir::CmpPred p, const Val& a, const Val& b, std::size_t ia, std::size_t ib, const ir::Type& t) {
  if (a.is_float) {
    double x = a.f[ia], y = b.f[ib];
    switch (p) {
      case ir::CmpPred::eq: return x == y;
      case ir::CmpPred::ne: return x != y;
      case ir::CmpPred::lt: return x < y;
      case ir::CmpPred::le: return x <= y;
      case ir::CmpPred::gt: return x > y;
      case ir::CmpPred::ge: return x >= y;
    }
  }
  std::int64_t x = a.i[ia], y = b.i[ib];
  if (t.ptr || is_unsigned(t.elem)) {
    auto ux = static_cast<std::uint64_t>(x), uy = static_cast<std::uint64_t>(y);
    switch (p) {
      case ir::CmpPred::eq: return ux == uy;
      case ir::CmpPred::ne: return ux != uy;
      case ir::CmpPred::lt: return ux < uy;
      case ir::CmpPred::le: return ux <= uy;
      case ir::CmpPred::gt: return ux > uy;
      case ir::CmpPred::ge: return ux >= uy;
    }
  }
  switch (p) {
    case ir::CmpPred::eq: return x == y;
    case ir::CmpPred::ne: return x != y;
    case ir::CmpPred::lt: return x < y;
    case ir::CmpPred::le: return x <= y;
    case ir::CmpPred::gt: return x > y;
    case ir::CmpPred::ge: return x >= y;
  }
  return false;
}

Val cast(const Val& a, const ir::Type& from, const ir::Type& to, bool bitcast) {
  Val r;
  r.is_float = to.is_float();
  std::size_t n = a.size();
  if (r.is_float) r.f.resize(n); else r.i.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (bitcast) {
      std::uint64_t raw;
      if (a.is_float) {
        if (from.elem == dtype::f32) { float x = static_cast<float>(a.f[k]); std::uint32_t u; std::memcpy(&u, &x, 4); raw = u; }
        else if (from.elem == dtype::f64) std::memcpy(&raw, &a.f[k], 8);
        else if (from.elem == dtype::f16) raw = tile::half(static_cast<float>(a.f[k])).bits;
        else raw = tile::bfloat16(static_cast<float>(a.f[k])).bits;
      } else {
        raw = static_cast<std::uint64_t>(a.i[k]);
      }
      if (to.ptr || !r.is_float) {
        r.i[k] = to.ptr ? static_cast<std::int64_t>(raw) : wrap(static_cast<std::int64_t>(raw), to.elem);
      } else if (to.elem == dtype::f32) {
        std::uint32_t u = static_cast<std::uint32_t>(raw); float x; std::memcpy(&x, &u, 4); r.f[k] = x;
      } else if (to.elem == dtype::f64) {
        double x; std::memcpy(&x, &raw, 8); r.f[k] = x;
      } else if (to.elem == dtype::f16) {
        r.f[k] = tile::half::to_float(static_cast<std::uint16_t>(raw));
      } else {
        r.f[k] = tile::bfloat16::to_float(static_cast<std::uint16_t>(raw));
      }
      continue;
    }
    if (from.ptr || to.ptr) {  // pointer <-> 64-bit integer: the address
      r.i[k] = a.i[k];
    } else if (a.is_float && r.is_float) {
      r.f[k] = round_to(a.f[k], to.elem);
    } else if (a.is_float) {
      r.i[k] = to.elem == dtype::i1 ? (a.f[k] != 0.0) : float_to_int(a.f[k], to.elem);
    } else if (r.is_float) {
      r.f[k] = round_to(int_to_double(a.i[k], from.elem), to.elem);
    } else {
      r.i[k] = to.elem == dtype::i1 ? (a.i[k] != 0) : wrap(a.i[k], to.elem);
    }
  }
  return r;
}
}  // namespace

Val elementwise(const ir::Op& op, const std::vector<const Val*>& in) {
  const ir::Type& rt = op.result()->type;
  const std::size_t n = out_size(in);
  Val r;
  r.shape = in.empty() ? std::vector<std::int64_t>{} : in[0]->shape;
  for (auto* v : in)
    if (v->size() == n) r.shape = v->shape;
  switch (op.kind) {
    case OpKind::cast:
      r = cast(*in[0], op.operand(0)->type, rt, false);
      r.shape = in[0]->shape;
      return r;
    case OpKind::bitcast:
      r = cast(*in[0], op.operand(0)->type, rt, true);
      r.shape = in[0]->shape;
      return r;
    case OpKind::cmp: {
      r.i.resize(n);
      auto p = static_cast<ir::CmpPred>(op.attrs.ints.at(0));
      for (std::size_t k = 0; k < n; ++k)
        r.i[k] = compare(p, *in[0], *in[1], at(*in[0], k), at(*in[1], k), op.operand(0)->type);
      return r;
    }
    case OpKind::select: {
      const Val &c = *in[0], &a = *in[1], &b = *in[2];
      r.is_float = a.is_float;
      if (r.is_float) r.f.resize(n); else r.i.resize(n);
      for (std::size_t k = 0; k < n; ++k) {
        bool s = c.i[at(c, k)] != 0;
        if (r.is_float) r.f[k] = s ? a.f[at(a, k)] : b.f[at(b, k)];
        else r.i[k] = s ? a.i[at(a, k)] : b.i[at(b, k)];
      }
      return r;
    }
    case OpKind::addptr: {
      const Val &p = *in[0], &o = *in[1];
      r.i.resize(n);
      auto sz = static_cast<std::uint64_t>(size_of(rt.elem));
      for (std::size_t k = 0; k < n; ++k)
        r.i[k] = static_cast<std::int64_t>(static_cast<std::uint64_t>(p.i[at(p, k)]) +
                                           static_cast<std::uint64_t>(o.i[at(o, k)]) * sz);
      return r;
    }
    case OpKind::fma: {
      r.is_float = true;
      r.f.resize(n);
      for (std::size_t k = 0; k < n; ++k) {
        double a = in[0]->f[at(*in[0], k)], b = in[1]->f[at(*in[1], k)], c = in[2]->f[at(*in[2], k)];
        r.f[k] = rt.elem == dtype::f64 ? std::fma(a, b, c)
                                       : round_to(std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)), rt.elem);
      }
      return r;
    }
    default: break;
  }
  const bool fl = rt.is_float();
  r.is_float = fl;
  if (fl) r.f.resize(n); else r.i.resize(n);
  if (in.size() == 2) {
    const Val &a = *in[0], &b = *in[1];
    for (std::size_t k = 0; k < n; ++k) {
      if (fl) r.f[k] = float_binary(op.kind, a.f[at(a, k)], b.f[at(b, k)], rt.elem);
      else r.i[k] = int_binary(op.kind, a.i[at(a, k)], b.i[at(b, k)], rt.elem);
    }
    return r;
  }
  if (in.size() == 1) {
    const Val& a = *in[0];
    for (std::size_t k = 0; k < n; ++k) {
      if (fl) {
        r.f[k] = float_unary(op.kind, a.f[at(a, k)], rt.elem);
      } else {
        std::int64_t x = a.i[at(a, k)];
        switch (op.kind) {
          case OpKind::neg: r.i[k] = wrap(static_cast<std::int64_t>(std::uint64_t{0} - static_cast<std::uint64_t>(x)), rt.elem); break;
          case OpKind::bit_not: r.i[k] = rt.elem == dtype::i1 ? !x : wrap(~x, rt.elem); break;
          case OpKind::abs:
            r.i[k] = is_unsigned(rt.elem) ? x : wrap(x < 0 ? static_cast<std::int64_t>(std::uint64_t{0} - static_cast<std::uint64_t>(x)) : x, rt.elem);
            break;
          default: throw tile::error("interpreter: unhandled integer op " + std::string(ir::op_name(op.kind)));
        }
      }
    }
    return r;
  }
  throw tile::error("interpreter: op " + std::string(ir::op_name(op.kind)) + " is not elementwise");
}

}  // namespace tile::interp

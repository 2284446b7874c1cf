// src/analysis/axis_info.cpp — layer: analysis. See axis_info.hpp.
#include "analysis/axis_info.hpp"

#include <algorithm>
#include <bit>
#include <optional>

namespace tile::analysis {

using ir::OpKind;

namespace {

constexpr std::int64_t kMaxDiv = std::int64_t{1} << 30;

std::int64_t pow2_div(std::int64_t v) {
  if (v == 0) return kMaxDiv;
  return std::min<std::int64_t>(kMaxDiv, std::int64_t{1} << std::countr_zero(static_cast<std::uint64_t>(v)));
}
std::int64_t mul_div(std::int64_t a, std::int64_t b) { return std::min<std::int64_t>(kMaxDiv, a * b); }

AxisInfo filled(const ir::Type& t, std::int64_t contig, std::int64_t div, std::int64_t cst) {
  AxisInfo i;
  const std::size_t r = t.shape.size();
  i.contiguity.assign(r, contig);
  i.divisibility.assign(r, div);
  i.constancy.assign(r, cst);
  i.scalar_div = div;
  return i;
}

/// A uniform tile (every element equal) with elements divisible by `div`.
AxisInfo uniform(const ir::Type& t, std::int64_t div) {
  AxisInfo i = filled(t, 1, div, 1);
  for (std::size_t d = 0; d < t.shape.size(); ++d) i.constancy[d] = t.shape[d];
  return i;
}

/// The divisibility of every element along axis d (divisibility describes the first element of
/// each contiguous run: inside a run of more than one, the others are not multiples of it).
std::int64_t elem_div(const AxisInfo& i, std::size_t d) { return i.contiguity[d] > 1 ? 1 : i.divisibility[d]; }

/// The divisibility of every element of the value.
std::int64_t every_div(const AxisInfo& i) {
  if (i.contiguity.empty()) return i.scalar_div;
  std::int64_t v = kMaxDiv;
  for (std::size_t d = 0; d < i.contiguity.size(); ++d) v = std::min(v, elem_div(i, d));
  return v;
}

}  // namespace

std::string AxisInfo::str() const {
  auto v = [](const std::vector<std::int64_t>& x) {
    std::string s = "[";
    for (std::size_t i = 0; i < x.size(); ++i) s += (i ? "," : "") + std::to_string(x[i]);
    return s + "]";
  };
  if (contiguity.empty()) return "{div=" + std::to_string(scalar_div) + "}";
  return "{contiguity=" + v(contiguity) + " divisibility=" + v(divisibility) + " constancy=" + v(constancy) + "}";
}

AxisInfo unknown_info(const ir::Type& t) { return filled(t, 1, 1, 1); }

AxisAnalysis::AxisAnalysis(const ir::Function& f) {
  for (std::size_t i = 0; i < f.body.args.size(); ++i) {
    const ir::Value* a = f.body.arg(static_cast<unsigned>(i));
    AxisInfo info = unknown_info(a->type);
    if (i < f.arg_info.size()) info.scalar_div = f.arg_info[i].divisibility;
    if (i < f.arg_info.size() && f.arg_info[i].nonneg) lower_[a] = f.arg_info[i].positive ? 1 : 0;
    set(a, info);
  }
  block(f.body);
}

const AxisInfo& AxisAnalysis::at(const ir::Value* v) const {
  auto it = info_.find(v);
  if (it != info_.end()) return it->second;
  return info_.emplace(v, unknown_info(v->type)).first->second;
}

std::int64_t AxisAnalysis::divisibility(const ir::Value* v) const {
  const AxisInfo& i = at(v);
  if (i.divisibility.empty()) return i.scalar_div;
  return *std::min_element(i.divisibility.begin(), i.divisibility.end());
}

void AxisAnalysis::block(const ir::Block& b) {
  for (const auto& o : b.ops) op(*o);
}

void AxisAnalysis::note_lower_bound(const ir::Op& o) {
  const ir::Value* r = o.result();
  if (!r->type.is_int() || r->type.ptr || r->type.elem == dtype::i1) return;
  constexpr std::int64_t kBig = std::int64_t{1} << 40;  // bounds stay far from overflow
  auto lb = [&](unsigned k) -> std::optional<std::int64_t> {
    auto it = lower_.find(o.operand(k));
    if (it == lower_.end()) return std::nullopt;
    return it->second;
  };
  auto constant = [&](unsigned k) -> std::optional<std::int64_t> {
    const ir::Value* v = o.operand(k);
    while (v->def && (v->def->kind == OpKind::splat || v->def->kind == OpKind::broadcast)) v = v->def->operand(0);
    if (v->def && v->def->kind == OpKind::constant && v->type.is_int()) return v->def->attrs.ints.at(0);
    return std::nullopt;
  };
  std::optional<std::int64_t> out;
  auto a = o.operands.size() > 0 ? lb(0) : std::nullopt;
  auto b = o.operands.size() > 1 ? lb(1) : std::nullopt;
  switch (o.kind) {
    case OpKind::constant: out = o.attrs.ints.at(0); break;
    case OpKind::arange: out = o.attrs.ints.at(0); break;
    case OpKind::program_id:
    case OpKind::num_programs: out = 0; break;
    case OpKind::splat:
    case OpKind::broadcast:
    case OpKind::expand_dims:
    case OpKind::reshape:
    case OpKind::permute:
    case OpKind::convert_layout:
    case OpKind::hint: out = a; break;
    case OpKind::add:
      if (a && b) out = *a + *b;
      break;
    case OpKind::sub:
      if (auto c = constant(1); a && c) out = *a - *c;
      break;
    case OpKind::mul:
      if (a && b && *a >= 0 && *b >= 0) {
        std::int64_t p = 0;
        if (!__builtin_mul_overflow(*a, *b, &p)) out = p;
        else out = 0;  // still non-negative
      }
      break;
    case OpKind::div:
    case OpKind::shr:
      if (a && b && *a >= 0 && *b >= 0) out = 0;
      break;
    case OpKind::rem:  // the dividend's sign
      if (a && *a >= 0) out = 0;
      break;
    case OpKind::minimum:
      if (a && b) out = std::min(*a, *b);
      break;
    case OpKind::maximum:
      if (a || b) out = std::max(a.value_or(-kBig), b.value_or(-kBig));
      break;
    case OpKind::bit_and:
      if ((a && *a >= 0) || (b && *b >= 0)) out = 0;
      break;
    case OpKind::select:
      if (auto t = lb(1), f = lb(2); t && f) out = std::min(*t, *f);
      break;
    case OpKind::cast: {
      const ir::Type& from = o.operand(0)->type;
      // widening, or the same width and signedness (a u32 above 2^31 cast to i32 is negative)
      const bool same_sign = is_unsigned(from.elem) == is_unsigned(r->type.elem);
      if (from.is_int() && !from.ptr && from.elem != dtype::i1 &&
          (size_of(r->type.elem) > size_of(from.elem) || (size_of(r->type.elem) == size_of(from.elem) && same_sign)))
        out = a;
      break;
    }
    default: break;
  }
  if (is_unsigned(r->type.elem)) out = std::max<std::int64_t>(out.value_or(0), 0);
  if (out && *out > -kBig && *out < kBig) lower_[r] = *out;
}

void AxisAnalysis::op(const ir::Op& o) {
  if (o.results.empty() && o.regions.empty()) return;
  if (o.results.size() == 1 && o.regions.empty()) note_lower_bound(o);
  const ir::Type* rt = o.results.empty() ? nullptr : &o.result()->type;
  auto in = [&](unsigned k) -> const AxisInfo& { return at(o.operand(k)); };
  const std::size_t R = rt ? rt->shape.size() : 0;
  switch (o.kind) {
    case OpKind::constant:
      set(o.result(), uniform(*rt, rt->is_float() ? 1 : pow2_div(o.attrs.ints.at(0))));
      return;
    case OpKind::arange: {
      AxisInfo i = filled(*rt, rt->shape.at(0), pow2_div(o.attrs.ints.at(0)), 1);
      set(o.result(), i);
      return;
    }
    case OpKind::program_id:
    case OpKind::num_programs: set(o.result(), filled(*rt, 1, 1, 1)); return;
    case OpKind::splat: set(o.result(), uniform(*rt, in(0).scalar_div)); return;
    case OpKind::convert_layout: set(o.result(), in(0)); return;  // the same elements
    case OpKind::iter_ahead: {  // (a pipelined loop's iv + k * step: as the loop's iv)
      AxisInfo ivi = filled(*rt, 1, 1, 1);
      ivi.scalar_div = std::min(in(0).scalar_div, in(1).scalar_div);
      set(o.result(0), ivi);
      if (auto lo = lower_.find(o.operand(0)); lo != lower_.end()) lower_[o.result(0)] = lo->second;  // (step > 0)
      set(o.result(1), filled(o.result(1)->type, 1, 1, 1));
      return;
    }
    case OpKind::hint: {
      AxisInfo i = in(0);
      const auto kind = static_cast<tile::detail::hint_kind>(o.attrs.ints.at(0));
      const std::int64_t v = o.attrs.ints.at(1);
      if (kind == tile::detail::hint_kind::multiple_of) {
        i.scalar_div = std::max(i.scalar_div, pow2_div(v));
        for (auto& d : i.divisibility) d = std::max(d, pow2_div(v));
      } else if (!i.contiguity.empty()) {
        i.contiguity.back() = std::max(i.contiguity.back(), std::min(pow2_div(v), rt->shape.back()));
      }
      set(o.result(), i);
      return;
    }
    case OpKind::expand_dims: {
      AxisInfo i = in(0);
      const auto ax = static_cast<std::size_t>(o.attrs.ints.at(0));
      const std::int64_t every = every_div(i);  // along the new axis each element starts a run
      if (i.contiguity.empty()) i = filled(o.operand(0)->type, 1, i.scalar_div, 1);
      i.contiguity.insert(i.contiguity.begin() + static_cast<std::ptrdiff_t>(ax), 1);
      i.divisibility.insert(i.divisibility.begin() + static_cast<std::ptrdiff_t>(ax), every);
      i.constancy.insert(i.constancy.begin() + static_cast<std::ptrdiff_t>(ax), 1);
      set(o.result(), i);
      return;
    }
    case OpKind::reshape: {
      // inserting or removing extent-1 axes (x(_, newaxis)) keeps every fact of the others
      const auto& src = o.operand(0)->type.shape;
      std::vector<std::size_t> sd, rd;
      for (std::size_t d = 0; d < src.size(); ++d)
        if (src[d] != 1) sd.push_back(d);
      for (std::size_t d = 0; d < R; ++d)
        if (rt->shape[d] != 1) rd.push_back(d);
      bool same = sd.size() == rd.size();
      for (std::size_t k = 0; same && k < sd.size(); ++k) same = src[sd[k]] == rt->shape[rd[k]];
      const AxisInfo& a = in(0);
      AxisInfo i = filled(*rt, 1, every_div(a), 1);  // inserted extent-1 axes: every element
      if (!same || a.contiguity.empty()) {
        set(o.result(), a.contiguity.empty() ? uniform(*rt, a.scalar_div) : unknown_info(*rt));
        return;
      }
      for (std::size_t k = 0; k < sd.size(); ++k) {
        i.contiguity[rd[k]] = a.contiguity[sd[k]];
        i.divisibility[rd[k]] = a.divisibility[sd[k]];
        i.constancy[rd[k]] = a.constancy[sd[k]];
      }
      set(o.result(), i);
      return;
    }
    case OpKind::broadcast: {
      AxisInfo i = in(0);
      const auto& src = o.operand(0)->type.shape;
      for (std::size_t d = 0; d < R; ++d)
        if (src[d] == 1 && rt->shape[d] != 1) {
          i.contiguity[d] = 1;
          i.constancy[d] = rt->shape[d];
        }
      set(o.result(), i);
      return;
    }
    case OpKind::permute: {
      const AxisInfo& s = in(0);
      AxisInfo i = s;
      for (std::size_t d = 0; d < R; ++d) {
        const auto p = static_cast<std::size_t>(o.attrs.ints.at(d));
        i.contiguity[d] = s.contiguity[p];
        i.divisibility[d] = s.divisibility[p];
        i.constancy[d] = s.constancy[p];
      }
      set(o.result(), i);
      return;
    }
    case OpKind::add:
    case OpKind::sub:
    case OpKind::addptr: {
      const AxisInfo &a = in(0), &b = in(1);
      if (a.contiguity.empty()) {  // scalar arithmetic
        AxisInfo i = filled(*rt, 1, 1, 1);
        std::int64_t db = b.scalar_div;
        if (o.kind == OpKind::addptr) db = mul_div(db, size_of(rt->elem));
        i.scalar_div = std::min(a.scalar_div, db);
        set(o.result(), i);
        return;
      }
      const std::int64_t scale = o.kind == OpKind::addptr ? size_of(rt->elem) : 1;
      AxisInfo i = filled(*rt, 1, 1, 1);
      for (std::size_t d = 0; d < R; ++d) {
        i.contiguity[d] = std::min(a.contiguity[d], b.constancy[d]);
        if (o.kind != OpKind::sub) i.contiguity[d] = std::max(i.contiguity[d], std::min(b.contiguity[d], a.constancy[d]));
        // runs of the result start where the contiguous operand's do; without runs, every
        // element counts (n - arange: n's divisibility holds for no element but the first)
        if (i.contiguity[d] > 1)
          i.divisibility[d] = std::min(a.divisibility[d], mul_div(b.divisibility[d], scale));
        else
          i.divisibility[d] = std::min(elem_div(a, d), mul_div(elem_div(b, d), scale));
        i.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
      }
      set(o.result(), i);
      return;
    }
    case OpKind::mul:
    case OpKind::shl: {
      const AxisInfo &a = in(0), &b = in(1);
      if (a.contiguity.empty()) {
        AxisInfo i = filled(*rt, 1, 1, 1);
        i.scalar_div = o.kind == OpKind::mul ? mul_div(a.scalar_div, b.scalar_div) : a.scalar_div;
        set(o.result(), i);
        return;
      }
      AxisInfo i = filled(*rt, 1, 1, 1);
      for (std::size_t d = 0; d < R; ++d) {
        // every element of the product: inside a run of an operand only 1 is known
        i.divisibility[d] = o.kind == OpKind::mul ? mul_div(elem_div(a, d), elem_div(b, d)) : elem_div(a, d);
        i.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
      }
      set(o.result(), i);
      return;
    }
    case OpKind::rem: {
      // x % m: a run of x starting at a multiple of c, with m a multiple of c constant over it,
      // stays a run: [k c, k c + c) % m = [j c, j c + c) for x >= 0 (or unsigned). The result is
      // a multiple of whatever divides both. For a dividend not proven >= 0 (nonneg()) the run
      // is kept too, as Triton keeps it (matmul's `(pid_m * BM + arange) % M`): C's `%` takes
      // the dividend's sign, so only a negative run starting at a multiple of m differs (its
      // first element is 0, not -m) — indices below zero, which address before the tensor.
      const AxisInfo &a = in(0), &b = in(1);
      AxisInfo i = filled(*rt, 1, 1, 1);
      if (!rt->is_int()) {
        set(o.result(), i);
        return;
      }
      if (a.contiguity.empty()) {
        i.scalar_div = std::min(a.scalar_div, b.scalar_div);
        set(o.result(), i);
        return;
      }
      for (std::size_t d = 0; d < R; ++d) {
        i.constancy[d] = std::min(a.constancy[d], b.constancy[d]);
        i.contiguity[d] = std::min({a.contiguity[d], a.divisibility[d], b.divisibility[d], b.constancy[d]});
        // runs shorter than x's start inside them: at multiples of their own length only
        const std::int64_t start = i.contiguity[d] < a.contiguity[d] ? i.contiguity[d] : a.divisibility[d];
        i.divisibility[d] = i.contiguity[d] > 1 ? std::min(start, b.divisibility[d]) : std::min(elem_div(a, d), elem_div(b, d));
      }
      set(o.result(), i);
      return;
    }
    case OpKind::cmp: {
      const AxisInfo &a = in(0), &b = in(1);
      AxisInfo i = filled(*rt, 1, 1, 1);
      const auto pred = static_cast<ir::CmpPred>(o.attrs.ints.at(0));
      for (std::size_t d = 0; d < R; ++d) {
        std::int64_t c = std::min(a.constancy[d], b.constancy[d]);
        // a contiguous run [k*m, k*m + m) against a uniform multiple of m: `run < b` and
        // `run >= b` are constant over the run (as are `a > run` and `a <= run`); `<=`/`>` of
        // the run itself are not (the run's first element may equal b)
        if (pred == ir::CmpPred::lt || pred == ir::CmpPred::ge)
          c = std::max(c, std::min({a.contiguity[d], a.divisibility[d], b.divisibility[d], b.constancy[d]}));
        if (pred == ir::CmpPred::gt || pred == ir::CmpPred::le)
          c = std::max(c, std::min({b.contiguity[d], b.divisibility[d], a.divisibility[d], a.constancy[d]}));
        i.constancy[d] = c;
      }
      set(o.result(), i);
      return;
    }
    case OpKind::bit_and:
    case OpKind::bit_or:
    case OpKind::select:
    case OpKind::cast:
    case OpKind::bit_not: {
      AxisInfo i = filled(*rt, 1, 1, 1);
      for (std::size_t d = 0; d < R; ++d) {
        std::int64_t c = rt->shape[d];
        for (unsigned k = 0; k < o.operands.size(); ++k)
          if (!in(k).constancy.empty()) c = std::min(c, in(k).constancy[d]);
        i.constancy[d] = c;
      }
      // a cast between integers and pointers keeps the values
      if (o.kind == OpKind::cast && !in(0).contiguity.empty() &&
          (rt->ptr || o.operand(0)->type.ptr || (rt->is_int() && o.operand(0)->type.is_int() && size_of(rt->elem) >= size_of(o.operand(0)->type.elem))))
        i = in(0);
      if (o.kind == OpKind::cast && in(0).contiguity.empty()) i.scalar_div = in(0).scalar_div;
      set(o.result(), i);
      return;
    }
    case OpKind::for_: {
      // region args: (iv, carried...); iterate to a fixed point (facts only weaken)
      const ir::Block& body = *o.region(0);
      const std::size_t n = o.operands.size() - 3;
      std::vector<AxisInfo> carried;
      for (std::size_t k = 0; k < n; ++k) carried.push_back(at(o.operand(static_cast<unsigned>(3 + k))));
      // iv = lo + k * step: a multiple of whatever divides both
      AxisInfo ivi = filled(body.arg(0)->type, 1, 1, 1);
      ivi.scalar_div = std::min(at(o.operand(0)).scalar_div, at(o.operand(2)).scalar_div);
      set(body.arg(0), ivi);
      if (auto lo = lower_.find(o.operand(0)); lo != lower_.end()) lower_[body.arg(0)] = lo->second;  // iv >= lo (step > 0)
      for (int iter = 0; iter < 4; ++iter) {
        for (std::size_t k = 0; k < n; ++k) set(body.arg(static_cast<unsigned>(1 + k)), carried[k]);
        block(body);
        bool changed = false;
        const ir::Op* y = body.terminator();
        for (std::size_t k = 0; k < n; ++k) {
          const AxisInfo& yi = at(y->operand(static_cast<unsigned>(k)));
          AxisInfo m = carried[k];
          m.scalar_div = std::min(m.scalar_div, yi.scalar_div);
          for (std::size_t d = 0; d < m.contiguity.size() && d < yi.contiguity.size(); ++d) {
            m.contiguity[d] = std::min(m.contiguity[d], yi.contiguity[d]);
            m.divisibility[d] = std::min(m.divisibility[d], yi.divisibility[d]);
            m.constancy[d] = std::min(m.constancy[d], yi.constancy[d]);
          }
          if (!(m == carried[k])) {
            carried[k] = m;
            changed = true;
          }
        }
        if (!changed) break;
        if (iter == 3)
          for (std::size_t k = 0; k < n; ++k) carried[k] = unknown_info(body.arg(static_cast<unsigned>(1 + k))->type);
      }
      for (std::size_t k = 0; k < n; ++k) {
        set(body.arg(static_cast<unsigned>(1 + k)), carried[k]);
        set(o.result(static_cast<unsigned>(k)), carried[k]);
      }
      block(body);
      return;
    }
    default: break;
  }
  // everything else: nothing known; nested regions still analysed (unknown arguments)
  for (const auto& r : o.regions) {
    for (const auto& a : r->args) set(a.get(), unknown_info(a->type));
    block(*r);
  }
  for (const auto& res : o.results) set(res.get(), unknown_info(res->type));
}

}  // namespace tile::analysis

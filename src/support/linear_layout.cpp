// src/support/linear_layout.cpp — layer: support. See linear_layout.hpp.
//
// Coordinates are bit fields of the row-major flat index (extents are powers of two), so a basis
// vector is also a bit mask of the flat index, and linear algebra over GF(2) is XOR on masks.
#include "support/linear_layout.hpp"

#include <algorithm>
#include <bit>

#include "tile/core/error.hpp"

namespace tile::layout {
namespace {

int log2i(std::int64_t x) { return std::countr_zero(static_cast<std::uint64_t>(x)); }

std::uint64_t mask_of(const LinearLayout& l, const Coords& c) { return static_cast<std::uint64_t>(l.flat(c)); }

Coords coords_of(const std::vector<std::int64_t>& shape, std::uint64_t flat) {
  Coords c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = static_cast<std::int64_t>(flat % static_cast<std::uint64_t>(shape[d]));
    flat /= static_cast<std::uint64_t>(shape[d]);
  }
  return c;
}

/// Gaussian elimination over GF(2): solve x = XOR of basis[i] for i in the returned set.
struct Span {
  std::vector<std::uint64_t> rows;  // reduced vectors
  std::vector<std::uint64_t> combo; // which original bases make each row (bit i: basis i)
  bool add(std::uint64_t v, std::uint64_t id) {
    std::uint64_t c = id;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (v & std::bit_floor(rows[i])) {
        v ^= rows[i];
        c ^= combo[i];
      }
    if (!v) return false;
    // keep rows with distinct leading bits, reducing others
    const std::uint64_t lead = std::bit_floor(v);
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i] & lead) {
        rows[i] ^= v;
        combo[i] ^= c;
      }
    rows.push_back(v);
    combo.push_back(c);
    return true;
  }
  std::optional<std::uint64_t> solve(std::uint64_t v) const {
    std::uint64_t c = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (v & std::bit_floor(rows[i])) {
        v ^= rows[i];
        c ^= combo[i];
      }
    if (v) return std::nullopt;
    return c;
  }
};

/// Drop register bases that are zero or depend on earlier ones (they would name duplicate
/// registers).
void prune_regs(LinearLayout& l) {
  Span s;
  std::vector<Coords> kept;
  for (auto& b : l.reg)
    if (s.add(mask_of(l, b), 0)) kept.push_back(b);
  l.reg = std::move(kept);
}

Coords zero(std::size_t rank) { return Coords(rank, 0); }

template <class F>
void each_basis(LinearLayout& l, F&& f) {
  for (auto* v : {&l.reg, &l.lane, &l.warp})
    for (auto& b : *v) f(b);
}

}  // namespace

std::int64_t LinearLayout::numel() const {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

std::int64_t LinearLayout::flat(const Coords& c) const {
  std::int64_t f = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + c[d];
  return f;
}

Coords LinearLayout::coords(std::int64_t r, std::int64_t l, std::int64_t w) const {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < reg.size(); ++i)
    if (r >> i & 1) m ^= mask_of(*this, reg[i]);
  for (std::size_t i = 0; i < lane.size(); ++i)
    if (l >> i & 1) m ^= mask_of(*this, lane[i]);
  for (std::size_t i = 0; i < warp.size(); ++i)
    if (w >> i & 1) m ^= mask_of(*this, warp[i]);
  return coords_of(shape, m);
}

std::uint32_t LinearLayout::lane_dup_mask() const {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < lane.size(); ++i)
    if (mask_of(*this, lane[i]) == 0) m |= 1u << i;
  return m;
}

std::uint32_t LinearLayout::warp_dup_mask() const {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < warp.size(); ++i)
    if (mask_of(*this, warp[i]) == 0) m |= 1u << i;
  return m;
}

bool LinearLayout::is_injective() const {
  Span s;
  for (auto* v : {&reg, &lane, &warp})
    for (auto& b : *v) {
      const std::uint64_t m = mask_of(*this, b);
      if (m && !s.add(m, 0)) return false;
    }
  return true;
}

std::vector<std::array<std::int64_t, 3>> LinearLayout::owners(const Coords& c) const {
  std::vector<std::array<std::int64_t, 3>> out;
  for (std::int64_t w = 0; w < num_warps(); ++w)
    for (std::int64_t l = 0; l < num_lanes(); ++l)
      for (std::int64_t r = 0; r < num_regs(); ++r)
        if (coords(r, l, w) == c) out.push_back({r, l, w});
  return out;
}

std::string LinearLayout::str() const {
  auto vec = [](const Coords& c) {
    std::string s = "(";
    for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
    return s + ")";
  };
  auto list = [&](const char* name, const std::vector<Coords>& v) {
    std::string s = std::string(" ") + name + "=[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + vec(v[i]);
    return s + "]";
  };
  std::string s = "#linear<";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  if (shape.empty()) s += "scalar";
  return s + list("reg", reg) + list("lane", lane) + list("warp", warp) + ">";
}

LinearLayout blocked(const std::vector<std::int64_t>& shape, const std::vector<int>& spt, const std::vector<int>& tpw,
                     const std::vector<int>& wpc, const std::vector<int>& order) {
  const std::size_t R = shape.size();
  if (spt.size() != R || tpw.size() != R || wpc.size() != R || order.size() != R)
    throw tile::error("layout: blocked layout parameters do not match the tile's rank");
  LinearLayout l;
  l.shape = shape;
  auto basis = [&](int d, std::int64_t v) {
    Coords c = zero(R);
    c[static_cast<std::size_t>(d)] = v < shape[static_cast<std::size_t>(d)] ? v : 0;  // wraps: replication
    return c;
  };
  for (int d : order)
    for (int k = 0; k < log2i(spt[static_cast<std::size_t>(d)]); ++k) l.reg.push_back(basis(d, std::int64_t{1} << k));
  for (int d : order)
    for (int k = 0; k < log2i(tpw[static_cast<std::size_t>(d)]); ++k)
      l.lane.push_back(basis(d, std::int64_t{spt[static_cast<std::size_t>(d)]} << k));
  for (int d : order)
    for (int k = 0; k < log2i(wpc[static_cast<std::size_t>(d)]); ++k)
      l.warp.push_back(basis(d, std::int64_t{spt[static_cast<std::size_t>(d)]} * tpw[static_cast<std::size_t>(d)] << k));
  // the block repeats over larger tiles: more registers
  for (int d : order) {
    const auto ud = static_cast<std::size_t>(d);
    for (std::int64_t cta = std::int64_t{spt[ud]} * tpw[ud] * wpc[ud]; cta < shape[ud]; cta *= 2) l.reg.push_back(basis(d, cta));
  }
  prune_regs(l);
  return l;
}

LinearLayout default_blocked(const std::vector<std::int64_t>& shape, int num_warps, int vec, const std::vector<int>& order_in,
                             int num_lanes) {
  const int R = static_cast<int>(shape.size());
  if (R == 0) return scalar_layout(num_warps, num_lanes);
  std::vector<int> order = order_in;
  if (order.empty())
    for (int d = R - 1; d >= 0; --d) order.push_back(d);
  std::vector<int> spt(static_cast<std::size_t>(R), 1), tpw(static_cast<std::size_t>(R), 1), wpc(static_cast<std::size_t>(R), 1);
  const auto fast = static_cast<std::size_t>(order[0]);
  // every thread holds distinct elements where the tile allows (Triton's coalesce rule)
  std::int64_t numel = 1;
  for (auto e : shape) numel *= e;
  const std::int64_t per_thread = std::max<std::int64_t>(1, numel / (std::int64_t{num_lanes} * num_warps));
  spt[fast] = static_cast<int>(std::min<std::int64_t>({std::int64_t{std::max(vec, 1)}, shape[fast], per_thread}));
  int lanes = num_lanes, warps = num_warps;
  for (int d : order) {
    const auto ud = static_cast<std::size_t>(d);
    const std::int64_t room = std::max<std::int64_t>(1, shape[ud] / spt[ud]);
    tpw[ud] = static_cast<int>(std::min<std::int64_t>(lanes, room));
    lanes /= tpw[ud];
  }
  tpw[fast] *= lanes;  // a tile smaller than a warp: the rest replicate
  for (int d : order) {
    const auto ud = static_cast<std::size_t>(d);
    const std::int64_t room = std::max<std::int64_t>(1, shape[ud] / (std::int64_t{spt[ud]} * tpw[ud]));
    wpc[ud] = static_cast<int>(std::min<std::int64_t>(warps, room));
    warps /= wpc[ud];
  }
  wpc[static_cast<std::size_t>(order.back())] *= warps;
  return blocked(shape, spt, tpw, wpc, order);
}

LinearLayout scalar_layout(int num_warps, int lanes) {
  LinearLayout l;
  l.lane.assign(static_cast<std::size_t>(log2i(lanes)), Coords{});
  l.warp.assign(static_cast<std::size_t>(log2i(num_warps)), Coords{});
  return l;
}

LinearLayout slice(const LinearLayout& in, int axis) {
  LinearLayout l = in;
  l.shape.erase(l.shape.begin() + axis);
  each_basis(l, [&](Coords& b) { b.erase(b.begin() + axis); });
  prune_regs(l);
  return l;
}

LinearLayout expand_dims(const LinearLayout& in, int axis) {
  LinearLayout l = in;
  l.shape.insert(l.shape.begin() + axis, 1);
  each_basis(l, [&](Coords& b) { b.insert(b.begin() + axis, 0); });
  return l;
}

LinearLayout broadcast_source(const LinearLayout& result, const std::vector<std::int64_t>& src_shape) {
  LinearLayout l = result;
  l.shape = src_shape;
  each_basis(l, [&](Coords& b) {
    for (std::size_t d = 0; d < b.size(); ++d)
      if (src_shape[d] == 1) b[d] = 0;
  });
  prune_regs(l);
  return l;
}

LinearLayout permute(const LinearLayout& in, const std::vector<std::int64_t>& perm) {
  LinearLayout l = in;
  for (std::size_t i = 0; i < perm.size(); ++i) l.shape[i] = in.shape[static_cast<std::size_t>(perm[i])];
  each_basis(l, [&](Coords& b) {
    Coords o(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) o[i] = b[static_cast<std::size_t>(perm[i])];
    b = o;
  });
  return l;
}

LinearLayout reshape(const LinearLayout& in, const std::vector<std::int64_t>& shape) {
  LinearLayout l = in;
  l.shape = shape;
  each_basis(l, [&](Coords& b) { b = coords_of(shape, static_cast<std::uint64_t>(in.flat(b))); });
  return l;
}

LinearLayout join(const LinearLayout& in) {
  LinearLayout l = in;
  l.shape.push_back(2);
  each_basis(l, [&](Coords& b) { b.push_back(0); });
  Coords nb = zero(l.shape.size());
  nb.back() = 1;
  l.reg.insert(l.reg.begin(), nb);
  return l;
}

std::optional<LinearLayout> split(const LinearLayout& in) {
  LinearLayout l = in;
  Coords last = zero(l.shape.size());
  last.back() = 1;
  auto it = std::find(l.reg.begin(), l.reg.end(), last);
  if (it == l.reg.end()) return std::nullopt;
  // no other basis may touch the last axis
  for (auto* v : {&l.lane, &l.warp})
    for (auto& b : *v)
      if (b.back()) return std::nullopt;
  for (auto& b : l.reg)
    if (&b != &*it && b.back()) return std::nullopt;
  l.reg.erase(it);
  l.shape.pop_back();
  each_basis(l, [&](Coords& b) { b.pop_back(); });
  return l;
}

std::optional<std::vector<int>> register_map(const LinearLayout& from, const LinearLayout& to) {
  if (from.shape != to.shape || from.lane.size() != to.lane.size() || from.warp.size() != to.warp.size()) return std::nullopt;
  for (std::size_t i = 0; i < from.lane.size(); ++i)
    if (mask_of(from, from.lane[i]) != mask_of(to, to.lane[i])) return std::nullopt;
  for (std::size_t i = 0; i < from.warp.size(); ++i)
    if (mask_of(from, from.warp[i]) != mask_of(to, to.warp[i])) return std::nullopt;
  Span s;
  for (std::size_t i = 0; i < from.reg.size(); ++i) s.add(mask_of(from, from.reg[i]), std::uint64_t{1} << i);
  std::vector<std::uint64_t> per_bit;
  for (auto& b : to.reg) {
    auto c = s.solve(mask_of(to, b));
    if (!c) return std::nullopt;
    per_bit.push_back(*c);
  }
  std::vector<int> out(static_cast<std::size_t>(to.num_regs()));
  for (std::size_t r = 0; r < out.size(); ++r) {
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < per_bit.size(); ++i)
      if (r >> i & 1) x ^= per_bit[i];
    out[r] = static_cast<int>(x);
  }
  return out;
}

std::optional<int> register_of(const LinearLayout& l, const Coords& c) {
  Span s;
  for (std::size_t i = 0; i < l.reg.size(); ++i) s.add(mask_of(l, l.reg[i]), std::uint64_t{1} << i);
  auto r = s.solve(mask_of(l, c));
  if (!r) return std::nullopt;
  return static_cast<int>(*r);
}

std::pair<int, int> register_run(const LinearLayout& l) {
  if (l.reg.empty()) return {1, 0};
  int ax = -1;
  for (std::size_t d = 0; d < l.reg[0].size(); ++d)
    if (l.reg[0][d] == 1) ax = static_cast<int>(d);
  if (ax < 0) return {1, 0};
  int n = 0;
  for (const auto& b : l.reg) {
    Coords want(b.size(), 0);
    want[static_cast<std::size_t>(ax)] = std::int64_t{1} << n;
    if (b != want) break;
    ++n;
  }
  return {1 << n, ax};
}

}  // namespace tile::layout

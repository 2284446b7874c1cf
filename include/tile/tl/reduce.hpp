// tile/tl/reduce.hpp — layer: language (public). Reductions and scans along an axis: sum, max,
// min, argmax, argmin, reduce with a user combine function, cumsum, associative_scan.
#pragma once

#include <array>
#include <tuple>
#include <utility>

#include "tile/tl/creation.hpp"
#include "tile/tl/math.hpp"
#include "tile/tl/shape.hpp"

namespace tl {

namespace detail {
using nodes = std::vector<tile::detail::node*>;

// Adapt a user combine function of tensors — fn(a, b) -> tensor, or for several inputs
// fn(std::array<tensor,N> a, std::array<tensor,N> b) -> std::array<tensor,N> — to the core's.
template <class F>
tile::detail::combine_fn single_combine(F&& fn) {
  return [&fn](std::span<tile::detail::node* const> l, std::span<tile::detail::node* const> r) {
    tensor out = fn(tensor(l[0]), tensor(r[0]));
    return nodes{out.node()};
  };
}
template <std::size_t N, class F>
tile::detail::combine_fn multi_combine(F&& fn) {
  return [&fn](std::span<tile::detail::node* const> l, std::span<tile::detail::node* const> r) {
    std::array<tensor, N> a, b;
    for (std::size_t i = 0; i < N; ++i) {
      a[i] = tensor(l[i]);
      b[i] = tensor(r[i]);
    }
    std::array<tensor, N> out = fn(a, b);
    nodes res;
    for (auto& t : out) res.push_back(t.node());
    return res;
  };
}
inline tensor flatten(const operand& x) {
  if (!x.d.n) tile::detail::trace_error("a reduction needs a tensor, got a literal", x.loc);
  return reshape(x, {tensor(x.d.n).numel()});
}
}  // namespace detail

/// Reduce `x` along `axis` with an associative combine function traced on scalars:
///   tl::reduce(x, 0, [](tl::tensor a, tl::tensor b) { return a * b; })
template <class F>
  requires std::is_invocable_r_v<tensor, F, tensor, tensor>
tensor reduce(const operand& x, int axis, F&& combine) {
  tile::detail::node* in = x.d.n;
  return tensor(tile::detail::reduce({&in, 1}, axis, detail::single_combine(combine), x.loc)[0]);
}
/// Reduce N tiles of one shape together (e.g. values and their indices).
template <std::size_t N, class F>
std::array<tensor, N> reduce(const std::array<tensor, N>& xs, int axis, F&& combine,
                             std::source_location l = std::source_location::current()) {
  detail::nodes in;
  for (auto& t : xs) in.push_back(t.node());
  auto out = tile::detail::reduce(in, axis, detail::multi_combine<N>(combine), l);
  std::array<tensor, N> res;
  for (std::size_t i = 0; i < N; ++i) res[i] = tensor(out[i]);
  return res;
}

namespace detail {
inline tensor sum_promote(const operand& x) {
  if (!x.d.n) tile::detail::trace_error("a reduction needs a tensor, got a literal", x.loc);
  tensor t(x.d.n);
  tile::dtype d = t.dtype();
  if (tile::is_int(d) && tile::bits(d) < 32)
    return cast(x, tile::is_unsigned(d) ? tile::dtype::u32 : tile::dtype::i32);
  return t;
}
}  // namespace detail

/// Sum along `axis` (integers narrower than 32 bits accumulate in i32/u32).
inline tensor sum(const operand& x, int axis) {
  return reduce(operand::of(detail::sum_promote(x), x.loc), axis, [](tensor a, tensor b) { return a + b; });
}
inline tensor sum(const operand& x) { return sum(operand::of(detail::flatten(x), x.loc), 0); }
/// Maximum / minimum along `axis` (NaN-ignoring, as tl::maximum).
inline tensor max(const operand& x, int axis) {
  return reduce(x, axis, [](tensor a, tensor b) { return maximum(a, b); });
}
inline tensor max(const operand& x) { return max(operand::of(detail::flatten(x), x.loc), 0); }
inline tensor min(const operand& x, int axis) {
  return reduce(x, axis, [](tensor a, tensor b) { return minimum(a, b); });
}
inline tensor min(const operand& x) { return min(operand::of(detail::flatten(x), x.loc), 0); }

namespace detail {
inline tensor arg_reduce(const operand& x, int axis, bool is_max) {
  if (!x.d.n) tile::detail::trace_error("a reduction needs a tensor, got a literal", x.loc);
  tensor t(x.d.n);
  int rank = t.rank();
  int ax = axis < 0 ? axis + rank : axis;
  shape_t sh = t.shape();
  if (ax < 0 || ax >= rank)
    tile::detail::trace_error(std::string(is_max ? "argmax" : "argmin") + ": axis " + std::to_string(axis) +
                                  " is out of range for a tile of rank " + std::to_string(rank), x.loc);
  // index along `axis`, broadcast to x's shape
  tensor idx = arange(0, sh[static_cast<std::size_t>(ax)], std::source_location{});
  shape_t ishape(static_cast<std::size_t>(rank), 1);
  ishape[static_cast<std::size_t>(ax)] = sh[static_cast<std::size_t>(ax)];
  idx = broadcast_to(operand::of(reshape(operand::of(idx, x.loc), ishape), x.loc), sh);
  const bool fp = tile::is_float(t.dtype());
  auto out = reduce(std::array<tensor, 2>{t, idx}, ax,
                    [is_max, fp](std::array<tensor, 2> a, std::array<tensor, 2> b) {
                      // keep a unless b is strictly better, or equal with a smaller index. A NaN
                      // is better than any number (the first NaN's index, as numpy's): one total
                      // order, so that any order of combining (a GPU's tree) gives the same index
                      tensor better = is_max ? (b[0] > a[0]) : (b[0] < a[0]);
                      tensor same = b[0] == a[0];
                      if (fp) {
                        tensor a_nan = a[0] != a[0], b_nan = b[0] != b[0];
                        better = better || (b_nan && !a_nan);
                        same = same || (b_nan && a_nan);
                      }
                      tensor tie = same && (b[1] < a[1]);
                      tensor take_b = better || tie;
                      return std::array<tensor, 2>{where(take_b, b[0], a[0]), where(take_b, b[1], a[1])};
                    },
                    std::source_location{});
  return out[1];
}
}  // namespace detail

/// Index (i32) of the maximum / minimum along `axis`; ties resolve to the smallest index, and a
/// NaN wins over every number (the first NaN's index, as numpy's argmax and argmin).
inline tensor argmax(const operand& x, int axis) { return detail::arg_reduce(x, axis, true); }
inline tensor argmin(const operand& x, int axis) { return detail::arg_reduce(x, axis, false); }

/// Inclusive scan along `axis` with an associative combine function.
template <class F>
  requires std::is_invocable_r_v<tensor, F, tensor, tensor>
tensor associative_scan(const operand& x, int axis, F&& combine, bool reverse = false) {
  tile::detail::node* in = x.d.n;
  return tensor(tile::detail::scan({&in, 1}, axis, reverse, detail::single_combine(combine), x.loc)[0]);
}
template <std::size_t N, class F>
std::array<tensor, N> associative_scan(const std::array<tensor, N>& xs, int axis, F&& combine,
                                       bool reverse = false,
                                       std::source_location l = std::source_location::current()) {
  detail::nodes in;
  for (auto& t : xs) in.push_back(t.node());
  auto out = tile::detail::scan(in, axis, reverse, detail::multi_combine<N>(combine), l);
  std::array<tensor, N> res;
  for (std::size_t i = 0; i < N; ++i) res[i] = tensor(out[i]);
  return res;
}
/// Inclusive prefix sum along `axis`.
inline tensor cumsum(const operand& x, int axis, bool reverse = false) {
  return associative_scan(operand::of(detail::sum_promote(x), x.loc), axis,
                          [](tensor a, tensor b) { return a + b; }, reverse);
}
inline tensor cumprod(const operand& x, int axis, bool reverse = false) {
  return associative_scan(x, axis, [](tensor a, tensor b) { return a * b; }, reverse);
}

}  // namespace tl

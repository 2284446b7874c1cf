// tile/tl/control.hpp — layer: language (public). Runtime control flow. Plain C++ control flow
// over trace-time values unrolls (Triton's static_range); these make loops and branches that
// run on the device:
//
//   auto acc = tl::zeros<float>({BM, BN});
//   tl::for_range(0, k_tiles, [&](tl::tensor k) { acc += tl::dot(a, b); });
//
// A tile declared outside the body and reassigned inside it becomes loop-carried: it enters the
// loop with its current value and holds the last iteration's value after it. Its shape and
// dtype may not change in the loop.
#pragma once

#include <functional>
#include <type_traits>

#include "tile/tl/types.hpp"

namespace tl {

/// for (iv = lo; iv < hi; iv += step) body(iv); `step` must be positive.
template <class F>
  requires std::is_invocable_v<F, tensor>
void for_range(const operand& lo, const operand& hi, const operand& step, F&& body) {
  tile::detail::for_range(lo.d, hi.d, step.d, [&body](tile::detail::node* iv) { body(tensor(iv)); },
                          lo.loc);
}
template <class F>
  requires std::is_invocable_v<F, tensor>
void for_range(const operand& lo, const operand& hi, F&& body) {
  for_range(lo, hi, operand::of(1, lo.loc), std::forward<F>(body));
}

/// while (cond()) body(); cond returns an i1 scalar computed from loop-carried tiles.
template <class C, class B>
  requires std::is_invocable_r_v<tensor, C> && std::is_invocable_v<B>
void while_(C&& cond, B&& body, std::source_location l = std::source_location::current()) {
  tile::detail::while_loop([&cond]() { return tensor(cond()).node(); }, [&body]() { body(); }, l);
}

/// Runtime branch on an i1 scalar. Tiles declared outside and assigned in a branch take the
/// branch's value after it (a tile assigned in only one branch keeps its old value in the other;
/// one that had no value before must be assigned in both). If both branches return a tensor,
/// if_ returns the selected one.
template <class T, class E>
  requires std::is_invocable_v<T> && std::is_invocable_v<E>
auto if_(const operand& cond, T&& then_fn, E&& else_fn) {
  using R = std::invoke_result_t<T>;
  static_assert(std::is_same_v<R, std::invoke_result_t<E>>, "both branches must return the same type");
  if constexpr (std::is_void_v<R>) {
    tile::detail::if_then_else(
        cond.d, [&]() { then_fn(); return std::vector<tile::detail::node*>{}; },
        [&]() { else_fn(); return std::vector<tile::detail::node*>{}; }, cond.loc);
  } else {
    auto r = tile::detail::if_then_else(
        cond.d, [&]() { return std::vector<tile::detail::node*>{tensor(then_fn()).node()}; },
        [&]() { return std::vector<tile::detail::node*>{tensor(else_fn()).node()}; }, cond.loc);
    return tensor(r.at(0));
  }
}
template <class T>
  requires std::is_invocable_r_v<void, T>
void if_(const operand& cond, T&& then_fn) {
  if_(cond, std::forward<T>(then_fn), [] {});
}

}  // namespace tl

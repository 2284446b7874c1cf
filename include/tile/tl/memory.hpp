// tile/tl/memory.hpp — layer: language (public). Loads, stores and atomics through pointer
// tiles, with masks (lanes whose mask is false are not accessed) and `other` values.
#pragma once

#include "tile/tl/types.hpp"

namespace tl {

using cache = tile::detail::cache_mod;
using eviction = tile::detail::eviction;

/// Load the elements `pointers` point to. Where `mask` is false nothing is read and `other`
/// (default: unspecified, zero on the reference interpreter) is returned.
inline tensor load(const operand& pointers, const operand& mask = {}, const operand& other = {},
                   cache c = cache::none, eviction e = eviction::normal, bool is_volatile = false) {
  return tensor(tile::detail::load(pointers.d, mask.d, other.d, c, e, is_volatile, pointers.loc));
}
/// Store `value` (broadcast to the pointers' shape) where `mask` is true. The value's dtype
/// must be the pointee's: cast explicitly (tl::cast<tl::f16>(x)) to narrow.
inline void store(const operand& pointers, const operand& value, const operand& mask = {},
                  cache c = cache::none, eviction e = eviction::normal) {
  tile::detail::store(pointers.d, value.d, mask.d, c, e, pointers.loc);
}

// Atomic read-modify-write operations; each returns the values memory held before.
inline tensor atomic_add(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::add, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_max(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::max, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_min(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::min, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_xchg(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::xchg, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_and(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::bit_and, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_or(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::bit_or, p.d, v.d, mask.d, p.loc));
}
inline tensor atomic_xor(const operand& p, const operand& v, const operand& mask = {}) {
  return tensor(tile::detail::atomic_rmw(tile::detail::atomic_kind::bit_xor, p.d, v.d, mask.d, p.loc));
}
/// Compare-and-swap: where *p == cmp, store v; returns the old values.
inline tensor atomic_cas(const operand& p, const operand& cmp, const operand& v) {
  return tensor(tile::detail::atomic_cas(p.d, cmp.d, v.d, p.loc));
}

}  // namespace tl

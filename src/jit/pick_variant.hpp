// src/jit/pick_variant.hpp — layer: jit. The occupancy retry of every backend: a kernel built
// once, and where the first build's measurements say another lowering could hold more blocks on
// an SM, built again and kept if it does.
#pragma once

#include <optional>
#include <utility>

#include "tile/core/error.hpp"

namespace tile::jit {

/// `first` (a build of the default lowering), or the build `other()` makes when `worth(first)`
/// says another lowering may do better and `better(first, built)` finds that it does. `other`
/// returns nullopt when it has nothing to offer; a tile::error from it leaves `first` standing
/// (a second try only: an error that is the device's, not the code's, comes back at the launch).
template <class V, class Worth, class Other, class Better>
V pick_variant(V first, Worth&& worth, Other&& other, Better&& better) {
  if (!worth(first)) return first;
  try {
    std::optional<V> second = other();
    if (second && better(first, *second)) return std::move(*second);
  } catch (const tile::error&) {
  }
  return first;
}

}  // namespace tile::jit

// src/aot/load_module.hpp — layer: aot (no LLVM). A catalog entry made into the module a driver
// launches: a cubin or PTX loaded by the CUDA driver, a CPU kernel linked into the program.
#pragma once

#include <memory>

#include "aot/catalog.hpp"
#include "drivers/driver.hpp"

namespace tile::aot {

/// `e` (from archive `a`) for `drv`, the traced kernel being `fn`; a tile::error naming the
/// kernel when the driver refuses it or the archive lacks the CPU kernel's code.
std::unique_ptr<drivers::module> load_module(const entry& e, const archive& a, const ir::Function& fn,
                                             drivers::driver& drv);

}  // namespace tile::aot

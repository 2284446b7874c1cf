// src/support/build_id.hpp — layer: support. Which build of tile this process runs: the version
// the disk caches key their entries with (compiled kernels, autotuning choices).
#pragma once

#include <string>

namespace tile::support {

/// TILE_VERSION plus the identity of the binary holding this code (libtile.so, or the executable
/// tile is linked into): its size and modification time, read once per process. A rebuilt
/// compiler — same version string, other code — thus never reads the kernels an older one
/// cached; an unchanged library keeps hitting them. "<version>+<size>.<mtime ns>", or the
/// version alone where the binary cannot be found.
const std::string& build_id();

}  // namespace tile::support

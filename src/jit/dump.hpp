// src/jit/dump.hpp — layer: jit. TILE_DUMP_DIR: every kernel compiled writes its artifacts as
// <dir>/<kernel>-<digest>.<ext> (.tir tile IR, .ll LLVM IR after O3, .s assembly; later .ptx,
// .cubin, .hsaco), so two specializations of one kernel never overwrite each other.
#pragma once

#include <string>
#include <string_view>

namespace tile::jit {

/// The dump directory ("" when TILE_DUMP_DIR is unset).
std::string dump_dir();
/// Writes one artifact; a failure to write is a warning on stderr, never an error.
void dump_artifact(const std::string& kernel, const std::string& digest, std::string_view ext, std::string_view text);

}  // namespace tile::jit

// src/aot/record.hpp — layer: aot (no LLVM). TILE_AOT_RECORD=<file>: the specializations a run of
// the program traces are recorded and, at exit, compiled ahead of time for TILE_AOT_TARGETS
// (default: cpu) into <file> (an object when it ends in .o, else an archive file), as if a build
// step had listed them. The program's own run is the listing: its tests, a demo level, a replay.
// Writing needs the compilers (libtile: aot/build.cpp registers the writer at start-up);
// libtile_rt records nothing and says so once.
#pragma once

#include <string>
#include <vector>

#include "tile/runtime/kernel.hpp"

namespace tile::aot {

/// Whether TILE_AOT_RECORD is set (read once).
bool recording();
/// Keeps a traced specialization for the write at exit (the first of each lookup key).
void record(detail::traced_launch launch);

/// What writes the recorded launches: `path`, the targets. Returns the line to print, or throws.
using record_writer = std::string (*)(const std::vector<detail::traced_launch>& launches, const std::string& path,
                                      const std::vector<std::string>& targets);
void set_record_writer(record_writer w);

}  // namespace tile::aot

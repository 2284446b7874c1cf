// src/aot/catalog.hpp — layer: aot (after drivers, before runtime; no LLVM). Kernels compiled
// ahead of time: the archive format a build step writes (aot/build.cpp) and the process's
// catalog of archives a launch looks its specialization up in before compiling it
// (runtime/kernel.cpp). With the full library a miss compiles as before; with libtile_rt, which
// has no compiler, a miss is an error naming the specialization and the nearest ones there are.
//
// An archive, as bytes (the blob an object file embeds, or a file loaded with tile::aot::load):
//   "TILE-AOT 1\n"  "tile <version>\n"  "name <bytes>\n<name>\n"  "entries <n>\n"
//   n times: "<bytes>\n<key>" "<bytes>\n<spec>" "<bytes>\n<target>"
//            "<bytes>\n<jit::artifact as serialize() writes it>"
//   "choices <m>\n"
//   m times: "<bytes>\n<kernel>" "<bytes>\n<tuning>" "<bytes>\n<target>" "<bytes>\n<config>"
//   "xxh64 <16 hex digits of everything before this line>\n"
// A CPU entry's artifact (kind "cpu") holds no code: its `entry` names a function linked into
// the program with the archive (the object registers the symbols' addresses beside the blob).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/ir.hpp"
#include "jit/artifact.hpp"

/// What an archive's object file calls at start-up (an .init_array constructor the builder
/// writes): `blob` is the archive, `cpu` the addresses of its CPU kernels. The object is refused
/// (and the reason kept for the first launch that misses) when the blob does not parse.
extern "C" {
struct tile_aot_cpu_symbol {
  const char* entry;                    // the artifact's entry name
  void* fn;                             // the kernel (drivers/cpu/cpu_module.hpp's ABI)
  const std::int64_t* scratch_bytes;    // its per-thread scratch memory
};
void tile_aot_register(const char* blob, std::uint64_t bytes, const tile_aot_cpu_symbol* cpu, std::uint64_t n_cpu,
                       const char* origin);
}

namespace tile::aot {

inline constexpr std::string_view kMagic = "TILE-AOT 1\n";

/// One specialization of one kernel, compiled for one target.
struct entry {
  std::string key;     // lookup_key() of the traced kernel
  std::string spec;    // the specialization as messages name it (spec_text in runtime/kernel.cpp)
  std::string target;  // "sm_90a", "sm_80", "cpu-x86-64-v3" (device_targets.hpp)
  jit::artifact code;  // kind "cubin", "ptx" or "cpu"
};

/// An autotuned kernel's choice, made when the archive was built (tile::aot::builder::tune).
struct choice {
  std::string kernel;  // the kernel's name
  std::string tuning;  // what the choice depends on: the configs, the key's values, the launch's metas
  std::string target;  // the device it was tuned on, as its best target names it ("sm_90a", "cpu-x86-64-v4")
  std::string config;  // the config chosen (tile::config::str())
};

struct archive {
  std::string name;          // what the build called it
  std::string origin;        // the file it was read from, or the object's name
  std::string tile_version;  // the library that built it
  std::vector<entry> entries;
  std::vector<choice> choices;
  std::vector<tile_aot_cpu_symbol> cpu;  // linked CPU kernels (objects only)
};

/// The archive as bytes (cpu symbols are not part of it).
std::string serialize(const archive& a);
/// An archive from bytes, or why they are not one this library loads: not an archive,
/// truncated, corrupt (checksum), another format or tile version.
std::variant<archive, std::string> parse(std::string_view bytes);

/// What a compiled specialization is looked up by: the kernel's name, the structural hash of
/// its traced IR (the arguments' classes and the meta-parameters' values are in it) and the
/// launch options the IR does not carry.
std::string lookup_key(const ir::Function& traced);

/// The process's catalog (thread-safe; archives are never removed).
void add(archive a);
/// An archive that could not be used: kept, and named by every miss.
void refuse(std::string origin, std::string reason);
/// The entry for `key` on the first of `targets` (best first) any archive has, or null.
const entry* find(std::string_view key, std::span<const std::string> targets, const archive** from = nullptr);
/// For a miss: the kernel's specializations in the catalog nearest `spec` (most fields equal
/// first; up to five, with their targets), and archives refused, as lines of a message.
std::string nearest(std::string_view kernel, std::string_view spec);
/// The config an archive's build chose for `kernel` under `tuning` on a device whose best target
/// is `target`, or null.
const std::string* find_choice(std::string_view kernel, std::string_view tuning, std::string_view target);
/// Whether any archive is registered (a launch with none skips the lookup).
bool any();
/// Whether an archive has an entry for one of `targets`.
bool has_target(std::span<const std::string> targets);
/// Every entry, "kernel  spec  target" a line (tile::aot::catalog_text).
std::string describe();

}  // namespace tile::aot

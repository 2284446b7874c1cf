// src/jit/artifact.hpp — layer: jit. The one versioned format of a compiled kernel as bytes:
// every backend's disk-cache entries (PTX, cubins, CPU objects) and what an ahead-of-time build
// will ship. One header line of space-separated fields, then the code:
//   tile-artifact 1 kind=ptx kernel=add entry=tile_add arch=sm_90a warps=4 shared=0
//     params=ptr<f32>,ptr<f32>,i32 key=<digest> expbatch=8 widest=8 [tmaps=<map>;<map>…] [ws=1|2]\n<code>
// Text fields are escaped (%XX for bytes outside [A-Za-z0-9_.:<>,/+-]). A tensor map reads
// elem:base:rows:cols:stride:box_rows:box_cols:swizzle, each source aI (argument I) or cV
// (the constant V). Anything else — another version, a missing or malformed field — does not
// parse, and the caller compiles again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/cuda/cuda_driver.hpp"  // tensor_map_spec

namespace tile::jit {

inline constexpr int kArtifactVersion = 1;

struct artifact {
  std::string kind;                // "ptx", "cubin", "o"
  std::string kernel;              // the user's kernel name
  std::string entry;               // the code's entry symbol
  std::string arch;                // "sm_90a", the host CPU's key
  int num_warps = 0;               // threads a block / 32 (GPU)
  std::uint32_t shared_bytes = 0;  // dynamic shared memory a block (GPU)
  std::vector<std::string> params;  // the runtime arguments' types, in order ("ptr<f32>", "i32")
  std::string key;                 // the compile cache key's digest (the specialization)
  int exp_batch = 1;               // the lowering's exp batch (targets::nvptx::lowering_options)
  int widest_exp_batch = 0;        // the widest exp batch in the code (0: none)
  std::vector<drivers::tensor_map_spec> tensor_maps;  // hidden TMA parameters the launch encodes
  /// Warp specialization (GPU, schedule/warp_specialize.hpp): 0 the kernel cannot run it, 1 it
  /// could (another variant), 2 the code runs it.
  int warp_specialize = 0;
  std::string code;                // PTX text, cubin or object bytes
};

/// The header line and the code.
std::string serialize(const artifact& a);
/// What serialize wrote (this version), else nullopt.
std::optional<artifact> parse_artifact(std::string_view bytes);

}  // namespace tile::jit

// src/targets/nvptx/nvptx_arch.hpp — layer: targets (nvptx). Which NVIDIA GPU generation code is
// compiled for: "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a" (TILE_TARGET's spelling, ptxas's
// -arch spelling), with the PTX ISA version LLVM 19 emits for it; and the lowering's own choices
// for that code (lowering_options).
#pragma once

#include <string>
#include <string_view>

namespace tile::targets::nvptx {

struct arch {
  int sm = 90;         // compute capability * 10 + minor: 80, 86, 89, 90
  bool accel = false;  // the "a" variants (sm_90a: wgmma, setmaxnreg)

  std::string name() const;  // "sm_90a"
  int ptx_version() const;   // 80 for sm_90a (PTX ISA 8.0), 78 for the others
  bool operator==(const arch&) const = default;
};

/// Choices of the lowering that trade speed within a thread for registers: compile_cuda
/// compiles a kernel again with `lean(cap)` where its registers limit the blocks an SM holds.
struct lowering_options {
  /// exp over a thread's registers is computed in batches of this many elements, each behind
  /// its own range check (batch_fn): ptxas interleaves a batch's temporaries, so a smaller batch
  /// takes fewer registers and a few more instructions.
  int exp_batch = 16;
  /// The kernel's `.maxnreg` (0: none): ptxas fits it in this many registers a thread, where
  /// one more block an SM needs them (the retry keeps the build only if it spills no more).
  int max_registers = 0;
  /// The kernel runs warp-specialized where it qualifies (schedule/warp_specialize.hpp): the
  /// variant compile_cuda tries where the plain build holds one block an SM (or the first build,
  /// warp_specialize_by_shared).
  bool warp_specialize = false;
  /// Warp-specialized also where the kernel qualifies and its plain plan's rings alone keep a
  /// second block off the SM (the default's first build: the plain build would hold one block,
  /// so it is not made; compile_cuda makes it only where this one spills). The lowered kernel's
  /// options say which it became (warp_specialize), with this flag cleared.
  bool warp_specialize_by_shared = false;
  static lowering_options lean(int max_registers = 0) { return {.exp_batch = 2, .max_registers = max_registers}; }
  bool operator==(const lowering_options&) const = default;
};

/// Parses "sm_90a" (also "90a", "sm90a"). Throws tile::error naming the supported list.
arch parse_arch(std::string_view s);
/// The arch of a device with compute capability major.minor (9.0 -> sm_90a: tile uses the
/// accelerated features where the device has them).
arch arch_for_device(int cc_major, int cc_minor);

}  // namespace tile::targets::nvptx

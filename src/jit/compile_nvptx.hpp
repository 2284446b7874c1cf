// src/jit/compile_nvptx.hpp — layer: jit. The NVIDIA compile pipeline:
//   tile IR -> layouts (src/layout) -> LLVM IR (codegen/gpu + the nvptx target) -> O3 -> PTX
// with the compile cache in front (jit/compile_cache.hpp; the key holds the arch and num_warps),
// and the TILE_DUMP_DIR artifacts (.tir, .ll, .ptx). Loading PTX on a device (cubin cached on
// disk) is compile_cuda's (compile_cuda.cpp); compile-only (TILE_BACKEND=null) stops at PTX (and
// ptxas where present: ptxas.cpp).
#pragma once

#include <optional>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_driver.hpp"
#include "drivers/driver.hpp"
#include "ir/ir.hpp"
#include "jit/artifact.hpp"
#include "jit/disk_cache.hpp"
#include "jit/occupancy.hpp"
#include "targets/nvptx/nvptx_arch.hpp"

namespace tile::codegen {
class Lowering;
}
namespace tile::targets::nvptx {
class NvptxTarget;
}
namespace tile::drivers {
class cuda_driver;
}

namespace tile::jit {

/// A kernel compiled to PTX.
struct ptx_kernel {
  std::string ptx;                 // the PTX module's text
  std::string entry;               // its .entry symbol
  std::string kernel;              // the user's kernel name
  std::string arch;                // "sm_90a"
  int num_warps = 4;               // launch with 32 * num_warps threads per block
  std::uint32_t shared_bytes = 0;  // dynamic shared memory per block
  std::string digest;              // the compile cache key's digest (for artifact names)
  std::vector<drivers::tensor_map_spec> tensor_maps;  // hidden parameters the launch encodes (TMA)
  targets::nvptx::lowering_options options;            // what it was lowered with
  int widest_exp_batch = 0;        // the largest exp batch in its code (0: none; lowering_options)
  bool warp_specializable = false;  // it qualifies for warp specialization (options.warp_specialize: it runs it)
  std::vector<std::string> params;  // the runtime arguments' types
};

/// "tile_<kernel name reduced to [A-Za-z0-9_]>": the entry symbol, readable in profilers.
std::string entry_name(const std::string& kernel);
/// The compile cache key of `fn`'s PTX for `a` (a cubin's adds the device and driver).
cache_key ptx_key(const ir::Function& fn, const targets::nvptx::arch& a);
/// `k` as an artifact of `kind` with `code` (its PTX, or the cubin assembled from it), and back
/// (the PTX text only from a "ptx" artifact).
artifact to_artifact(const ptx_kernel& k, std::string kind, std::string code);
std::shared_ptr<ptx_kernel> from_artifact(const artifact& a);

/// Compiles `fn` for `a` (through the caches; a dump or TILE_TIME_PASSES bypasses lookups).
/// Throws tile::error naming the op and the user's file:line for what cannot be lowered.
std::shared_ptr<const ptx_kernel> compile_ptx(const ir::Function& fn, const targets::nvptx::arch& a,
                                              const targets::nvptx::lowering_options& options = {});

/// The options to compile `k` (assembled to use `first` a block) again with, or none:
/// lowering_options::lean(cap) where its registers, not its threads or shared memory, limit its
/// blocks an SM, another block would need at most 16 fewer (cap: what that block allows a
/// thread, the kernel's .maxnreg), and either the lean lowering changes its code (an exp batch
/// wider than lean()'s) or it holds 4 blocks an SM or fewer. Softmax of 8192 columns on 16 warps: 47 registers, 2 blocks
/// of 512 threads an SM where 4 fit by threads; lean, 40 registers and 3 blocks (H100).
std::optional<targets::nvptx::lowering_options> lean_variant(const sm_limits& sm, const ptx_kernel& k, const block_use& first);
/// The options to compile `k` (its plain build using `first` a block) again with warp-specialized,
/// or none: where it qualifies (ptx_kernel::warp_specializable) and the plain build holds one
/// block an SM (its registers or shared memory keep a second off: the warps a producer adds and
/// the register cap it needs cost nothing then; where two blocks fit, they hide the copies'
/// latency as well). The launch's warp_specialize = false (or TILE_WARP_SPECIALIZE=0): never;
/// = true (=1): the first build is (first_options).
std::optional<targets::nvptx::lowering_options> warp_specialized_variant(const sm_limits& sm, const ir::Function& fn, const ptx_kernel& k,
                                                                         const block_use& first);
/// The options of `fn`'s first build: warp-specialized where the launch says warp_specialize =
/// true (or TILE_WARP_SPECIALIZE=1 where it says nothing); where neither says, warp-specialized
/// where the kernel qualifies and its plain plan's rings alone hold one block an SM
/// (lowering_options::warp_specialize_by_shared), else the defaults.
targets::nvptx::lowering_options first_options(const ir::Function& fn);
/// The options of the plain build of `fn`, or none: where its first build `k` became
/// warp-specialized by the compiler's choice (by shared memory) and spills (`spill_bytes`, local
/// memory a thread): kept where it spills less.
std::optional<targets::nvptx::lowering_options> plain_variant(const ir::Function& fn, const ptx_kernel& k, std::int64_t spill_bytes);
/// "lean" for a kernel lowered with lowering_options::lean(cap), "warp-specialized" for one
/// lowered with warp_specialize, else "".
std::string variant_name(const ptx_kernel& k);

/// The PTX of a kernel `a` runs with `num_warps` warps whose body is what `body` emits through
/// the NVPTX target's hooks (the target's own tests: its core and engines without the lowering).
std::string hooks_ptx(const targets::nvptx::arch& a, int num_warps,
                      const std::function<void(codegen::Lowering&, const targets::nvptx::NvptxTarget&)>& body);

/// The PTX of `gpu_level`, a kernel at the GPU level of the IR (as ir::parse reads a
/// TILE_DUMP_IR dump), with no loop left to pipeline: its buffers placed and its barriers
/// inserted (allocate_shared, insert_barriers), then lowered op by op (the emitter's own tests).
std::string gpu_ir_ptx(const ir::Function& gpu_level, const targets::nvptx::arch& a);

/// Compiles `fn` for the driver's device and loads it: the cubin from the disk cache when a
/// previous process left one, else PTX through ptxas or the driver's JIT (the cubin then
/// stored). Where the kernel's registers limit how many of its blocks an SM holds and a
/// register-lean lowering could change that (lowering_options::lean), that is compiled too and
/// kept if more blocks fit without more spills (TILE_OCCUPANCY_RETRY=0 turns this off); the
/// module's `variant` says which.
std::unique_ptr<drivers::module> compile_cuda(std::shared_ptr<const ir::Function> fn, drivers::cuda_driver& drv);

}  // namespace tile::jit

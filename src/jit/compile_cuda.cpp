// src/jit/compile_cuda.cpp — layer: jit. An NVIDIA kernel compiled for the driver's device and
// loaded (see compile_nvptx.hpp): the target policy (the device's arch, TILE_TARGET), the cubin
// on disk (key: the PTX's plus the device, the driver and the assembler), the assembler chain
// (ptxas, else the driver's JIT linker, else the driver loading PTX) and the occupancy retry
// (jit/pick_variant.hpp).
#include <chrono>
#include <optional>

#include "drivers/cuda/cuda_driver.hpp"
#include "jit/artifact.hpp"
#include "jit/carveout.hpp"
#include "jit/compile_cache.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/dump.hpp"
#include "jit/occupancy.hpp"
#include "jit/pick_variant.hpp"
#include "jit/ptxas.hpp"
#include "support/env.hpp"

namespace tile::jit {

namespace {
/// A kernel's code for the device, loaded: the cubin it came from (empty where the driver loaded
/// the PTX itself: nothing to cache).
struct loaded {
  std::unique_ptr<drivers::cuda_module> mod;
  std::string cubin;
};

/// `k` assembled for the driver's device and loaded with `src`'s settings: by ptxas where the
/// machine has one (TILE_PTXAS=0 turns it off), which compiles the kernel as a whole program,
/// where the driver's linker (cuLink) compiles PTX as relocatable code, whose calls (the slow
/// paths of div.rn and sqrt.rn) follow the ABI and cost registers: 72 instead of 64 for softmax
/// at 16384 columns, 56 instead of 40 for layer norm at 4096 (H100, driver 580), so fewer blocks
/// fit on an SM. A cubin the driver then refuses (a ptxas newer than the driver) falls back to
/// cuLink, and where there is no JIT linker the driver loads the PTX itself.
loaded assemble_and_load(const ptx_kernel& k, drivers::cuda_module_source src, drivers::cuda_driver& drv,
                         const targets::nvptx::arch& a) {
  src.shared_bytes = k.shared_bytes;
  src.tensor_maps = k.tensor_maps;
  src.num_warps = k.num_warps;  // (a warp-specialized kernel's producer warps too)
  src.fmt = drivers::cuda_module_source::format::cubin;
  float jit_ms = 0;
  if (const std::string px = find_ptxas(); !px.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_ptxas(px, k.ptx, a.name(), k.kernel);
    if (r.ok) {
      jit_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
      src.image = std::move(r.cubin);
      try {
        loaded out{drv.load_module(src), src.image};
        out.mod->jit_ms = jit_ms;
        return out;
      } catch (const tile::error&) {
        // the driver's own JIT instead; a failure that is not the image's (a shared-memory need
        // over the limit, a context lost to a fault) comes back from load_module below, as it is
      }
    }
  }
  try {
    src.image = drv.ptx_to_cubin(k.ptx, k.kernel, &jit_ms);
  } catch (const tile::error&) {
    src.image.clear();  // no JIT linker: load the PTX itself (the driver JITs it), nothing cached
  }
  if (src.image.empty()) {
    src.fmt = drivers::cuda_module_source::format::ptx;
    src.image = k.ptx;
    return {drv.load_module(src), {}};
  }
  loaded out{drv.load_module(src), src.image};
  out.mod->jit_ms = jit_ms;  // the JIT ran in cuLink
  return out;
}

sm_limits limits_of(const drivers::cuda_device_info& info) {
  return {.max_threads = info.max_threads_per_sm,
          .max_registers = info.max_registers_per_sm,
          .max_blocks = info.max_blocks_per_sm,
          .shared_bytes = info.max_shared_per_sm,
          .reserved_shared_per_block = info.reserved_shared_per_block};
}

block_use use_of(const drivers::cuda_module& m) {
  return {.threads = 32 * m.num_warps,
          .registers = m.num_regs,
          .shared_bytes = static_cast<std::int64_t>(m.shared_bytes) + m.static_shared_bytes};
}

}  // namespace

std::unique_ptr<drivers::module> compile_cuda(std::shared_ptr<const ir::Function> fn, drivers::cuda_driver& drv) {
  const auto& info = drv.info();
  targets::nvptx::arch a = targets::nvptx::arch_for_device(info.cc_major, info.cc_minor);
  // TILE_TARGET: an older arch's code on this device (sm_80's mma.sync and cp.async on an H100)
  if (const std::string t = env::get("TILE_TARGET"); !t.empty()) {
    const targets::nvptx::arch want = targets::nvptx::parse_arch(t);
    const int cc = info.cc_major * 10 + info.cc_minor;
    if (want.sm > cc || (want.accel && cc != 90))
      throw tile::error("kernel '" + fn->name + "': TILE_TARGET=" + t + " does not run on this device (" + info.arch() +
                            "): name this device's arch or an older one",
                        fn->loc);
    a = want;
  }
  const cache_policy policy = cache_policy::from_env();
  const bool retry = env::enabled("TILE_OCCUPANCY_RETRY");
  // the cubin's key: the PTX's, plus the device and driver that compiled it
  cache_key key = ptx_key(*fn, a);
  key.target += ";" + info.arch() + ";driver" + std::to_string(info.driver_version);
  // which assembler made the cubin (TILE_PTXAS=0 picks the driver's: another cubin)
  key.target += find_ptxas().empty() ? ";culink" : ";ptxas";
  if (!retry) key.target += ";noretry";  // the cubin kept may be the lean variant's
  if (const std::string ws = env::get("TILE_WARP_SPECIALIZE"); !ws.empty()) key.target += ";ws" + ws;  // (or the warp-specialized one's)
  drivers::cuda_module_source src;
  src.entry = entry_name(fn->name);
  src.kernel = fn->name;
  src.num_warps = fn->num_warps;
  src.smem_carveout = smem_carveout(*fn);
  // cubins: on disk only (each process loads its module once)
  if (policy.lookup) {
    if (auto hit = shared_disk_cache().load(key, "cubin")) {
      auto art = parse_artifact(*hit);
      if (art && art->kind == "cubin" && art->kernel == fn->name && art->entry == src.entry) {
        src.fmt = drivers::cuda_module_source::format::cubin;
        src.image = std::move(art->code);
        src.shared_bytes = art->shared_bytes;
        src.tensor_maps = art->tensor_maps;
        if (art->num_warps > 0) src.num_warps = art->num_warps;
        count(stat::disk_hit);
        auto mod = drv.load_module(src);
        mod->variant = variant_name(*from_artifact(*art));
        return mod;
      }
    }
  }
  // the occupancy retry: a register-lean lowering where registers limit the blocks an SM holds
  const sm_limits sm = limits_of(info);
  struct build {
    std::shared_ptr<const ptx_kernel> k;
    loaded code;
  };
  std::shared_ptr<const ptx_kernel> first_k = compile_ptx(*fn, a, first_options(*fn));
  // warp-specialized by the compiler's choice (the plain plan's shared memory) and spilling: the
  // plain build kept where it spills less
  std::optional<targets::nvptx::lowering_options> plain_options;
  build first = pick_variant(
      build{first_k, assemble_and_load(*first_k, src, drv, a)},
      [&](const build& b) { return (plain_options = plain_variant(*fn, *b.k, b.code.mod->local_bytes)).has_value(); },
      [&]() -> std::optional<build> {
        auto plain = compile_ptx(*fn, a, *plain_options);
        return build{plain, assemble_and_load(*plain, src, drv, a)};
      },
      [&](const build& b, const build& o) { return o.code.mod->local_bytes < b.code.mod->local_bytes; });
  std::optional<targets::nvptx::lowering_options> lean_options;
  build best = pick_variant(
      std::move(first),
      [&](const build& b) { return retry && (lean_options = lean_variant(sm, *b.k, use_of(*b.code.mod))).has_value(); },
      [&]() -> std::optional<build> {
        auto lean = compile_ptx(*fn, a, *lean_options);
        return build{lean, assemble_and_load(*lean, src, drv, a)};
      },
      [&](const build& b, const build& o) {
        return holds_more(sm, use_of(*b.code.mod), b.code.mod->local_bytes, use_of(*o.code.mod), o.code.mod->local_bytes);
      });
  // warp specialization, where the kernel qualifies and the build holds one block an SM: kept
  // unless it spills more
  std::optional<targets::nvptx::lowering_options> ws_options;
  best = pick_variant(
      std::move(best),
      [&](const build& b) {
        // (not where the first build already was: the plain one replaced it, spilling less)
        return !first_k->options.warp_specialize && (ws_options = warp_specialized_variant(sm, *fn, *b.k, use_of(*b.code.mod))).has_value();
      },
      [&]() -> std::optional<build> {
        auto w = compile_ptx(*fn, a, *ws_options);
        return build{w, assemble_and_load(*w, src, drv, a)};
      },
      [&](const build& b, const build& o) { return o.code.mod->local_bytes <= b.code.mod->local_bytes; });
  const std::shared_ptr<const ptx_kernel>& k = best.k;
  best.code.mod->variant = variant_name(*k);
  if (!best.code.cubin.empty()) {
    if (policy.store) shared_disk_cache().store(key, serialize(to_artifact(*k, "cubin", best.code.cubin)), "cubin");
    if (!dump_dir().empty()) dump_artifact(fn->name, k->digest, "cubin", best.code.cubin);
  }
  return std::move(best.code.mod);
}

}  // namespace tile::jit

// src/aot/load_module.cpp — layer: aot. See load_module.hpp.
#include "aot/load_module.hpp"

#include <cstring>

#include "drivers/cpu/cpu_module.hpp"
#include "drivers/cuda/cuda_driver.hpp"
#include "jit/carveout.hpp"

namespace tile::aot {

std::unique_ptr<drivers::module> load_module(const entry& e, const archive& a, const ir::Function& fn,
                                             drivers::driver& drv) {
  const jit::artifact& c = e.code;
  if (c.kind == "cpu") {
    for (const tile_aot_cpu_symbol& s : a.cpu)
      if (c.entry == s.entry) {
        auto m = std::make_unique<drivers::cpu_module>();
        m->kernel = fn.name;
        m->fn = reinterpret_cast<drivers::cpu_kernel_fn>(s.fn);
        m->scratch_bytes = static_cast<std::uint64_t>(*s.scratch_bytes);
        m->sites = drivers::collect_cpu_sites(fn);
        return m;
      }
    throw tile::error("the prebuilt archive " + a.origin + " lists the CPU kernel " + c.entry +
                          " but its object does not carry it",
                      {}, fn.name);
  }
  auto* cuda = dynamic_cast<drivers::cuda_driver*>(&drv);  // once a specialization: not a launch
  if (!cuda || (c.kind != "cubin" && c.kind != "ptx"))
    throw tile::error("internal error: a prebuilt " + c.kind + " kernel for the " + drv.name() + " backend", {}, fn.name);
  drivers::cuda_module_source src;
  src.fmt = c.kind == "cubin" ? drivers::cuda_module_source::format::cubin : drivers::cuda_module_source::format::ptx;
  src.image = c.code;
  src.entry = c.entry;
  src.kernel = fn.name;
  src.num_warps = c.num_warps;
  src.shared_bytes = c.shared_bytes;
  src.tensor_maps = c.tensor_maps;
  src.smem_carveout = jit::smem_carveout(fn);  // TILE_SMEM_CARVEOUT where the program runs
  auto m = cuda->load_module(src);
  return m;
}

}  // namespace tile::aot

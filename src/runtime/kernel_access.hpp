// src/runtime/kernel_access.hpp — layer: runtime (internal). What is behind a device and a
// kernel launch, for tools that drive a backend's driver themselves: the benches' raw-launch
// reference (bench/gpu_launch_overhead.cpp launches the very CUfunction tile launches with
// cuLaunchKernel) and the driver JIT's timings (bench/gpu_compile_time.cpp).
//
//   auto mod = tile::detail::compiled_module(add, {x, y, out, n}, {{"BLOCK", 1024}});
//   auto* cu = dynamic_cast<const tile::drivers::cuda_module*>(mod.get());   // cu->fn
//   auto* drv = dynamic_cast<tile::drivers::cuda_driver*>(&tile::detail::driver_of(dev));
#pragma once

#include <memory>
#include <vector>

#include "drivers/driver.hpp"
#include "runtime/device_impl.hpp"
#include "tile/runtime/kernel.hpp"

namespace tile::detail {

/// The driver behind `dev` (drivers::cuda_driver for the cuda backend).
inline drivers::driver& driver_of(const tile::device& dev) { return dev.impl()->driver(); }

/// The compiled module `k` launches with these arguments and meta-parameters (checked at run
/// time as kernel_t::launch checks them), traced and compiled first if need be. It stays loaded
/// while the pointer lives.
inline std::shared_ptr<const drivers::module> compiled_module(const kernel_core& k, const std::vector<tile::arg>& args,
                                                              const std::vector<tile::named>& metas = {},
                                                              std::source_location l = std::source_location::current()) {
  std::vector<launch_arg> rt;
  for (const auto& a : args) rt.push_back(a.value);
  std::vector<meta_value> mv;
  for (const auto& m : metas) {
    mv.push_back(m.value);
    mv.back().name = m.name;
  }
  return k.module(rt, mv, l);
}
template <class F>
std::shared_ptr<const drivers::module> compiled_module(const kernel_t<F>& k, const std::vector<tile::arg>& args,
                                                       const std::vector<tile::named>& metas = {},
                                                       std::source_location l = std::source_location::current()) {
  return compiled_module(k.core(), args, metas, l);
}

}  // namespace tile::detail

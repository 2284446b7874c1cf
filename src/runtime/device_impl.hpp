// src/runtime/device_impl.hpp — layer: runtime. What a tile::device is: a backend's driver and
// the function that compiles tile IR for it. Every compile of every backend passes through
// compile(), which is where TILE_PTXAS_CHECK checks it (device.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"
#include "tile/runtime/device.hpp"

namespace tile::detail {

class device_impl {
 public:
  using compile_fn = std::function<std::unique_ptr<drivers::module>(std::shared_ptr<const ir::Function>)>;
  /// `computes`: false for a compile-only backend (null), whose launches run nothing.
  device_impl(std::string name, std::string backend, std::unique_ptr<drivers::driver> drv, compile_fn compile,
              bool computes = true)
      : name_(std::move(name)), backend_(std::move(backend)), drv_(std::move(drv)), compile_(std::move(compile)),
        computes_(computes) {}

  const std::string& name() const { return name_; }
  const std::string& backend() const { return backend_; }
  drivers::driver& driver() const { return *drv_; }
  bool computes() const { return computes_; }
  /// The ahead-of-time archives' targets this device runs, best first (aot/device_targets.hpp);
  /// a launch looks its kernel up there before compiling it.
  const std::vector<std::string>& aot_targets() const { return aot_targets_; }
  /// False where this library has no compiler for the device (libtile_rt): a launch whose kernel
  /// is not prebuilt is an error naming the specialization.
  bool compiles() const { return compiles_; }
  device_impl& with_aot(std::vector<std::string> targets, bool compiles) {
    aot_targets_ = std::move(targets);
    compiles_ = compiles;
    return *this;
  }
  /// Compiles `fn` for this backend; under TILE_PTXAS_CHECK=<arch> also for that NVIDIA arch,
  /// assembled by ptxas (a failure of either is a tile::error).
  std::unique_ptr<drivers::module> compile(std::shared_ptr<const ir::Function> fn) const;

 private:
  std::string name_;
  std::string backend_;
  std::unique_ptr<drivers::driver> drv_;
  compile_fn compile_;
  bool computes_ = true;
  std::vector<std::string> aot_targets_;
  bool compiles_ = true;
};

}  // namespace tile::detail

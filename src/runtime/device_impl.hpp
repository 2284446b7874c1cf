// src/runtime/device_impl.hpp — layer: runtime. What a tile::device is: a backend's driver and
// the function that compiles tile IR for it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"
#include "tile/runtime/device.hpp"

namespace tile::detail {

class device_impl {
 public:
  using compile_fn = std::function<std::unique_ptr<drivers::module>(std::shared_ptr<const ir::Function>)>;
  device_impl(std::string name, std::string backend, std::unique_ptr<drivers::driver> drv, compile_fn compile)
      : name_(std::move(name)), backend_(std::move(backend)), drv_(std::move(drv)), compile_(std::move(compile)) {}

  const std::string& name() const { return name_; }
  const std::string& backend() const { return backend_; }
  drivers::driver& driver() const { return *drv_; }
  std::unique_ptr<drivers::module> compile(std::shared_ptr<const ir::Function> fn) const { return compile_(std::move(fn)); }

 private:
  std::string name_;
  std::string backend_;
  std::unique_ptr<drivers::driver> drv_;
  compile_fn compile_;
};

}  // namespace tile::detail

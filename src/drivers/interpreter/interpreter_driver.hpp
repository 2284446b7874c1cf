// src/drivers/interpreter/interpreter_driver.hpp — layer: drivers (interpreter). Host memory
// as device memory, and launches that run the interpreter on a kernel's tile IR.
#pragma once

#include <memory>

#include "drivers/driver.hpp"
#include "ir/ir.hpp"

namespace tile::drivers {

std::unique_ptr<driver> make_interpreter_driver();
/// "Compiling" for the interpreter prepares the IR for execution.
std::unique_ptr<module> make_interpreter_module(std::shared_ptr<const ir::Function> fn);

}  // namespace tile::drivers

// src/jit/orc.hpp — layer: jit. The process's ORC LLJIT instance for host code: loads a
// compiled object (fresh or from the cache) into a JITDylib of its own, resolving the C library
// and tile's run-time services (drivers/cpu/cpu_module.hpp), and returns its entry point.
#pragma once

#include <memory>
#include <string>

namespace tile::jit {

struct loaded_code {
  void* entry = nullptr;
  void* data = nullptr;  // the `data_symbol`'s address (null when not asked for)
  std::shared_ptr<void> keep;  // the code stays loaded while this lives
};

/// Load `object` (an ELF object for the host) and look up `symbol`. Thread-safe.
loaded_code load_object(const std::string& object, const std::string& symbol, const std::string& kernel,
                        const char* data_symbol = nullptr);

}  // namespace tile::jit

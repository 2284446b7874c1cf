// src/drivers/host_memory.hpp — layer: drivers. The memory half of a driver whose device memory
// is host memory (the interpreter, the CPU backend): 64-byte aligned, zeroed allocations; copies
// and fills are memcpy/memset; synchronize has nothing to wait for.
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "drivers/driver.hpp"

namespace tile::drivers {

class host_memory_driver : public driver {
 public:
  std::uint64_t alloc(std::size_t bytes) override {
    const std::size_t n = bytes ? (bytes + 63) / 64 * 64 : 64;
    void* p = std::aligned_alloc(64, n);
    if (!p) throw tile::error(name() + ": out of host memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, n);
    return reinterpret_cast<std::uint64_t>(p);
  }
  void free(std::uint64_t addr) noexcept override { std::free(reinterpret_cast<void*>(addr)); }
  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  }
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  }
  void fill(std::uint64_t dst, unsigned char value, std::size_t bytes) override {
    std::memset(reinterpret_cast<void*>(dst), value, bytes);
  }
  void synchronize() override {}
};

}  // namespace tile::drivers

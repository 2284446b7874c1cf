// src/drivers/interpreter/interpreter_driver.cpp — layer: drivers (interpreter). Device memory is
// host memory (64-byte aligned); a launch runs interp::Program with one checked memory region
// per pointer argument.
#include "drivers/interpreter/interpreter_driver.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "drivers/interpreter/interpreter.hpp"
#include "support/env.hpp"

namespace tile::drivers {
namespace {

struct interpreter_module final : module {
  explicit interpreter_module(std::shared_ptr<const ir::Function> fn) : program(std::move(fn)) {}
  interp::Program program;
};

class interpreter_driver final : public driver {
 public:
  std::string name() const override { return "interpreter"; }
  std::uint64_t alloc(std::size_t bytes) override {
    std::size_t n = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n ? n : 64);
    if (!p) throw tile::error("interpreter: out of host memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, n ? n : 64);
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
  void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) override {
    const auto& mod = static_cast<const interpreter_module&>(m);
    std::vector<interp::ArgValue> values;
    std::vector<interp::Region> regions;
    for (const auto& a : args) {
      interp::ArgValue v;
      if (a.k == kernel_arg::kind::pointer) {
        v.i = static_cast<std::int64_t>(a.addr);
        regions.push_back({a.addr, a.extent_bytes, a.what});
      } else if (a.k == kernel_arg::kind::integer) {
        v.i = a.i;
      } else {
        v.f = a.f;
      }
      values.push_back(v);
    }
    interp::RunOptions opts;
    opts.threads = static_cast<unsigned>(std::stoul(env::get("TILE_INTERPRETER_THREADS")));
    opts.regions_follow_pointer_args = true;  // one region per pointer argument, in order
    mod.program.run({cfg.grid[0], cfg.grid[1], cfg.grid[2]}, values, regions, opts);
  }
};

}  // namespace

std::unique_ptr<driver> make_interpreter_driver() { return std::make_unique<interpreter_driver>(); }

std::unique_ptr<module> make_interpreter_module(std::shared_ptr<const ir::Function> fn) {
  return std::make_unique<interpreter_module>(std::move(fn));
}

}  // namespace tile::drivers

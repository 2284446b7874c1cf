// src/drivers/interpreter/interpreter_driver.cpp — layer: drivers (interpreter). Device memory is
// host memory (64-byte aligned); a launch runs interp::Program with one checked memory region
// per pointer argument.
#include "drivers/interpreter/interpreter_driver.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "drivers/host_memory.hpp"
#include "drivers/interpreter/interpreter.hpp"
#include "support/env.hpp"

namespace tile::drivers {
namespace {

struct interpreter_module final : module {
  explicit interpreter_module(std::shared_ptr<const ir::Function> fn)
      : module(backend::interpreter), program(std::move(fn)) {}
  interp::Program program;
};

class interpreter_driver final : public host_memory_driver {
 public:
  std::string name() const override { return "interpreter"; }

  void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) override {
    if (m.made_by != module::backend::interpreter)
      throw tile::error("the interpreter was given a module compiled for another backend", cfg.where, std::string(cfg.kernel));
    const auto& mod = static_cast<const interpreter_module&>(m);
    std::vector<interp::ArgValue> values;
    std::vector<interp::Region> regions;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const kernel_arg& a = args[i];
      interp::ArgValue v;
      if (a.k == kernel_arg::kind::pointer) {
        v.i = static_cast<std::int64_t>(a.addr);
        regions.push_back({a.addr, a.extent_bytes, describe_arg(i, a)});
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

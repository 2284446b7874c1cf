// src/drivers/driver.hpp — layer: drivers. The one interface every backend's driver implements:
// device memory, synchronization and launching a compiled module. Drivers depend only on
// src/support (the interpreter's executor, which reads tile IR, is the documented exception).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"

namespace tile::drivers {

/// A kernel compiled for one backend (interpreter program, CPU function, CUDA function…).
struct module {
  /// Which backend made it: a driver checks this tag, not a dynamic_cast, on every launch.
  enum class backend : std::uint8_t { other, interpreter, cpu, cuda, null };
  explicit module(backend b = backend::other) : made_by(b) {}
  virtual ~module() = default;
  const backend made_by;
};

/// A runtime argument as the driver sees it.
struct kernel_arg {
  enum class kind : std::uint8_t { pointer, integer, floating };
  kind k = kind::integer;
  dtype t = dtype::i32;
  std::uint64_t addr = 0;
  std::int64_t i = 0;
  double f = 0.0;
  std::uint64_t extent_bytes = 0;  // pointers: bytes the kernel may access from addr
  std::string_view what;           // how messages name it (the caller keeps the text); empty: describe_arg's default
};

/// How messages name runtime argument `index` of a launch: its `what` when set, else for a
/// pointer "argument 2 (ptr<f32>, 1000 elements)" and for a number "". The runtime leaves `what`
/// empty so that a launch builds no strings; a driver calls this where a message needs it.
inline std::string describe_arg(std::size_t index, const kernel_arg& a) {
  if (!a.what.empty() || a.k != kernel_arg::kind::pointer) return std::string(a.what);
  return "argument " + std::to_string(index) + " (ptr<" + std::string(tile::name(a.t)) + ">, " +
         std::to_string(a.extent_bytes / static_cast<std::uint64_t>(size_of(a.t))) + " elements)";
}

struct launch_config {
  std::uint32_t grid[3] = {1, 1, 1};
  int num_warps = 4;
  int num_stages = 3;
  std::string_view kernel;  // the kernel's name, for messages (the launcher's string: no copy a launch)
  src_loc where;       // the launch's source line
};

/// A launch's runtime arguments in the form the driver passes them (CUDA: one 8-byte slot an
/// argument), for launches that repeat them: the runtime packs a launch's arguments once and
/// keeps them with its repeat memo, and a launch with the same arguments issues them as they are.
struct packed_args {
  static constexpr std::size_t capacity = 16;
  std::array<std::uint64_t, capacity> slots;  // the first n are set
  std::size_t n = 0;
};

class driver {
 public:
  virtual ~driver() = default;
  virtual std::string name() const = 0;
  virtual std::uint64_t alloc(std::size_t bytes) = 0;
  virtual void free(std::uint64_t addr) noexcept = 0;
  virtual void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes) = 0;
  virtual void fill(std::uint64_t dst, unsigned char value, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
  virtual void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) = 0;
  /// Packs `args` for launches of `m` into `out`; false where this driver or this module has no
  /// packed form (more than packed_args::capacity arguments, values encoded at each launch such
  /// as the TMA's tensor maps): the caller then launches with launch(). An argument the
  /// backend cannot pass is the error launch() would report.
  virtual bool pack(const module& m, const launch_config& cfg, std::span<const kernel_arg> args,
                    packed_args& out) const {
    (void)m, (void)cfg, (void)args, (void)out;
    return false;
  }
  /// Launches `m` with arguments pack() packed for it: launch()'s effect and errors, without
  /// converting the arguments again. Only called where pack() returned true for this module.
  virtual void launch_packed(const module& m, const launch_config& cfg, const packed_args& args) {
    (void)m, (void)args;
    throw tile::error("internal error: the " + name() + " backend has no packed launches", cfg.where,
                      std::string(cfg.kernel));
  }

  /// For device::adopt: checks that [addr, addr + bytes) is memory this device's kernels may
  /// access though the driver did not allocate it (an engine's own buffers); throws a
  /// tile::error saying why not (a host pointer, another device's memory, past the end of its
  /// allocation). Backends whose memory is their own (the interpreter) refuse every pointer.
  virtual void check_foreign(std::uint64_t addr, std::size_t bytes) const {
    (void)addr, (void)bytes;
    throw tile::error("the " + name() + " backend can only use memory it allocated");
  }
  /// For device::set_native_stream: later launches and copies go to `native` (a CUstream for
  /// CUDA, owned by the caller), null for the default stream. Backends without streams accept
  /// only null.
  virtual void set_native_stream(void* native) {
    if (native) throw tile::error("the " + name() + " backend has no native streams");
  }
  virtual void* native_stream() const { return nullptr; }
  /// Whether the current stream is being captured into a graph (CUDA stream capture): work
  /// sent to it is recorded, and nothing runs until the caller launches the graph. Waiting
  /// for results (synchronize, reading a buffer back) is an error then, and so is anything
  /// that needs a kernel to have run (autotuning).
  virtual bool capturing() const { return false; }
};

}  // namespace tile::drivers

// <tile/runtime/aot.hpp> — kernels compiled ahead of time. A build step (a small program the
// user's build runs, linked with libtile) lists the launches a program makes and writes them,
// compiled for the targets it names, as one object file; the program links that object and
// launches exactly as before: `add[grid](x, y, out, n, "BLOCK"_c = 1024)` finds its kernel
// there. With libtile the archive is a pre-filled compile cache (a launch it lacks compiles);
// with libtile_rt, which carries no compiler, a launch it lacks is an error naming the
// specialization and the nearest ones the archive has. docs/AOT.md has the whole story.
//
//   // kernels_aot.cpp, linked with libtile; the build runs it:
//   //   kernels_aot --out kernels.o --targets sm_80,sm_90a,cpu
//   int main(int argc, char** argv) {
//     tile::aot::builder b;
//     auto x = b.buffer<float>(), y = b.buffer<float>(), out = b.buffer<float>();
//     b.add(add, x, y, out, 4096, "BLOCK"_c = 1024);  // n: a positive multiple of 16
//     return b.main(argc, argv);
//   }
#pragma once

#include <string>
#include <vector>

#include "tile/runtime/autotune.hpp"
#include "tile/runtime/device.hpp"
#include "tile/runtime/kernel.hpp"

namespace tile::aot {

/// Loads an archive file (builder::write_archive) into the process's catalog. Throws
/// tile::error naming the file and the reason when it is unreadable, not an archive, truncated,
/// corrupt, or built by another tile version; nothing of it is then used.
void load(const std::string& path);

/// The catalog: one line an entry ("kernel  specialization  target  (archive)"), and a line for
/// each archive refused.
std::string catalog();

/// Lists launches and compiles them ahead of time (libtile only: it holds the compilers).
class builder {
 public:
  builder();

  /// A buffer to list a launch with (interpreter memory, nothing runs on it): 16-byte aligned,
  /// sharing no byte with any other, so a pointer argument is listed as the common case.
  /// Pass a view (`b.buffer<float>().view(1, 8)`) for an unaligned pointer, or the same buffer
  /// twice for aliased ones.
  template <class T>
  tile::buffer<T> buffer(std::size_t elements = 16) const {
    return dev_.alloc<T>(elements);
  }

  /// One launch, written as the program writes it, grid left out: integers stand for their
  /// class (1, 0, a positive or negative multiple of 16, other positive or negative values).
  template <class F, class... A>
  void add(const kernel_t<F>& k, A&&... args) {
    add(k.trace_launch(std::forward<A>(args)...));
  }
  void add(detail::traced_launch launch);
  std::size_t size() const { return launches_.size(); }

  /// An autotuned launch, tuned now on the device its buffers are on (a GPU, or this CPU: real
  /// buffers of the sizes the program runs, since the key's values pick the choice), or given
  /// the choice already in the autotuner's caches: the chosen config's launch is listed, and
  /// the choice is shipped, so the program's autotuner takes it on a device of the same best
  /// target without tuning (autotune_stats::shipped).
  template <class F, class... A>
  void tune(const autotuned_kernel<F>& k, const launch_grid& grid, A&&... args) {
    add(k.choose_for_build(grid, std::forward<A>(args)...));
  }
  void add(detail::autotuner_core::build_choice choice);

  /// Compiles every launch for each of `targets` and writes one relocatable object for this
  /// host, to be linked into the program (with libtile or libtile_rt). Targets: "sm_80",
  /// "sm_86", "sm_89", "sm_90", "sm_90a" (a cubin where ptxas is found, and the PTX, which the
  /// driver compiles for newer GPUs), "cpu-x86-64", "cpu-x86-64-v2" … "-v4", and "cpu" (the
  /// best level this machine runs). Throws tile::error for an unknown target or a kernel a
  /// target cannot compile.
  void write_object(const std::string& path, const std::vector<std::string>& targets, const std::string& name) const;
  /// The same as an archive file for tile::aot::load (NVIDIA targets only: CPU code is linked).
  void write_archive(const std::string& path, const std::vector<std::string>& targets, const std::string& name) const;

  /// A build step's main: `--out kernels.o` (an object; any other name: an archive file),
  /// `--targets sm_80,sm_90a,cpu`, `--name NAME` (default: the output's stem). Prints one line
  /// of what it wrote, or the error; returns the exit status.
  int main(int argc, char** argv) const;

 private:
  struct shipped_choice {
    std::string kernel, tuning, target, config;
  };
  tile::device dev_;
  std::vector<detail::traced_launch> launches_;
  std::vector<shipped_choice> choices_;
};

}  // namespace tile::aot

// test/fuzz/fuzz.hpp — the random-program differential tester: kernels built from a seed out of
// the whole tl:: surface, run on the interpreter (the oracle) and on a compiled backend, and their
// memory compared by docs/LANGUAGE.md's rules ("Backends and what agrees between them").
//
// A program is made while it is traced: the kernel's body draws every choice from a generator
// seeded with the program's seed, so each trace of it (on any backend) builds the same kernel,
// and it writes the same program as C++ beside it (program::cpp) for a failing seed to be read
// and reduced by hand. The kernel's memory:
//   in   read-only: one array of `array_len` elements per dtype, special values among them
//        (0, -0.0, ±inf, NaN, subnormals, the extremes, INT_MIN, -1) at `array_stride` bytes;
//   tame f32 / i32 arrays of moderate values (`fin`, `iin`: dots, loop bounds);
//   io   each program's own window, read, written and read again (stores through a view that
//        overlaps an input) and the target of the deterministic atomics;
//   out  the stored results: one slot per stored value, each program its own part of it, and
//        one slot of shared atomic targets that every program updates.
// Every slot records how its bytes compare (slot::exact): bit for bit, or by the documented
// tolerance, on which backend.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tile/tile.hpp>

namespace fuzz {

inline constexpr std::size_t array_len = 1024;                  // elements of each input array
inline constexpr std::size_t array_stride = 8192;               // bytes between input arrays
inline constexpr std::size_t io_window = 4096;                  // bytes of io per program
inline constexpr std::size_t out_bytes = 1 << 18;               // the out buffer
inline constexpr std::size_t atomic_slot_bytes = 6 * 13 * 64;   // the shared atomic targets: a kind and dtype 64 bytes
inline constexpr int max_programs = 4;

/// How a backend's bytes of a slot may differ from the interpreter's.
enum class agreement : std::uint8_t {
  exact,        // bit for bit (a float NaN matches any NaN)
  close,        // within the tolerance of the dtype (transcendentals, tree-ordered sums, dots, fma)
};

/// Whether a value is exact on the CPU backend and on the GPU (docs/LANGUAGE.md).
struct exactness {
  bool cpu = true;  // transcendental functions (1 ulp), float atomics' order
  bool gpu = true;  // the above, approximate instructions, tree-ordered float sums, tensor cores, fma
  exactness operator|(const exactness& o) const { return {cpu && o.cpu, gpu && o.gpu}; }
  bool all() const { return cpu && gpu; }
};

/// A region of out or io written by the program.
struct slot {
  std::string what;       // "v12 stored to out", "io window", "atomic targets"
  bool in_io = false;     // io (else out)
  tile::dtype dt = tile::dtype::u8;
  std::size_t offset = 0;  // bytes, for program 0
  std::size_t count = 0;   // elements a program
  std::size_t program_stride = 0;  // bytes between programs' parts (0: one part, shared)
  exactness exact;
  double err = 0;  // where not exact: the bound of |backend - interpreter| (infinite: not compared)
};

/// The launch parameters a seed chooses (before the kernel is traced).
struct config {
  std::uint64_t seed = 0;
  int programs = 1;
  int n = 0;          // the kernel argument n: masks, descriptor extents
  int k = 0;          // the kernel argument k: loop trip counts
  int num_warps = 4;
  bool fp_fusion = false;
  bool probe = false;  // also store every value where it is made (a slot each), for diagnosis
};
config choose(std::uint64_t seed);

/// What a trace of the program made: its C++ text and its slots (the same on every trace).
struct program {
  std::string cpp;
  std::vector<slot> slots;
  int ops = 0;
};

/// The kernel's body: called while it is traced, it rebuilds `prog` from `cfg.seed`.
void build(const config& cfg, program& prog, tl::ptr<std::uint8_t> in, tl::ptr<float> fin, tl::ptr<std::int32_t> iin,
           tl::ptr<std::uint8_t> io, tl::ptr<std::uint8_t> out, tl::i32 n, tl::i32 k);

/// The initial contents of the buffers (the same on every backend).
std::vector<std::uint8_t> input_bytes();
std::vector<float> tame_floats();
std::vector<std::int32_t> tame_ints();
std::vector<std::uint8_t> io_bytes();
std::vector<std::uint8_t> out_fill();

/// One backend's run of one program: the final io and out bytes, or the error it raised.
struct result {
  bool rejected = false;
  std::string error;
  std::vector<std::uint8_t> io, out;
};
/// The program of `cfg` run on each device in turn (one kernel object: traced once, compiled
/// for each backend), the interpreter first by convention.
std::vector<result> run(const std::vector<tile::device>& devs, const config& cfg, program& prog);

/// Differences of `got` (on backend "cpu" or "cuda") from the interpreter's `want`, by the
/// slots' rules; empty when they agree. At most `limit` lines.
std::vector<std::string> compare(const program& prog, const config& cfg, bool gpu, const result& want,
                                 const result& got, std::size_t limit = 8);

}  // namespace fuzz

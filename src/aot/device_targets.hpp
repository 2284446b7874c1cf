// src/aot/device_targets.hpp — layer: aot (no LLVM). Which archive targets a device runs, best
// first, and the targets a build step may name.
//   NVIDIA: "sm_XY" / "sm_90a" hold a cubin and its PTX. A device of compute capability X.Y runs
//   the cubin of its own arch (sm_90a on 9.0), then those of its major arch with a lower minor
//   (sm_80 on 8.6 and 8.9; not across majors, nor sm_90a's), then any arch's PTX up to its own,
//   which the driver compiles on first load (the same entries, kind "ptx").
//   CPU: "cpu-x86-64" and "cpu-x86-64-v2" … "-v4", the x86-64 micro-architecture levels (v3:
//   AVX2 and FMA, v4: AVX-512), the best level the host supports first.
#pragma once

#include <string>
#include <vector>

namespace tile::aot {

/// Cubin targets first, then PTX ones ("ptx:sm_80": an entry of kind "ptx" for sm_80).
std::vector<std::string> cuda_targets(int cc_major, int cc_minor);
/// The CPU levels this host runs, best first.
std::vector<std::string> cpu_targets();
/// The host's best CPU level ("cpu-x86-64-v4"), what the build step's "cpu" means.
std::string host_cpu_target();
/// Whether `t` is a target a build step can compile for ("sm_80", "sm_90a", "cpu-x86-64-v3",
/// "cpu"), and the LLVM CPU name of a CPU target ("x86-64-v3"; "" for an NVIDIA one).
bool known_target(const std::string& t);
std::string llvm_cpu_of(const std::string& t);

}  // namespace tile::aot

// bench/gpu.hpp — shared by the GPU benches (bench/gpu_*.cpp): the cuda device (or a polite skip:
// the bench exits 0), its driver (internal: the device-to-device copy ceiling and raw launches go
// straight to it), the copy timed like a kernel, and host data made fast enough for 2^28-element
// arrays. Every tile timing goes through tile::testing::make_timer(dev): CUDA events on the
// driver's current stream and a 256 MB L2 flush before each repetition (triton.testing's method).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "bench.hpp"
#include "drivers/cuda/cuda_driver.hpp"  // internal: the benches link tile_internal_dep
#include "runtime/kernel_access.hpp"

namespace bench::gpu {

/// The backend the GPU benches run on.
inline constexpr const char* backend = "cuda";

/// The cuda backend's device 0, or nullopt after printing that `bench` skipped (exit 0 then).
inline std::optional<tile::device> cuda_device(const char* bench) {
  try {
    auto d = tile::device::get(backend);
    std::printf("%s on %s\n", bench, d.name().c_str());
    return d;
  } catch (const tile::error& e) {
    std::printf("%s: skipped, no cuda device (%s)\n", bench, e.message().c_str());
    return std::nullopt;
  }
}

/// The CUDA driver behind a cuda device.
inline tile::drivers::cuda_driver& driver(const tile::device& dev) {
  return dynamic_cast<tile::drivers::cuda_driver&>(tile::detail::driver_of(dev));
}

/// The bandwidth ceiling the GPU benches compare with: cuMemcpyDtoDAsync of `bytes` bytes (on
/// the driver's current stream, like tile's launches), between two buffers of its own. A copy of
/// B bytes moves 2·B bytes (B read, B written); the benches copy half the bytes their kernel
/// moves, so both columns count the same bytes over their own time.
class d2d_copy {
 public:
  d2d_copy(const tile::device& dev, std::size_t bytes)
      : drv_(&driver(dev)), src_(dev.alloc<unsigned char>(bytes)), dst_(dev.alloc<unsigned char>(bytes)) {}
  void operator()() const { drv_->copy_on_device(dst_.address(), src_.address(), src_.bytes()); }
  std::size_t bytes() const { return src_.bytes(); }

 private:
  tile::drivers::cuda_driver* drv_;
  tile::buffer<unsigned char> src_, dst_;
};

/// n floats uniform in [lo, hi), from a counter-based hash (splitmix64) on every core: a 2^28
/// element array in well under a second, the same values for the same seed on any machine.
inline floats hash_floats(pool& threads, std::size_t n, std::uint64_t seed, float lo = -1.f, float hi = 1.f) {
  floats v(n);
  threads.parallel_for(n, [&](std::size_t a, std::size_t b) {
    for (std::size_t i = a; i < b; ++i) {
      std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      v[i] = lo + (hi - lo) * static_cast<float>(z >> 40) * 0x1p-24f;
    }
  });
  return v;
}

/// The next power of two >= n (Triton's triton.next_power_of_2).
inline std::int64_t next_pow2(std::int64_t n) { return static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(n))); }

/// GB/s of `bytes` moved in `ms` milliseconds.
inline double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

/// Kernels timed in `rounds` alternating rounds, each round one do_bench median per kernel; even
/// rounds run f0, f1, …, odd rounds the reverse, so that no kernel always runs first after the
/// host's pause or always right after the hottest one (at 8192³ the matmuls' round times spread
/// by up to ±12 % with the GPU's power state): per kernel the median of its round medians, and every
/// round's time.
struct interleaved_result {
  std::vector<double> ms;                    // per kernel
  std::vector<std::vector<double>> round_ms;  // per kernel, per round
  /// The smallest and largest per-round speedup of kernel p over kernel q (q's time over p's:
  /// above 1 means p is faster).
  std::pair<double, double> speedup_range(std::size_t p, std::size_t q) const {
    const auto v = speedups(p, q);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return {*lo, *hi};
  }
  /// The median of the per-round speedups of p over q: each round's pair ran back to back, so
  /// this cancels the drift between rounds that the ratio of the two medians keeps.
  double paired_speedup(std::size_t p, std::size_t q) const { return tile::testing::quantile(speedups(p, q), 0.5); }

 private:
  std::vector<double> speedups(std::size_t p, std::size_t q) const {
    std::vector<double> v;
    for (std::size_t r = 0; r < round_ms[p].size(); ++r) v.push_back(round_ms[q][r] / round_ms[p][r]);
    return v;
  }
};

inline interleaved_result interleaved(const std::vector<std::function<void()>>& fns, tile::testing::timer* t,
                                      int rounds = 5) {
  interleaved_result out;
  out.round_ms.resize(fns.size());
  for (auto& times : out.round_ms) times.resize(static_cast<std::size_t>(rounds));
  for (int r = 0; r < rounds; ++r)
    for (std::size_t i = 0; i < fns.size(); ++i) {
      const std::size_t k = r % 2 ? fns.size() - 1 - i : i;
      out.round_ms[k][static_cast<std::size_t>(r)] = median_ms(fns[k], t);
    }
  for (const auto& times : out.round_ms) out.ms.push_back(tile::testing::quantile(times, 0.5));
  return out;
}

/// Named kernels (a bench's columns) timed by interleaved(): its result, and each column's GB/s
/// for `bytes` moved per launch.
struct interleaved_columns {
  interleaved_result r;
  std::map<std::string, double> gbps;
};
inline interleaved_columns interleaved_gbps(const std::vector<std::pair<std::string, std::function<void()>>>& cols,
                                            double bytes, tile::testing::timer* t, int rounds = 5) {
  std::vector<std::function<void()>> fns;
  for (const auto& c : cols) fns.push_back(c.second);
  interleaved_columns out{interleaved(fns, t, rounds), {}};
  for (std::size_t k = 0; k < cols.size(); ++k) out.gbps[cols[k].first] = gbps(bytes, out.r.ms[k]);
  return out;
}

}  // namespace bench::gpu

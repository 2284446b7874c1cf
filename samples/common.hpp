// samples/common.hpp — shared by the samples: random inputs, error measures and the one-line
// report every sample ends with.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <tile/tile.hpp>

namespace sample {

/// TILE_SKIP_WITHOUT_BACKEND=<name> (the samples' GPU tests): when that backend is not available
/// here, say why and exit 77 (skipped) before main runs — CI machines have no GPU.
inline bool skip_without_backend() {
  const char* want = std::getenv("TILE_SKIP_WITHOUT_BACKEND");
  if (!want || !*want) return false;
  for (const auto& b : tile::device::backends())
    if (b.name == want && !b.available) {
      std::printf("skipped: the %s backend is not available here (%s)\n", want, b.reason.c_str());
      std::exit(77);
    }
  return false;
}
inline const bool skipped_without_backend = skip_without_backend();

inline std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

template <class A, class B>
double max_abs_error(const std::vector<A>& got, const std::vector<B>& want) {
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    m = std::max(m, std::abs(static_cast<double>(static_cast<float>(got[i])) - static_cast<double>(static_cast<float>(want[i]))));
  return m;
}

/// Prints "<name> on <backend>: max error <e> (tolerance <tol>) — OK|FAILED" and returns the
/// process exit code. On a device that compiles but runs nothing (TILE_BACKEND=null) there are
/// no results to check: it says so and returns 0.
/// The matmul samples' reference: leaky_relu(A @ B) for row-major A [M, K] and B [K, N] of f16,
/// summed in f32 in k order.
inline std::vector<float> matmul_leaky_relu_reference(const std::vector<tile::half>& a, const std::vector<tile::half>& b,
                                                      int M, int N, int K) {
  std::vector<float> want(static_cast<std::size_t>(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int k = 0; k < K; ++k) s += float(a[static_cast<std::size_t>(i) * K + k]) * float(b[static_cast<std::size_t>(k) * N + j]);
      want[static_cast<std::size_t>(i) * N + j] = s >= 0 ? s : 0.01f * s;
    }
  return want;
}

inline int report(const std::string& name, const tile::device& dev, double err, double tol) {
  if (!dev.computes()) {
    std::printf("%s: compiled for %s, not run: results not checked\n", name.c_str(), dev.name().c_str());
    return 0;
  }
  bool ok = err <= tol;
  std::printf("%s on %s: max error %.3g (tolerance %.3g) — %s\n", name.c_str(), dev.name().c_str(), err, tol,
              ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace sample

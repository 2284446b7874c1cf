// examples/engine/engine.cpp — an engine that ships its kernels prebuilt: it links libtile_rt
// (no compiler, no LLVM) and the object build_kernels wrote, and launches as any tile program
// does. It steps a particle system on the best device the archive has kernels for (a GPU, else
// this CPU), checks it against the same steps on the host, and reports the first launch's time.
//   engine [particles] [steps]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels.hpp"

using namespace tile::literals;

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1 << 16;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  const float dt = 0.01f, restitution = 0.8f;
  try {
    auto dev = tile::device::best();
    std::printf("engine: %d particles, %d steps on %s\n", n, steps, dev.name().c_str());
    std::vector<float> hx(n), hy(n), hu(n), hv(n);
    for (int i = 0; i < n; ++i) {
      hx[i] = static_cast<float>(i % 97);
      hy[i] = 1.0f + static_cast<float>(i % 31) * 0.25f;
      hu[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
      hv[i] = 0.5f * static_cast<float>(i % 5) - 1.0f;
    }
    auto px = dev.upload(hx), py = dev.upload(hy), vx = dev.upload(hu), vy = dev.upload(hv);
    const int blocks = tile::cdiv(n, engine::kBlock);
    auto partial = dev.alloc<float>(static_cast<std::size_t>(blocks));

    const auto t0 = std::chrono::steady_clock::now();
    engine::step[{blocks}](px, py, vx, vy, n, dt, restitution, "BLOCK"_c = engine::kBlock);
    dev.synchronize();
    const double first_ms = ms_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    for (int s = 1; s < steps; ++s) engine::step[{blocks}](px, py, vx, vy, n, dt, restitution, "BLOCK"_c = engine::kBlock);
    dev.synchronize();
    const double rest_ms = ms_since(t1);
    engine::energy[{blocks}](vx, vy, partial, n, "BLOCK"_c = engine::kBlock);
    double e = 0;
    for (float p : partial.to_host()) e += p;

    // the host's steps, in the same float operations
    for (int s = 0; s < steps; ++s)
      for (int i = 0; i < n; ++i) {
        const float v = hv[i] - 9.81f * dt, ny = hy[i] + v * dt;
        hx[i] += hu[i] * dt;
        hy[i] = ny < 0.0f ? -ny : ny;
        hv[i] = ny < 0.0f ? -v * restitution : v;
      }
    double want = 0, worst = 0;
    for (int i = 0; i < n; ++i) want += 0.5 * (double(hu[i]) * hu[i] + double(hv[i]) * hv[i]);
    const auto gy = py.to_host();
    for (int i = 0; i < n; ++i) worst = std::max(worst, static_cast<double>(std::fabs(gy[i] - hy[i])));
    const double rel = std::fabs(e - want) / std::max(1.0, want);
    std::printf("engine: first launch %.3f ms (trace + prebuilt kernel + run), then %.3f ms a step\n", first_ms,
                rest_ms / std::max(1, steps - 1));
    std::printf("engine: kinetic energy %.6g (host %.6g, relative error %.2g), largest height error %.2g\n", e, want, rel, worst);
    const bool ok = rel < 1e-4 && worst < 1e-3;
    std::printf("engine: %s\n", ok ? "OK" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const tile::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

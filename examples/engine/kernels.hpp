// examples/engine/kernels.hpp — the engine's kernels: a particle system's step and the total
// kinetic energy. The engine (engine.cpp) launches them; its build step (build_kernels.cpp)
// lists the same launches and compiles them ahead of time.
#pragma once

#include "tile/tile.hpp"

namespace engine {

/// One explicit Euler step for n particles (structure of arrays): gravity, then a bounce off
/// the floor at y = 0 that keeps `restitution` of the speed.
inline auto step = tile::kernel("particles_step", [](tl::ptr<float> px, tl::ptr<float> py, tl::ptr<float> vx,
                                                     tl::ptr<float> vy, tl::i32 n, tl::f32 dt, tl::f32 restitution,
                                                     tl::constexpr_<"BLOCK"> BLOCK) {
  auto i = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = i < n;
  auto y = tl::load(py + i, m), u = tl::load(vx + i, m), v = tl::load(vy + i, m) - 9.81f * dt;
  auto ny = y + v * dt;
  auto below = ny < 0.0f;
  tl::store(px + i, tl::load(px + i, m) + u * dt, m);
  tl::store(py + i, tl::where(below, -ny, ny), m);
  tl::store(vy + i, tl::where(below, -v * restitution, v), m);
});

/// Each block's kinetic energy (mass 1), summed by the host: 0.5 (vx² + vy²).
inline auto energy = tile::kernel("particles_energy", [](tl::ptr<float> vx, tl::ptr<float> vy, tl::ptr<float> out,
                                                         tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto i = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = i < n;
  auto u = tl::load(vx + i, m, 0.0f), v = tl::load(vy + i, m, 0.0f);
  tl::store(out + tl::program_id(0), 0.5f * tl::sum(u * u + v * v, 0));
});

inline constexpr int kBlock = 1024;

}  // namespace engine

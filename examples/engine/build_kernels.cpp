// examples/engine/build_kernels.cpp — the engine's build step (linked with libtile): lists the
// launches engine.cpp makes and writes them compiled, for the targets its build names:
//   build_kernels --out engine_kernels.o --targets sm_80,sm_90a,cpu
#include "kernels.hpp"

using namespace tile::literals;

int main(int argc, char** argv) {
  tile::aot::builder b;
  auto px = b.buffer<float>(), py = b.buffer<float>(), vx = b.buffer<float>(), vy = b.buffer<float>();
  auto out = b.buffer<float>();
  // n: the engine's particle counts are positive multiples of 16 (the class is what matters,
  // not the value); dt and the restitution are floats, which never specialize
  b.add(engine::step, px, py, vx, vy, 1 << 16, 0.01f, 0.8f, "BLOCK"_c = engine::kBlock);
  b.add(engine::energy, vx, vy, out, 1 << 16, "BLOCK"_c = engine::kBlock);
  return b.main(argc, argv);
}

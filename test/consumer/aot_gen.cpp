// test/consumer/aot_gen.cpp — the consumers' build step (linked with tile): lists the launch
// aot_main.cpp makes; tile_aot_kernels (CMake) or a custom_target (Meson) runs it.
#include "aot_kernels.hpp"

using namespace tile::literals;

int main(int argc, char** argv) {
  tile::aot::builder b;
  b.add(consumer_axpy, b.buffer<float>(), b.buffer<float>(), 2.0f, 1000, "BLOCK"_c = 256);
  return b.main(argc, argv);
}

// test/consumer/aot_main.cpp — a program linked with tile_rt (no compiler) and the kernels its
// build compiled ahead of time: the launch finds its kernel on the CPU. Prints "consumer OK".
#include <cstdio>
#include <vector>

#include "aot_kernels.hpp"

using namespace tile::literals;

int main() {
  try {
    auto dev = tile::device::get("cpu");
    const int n = 1000;
    std::vector<float> hx(n), hy(n);
    for (int i = 0; i < n; ++i) hx[i] = float(i), hy[i] = 1.0f;
    auto x = dev.upload(hx), y = dev.upload(hy);
    consumer_axpy[{tile::cdiv(n, 256)}](x, y, 2.0f, n, "BLOCK"_c = 256);
    auto h = y.to_host();
    for (int i = 0; i < n; ++i)
      if (h[i] != 2.0f * float(i) + 1.0f) {
        std::printf("consumer: FAILED y[%d] = %g\n", i, double(h[i]));
        return 1;
      }
  } catch (const tile::error& e) {
    std::printf("consumer: FAILED %s\n", e.what());
    return 1;
  }
  std::printf("consumer OK\n");
  return 0;
}

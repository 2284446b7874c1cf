// The main of every doctest executable. TILE_SKIP_WITHOUT_BACKEND=<name> (the GPU suites:
// lang-cuda, …): when that backend is not available here, say why and exit 77, which meson and
// scripts/bundle/run-all count as skipped — CI machines have no GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "tile/runtime/device.hpp"

int main(int argc, char** argv) {
  if (const char* want = std::getenv("TILE_SKIP_WITHOUT_BACKEND"); want && *want)
    for (const auto& b : tile::device::backends())
      if (b.name == want && !b.available) {
        std::cout << "skipped: the " << want << " backend is not available here (" << b.reason << ")\n";
        return 77;
      }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}

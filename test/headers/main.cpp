// test/headers: every public header compiles on its own, and the umbrella header alone brings
// every public facility. The first check is the build of the generated translation units linked
// into this executable (one per header, each including only that header, with the project's
// warnings and, in CI, -Werror); umbrella.cpp (only <tile/tile.hpp>) is the second, and running
// it uses each facility once.
#include <cstdio>

int umbrella_failures();

int main() {
  std::puts("every public header compiles on its own");
  if (int f = umbrella_failures()) {
    std::printf("%d check(s) of the umbrella header failed\n", f);
    return 1;
  }
  std::puts("<tile/tile.hpp> brings kernels, devices, tile::testing, tile::autotune and tile::prof");
  return 0;
}

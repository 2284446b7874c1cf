// test/aot/kernels_gen.cpp — the build step of the ahead-of-time tests: lists the launches
// test_aot.cpp makes and writes them compiled (meson: --out aot_kernels.o --targets cpu,sm_90a).
#include <string>

#include "kernels.hpp"

using namespace tile::literals;

int main(int argc, char** argv) {
  tile::aot::builder b;
  auto x = b.buffer<float>(), y = b.buffer<float>(), out = b.buffer<float>();
  b.add(aot_test::add, x, y, out, 1000, "BLOCK"_c = 256);  // n: positive, not a multiple of 16
  b.add(aot_test::add, x, y, out, 4096, "BLOCK"_c = 1024);  // n: a positive multiple of 16
  b.add(aot_test::add, x, y, out, 1000, "BLOCK"_c = 256);   // listed twice: compiled once
  b.add(aot_test::row_sum, x, out, 100, "BLOCK"_c = 128);
  b.add(aot_test::desc_copy, x, out, 50, 48, "BR"_c = 16, "BC"_c = 16);
  // tuned here, on this CPU, for n = 5000: the choice ships with the kernels
  auto cpu = tile::device::get("cpu");
  const int n = 5000;
  auto sx = cpu.alloc<float>(n), sout = cpu.alloc<float>(n);
  b.tune(aot_test::scale, [=](const tile::meta& m) { return aot_test::scale_grid(m, n); }, sx, sout, n);
  // the archive file (not the object) also carries one GPU-only launch
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--out" && std::string(argv[i + 1]).ends_with(".tilear"))
      b.add(aot_test::add, x, y, out, 1000, "BLOCK"_c = 2048);
  return b.main(argc, argv);
}

// test/consumer: a program that uses an *installed* tile, built by test/consumer/run.sh with
// CMake (find_package(tile), tile::tile and tile::tile_static) and with pkg-config. It checks
// what an embedder relies on: the umbrella header, the host value types, tile::error's message
// format, and a kernel launch. Prints "consumer OK" on success (run.sh checks for it).
#include <cstdio>
#include <source_location>
#include <string>
#include <vector>

#include <tile/tile.hpp>

using namespace tile::literals;

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("consumer: FAILED %s\n", what);
    ++failures;
  }
}
}  // namespace

int main() {
  // Host value types: round to nearest even, exact where representable.
  check(static_cast<float>(tile::half(1.5f)) == 1.5f, "half(1.5) round trip");
  check(tile::half(1.0f).bits == 0x3c00, "half(1.0) bits");
  check(tile::half(65504.0f).bits == 0x7bff, "half max");
  check(static_cast<float>(tile::bfloat16(-2.0f)) == -2.0f, "bfloat16(-2) round trip");
  check(tile::bfloat16(1.0f).bits == 0x3f80, "bfloat16(1.0) bits");
  check(static_cast<float>(tile::bfloat16(1.00390625f)) == 1.0f, "bfloat16 rounds to even");

  // tile::error reads "file:line: error: kernel 'name': message".
  const auto here = std::source_location::current();
  const tile::error e("something went wrong", here, "k");
  const std::string want =
      std::string(here.file_name()) + ":" + std::to_string(here.line()) + ": error: kernel 'k': something went wrong";
  check(e.what() == want, "tile::error format");
  check(e.message() == "something went wrong" && e.kernel() == "k", "tile::error parts");

  // ---- kernel launch: the vector add of the README, on the interpreter ----------------------
  auto add = tile::kernel("add", [](tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> out, tl::i32 n,
                                    tl::constexpr_<"BLOCK"> BLOCK) {
    auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
    auto mask = offs < n;
    tl::store(out + offs, tl::load(x + offs, mask) + tl::load(y + offs, mask), mask);
  });
  const int n = 1000;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = float(i), hy[i] = 2.0f * float(i);
  auto dev = tile::device::get("interpreter");
  auto x = dev.upload(hx), y = dev.upload(hy);
  auto out = dev.alloc<float>(n);
  add[{tile::cdiv(n, 256)}](x, y, out, n, "BLOCK"_c = 256);
  auto r = out.to_host();
  bool same = r.size() == std::size_t(n);
  for (int i = 0; same && i < n; ++i) same = r[i] == 3.0f * float(i);
  check(same, "vector add on the interpreter");
  // ---- end of kernel launch -----------------------------------------------------------------

  if (failures) return 1;
  std::printf("consumer OK\n");
  return 0;
}

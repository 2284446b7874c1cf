// test/drivers/test_cuda_fault.cpp — a kernel that faults on the GPU (an illegal address): its
// own test executable, because a fault poisons the process's CUDA context. The error comes at
// the next synchronizing call, names CUDA_ERROR_ILLEGAL_ADDRESS and the kernel that was launched
// last; later calls fail the same clear way instead of hanging or returning garbage; other
// backends in the process go on working. Reported as skipped where there is no CUDA device.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tile/tile.hpp>
#include <vector>

#include "../requires.hpp"

using namespace tile::literals;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

auto wild_store = tile::kernel("wild_store", [](tl::ptr<float> out, tl::i64 offset) {
  tl::store(out + offset + tl::arange(0, 128), tl::full<float>({128}, 1.0f));  // unmasked, far outside
});
auto fill = tile::kernel("fill", [](tl::ptr<float> out, tl::f32 v) {
  tl::store(out + tl::arange(0, 128), tl::full<float>({128}, v));
});
}  // namespace

TEST_CASE("cuda: an illegal address in a kernel is a clear error naming it; the process goes on" *
          tiletest::needs_cuda) {
  std::optional<tile::device> dev = tile::device::get("cuda");
  auto buf = dev->alloc<float>(128);
  fill[{1}](buf, 2.0f);
  CHECK(buf.to_host()[5] == 2.0f);

  wild_store[{1}](buf, std::int64_t{1} << 40);  // 4 TiB past the buffer: unmapped
  std::string first;
  try {
    dev->synchronize();
    FAIL("the fault must surface at the next synchronizing call");
  } catch (const tile::error& e) {
    first = e.what();
  }
  MESSAGE("the fault: " << first);
  CHECK(contains(first, "CUDA_ERROR_ILLEGAL_ADDRESS"));
  CHECK(contains(first, "wild_store"));
  // later work on the poisoned context fails the same way, at once (no hang)
  try {
    fill[{1}](buf, 3.0f);
    (void)buf.to_host();
    FAIL("the context stays unusable after a fault");
  } catch (const tile::error& e) {
    CHECK(contains(e.what(), "CUDA_ERROR_ILLEGAL_ADDRESS"));
  }
  // other backends are unaffected
  auto interp = tile::device::get("interpreter");
  auto h = interp.alloc<float>(128);
  fill[{1}](h, 4.0f);
  CHECK(h.to_host()[127] == 4.0f);
}

// tools/check-shared-divisor/check_shared_divisor.cpp — the evidence behind the NVIDIA backend's
// division by a shared divisor (src/targets/nvptx/nvptx_math.cpp, batch_div): with r = RN(1/d),
// q0 = RN(a·r), e = RN(a − d·q0) and q = RN(q0 + e·r) (both in an fma), q is a/d correctly
// rounded. The result does not depend on the exponents of a and d while nothing leaves the
// normal range (what batch_div's range check ensures), so a and d are taken in [1, 2): every one
// of the 2^23 significands of a, against the divisors asked for. Compares with the CPU's IEEE
// division; prints the mismatches (at most 10) and their count, exits 1 if there is one.
//   check-shared-divisor FIRST COUNT           divisors with significands FIRST … FIRST+COUNT−1
//   check-shared-divisor --random COUNT SEED   COUNT random divisors
// Runs so far: `0 1024` and `8387584 1024` (the smallest and largest significands) and random
// divisors: 3000, 20000 and 100000, and 5000 each in [1.999, 2) and [1.99999, 2) (with this
// check's first version): 133 048 divisors, no mismatch. Build with -ffp-contract=off.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace {

float from_significand(std::uint32_t m) { return std::bit_cast<float>(0x3f800000u | (m & 0x7fffffu)); }

long check_divisor(float d, long shown) {
  volatile float one = 1.0f;  // keeps the reciprocal a run-time division
  const float r = one / d;
  long bad = 0;
  for (std::uint32_t m = 0; m < (1u << 23); ++m) {
    const float a = from_significand(m);
    const float q0 = a * r;
    const float q = std::fmaf(std::fmaf(-d, q0, a), r, q0);
    if (q != a / d) {
      if (shown + bad < 10) std::printf("a = %a, d = %a: %a where a/d is %a\n", a, d, q, a / d);
      ++bad;
    }
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  long bad = 0, divisors = 0;
  if (argc == 4 && std::strcmp(argv[1], "--random") == 0) {
    std::mt19937 rng(static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)));
    std::uniform_int_distribution<std::uint32_t> sig(0, (1u << 23) - 1);
    for (unsigned long k = std::strtoul(argv[2], nullptr, 10); k > 0; --k, ++divisors) bad += check_divisor(from_significand(sig(rng)), bad);
  } else if (argc == 3) {
    const std::uint32_t first = static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 0));
    for (std::uint32_t m = first; m < first + std::strtoul(argv[2], nullptr, 0); ++m, ++divisors) bad += check_divisor(from_significand(m), bad);
  } else {
    std::fprintf(stderr, "usage: check-shared-divisor FIRST COUNT | --random COUNT SEED\n");
    return 2;
  }
  std::printf("%ld divisors x 2^23 numerators: %ld mismatches\n", divisors, bad);
  return bad ? 1 : 0;
}

// test/jit/cache_race_child.cpp — run by test_disk_cache as several concurrent processes:
//   cache_race_child <dir> <payload-size>
// stores then loads one fixed key 50 times in <dir>; exits 0 only if every load returned exactly the
// payload (the same bytes in every process, so any interleaving of writers must still read back right).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "jit/disk_cache.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <dir> <payload-size>\n", argv[0]);
    return 2;
  }
  const std::size_t size = std::strtoull(argv[2], nullptr, 10);
  std::string payload(size, '\0');
  for (std::size_t i = 0; i < size; ++i) payload[i] = static_cast<char>((i * 131 + i / 251) & 0xff);

  tile::jit::disk_cache cache(argv[1]);
  const tile::jit::cache_key key{0x0123456789abcdefull, "cpu-x86_64-race", "O3 num_warps=4", "0.1.0", "race"};
  for (int i = 0; i < 50; ++i) {
    cache.store(key, payload);
    auto got = cache.load(key);
    if (!got || *got != payload) {
      std::fprintf(stderr, "cache_race_child: iteration %d: %s\n", i,
                   got ? "wrong payload" : "miss after store");
      return 1;
    }
  }
  if (!cache.enabled()) {
    std::fprintf(stderr, "cache_race_child: cache disabled\n");
    return 1;
  }
  return 0;
}

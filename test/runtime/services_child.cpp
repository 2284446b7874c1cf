// test/runtime/services_child.cpp — a program test_services runs as a child process, so that a
// fresh process reads the environment and starts with empty in-memory caches:
//   services_child profile    launch a kernel under scopes (run with TILE_PROFILE=path: the
//                             profile must be written at exit without any call of tile::prof)
//   services_child autotune   autotune a kernel over three configs; print "tunings=T disk_hits=H
//                             best=<config>" (run twice with one TILE_CACHE_DIR: the second
//                             process must tune nothing)
#include <cstdio>
#include <cstring>
#include <tile/tile.hpp>

using namespace tile::literals;

namespace {
auto fill = tile::kernel("child_fill", [](tl::ptr<float> out, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::cast<float>(offs), offs < n);
});
}  // namespace

int main(int argc, char** argv) {
  try {
    auto dev = tile::device::best();
    auto out = dev.alloc<float>(256);
    if (argc > 1 && std::strcmp(argv[1], "profile") == 0) {
      tile::prof::scope outer("outer", {{"flops", 256}});
      fill[{2}](out, 256, "BLOCK"_c = 128);
      {
        tile::prof::scope inner("inner");
        fill[{4}](out, 256, "BLOCK"_c = 64);
      }
      std::printf("child OK\n");
      return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "autotune") == 0) {
      auto tuned = tile::autotune(fill, {.configs = {tile::config({{"BLOCK", 64}}, 1), tile::config({{"BLOCK", 128}}, 2),
                                                     tile::config({{"BLOCK", 256}}, 4)},
                                         .key = {"n"},
                                         .arg_names = {"out", "n"},
                                         .warmup_ms = 1,
                                         .rep_ms = 5});
      auto grid = [](const tile::meta& m) { return tile::grid3{tile::cdiv(256, m["BLOCK"])}; };
      tuned[grid](out, 256);
      auto s = tuned.stats();
      std::printf("tunings=%zu disk_hits=%zu best=%s\n", s.tunings, s.disk_hits, tuned.last_config()->str().c_str());
      return 0;
    }
    std::fprintf(stderr, "usage: services_child profile|autotune\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}

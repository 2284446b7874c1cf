// test/jit/test_artifact.cpp — the one artifact format (src/jit/artifact.hpp): every field round
// trips, names and code of any bytes included; another version, a missing, unknown or malformed
// field does not parse (the cache then compiles again).
#include <doctest/doctest.h>

#include <string>

#include "jit/artifact.hpp"

using tile::jit::artifact;
using tile::jit::parse_artifact;
using tile::jit::serialize;

namespace {

artifact sample() {
  artifact a;
  a.kind = "cubin";
  a.kernel = "my kernel %1 (f16)";
  a.entry = "tile_my_kernel__1__f16_";
  a.arch = "sm_90a";
  a.num_warps = 8;
  a.shared_bytes = 98304;
  a.params = {"ptr<f16>", "ptr<f16>", "i32", "f32"};
  a.key = "0123456789abcdef-ff";
  a.exp_batch = 4;
  a.widest_exp_batch = 8;
  tile::drivers::tensor_map_spec t;
  t.elem = tile::dtype::f16;
  t.base.arg = 0;
  t.rows.arg = 2;
  t.cols.value = 4096;
  t.row_stride.arg = 3;
  t.box_rows = 128;
  t.box_cols = 64;
  t.swizzle_bytes = 128;
  a.tensor_maps = {t, t};
  // rows as the kernel computes them: arg2 * arg4 * arg5 * 3 in 32 bits (Z * H * N_CTX)
  a.tensor_maps[0].rows.times = {4, 5};
  a.tensor_maps[0].rows.scale = 3;
  a.tensor_maps[0].rows.bits = 32;
  a.code = std::string("\x7f" "ELF\0\n\nbinary\n", 15);
  return a;
}

std::string header_of(const std::string& bytes) { return bytes.substr(0, bytes.find('\n')); }
std::string with_header(const std::string& bytes, const std::string& header) { return header + bytes.substr(bytes.find('\n')); }

}  // namespace

TEST_CASE("artifact: every field round trips") {
  const artifact a = sample();
  const std::string bytes = serialize(a);
  CHECK(bytes.rfind("tile-artifact 1 kind=cubin kernel=my%20kernel%20%251%20%28f16%29 ", 0) == 0);
  auto b = parse_artifact(bytes);
  REQUIRE(b);
  CHECK(b->kind == a.kind);
  CHECK(b->kernel == a.kernel);
  CHECK(b->entry == a.entry);
  CHECK(b->arch == a.arch);
  CHECK(b->num_warps == 8);
  CHECK(b->shared_bytes == 98304);
  CHECK(b->params == a.params);
  CHECK(b->key == a.key);
  CHECK(b->exp_batch == 4);
  CHECK(b->widest_exp_batch == 8);
  REQUIRE(b->tensor_maps.size() == 2);
  CHECK(b->tensor_maps[1].rows.arg == 2);
  CHECK(b->tensor_maps[1].cols.arg == -1);
  CHECK(b->tensor_maps[1].cols.value == 4096);
  CHECK(b->tensor_maps[1].box_cols == 64);
  CHECK(b->tensor_maps[1].rows.times.empty());
  CHECK(b->tensor_maps[0].rows.arg == 2);
  CHECK(b->tensor_maps[0].rows.times == std::vector<int>{4, 5});
  CHECK(b->tensor_maps[0].rows.scale == 3);
  CHECK(b->tensor_maps[0].rows.bits == 32);
  CHECK(b->tensor_maps == a.tensor_maps);
  CHECK(bytes.find(":a2*a4*a5*c3/32:") != std::string::npos);
  CHECK(b->code == a.code);
  CHECK(b->warp_specialize == 0);
  CHECK(serialize(*b) == bytes);
  for (int ws : {1, 2}) {  // (a kernel that could run warp-specialized, one that does)
    artifact w = a;
    w.warp_specialize = ws;
    const std::string wb = serialize(w);
    CHECK(wb.find(" ws=" + std::to_string(ws) + "\n") != std::string::npos);
    auto p = parse_artifact(wb);
    REQUIRE(p);
    CHECK(p->warp_specialize == ws);
    CHECK(serialize(*p) == wb);
  }

  artifact empty;  // no parameters, no maps, no code
  empty.kind = "o";
  auto e = parse_artifact(serialize(empty));
  REQUIRE(e);
  CHECK(e->params.empty());
  CHECK(e->tensor_maps.empty());
  CHECK(e->code.empty());
}

TEST_CASE("artifact: what serialize did not write does not parse") {
  const std::string bytes = serialize(sample());
  const std::string h = header_of(bytes);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string x = h;
    const auto at = x.find(from);
    REQUIRE(at != std::string::npos);
    return with_header(bytes, x.replace(at, from.size(), to));
  };
  CHECK_FALSE(parse_artifact(""));
  CHECK_FALSE(parse_artifact("tile-artifact 1 kind=o"));               // no newline
  CHECK_FALSE(parse_artifact(replaced("tile-artifact 1", "tile-artifact 2")));  // another version
  CHECK_FALSE(parse_artifact(replaced("tile-artifact", "tile-ptx")));          // the old PTX header
  CHECK_FALSE(parse_artifact(replaced(" warps=8", "")));                       // a field missing
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=8 warps=8")));       // twice
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=8 color=red")));     // unknown
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=eight")));
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=-8")));
  CHECK_FALSE(parse_artifact(replaced(" expbatch=4", " expbatch=0")));
  CHECK_FALSE(parse_artifact(replaced("kernel=my%20", "kernel=my%2")));        // a cut escape
  CHECK_FALSE(parse_artifact(replaced("kernel=my%20", "kernel=my%zz")));
  CHECK_FALSE(parse_artifact(replaced(":128:64:128", ":128:64:96")));         // a swizzle the compiler never writes
  CHECK_FALSE(parse_artifact(replaced(":128:64:128", ":128:64")));            // a short map
  CHECK_FALSE(parse_artifact(replaced(":a0:a2:", ":x0:a2:")));                // a bad source
  CHECK_FALSE(parse_artifact(replaced("a2*a4*a5*c3/32", "a2*a4*c3*a5/32")));  // the constant not last
  CHECK_FALSE(parse_artifact(replaced("a2*a4*a5*c3/32", "a2*a4*a5*c3/16")));  // a width the kernels never have
  CHECK_FALSE(parse_artifact(replaced("a2*a4*a5*c3/32", "a2*a4**a5/32")));    // an empty factor
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=8 ws=3")));         // no such variant
  CHECK_FALSE(parse_artifact(replaced(" warps=8", " warps=8 ws=0")));         // (0 is written as nothing)
  CHECK(parse_artifact(replaced(" warps=8", " warps=8 ws=2")));
  CHECK(parse_artifact(replaced(" warps=8", " warps=8")));                    // (the helper itself)
}

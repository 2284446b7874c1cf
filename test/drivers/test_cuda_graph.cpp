// test/drivers/test_cuda_graph.cpp — launches and copies on a stream under capture (CUDA graphs).
//
// The caller owns the capture: it begins one on the stream it gave device::set_native_stream,
// and tile's launches, copies and fills on that device are recorded into the caller's graph.
// Checked on the GPU (skipped, saying why, without one):
//  - a sequence of copies (host to device, device to host), fills and launches of three kernels
//    runs only when the graph is launched, in order, and again at each replay, reading the host
//    memory as it is at the replay;
//  - a kernel launched for the first time during the capture is compiled and loaded then, and a
//    buffer allocated during the capture (upload: allocation, zeroing, copy) works in the graph;
//  - waiting (device::synchronize, buffer::to_host) and tuning an untuned autotuned kernel are
//    errors naming the caller's line, and leave the capture intact;
//  - after the capture the device works as before.
// buffer::copy_to (the copy into the caller's memory that a graph can record) also runs on the
// interpreter.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <tile/tile.hpp>
#include <vector>

#include "../requires.hpp"
#include "drivers/cuda/cuda_driver.hpp"
#include "runtime/device_impl.hpp"

using namespace tile::literals;
namespace cu = tile::drivers::cu;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

auto scale = tile::kernel("g_scale", [](tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(y + offs, tl::load(x + offs, offs < n) * 2.0f, offs < n);
});

auto axpy = tile::kernel("g_axpy", [](tl::ptr<float> a, tl::ptr<float> b, tl::ptr<float> out, tl::i32 n, tl::f32 alpha,
                                      tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(out + offs, tl::load(a + offs, m) * alpha + tl::load(b + offs, m), m);
});

auto add_one = tile::kernel("g_add_one", [](tl::ptr<float> x, tl::i32 n, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(x + offs, tl::load(x + offs, offs < n) + 1.0f, offs < n);
});

/// A capture begun on `stream` and the graph it made (destroyed with the object).
struct capture {
  const tile::drivers::cuda_api& api;
  cu::CUstream stream;
  cu::CUgraph graph = nullptr;
  cu::CUgraphExec exec = nullptr;
  capture(const tile::drivers::cuda_api& a, void* s) : api(a), stream(static_cast<cu::CUstream>(s)) {
    REQUIRE(api.cuStreamBeginCapture_v2(stream, cu::CU_STREAM_CAPTURE_MODE_GLOBAL) == cu::CUDA_SUCCESS);
  }
  void end() {
    REQUIRE(api.cuStreamEndCapture(stream, &graph) == cu::CUDA_SUCCESS);
    REQUIRE(api.cuGraphInstantiateWithFlags(&exec, graph, 0) == cu::CUDA_SUCCESS);
  }
  void replay() {
    REQUIRE(api.cuGraphLaunch(exec, stream) == cu::CUDA_SUCCESS);
    REQUIRE(api.cuStreamSynchronize(stream) == cu::CUDA_SUCCESS);
  }
  ~capture() {
    if (!graph) {  // a failed test case: end the capture, so the stream stays usable
      cu::CUgraph g = nullptr;
      if (api.cuStreamEndCapture(stream, &g) == cu::CUDA_SUCCESS && g) api.cuGraphDestroy(g);
    }
    if (exec) api.cuGraphExecDestroy(exec);
    if (graph) api.cuGraphDestroy(graph);
  }
};

}  // namespace

TEST_CASE("buffer::copy_to copies into the caller's memory; a size that differs names the line") {
  auto dev = tile::device::get("interpreter");
  auto b = dev.upload(std::vector<float>{1, 2, 3});
  std::vector<float> out(3);
  b.copy_to(out);
  CHECK(out == std::vector<float>{1, 2, 3});
  CHECK_FALSE(dev.capturing());
  std::vector<float> small(2);
  int line = 0;
  try {
    line = __LINE__ + 1;
    b.copy_to(small);
    FAIL("a size that differs must fail");
  } catch (const tile::error& e) {
    CHECK(contains(e.message(), "copy_to: host memory has 2 elements, the buffer 3"));
    CHECK(contains(e.what(), "test_cuda_graph.cpp:" + std::to_string(line)));
  }
}

TEST_CASE("cuda graphs: launches, copies and fills on a captured stream run when the graph does" * tiletest::needs_cuda) {
  auto dev = tile::device::get("cuda");
  auto& drv = dynamic_cast<tile::drivers::cuda_driver&>(dev.impl()->driver());
  void* st = drv.create_stream(true);
  dev.set_native_stream(st);
  constexpr int n = 5000;
  std::vector<float> in(n), out(n, -1.0f), out2(n, -1.0f), out3(n, -1.0f);
  for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto x = dev.alloc<float>(n), y = dev.alloc<float>(n), z = dev.alloc<float>(n), w = dev.alloc<float>(n);
  scale[{20}](x, y, n, "BLOCK"_c = 256);  // compiled and loaded before the capture
  dev.synchronize();

  std::vector<tile::config> cfgs;
  for (int b : {128, 256}) cfgs.emplace_back(std::vector<tile::named>{{"BLOCK", b}}, 4, 3);
  auto tuned = tile::autotune(add_one, {.configs = cfgs, .key = {"n"}, .arg_names = {"x", "n"}, .disk_cache = false});
  auto grid = [](const tile::meta& m) { return tile::grid3{tile::cdiv(n, m["BLOCK"])}; };

  CHECK_FALSE(dev.capturing());
  {
    capture c(drv.api(), st);
    CHECK(dev.capturing());
    x.copy_from(in);                                           // host -> device
    scale[{20}](x, y, n, "BLOCK"_c = 256);                     // y = 2x
    axpy[{tile::cdiv(n, 128)}](y, x, z, n, 3.0f, "BLOCK"_c = 128);  // z = 3y + x = 7x: compiled now
    z.copy_to(out);                                            // device -> host
    y.fill_zero();
    scale[{20}](z, y, n, "BLOCK"_c = 256);                     // y = 2z = 14x
    y.copy_to(out2);
    auto t = dev.upload(in);                                   // allocated, zeroed and filled in the capture
    add_one[{tile::cdiv(n, 512)}](t, n, "BLOCK"_c = 512);      // t = x + 1 at each replay (the copy runs first)
    t.copy_to(out3);

    // waiting is an error that leaves the capture intact
    int line = 0;
    try {
      line = __LINE__ + 1;
      dev.synchronize();
      FAIL("synchronize during a capture must fail");
    } catch (const tile::error& e) {
      CHECK(contains(e.message(), "captured into a CUDA graph"));
      CHECK(contains(e.what(), "test_cuda_graph.cpp:" + std::to_string(line)));
    }
    try {
      line = __LINE__ + 1;
      (void)y.to_host();
      FAIL("to_host during a capture must fail");
    } catch (const tile::error& e) {
      CHECK(contains(e.message(), "buffer::copy_to"));
      CHECK(contains(e.what(), "test_cuda_graph.cpp:" + std::to_string(line)));
    }
    try {
      line = __LINE__ + 1;
      tuned[grid](w, n);
      FAIL("tuning during a capture must fail");
    } catch (const tile::error& e) {
      CHECK(e.kernel() == "g_add_one");
      CHECK(contains(e.message(), "launch it once before the capture"));
      CHECK(contains(e.what(), "test_cuda_graph.cpp:" + std::to_string(line)));
    }
    CHECK(dev.capturing());
    CHECK(out[0] == -1.0f);  // nothing ran yet
    CHECK(out[n - 1] == -1.0f);

    c.end();
    CHECK_FALSE(dev.capturing());
    CHECK(out[n - 1] == -1.0f);
    c.replay();
    for (int i : {0, 1, 777, n - 1}) {
      CAPTURE(i);
      CHECK(out[static_cast<std::size_t>(i)] == 7.0f * static_cast<float>(i));
      CHECK(out2[static_cast<std::size_t>(i)] == 14.0f * static_cast<float>(i));
      CHECK(out3[static_cast<std::size_t>(i)] == static_cast<float>(i) + 1.0f);
    }
    // a replay reads the host memory as it is then
    for (float& v : in) v = 1.0f;
    c.replay();
    CHECK(out[0] == 7.0f);
    CHECK(out[n - 1] == 7.0f);
    CHECK(out2[n - 1] == 14.0f);
    CHECK(out3[n - 1] == 2.0f);
    c.replay();  // the same again: each replay starts from the host's values
    CHECK(out3[n - 1] == 2.0f);
    CHECK(z.to_host()[n - 1] == 7.0f);  // outside the capture, reading back works as before
  }

  // after the capture: tuning, waiting and reading back as before
  tuned[grid](w, n);
  CHECK(tuned.last_config());
  dev.synchronize();
  dev.set_native_stream(nullptr);
  drv.destroy_stream(st);
  scale[{20}](x, y, n, "BLOCK"_c = 256);
  CHECK(y.to_host()[n - 1] == 2.0f);  // x holds the last replay's copy of `in` (ones)
}

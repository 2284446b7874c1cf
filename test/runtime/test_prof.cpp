// test/runtime/test_prof.cpp — the profiler's recording side (tile::prof): scopes nesting into a
// call-path tree, kernels under the scope of the thread that launched them, deactivated regions,
// several sessions, launch hooks, the files finalize writes, and TILE_PROFILE on a whole program
// (a child process). Runs on the test environment's backend (the interpreter: host-clock times);
// the same cases run on the GPU machine with TILE_BACKEND=cuda (device times).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tile/tile.hpp>

#include "runtime/prof/profile_data.hpp"

using namespace tile::literals;
namespace fs = std::filesystem;
using tile::prof::detail::frame_node;
using tile::prof::detail::profile;

namespace {

auto tiny = tile::kernel("tiny", [](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::cast<float>(offs));
});
auto other = tile::kernel("other", [](tl::ptr<float> out) {
  tl::store(out + tl::arange(0, 16), tl::full<float>({16}, 1.0f));
});

const frame_node* find(const frame_node& n, const std::string& name) {
  for (const auto& c : n.children)
    if (c->name == name) return c.get();
  return nullptr;
}
const frame_node& at(const frame_node& n, const std::string& name) {
  const frame_node* c = find(n, name);
  INFO("no child '" << name << "' under '" << n.name << "'");
  REQUIRE(c != nullptr);
  return *c;
}
double metric(const frame_node& n, const std::string& m) {
  auto it = n.metrics.find(m);
  return it == n.metrics.end() ? -1.0 : it->second;
}
std::string tiny_name(int grid, int warps = 4) {
  return "tiny <grid:" + std::to_string(grid) + "x1x1> <warps:" + std::to_string(warps) + "> <stages:3>";
}
profile current(int session) { return tile::prof::detail::from_hatchet(tile::prof::hatchet_json(session)); }

std::string temp_dir(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("tile-prof-test-" + std::to_string(getpid()) + "-" + tag);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}
std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("prof: nested scopes make a call-path tree; kernels sit under the scope that launched them") {
  auto dev = tile::device::best();
  auto out = dev.alloc<float>(256);
  const int s = tile::prof::start(temp_dir("tree") + "/p");
  CHECK(tile::prof::active());
  {
    tile::prof::scope train("train", {{"flops", 2e6}, {"bytes", 8e6}});
    {
      tile::prof::scope fwd("forward");
      tiny[{2}](out, "BLOCK"_c = 128);
      tiny[{2}](out, "BLOCK"_c = 128);
    }
    {
      tile::prof::scope bwd("backward", {{"flops", 1e6}});
      tiny[{4}](out, "BLOCK"_c = 64, "num_warps"_c = 2);
    }
  }
  {
    tile::prof::scope train("train", {{"flops", 2e6}});  // entered again: metrics add up
    other[{1}](out);
  }
  other[{1}](out);  // no scope: under ROOT
  profile p = current(s);
  const frame_node& train = at(p.root, "train");
  CHECK(metric(train, "flops") == doctest::Approx(4e6));
  CHECK(metric(train, "bytes") == doctest::Approx(8e6));
  const frame_node& k = at(at(train, "forward"), tiny_name(2));
  CHECK(k.kernel);
  CHECK(metric(k, "count") == 2);
  CHECK(k.device_type == (dev.backend() == "cuda" ? "CUDA" : dev.backend() == "cpu" ? "CPU" : "INTERPRETER"));
  const frame_node& kb = at(at(train, "backward"), tiny_name(4, 2));
  CHECK(metric(kb, "count") == 1);
  CHECK(metric(at(train, "backward"), "flops") == doctest::Approx(1e6));
  CHECK(metric(at(train, "other <grid:1x1x1> <warps:4> <stages:3>"), "count") == 1);
  CHECK(metric(at(p.root, "other <grid:1x1x1> <warps:4> <stages:3>"), "count") == 1);
  if (dev.computes()) {
    CHECK(metric(k, "time (ns)") > 0);
    CHECK(metric(kb, "time (ns)") > 0);
    CHECK(!tile::prof::timer_of(s).empty());
  }
  // the trace: one event per timed launch, with its call stack
  auto trace = tile::prof::chrome_trace_json(s);
  if (dev.computes()) {
    CHECK(trace.find("\"forward\"") != std::string::npos);
    CHECK(trace.find("\"ph\":\"X\"") != std::string::npos);
  }
  auto paths = tile::prof::finalize(s);
  REQUIRE(paths.size() == 2);
  CHECK(!tile::prof::active());
  // the files parse back into the same tree
  profile back = tile::prof::detail::from_hatchet(slurp(paths[0]));
  CHECK(metric(at(at(at(back.root, "train"), "forward"), tiny_name(2)), "count") == 2);
  CHECK(slurp(paths[1]).find("traceEvents") != std::string::npos);
  CHECK_THROWS_AS(tile::prof::hatchet_json(s), tile::error);  // finalized
}

TEST_CASE("prof: each thread's kernels go under that thread's own scopes") {
  auto dev = tile::device::best();
  auto a = dev.alloc<float>(256), b = dev.alloc<float>(256);
  const int s = tile::prof::start(temp_dir("threads") + "/p");
  {
    tile::prof::scope main_scope("main_thread");
    std::thread t([&] {
      {
        tile::prof::scope w("worker");
        for (int i = 0; i < 3; ++i) tiny[{2}](a, "BLOCK"_c = 128);
      }
      tiny[{1}](a, "BLOCK"_c = 128);  // the worker has left its scope: ROOT, not main_thread
    });
    for (int i = 0; i < 5; ++i) tiny[{2}](b, "BLOCK"_c = 128);
    t.join();
  }
  profile p = current(s);
  CHECK(metric(at(at(p.root, "main_thread"), tiny_name(2)), "count") == 5);
  CHECK(metric(at(at(p.root, "worker"), tiny_name(2)), "count") == 3);
  CHECK(metric(at(p.root, tiny_name(1)), "count") == 1);
  CHECK(find(at(p.root, "main_thread"), "worker") == nullptr);
  tile::prof::finalize(s);
}

TEST_CASE("prof: deactivated regions are not recorded; several sessions record independently") {
  auto dev = tile::device::best();
  auto out = dev.alloc<float>(256);
  const std::string dir = temp_dir("sessions");
  const int s1 = tile::prof::start(dir + "/one");
  tiny[{1}](out, "BLOCK"_c = 128);
  tile::prof::deactivate(s1);
  CHECK(!tile::prof::active());
  {
    tile::prof::scope hidden("hidden", {{"flops", 5}});
    tiny[{1}](out, "BLOCK"_c = 128);
  }
  const int s2 = tile::prof::start(dir + "/two");
  tiny[{1}](out, "BLOCK"_c = 128);  // s2 only
  tile::prof::activate(s1);
  tiny[{1}](out, "BLOCK"_c = 128);  // both
  profile p1 = current(s1), p2 = current(s2);
  CHECK(metric(at(p1.root, tiny_name(1)), "count") == 2);
  CHECK(find(p1.root, "hidden") == nullptr);
  CHECK(metric(at(p2.root, tiny_name(1)), "count") == 2);
  auto all = tile::prof::finalize();  // every session
  CHECK(all.size() == 4);
  CHECK(fs::exists(dir + "/one.hatchet"));
  CHECK(fs::exists(dir + "/two.chrome_trace"));
  CHECK_THROWS_AS(tile::prof::activate(s1), tile::error);
  try {  // the message names the caller's line
    tile::prof::hatchet_json(s1);
    FAIL("expected an error for a finalized session");
  } catch (const tile::error& e) {
    CHECK(std::string(e.what()).find("test_prof.cpp") != std::string::npos);
    CHECK(std::string(e.what()).find("no session") != std::string::npos);
  }
  CHECK_THROWS_AS(tile::prof::start("x", {.device_timer = "sundial"}), tile::error);
}

TEST_CASE("prof: launch hooks see every launch's metadata, with or without a session") {
  auto dev = tile::device::best();
  auto out = dev.alloc<float>(256);
  std::vector<std::string> seen;
  unsigned line = 0;
  std::uint64_t last_id = 0;
  const int h = tile::prof::add_launch_hook(
      [&](const tile::prof::launch_info& i) {
        seen.push_back("enter " + std::string(i.kernel) + " " + std::to_string(i.grid[0]) + " w" +
                       std::to_string(i.num_warps) + " args" + std::to_string(i.num_args));
        CHECK(i.id > last_id);
        last_id = i.id;
        CHECK(std::string(i.file).find("test_prof.cpp") != std::string::npos);
        line = i.line;
        CHECK(i.backend == dev.backend());
      },
      [&](const tile::prof::launch_info& i) { seen.push_back("exit " + std::string(i.kernel)); });
  const unsigned launch_line = __LINE__ + 1;
  tiny[{3}](out, "BLOCK"_c = 64, "num_warps"_c = 8);
  tile::prof::remove_launch_hook(h);
  tiny[{3}](out, "BLOCK"_c = 64);  // not seen
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "enter tiny 3 w8 args1");
  CHECK(seen[1] == "exit tiny");
  CHECK(line == launch_line);
}

TEST_CASE("prof: a launch that fails is not recorded, and the hooks' exit still runs") {
  auto dev = tile::device::best();
  auto out = dev.alloc<float>(16);
  const int s = tile::prof::start(temp_dir("fail") + "/p");
  int exits = 0;
  const int h = tile::prof::add_launch_hook({}, [&](const tile::prof::launch_info&) { ++exits; });
  if (dev.backend() == "interpreter") {  // the interpreter checks every access: this one is out of bounds
    CHECK_THROWS_AS(tiny[{4}](out, "BLOCK"_c = 16), tile::error);
    CHECK(exits == 1);
    profile p = current(s);
    const bool absent = find(p.root, tiny_name(4)) == nullptr;
  CHECK(absent);
  }
  tile::prof::remove_launch_hook(h);
  tile::prof::finalize(s);
}

TEST_CASE("prof: TILE_PROFILE profiles a whole program without code changes") {
  const char* child = std::getenv("SERVICES_CHILD");
  REQUIRE_MESSAGE(child != nullptr, "SERVICES_CHILD must name the services_child executable");
  const std::string stem = temp_dir("env") + "/whole";
  const std::string cmd = "TILE_PROFILE=" + stem + " " + child + " profile 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int rc = pclose(p);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("child OK") != std::string::npos);
  CHECK(out.find("TILE_PROFILE wrote") != std::string::npos);
  REQUIRE(fs::exists(stem + ".hatchet"));
  REQUIRE(fs::exists(stem + ".chrome_trace"));
  profile prof = tile::prof::detail::from_hatchet(slurp(stem + ".hatchet"));
  const frame_node& outer = at(prof.root, "outer");
  CHECK(metric(outer, "flops") == 256);
  CHECK(metric(at(outer, "child_fill <grid:2x1x1> <warps:4> <stages:3>"), "count") == 1);
  CHECK(metric(at(at(outer, "inner"), "child_fill <grid:4x1x1> <warps:4> <stages:3>"), "count") == 1);
}

TEST_CASE("prof: an enter hook that throws: the launch does not happen, hooks entered before it are exited") {
  auto dev = tile::device::best();
  auto out = dev.alloc<float>(256);
  std::vector<std::string> seen;
  const int s = tile::prof::start(temp_dir("hookthrow") + "/p");
  const int h1 = tile::prof::add_launch_hook([&](const tile::prof::launch_info&) { seen.push_back("enter 1"); },
                                             [&](const tile::prof::launch_info&) { seen.push_back("exit 1"); });
  const int h2 = tile::prof::add_launch_hook([&](const tile::prof::launch_info&) { throw std::runtime_error("hook"); }, {});
  CHECK_THROWS_AS(tiny[{1}](out, "BLOCK"_c = 128), std::runtime_error);
  CHECK(seen == std::vector<std::string>{"enter 1", "exit 1"});
  tile::prof::remove_launch_hook(h2);
  tiny[{1}](out, "BLOCK"_c = 128);  // the profiler is still consistent
  tile::prof::remove_launch_hook(h1);
  profile p = current(s);
  CHECK(metric(at(p.root, tiny_name(1)), "count") == 1);
  tile::prof::finalize(s);
}

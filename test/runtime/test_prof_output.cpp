// test/runtime/test_prof_output.cpp — the profiler's output side against real Proton files
// (test/runtime/data/proton, made by Triton 3.6's Proton on an H100, built into this executable
// by embed_data.py): the JSON library (values, the float spelling, strict parsing with error
// positions), the hatchet writer (byte for byte Proton's file for the same profile, the same shape
// frame by frame, read back and written again unchanged), the Chrome trace writer, the viewer's
// tree, metrics and top-kernels table, and the exit codes of the tile-prof tool (TILE_PROF).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "proton_data.hpp"  // generated: the files of data/proton
#include "runtime/prof/json.hpp"
#include "runtime/prof/profile_data.hpp"
#include "runtime/prof/viewer.hpp"
#include "../requires.hpp"

namespace prof = tile::prof::detail;
namespace json = tile::prof::detail::json;

namespace {

std::string proton_hatchet() { return std::string(embedded_data::proton_sample_hatchet); }
std::string proton_trace() { return std::string(embedded_data::proton_sample_trace_chrome_trace); }

void add_kernel(prof::frame_node& scope, const std::string& name, double ns) {
  prof::frame_node& k = scope.child(name, true);
  k.metrics["count"] += 1;
  k.metrics["time (ns)"] += ns;
  k.device_type = "CUDA";
  k.device_id = 0;
}

/// The session proton-sample.hatchet recorded, entered in the order it ran: train (flops, bytes)
/// > forward > add_one, scale; train > backward (flops) > add_one; then eval > scale.
prof::profile sample_profile() {
  prof::profile p;
  prof::frame_node& train = p.root.child("train", false);
  train.metrics["flops"] = 2e6;
  train.metrics["bytes"] = 8e6;
  prof::frame_node& forward = train.child("forward", false);
  add_kernel(forward, "add_one", 2112);
  add_kernel(forward, "scale", 2080);
  prof::frame_node& backward = train.child("backward", false);
  backward.metrics["flops"] = 1e6;
  add_kernel(backward, "add_one", 2015);
  add_kernel(p.root.child("eval", false), "scale", 2048);
  p.devices.push_back({"CUDA", 0, "90", 5120, 1980000, 2619000, 132});
  // proton-sample-trace.chrome_trace's one launch (another session, scope "traced").
  p.events.push_back({"add_one", "kernel", 0.0, 2.176, 7, {"ROOT", "traced", "add_one"}});
  return p;
}

std::set<std::string> keys_of(const json::value& obj) {
  std::set<std::string> keys;
  for (const auto& [k, v] : obj.members()) keys.insert(k);
  return keys;
}

/// How a JSON value is typed, telling Proton's integers from its floats.
std::string type_of(const json::value& v) {
  if (v.is_number()) return v.is_float() ? "float" : "int";
  return json::kind_name(v.type());
}

/// Same layout: kinds, int vs float, object key sets, array lengths, recursively (string and
/// number values are not compared).
void check_same_shape(const json::value& ours, const json::value& theirs, const std::string& path) {
  INFO("at " << path);
  REQUIRE(type_of(ours) == type_of(theirs));
  if (ours.is_array()) {
    REQUIRE(ours.size() == theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
      check_same_shape(ours.items()[i], theirs.items()[i], path + "[" + std::to_string(i) + "]");
  } else if (ours.is_object()) {
    REQUIRE(keys_of(ours) == keys_of(theirs));
    for (const auto& [k, v] : ours.members()) check_same_shape(v, theirs.at(k), path + "." + k);
  }
}

/// Every frame of a hatchet tree has exactly Proton's keys; kernels exactly Proton's metrics.
void check_frame_keys(const json::value& frame, int& kernels) {
  CHECK(keys_of(frame) == std::set<std::string>{"children", "frame", "metrics"});
  CHECK(keys_of(frame.at("frame")) == std::set<std::string>{"name", "type"});
  CHECK(frame.at("frame").at("type").as_string() == "function");
  const json::value& m = frame.at("metrics");
  if (m.find("device_type") && frame.at("frame").at("name").as_string() != "ROOT") {
    ++kernels;
    CHECK(keys_of(m) == std::set<std::string>{"count", "device_id", "device_type", "time (ns)"});
    CHECK(type_of(m.at("count")) == "int");
    CHECK(type_of(m.at("time (ns)")) == "int");
    CHECK(type_of(m.at("device_id")) == "a string");
    CHECK(m.at("device_type").as_string() == "CUDA");
  }
  for (const json::value& c : frame.at("children").items()) check_frame_keys(c, kernels);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

// ---- json ---------------------------------------------------------------------------------------

TEST_CASE("json: values, sorted keys, compact and indented text") {
  json::value o = json::value::object();
  o["zeta"] = json::value::integer(3);
  o["alpha"] = json::value::real(1000000.0);
  o["mid"] = json::value::array();
  o["mid"].push_back(json::value::string("a\"b\\c\n\x01"));
  o["mid"].push_back(json::value::boolean(true));
  o["mid"].push_back(json::value());
  o["empty"] = json::value::object();
  CHECK(json::dump(o) ==
        R"({"alpha":1000000.0,"empty":{},"mid":["a\"b\\c\n\u0001",true,null],"zeta":3})");
  CHECK(json::dump(o, 4) ==
        "{\n    \"alpha\": 1000000.0,\n    \"empty\": {},\n    \"mid\": [\n        "
        "\"a\\\"b\\\\c\\n\\u0001\",\n        true,\n        null\n    ],\n    \"zeta\": 3\n}");
  CHECK(json::parse(json::dump(o)) == o);
  CHECK(json::parse(json::dump(o, 4)) == o);
  CHECK(o.find("nope") == nullptr);
  CHECK_THROWS_AS(o.at("nope"), std::runtime_error);
  CHECK_THROWS_WITH_AS(o.at("zeta").as_string(), "json: expected a string, found a number",
                       std::runtime_error);
}

TEST_CASE("json: floats are spelled as Proton's writer spells them; integers without a fraction") {
  CHECK(json::format_float(0.0) == "0.0");
  CHECK(json::format_float(-0.0) == "-0.0");
  CHECK(json::format_float(2.176) == "2.176");
  CHECK(json::format_float(1e6) == "1000000.0");
  CHECK(json::format_float(8e6) == "8000000.0");
  CHECK(json::format_float(0.1) == "0.1");
  CHECK(json::format_float(0.0001) == "0.0001");
  CHECK(json::format_float(0.00001) == "1e-05");
  CHECK(json::format_float(1.5e-7) == "1.5e-07");
  CHECK(json::format_float(123456789012345.0) == "123456789012345.0");
  CHECK(json::format_float(1e15) == "1e+15");
  CHECK(json::format_float(-2.5e300) == "-2.5e+300");
  CHECK(json::format_float(1.0 / 3) == "0.3333333333333333");
  CHECK(json::format_float(NAN) == "null");
  CHECK(json::dump(json::value::integer(2048)) == "2048");
  CHECK(json::dump(json::value::integer(-7)) == "-7");
  CHECK(json::dump(json::value::real(2048)) == "2048.0");
  // the parser keeps the spelling's kind, so text read and written back is unchanged
  for (const char* text : {"0", "-12", "12.5", "1e+20", "1000000.0", "0.0", "[1,2.0,-0.5]"})
    CHECK(json::dump(json::parse(text)) == text);
  CHECK(json::parse("1E3").is_float());
  CHECK(json::parse("1E3").as_number() == 1000);
  CHECK_FALSE(json::parse("9007199254740992").is_float());
}

TEST_CASE("json: strings — escapes and \\u code points become UTF-8") {
  CHECK(json::parse(R"("\u00e9\u20ac\ud83d\ude00\/\b\f\r\t")").as_string() ==
        "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/\b\f\r\t");
  CHECK(json::dump(json::value::string("\xc3\xa9")) == "\"\xc3\xa9\"");  // UTF-8 passes through
}

TEST_CASE("json: malformed input throws parse_error with line and column") {
  struct bad {
    const char* text;
    std::size_t line, column;
    const char* says;
  };
  const bad cases[] = {
      {"", 1, 1, "unexpected end of input"},
      {"{\n  \"a\": 1,\n}", 3, 1, "expected a string key"},
      {"[1, 2,]", 1, 7, "unexpected character ']'"},
      {"[1 2]", 1, 4, "expected ',' or ']'"},
      {"{\"a\" 1}", 1, 6, "expected ':'"},
      {"{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\""},
      {"01", 1, 2, "leading zero"},
      {"1.", 1, 3, "digit after the decimal point"},
      {"-", 1, 2, "expected a digit"},
      {"1e", 1, 3, "exponent"},
      {"tru", 1, 1, "expected true"},
      {"\"abc", 1, 5, "unterminated string"},
      {"\"a\tb\"", 1, 3, "control character"},
      {"\"\\x\"", 1, 3, "invalid escape"},
      {"\"\\u12G4\"", 1, 6, "four hex digits"},
      {"\"\\ud800\"", 1, 2, "high surrogate"},
      {"\"\\udc00\"", 1, 2, "lone low surrogate"},
      {"[1] [2]", 1, 5, "unexpected text after"},
      {"// comment\n1", 1, 1, "unexpected character '/'"},
      {"1e999", 1, 1, "out of range"},
  };
  for (const bad& b : cases) {
    INFO("input: " << b.text);
    try {
      json::parse(b.text);
      FAIL("no exception");
    } catch (const json::parse_error& e) {
      CHECK(e.line() == b.line);
      CHECK(e.column() == b.column);
      CHECK(std::string(e.what()).find(b.says) != std::string::npos);
      CHECK(std::string(e.what()).rfind("json: line " + std::to_string(b.line) + ", column " +
                                            std::to_string(b.column) + ": ",
                                        0) == 0);
    }
  }
  // nesting is bounded (no stack overflow on hostile input)
  CHECK_NOTHROW(json::parse(std::string(512, '[') + std::string(512, ']')));
  CHECK_THROWS_AS(json::parse(std::string(513, '[') + std::string(513, ']')), json::parse_error);
  CHECK_THROWS_AS(json::parse(std::string(100000, '[')), json::parse_error);
}

// ---- the profile data model ------------------------------------------------------------------

TEST_CASE("frame_node::child finds or appends, keeping scopes and kernels apart") {
  prof::frame_node root;
  prof::frame_node& a = root.child("a", false);
  CHECK(&root.child("a", false) == &a);
  prof::frame_node& ka = root.child("a", true);
  CHECK(&ka != &a);
  CHECK(ka.kernel);
  CHECK_FALSE(a.kernel);
  root.child("b", false);
  REQUIRE(root.children.size() == 3);
  CHECK(root.children[2]->name == "b");
}

// ---- hatchet ----------------------------------------------------------------------------------

TEST_CASE("hatchet: the sample profile is written byte for byte as Proton wrote it") {
  const std::string ours = prof::to_hatchet(sample_profile());
  CHECK(ours == proton_hatchet());
}

TEST_CASE("hatchet: the same shape as Proton's file, frame by frame and metric by metric") {
  const json::value ours = json::parse(prof::to_hatchet(sample_profile()));
  const json::value theirs = json::parse(proton_hatchet());
  REQUIRE(ours.is_array());
  REQUIRE(ours.size() == 2);
  check_same_shape(ours, theirs, "$");
  int ours_kernels = 0, their_kernels = 0;
  check_frame_keys(ours.items()[0], ours_kernels);
  check_frame_keys(theirs.items()[0], their_kernels);
  CHECK(ours_kernels == 4);
  CHECK(their_kernels == 4);
  // scope metrics are floats, the root's placeholders integer zeros naming every metric
  const json::value& train = ours.items()[0].at("children").items()[1];
  CHECK(train.at("frame").at("name").as_string() == "train");
  CHECK(type_of(train.at("metrics").at("flops")) == "float");
  CHECK(keys_of(ours.items()[0].at("metrics")) ==
        std::set<std::string>{"bytes", "count", "flops", "time (ns)"});
  for (const auto& [k, v] : ours.items()[0].at("metrics").members()) CHECK(json::dump(v) == "0");
  const json::value& dev = ours.items()[1].at("CUDA").at("0");
  CHECK(keys_of(dev) == std::set<std::string>{"arch", "bus_width", "clock_rate",
                                              "memory_clock_rate", "num_sms"});
  CHECK(type_of(dev.at("arch")) == "a string");
  CHECK(type_of(dev.at("num_sms")) == "int");
}

TEST_CASE("hatchet: read back and written again unchanged, Proton's file and ours") {
  const std::string ours = prof::to_hatchet(sample_profile());
  CHECK(prof::to_hatchet(prof::from_hatchet(ours)) == ours);
  const std::string theirs = proton_hatchet();
  CHECK(prof::to_hatchet(prof::from_hatchet(theirs)) == theirs);

  // a profile with other devices, odd names, extra kernel metrics and root-level kernels
  prof::profile p;
  add_kernel(p.root, "k \"quoted\" <grid:4x1x1>", 10.6);
  prof::frame_node& k = p.root.child("k \"quoted\" <grid:4x1x1>", true);
  k.device_type = "INTERPRETER";
  k.metrics["flops"] = 12.5;
  p.root.child("s", false).metrics["my counter"] = 3;
  p.devices.push_back({"INTERPRETER", 0, "", 0, 0, 0, 0});
  p.devices.push_back({"CUDA", 1, "90", 5120, 1980000, 2619000, 132});
  const std::string text = prof::to_hatchet(p);
  const json::value doc = json::parse(text);
  CHECK(json::dump(doc.items()[1]) ==
        R"({"CUDA":{"1":{"arch":"90","bus_width":5120,"clock_rate":1980000,)"
        R"("memory_clock_rate":2619000,"num_sms":132}},"INTERPRETER":{"0":{}}})");
  const json::value& km = doc.items()[0].at("children").items()[0].at("metrics");
  CHECK(json::dump(km) ==
        R"j({"count":1,"device_id":"0","device_type":"INTERPRETER","flops":12.5,"time (ns)":11})j");
  CHECK(prof::to_hatchet(prof::from_hatchet(text)) == text);
}

TEST_CASE("hatchet: reading Proton's file rebuilds its tree and devices") {
  const prof::profile p = prof::from_hatchet(proton_hatchet());
  CHECK(p.root.name == "ROOT");
  CHECK(p.root.metrics.empty());  // the zero placeholders are not measurements
  REQUIRE(p.root.children.size() == 2);
  const prof::frame_node& eval = *p.root.children[0];
  const prof::frame_node& train = *p.root.children[1];
  CHECK(eval.name == "eval");
  CHECK_FALSE(eval.kernel);
  REQUIRE(eval.children.size() == 1);
  CHECK(eval.children[0]->kernel);
  CHECK(eval.children[0]->metrics.at("time (ns)") == 2048);
  CHECK(eval.children[0]->metrics.at("count") == 1);
  CHECK(eval.children[0]->device_type == "CUDA");
  CHECK(train.metrics.at("flops") == 2e6);
  CHECK(train.metrics.at("bytes") == 8e6);
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].type == "CUDA");
  CHECK(p.devices[0].arch == "90");
  CHECK(p.devices[0].num_sms == 132);
  CHECK(p.devices[0].memory_clock_rate == 2619000);
}

TEST_CASE("hatchet: malformed files are refused saying what is wrong") {
  CHECK_THROWS_WITH_AS(prof::from_hatchet("{}"),
                       "hatchet: expected an array of the frame tree and the device map",
                       std::runtime_error);
  CHECK_THROWS_WITH_AS(prof::from_hatchet(R"([{"metrics": {}}, {}])"),
                       "hatchet: the root frame has no \"frame\" object", std::runtime_error);
  CHECK_THROWS_WITH_AS(
      prof::from_hatchet(R"([{"frame": {"name": "ROOT"}, "children": [{"frame": {"name": 3}}]}, {}])"),
      "hatchet: a frame under /ROOT has no \"name\" string in its \"frame\"", std::runtime_error);
  CHECK_THROWS_WITH_AS(prof::from_hatchet(R"([{"frame": {"name": "ROOT"}}, {"CUDA": {"x": {}}}])"),
                       "hatchet: device CUDA/x: device id \"x\" is not an integer",
                       std::runtime_error);
  CHECK_THROWS_AS(prof::from_hatchet("[{\"frame\": "), json::parse_error);
}

// ---- chrome trace -----------------------------------------------------------------------------

TEST_CASE("chrome trace: Proton's events, with pid added") {
  const std::string ours = prof::to_chrome_trace(sample_profile());
  // byte for byte Proton's file but for the pid the Trace Event Format asks for
  std::string expected = proton_trace();
  expected.replace(expected.find(R"("ph":"X",)"), 9, R"("ph":"X","pid":0,)");
  CHECK(ours == expected);

  const json::value o = json::parse(ours), t = json::parse(proton_trace());
  CHECK(keys_of(o) == keys_of(t));
  const json::value& oe = o.at("traceEvents").items().at(0);
  const json::value& te = t.at("traceEvents").items().at(0);
  std::set<std::string> proton_keys = keys_of(te);
  proton_keys.insert("pid");
  CHECK(keys_of(oe) == proton_keys);
  for (const auto& [k, v] : te.members()) {
    INFO("key " << k);
    CHECK(type_of(oe.at(k)) == type_of(v));
  }
  CHECK(type_of(oe.at("ts")) == "float");
  CHECK(type_of(oe.at("tid")) == "int");
}

TEST_CASE("chrome trace: events sorted by start, scopes with their category") {
  prof::profile p;
  p.events.push_back({"late", "kernel", 5.5, 1.0, 7, {"ROOT", "late"}});
  p.events.push_back({"outer", "scope", 0.25, 10.0, 1, {"ROOT", "outer"}});
  p.events.push_back({"early", "kernel", 1.0, 0.5, 7, {"ROOT", "outer", "early"}});
  const json::value doc = json::parse(prof::to_chrome_trace(p));
  const auto& ev = doc.at("traceEvents").items();
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].at("name").as_string() == "outer");
  CHECK(ev[0].at("cat").as_string() == "scope");
  CHECK(ev[0].at("tid").as_number() == 1);
  CHECK(ev[1].at("name").as_string() == "early");
  CHECK(ev[1].at("args").at("call_stack").size() == 3);
  CHECK(ev[2].at("name").as_string() == "late");
  CHECK(ev[2].at("ts").as_number() == 5.5);
  CHECK(ev[2].at("dur").as_number() == 1.0);
  CHECK(prof::to_chrome_trace(prof::profile{}) == "{\"displayTimeUnit\":\"us\",\"traceEvents\":[]}\n");
}

// ---- viewer -----------------------------------------------------------------------------------

TEST_CASE("viewer: the tree with inclusive time and derived tflop/s") {
  prof::view_options o;
  o.metrics = {"time/ns", "tflop/s"};
  const std::string text = prof::render(sample_profile(), o);
  // inclusive: train's time is its three kernels' (2112 + 2080 + 2015), its flops its own and
  // backward's (2e6 + 1e6), as proton-viewer computes them
  CHECK(text ==
        "8255.000 0.363 ROOT\n"
        "├─ 2048.000 0.000 eval\n"
        "│  └─ 2048.000 0.000 scale\n"
        "└─ 6207.000 0.483 train\n"
        "   ├─ 2015.000 0.496 backward\n"
        "   │  └─ 2015.000 0.000 add_one\n"
        "   └─ 4192.000 0.000 forward\n"
        "      ├─ 2112.000 0.000 add_one\n"
        "      └─ 2080.000 0.000 scale\n");
  CHECK(std::abs(3e6 / 6207e-9 / 1e12 - 0.483) < 5e-4);
  CHECK(std::abs(1e6 / 2015e-9 / 1e12 - 0.496) < 5e-4);
  // Proton's own file renders the same
  CHECK(prof::render(prof::from_hatchet(proton_hatchet()), o) == text);
}

TEST_CASE("viewer: units, averages, shares, rates, raw metrics by name") {
  const prof::profile p = sample_profile();
  prof::view_options o;
  o.metrics = {"TIME/us", "avg_time/ns", "pct", "gbyte/s", "count", "flops", "Time"};
  const auto lines = lines_of(prof::render(p, o));
  REQUIRE(lines.size() == 9);
  // bytes / time: 8e6 / 6207e-9 s = 1288.9 GB/s on train
  CHECK(lines[0] == "8.255 nan 100.000 969.110 4.000 3000000.000 8255.000 ROOT");
  CHECK(lines[3] == "└─ 6.207 nan 75.191 1288.867 3.000 3000000.000 6207.000 train");
  CHECK(lines[8] == "      └─ 2.080 2080.000 25.197 0.000 1.000 0.000 2080.000 scale");
  o.metrics = {"bogus"};
  CHECK_THROWS_WITH_AS(prof::render(p, o), "unknown metric 'bogus' (tile-prof -l lists the metrics)",
                       std::invalid_argument);
  o.metrics = {"tflop16/s"};
  CHECK_THROWS_WITH_AS(prof::render(p, o),
                       "metric 'tflop16/s' needs 'flops16', which this profile does not have",
                       std::invalid_argument);
  CHECK(prof::split_metric_list("time/ns, tflop/s") == std::vector<std::string>{"time/ns", "tflop/s"});
  CHECK_THROWS_AS(prof::split_metric_list("time/ns,,count"), std::invalid_argument);
}

TEST_CASE("viewer: depth and threshold") {
  const prof::profile p = sample_profile();
  prof::view_options o;
  o.depth = 2;
  CHECK(prof::render(p, o) == "8255.000 ROOT\n├─ 2048.000 eval\n└─ 6207.000 train\n");
  o.depth = 1;
  CHECK(prof::render(p, o) == "8255.000 ROOT\n");
  o.depth = 0;
  CHECK_THROWS_AS(prof::render(p, o), std::invalid_argument);
  o.depth = 100;
  o.threshold = 2100;  // only forward > add_one (2112) passes below train
  CHECK(prof::render(p, o) ==
        "8255.000 ROOT\n"
        "└─ 6207.000 train\n"
        "   └─ 4192.000 forward\n"
        "      └─ 2112.000 add_one\n");
}

TEST_CASE("viewer: the top kernels by total time, aggregated by name over every call path") {
  prof::profile p = sample_profile();
  add_kernel(p.root.child("eval", false), "softmax", 9000);
  add_kernel(p.root.child("eval", false), "softmax", 1000);
  prof::view_options o;
  o.metrics = {"time/us"};
  o.top = 2;
  const auto lines = lines_of(prof::render(p, o));
  REQUIRE(lines.size() >= 4);
  const std::vector<std::string> table(lines.end() - 4, lines.end());
  CHECK(table[0] == "top 2 kernels by total time:");
  CHECK(table[1] == "  total (us)  count  avg (us)   share  kernel");
  CHECK(table[2] == "      10.000      2     5.000  54.78%  softmax");
  CHECK(table[3] == "       4.128      2     2.064  22.61%  scale");  // 2080 + 2048 ns
  o.top = 10;  // more than there are: all three, add_one (4127 ns) last
  const auto all = lines_of(prof::render(p, o));
  CHECK(all[all.size() - 5] == "top 3 kernels by total time:");
  CHECK(all.back().find("add_one") != std::string::npos);
}

TEST_CASE("viewer: the legend lists the profile's metrics without their units") {
  const std::string legend = prof::metric_legend(prof::from_hatchet(proton_hatchet()));
  CHECK(legend.find("tflop/s") != std::string::npos);
  CHECK(legend.find("Available metrics:\n- bytes\n- count\n- flops\n- time\n") != std::string::npos);
}

// ---- the tool ---------------------------------------------------------------------------------

namespace {
int exit_code(const std::string& command) {
  int status = std::system((command + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

/// The tool's path comes from the environment (test/runtime/meson.build sets it).
constexpr tiletest::needs needs_tool{"needs the tile-prof tool", []() -> std::string {
  const char* tool = std::getenv("TILE_PROF");
  return tool && *tool ? "" : "TILE_PROF is not set: the tool itself is not run";
}};

TEST_CASE("tile-prof: exit codes" * needs_tool) {
  const char* tool = std::getenv("TILE_PROF");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tile-prof-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return "'" + (dir / name).string() + "'";
  };
  const std::string t = std::string("'") + tool + "' ";
  const std::string sample = file("proton-sample.hatchet", proton_hatchet());
  CHECK(exit_code(t + sample) == 0);
  CHECK(exit_code(t + "-m time/us,tflop/s -d 3 -t 1 --top 2 " + sample) == 0);
  CHECK(exit_code(t + "--metrics=count --depth=2 " + sample) == 0);
  CHECK(exit_code(t + "-l " + sample) == 0);
  CHECK(exit_code(t + "--help") == 0);
  CHECK(exit_code(t) == 2);                             // no file
  CHECK(exit_code(t + "-d x " + sample) == 2);          // not a number
  CHECK(exit_code(t + "-d 0 " + sample) == 2);          // depth < 1
  CHECK(exit_code(t + "--frobnicate " + sample) == 2);  // unknown option
  CHECK(exit_code(t + "-m bogus " + sample) == 2);      // unknown metric
  CHECK(exit_code(t + sample + " " + sample) == 2);     // two files
  CHECK(exit_code(t + "'" + (dir / "absent.hatchet").string() + "'") == 1);
  CHECK(exit_code(t + file("trace.json", proton_trace())) == 1);  // JSON, not a hatchet profile
  CHECK(exit_code(t + file("cut.hatchet", "[{\"frame\": ")) == 1);
  std::filesystem::remove_all(dir);
}

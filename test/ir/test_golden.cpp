// test/ir/test_golden.cpp — golden tests of the IR passes, as text: each file in test/ir/golden/
// holds a kernel in the printed form, a `// RUN: pass1,pass2` line naming the passes to run
// (constant_fold, cse, dce, load_cse, version_single_trip_loops, canonicalize,
// lower_descriptor_loads; the GPU level's select_mma, assign_layouts, remove_conversions,
// stage_mma_operands, to_gpu_ir, pipeline_loops (the loops plan_pipelines picks; dce after it)
// allocate_shared and insert_barriers, for the target a
// `// TARGET: sm_80|sm_90a|wave64` line names, sm_90a by default)
// and `// CHECK:` / `// CHECK-NEXT:` / `// CHECK-NOT:` lines checked
// against the IR printed after them (without locations), FileCheck's way: CHECK finds its text
// on a line after the last match, CHECK-NEXT on the very next line, CHECK-NOT in none of the
// lines between the matches around it. The passes run under the PassManager with verification
// on, so a pass that leaves bad IR fails by name. Also: malformed text is an error naming its
// line and column, and the parser reads back what the printer writes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "ir/ir.hpp"
#include "layout/gpu_passes.hpp"
#include "analysis/axis_info.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/insert_barriers.hpp"
#include "schedule/pipeline_loops.hpp"
#include "transforms/lower_descriptor_loads.hpp"
#include "transforms/pass_manager.hpp"
#include "transforms/passes.hpp"
#include "transforms/pipeline.hpp"
#include "targets/nvptx/nvptx_mma_forms.hpp"
#include "targets/nvptx/nvptx_copy_forms.hpp"

#ifndef TILE_GOLDEN_DIR
#error "TILE_GOLDEN_DIR: the directory of the golden files (test/ir/meson.build)"
#endif

namespace fs = std::filesystem;
using namespace tile;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// The GPU target a golden file's `// TARGET:` line names.
layout::target_caps target_of(const std::string& name) {
  if (name == "sm_80") return {.mma = targets::nvptx::mma_forms(80, false), .lanes = 32};
  if (name == "wave64") return {.mma = nullptr, .lanes = 64};
  REQUIRE_MESSAGE((name.empty() || name == "sm_90a"), "unknown TARGET: " << name);
  return {.mma = targets::nvptx::mma_forms(90, true), .lanes = 32};
}

/// The asynchronous copies of the target a `// TARGET:` line names (cp.async; the TMA on sm_90a).
const schedule::CopyTarget& copies_of(const layout::target_caps& caps) {
  const bool sm90a = caps.mma == targets::nvptx::mma_forms(90, true);
  return *targets::nvptx::copy_forms(sm90a ? 90 : 80, sm90a);
}

void run_passes(ir::Function& f, const std::string& list, const layout::target_caps& caps) {
  transforms::PassManager::Options o;
  o.verify = true;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string name = trim(list.substr(at, comma - at));
    at = comma + 1;
    if (name.empty()) continue;
    if (name == "canonicalize") {
      transforms::canonicalize(f, o);
      continue;
    }
    if (name == "lower_descriptor_loads") {
      transforms::lower_descriptor_loads(f, {});
      ir::verify(f, "lower_descriptor_loads");
      continue;
    }
    if (name == "to_gpu_ir") {
      layout::to_gpu_ir(f, caps, o);
      continue;
    }
    if (name == "pipeline_loops") {  // the loops plan_pipelines picks (228 KB of shared memory), then dce
      const analysis::AxisAnalysis axis(f);
      const schedule::PipelinePlan plan = schedule::plan_pipelines(f, axis, f.num_stages, 227 * 1024, copies_of(caps));
      transforms::PassManager pm(o);
      pm.add(schedule::make_pipeline_loops(plan));
      pm.add(transforms::make_dce());
      pm.run(f);
      continue;
    }
    const std::map<std::string, std::function<std::unique_ptr<transforms::Pass>()>> passes = {
        {"constant_fold", transforms::make_constant_fold},
        {"cse", transforms::make_cse},
        {"dce", transforms::make_dce},
        {"load_cse", transforms::make_load_cse},
        {"version_single_trip_loops", transforms::make_version_single_trip_loops},
        {"select_mma", [&] { return layout::make_select_mma(caps); }},
        {"assign_layouts", [&] { return layout::make_assign_layouts(caps); }},
        {"remove_conversions", layout::make_remove_conversions},
        {"stage_mma_operands", layout::make_stage_mma_operands},
        {"allocate_shared", [&] { return schedule::make_allocate_shared(); }},
        {"insert_barriers", [&] { return schedule::make_insert_barriers(); }}};
    auto it = passes.find(name);
    REQUIRE_MESSAGE(it != passes.end(), "unknown pass in RUN: " << name);
    transforms::PassManager pm(o);
    pm.add(it->second());
    pm.run(f);
  }
}

/// The CHECK lines of `spec` against `out`; the failures, one line each.
std::vector<std::string> file_check(const std::string& spec, const std::string& out) {
  std::vector<std::string> errors;
  const auto got = lines_of(out);
  std::size_t next = 0;                 // the first line a CHECK may match
  std::vector<std::string> nots;        // CHECK-NOTs waiting for the next match
  std::size_t not_from = 0;
  bool matched_any = false;
  auto check_nots = [&](std::size_t until) {
    for (const auto& n : nots)
      for (std::size_t i = not_from; i < until && i < got.size(); ++i)
        if (got[i].find(n) != std::string::npos) errors.push_back("CHECK-NOT: '" + n + "' found: " + got[i]);
    nots.clear();
  };
  for (const std::string& raw : lines_of(spec)) {
    const std::string l = trim(raw);
    auto directive = [&](const char* d) { return l.rfind(d, 0) == 0 ? trim(l.substr(std::string(d).size())) : std::string("\x01"); };
    if (std::string t = directive("// CHECK-NOT:"); t != "\x01") {
      nots.push_back(t);
      continue;
    }
    std::string t = directive("// CHECK-NEXT:");
    const bool is_next = t != "\x01";
    if (!is_next) t = directive("// CHECK:");
    if (t == "\x01") continue;
    std::size_t found = got.size();
    if (is_next) {
      if (matched_any && next < got.size() && got[next].find(t) != std::string::npos) found = next;
    } else {
      for (std::size_t i = next; i < got.size(); ++i)
        if (got[i].find(t) != std::string::npos) {
          found = i;
          break;
        }
    }
    if (found == got.size()) {
      errors.push_back(std::string(is_next ? "CHECK-NEXT" : "CHECK") + ": '" + t + "' not found after line " + std::to_string(next));
      return errors;
    }
    check_nots(found);
    matched_any = true;
    next = found + 1;
    not_from = next;
  }
  check_nots(got.size());
  return errors;
}

}  // namespace

TEST_CASE("golden: every pass test in test/ir/golden") {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(TILE_GOLDEN_DIR))
    if (e.path().extension() == ".tir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 7);
  for (const auto& p : files) {
    CAPTURE(p.filename().string());
    const std::string spec = read(p);
    std::string passes, target;
    for (const auto& l : lines_of(spec)) {
      if (trim(l).rfind("// RUN:", 0) == 0) passes = trim(trim(l).substr(7));
      if (trim(l).rfind("// TARGET:", 0) == 0) target = trim(trim(l).substr(10));
    }
    REQUIRE_MESSAGE(!passes.empty(), "no // RUN: line");
    REQUIRE_MESSAGE(spec.find("// CHECK") != std::string::npos, "no // CHECK line");
    auto f = ir::parse(spec, p.filename().string());
    if (f->gpu) f->mma_target = target_of(target).mma;  // (GPU-level text: its dots checked against the target's forms)
    ir::verify(*f, "parse");
    run_passes(*f, passes, target_of(target));
    const std::string out = ir::print(*f, false);
    const auto errors = file_check(spec, out);
    std::string all;
    for (const auto& e : errors) all += e + "\n";
    CHECK_MESSAGE(errors.empty(), all << "printed after " << passes << ":\n" << out);
  }
}

TEST_CASE("golden: the checker itself fails where it should") {
  const std::string out = "a\nb x\nc\nd\n";
  CHECK(file_check("// CHECK: a\n// CHECK-NEXT: b\n// CHECK: d\n", out).empty());
  CHECK_FALSE(file_check("// CHECK: b\n// CHECK: a\n", out).empty());          // order
  CHECK_FALSE(file_check("// CHECK: a\n// CHECK-NEXT: c\n", out).empty());     // not the next line
  CHECK_FALSE(file_check("// CHECK: a\n// CHECK-NOT: x\n// CHECK: c\n", out).empty());
  CHECK(file_check("// CHECK: a\n// CHECK-NOT: x\n// CHECK: b\n", out).empty());  // x is on the match
  CHECK_FALSE(file_check("// CHECK: e\n", out).empty());
}

TEST_CASE("parse: malformed text is an error at its line and column") {
  auto message = [](const std::string& text) {
    try {
      ir::parse(text, "bad.tir");
    } catch (const tile::error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "kernel @k(%arg0: ptr<f32>, %arg1: i32) {\n";
  CHECK(message(head + "  %0 = addd %arg1, %arg1 : i32\n  return\n}\n").find("bad.tir:2:8: expected an op name ('addd' is not one), found 'addd'") != std::string::npos);
  CHECK(message(head + "  %0 = add %arg1, %9 : i32\n  return\n}\n").find("bad.tir:2:19: expected a value defined before its use, found '%9'") != std::string::npos);
  CHECK(message(head + "  %0 = add %arg1, %arg1 : i33\n  return\n}\n").find("bad.tir:2:27: expected a type") != std::string::npos);
  CHECK(message(head + "  %0 = add %arg1, %arg1 : i32\n  %0 = add %arg1, %arg1 : i32\n  return\n}\n").find("bad.tir:3:3: expected a value not defined before") != std::string::npos);
  CHECK(message(head + "  %0 = arange {start = 0, end = 16, step = 2} : i32[16]\n  return\n}\n").find("bad.tir:2:37: expected an attribute of 'arange' ('step' is not one), found 'step'") != std::string::npos);
  CHECK(message(head + "  print \"x : %arg1 : i32\n  return\n}\n").find("bad.tir:2:9: expected a closing '\"'") != std::string::npos);
  CHECK(message(head + "  return\n").find("bad.tir:3:1: expected '}', found the end of the text") != std::string::npos);
  CHECK(message("kernel k() {\n}\n").find("bad.tir:1:8: expected the kernel's name '@name', found 'k'") != std::string::npos);
  // the verifier names the stage: a parsed kernel that is not valid IR
  auto f = ir::parse(head + "  %0 = add %arg1, %arg0 : i32\n  return\n}\n", "bad.tir");
  try {
    ir::verify(*f, "parse");
    FAIL("verified");
  } catch (const tile::error& e) {
    CHECK(std::string(e.what()).find("parse") != std::string::npos);
  }
}

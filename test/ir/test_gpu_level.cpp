// test/ir/test_gpu_level.cpp — the GPU level of the IR as text and as rules: a kernel the GPU
// passes made prints and parses back unchanged; the verifier's layout rules reject IR that breaks
// them, naming the pass that ran last, the op and the rule; layout text that is malformed is an
// error at its line and column; tile IR may hold neither a layout nor a GPU op.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include <fstream>
#include <sstream>

#include "analysis/axis_info.hpp"
#include "ir/ir.hpp"
#include "layout/gpu_passes.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/pipeline_loops.hpp"
#include "transforms/passes.hpp"
#include "layout/mma_engine.hpp"
#include "transforms/pass_manager.hpp"
#include "targets/nvptx/nvptx_mma_forms.hpp"
#include "targets/nvptx/nvptx_copy_forms.hpp"

using namespace tile;

namespace {

const char* kTranspose = R"(kernel @transpose(%arg0: ptr<f32> {div=16}, %arg1: ptr<f32> {div=16}) {
  %0 = arange {start = 0, end = 32} : i32[32]
  %1 = arange {start = 0, end = 64} : i32[64]
  %2 = expand_dims %0 {axis = 1} : i32[32] -> i32[32,1]
  %3 = expand_dims %1 {axis = 0} : i32[64] -> i32[1,64]
  %4 = constant 64 : i32[32,1]
  %5 = mul %2, %4 : i32[32,1]
  %6 = broadcast %5 : i32[32,1] -> i32[32,64]
  %7 = broadcast %3 : i32[1,64] -> i32[32,64]
  %8 = add %6, %7 : i32[32,64]
  %9 = splat %arg0 : ptr<f32> -> ptr<f32>[32,64]
  %10 = addptr %9, %8 : ptr<f32>[32,64]
  %11 = load %10 : f32[32,64]
  %12 = constant 32 : i32[1,64]
  %13 = mul %3, %12 : i32[1,64]
  %14 = broadcast %13 : i32[1,64] -> i32[32,64]
  %15 = broadcast %2 : i32[32,1] -> i32[32,64]
  %16 = add %14, %15 : i32[32,64]
  %17 = splat %arg1 : ptr<f32> -> ptr<f32>[32,64]
  %18 = addptr %17, %16 : ptr<f32>[32,64]
  store %18, %11 : ptr<f32>[32,64], f32[32,64]
  return
}
)";

std::unique_ptr<ir::Function> gpu_transpose() {
  auto f = ir::parse(kTranspose, "transpose.tir");
  transforms::PassManager::Options o;
  o.verify = true;
  layout::to_gpu_ir(*f, {.mma = targets::nvptx::mma_forms(90, true), .lanes = 32}, o);
  return f;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const tile::error& e) {
    return e.what();
  }
  return "no error";
}

/// A pass that breaks the IR on purpose, for the verifier to catch by the pass's name.
class Breaker final : public transforms::Pass {
 public:
  explicit Breaker(std::function<void(ir::Function&)> how) : how_(std::move(how)) {}
  std::string_view name() const override { return "breaker"; }
  bool run(ir::Function& f) override {
    how_(f);
    return true;
  }

 private:
  std::function<void(ir::Function&)> how_;
};

std::string verify_after_breaker(ir::Function& f, std::function<void(ir::Function&)> how) {
  transforms::PassManager::Options o;
  o.verify = true;
  o.input_stage = "remove_conversions";
  transforms::PassManager pm(o);
  pm.add(std::make_unique<Breaker>(std::move(how)));
  return error_of([&] { pm.run(f); });
}

/// The kernel of test/ir/golden/`name` brought to the GPU level for `caps` (verified after each pass).
std::unique_ptr<ir::Function> golden_at_gpu_level(const std::string& name, layout::target_caps caps) {
  std::ifstream in(std::string(TILE_GOLDEN_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  auto f = ir::parse(ss.str(), name);
  transforms::PassManager::Options o;
  o.verify = true;
  layout::to_gpu_ir(*f, caps, o);
  return f;
}

ir::Op* first(ir::Function& f, ir::OpKind k) {
  ir::Op* found = nullptr;
  ir::walk(f.body, [&](ir::Op& op) {
    if (!found && op.kind == k) found = &op;
  });
  REQUIRE(found);
  return found;
}

}  // namespace

TEST_CASE("GPU level: printed, parsed and printed again, byte for byte; the parse has the layouts and attributes") {
  auto f = gpu_transpose();
  const std::string text = ir::print(*f, true);
  CHECK(text.rfind("#L0 = linear<[32] reg = ", 0) == 0);
  CHECK(text.find("attributes {gpu, num_warps = 4, num_stages = 3}") != std::string::npos);
  auto g = ir::parse(text, "gpu.tir");
  CHECK(g->gpu);
  CHECK(g->num_warps == 4);
  CHECK_NOTHROW(ir::verify(*g, "parse"));
  CHECK(ir::print(*g, true) == text);
  CHECK(ir::structural_hash(*g) == ir::structural_hash(*f));
  // one layout of one value differs: another hash
  ir::Op* load = first(*g, ir::OpKind::load);
  load->result()->type.layout = std::make_shared<const layout::LinearLayout>(
      layout::default_blocked(load->result()->type.shape, 4, 1));
  CHECK(ir::structural_hash(*g) != ir::structural_hash(*f));
  // tile IR with launch options that are not the defaults keeps them in its text
  auto t = ir::parse(kTranspose, "transpose.tir");
  t->num_warps = 8;
  t->fp_fusion = false;
  const std::string tt = ir::print(*t, false);
  CHECK(tt.find("attributes {num_warps = 8, num_stages = 3, fp_fusion = 0}") != std::string::npos);
  auto back = ir::parse(tt, "t.tir");
  CHECK(back->num_warps == 8);
  CHECK_FALSE(back->fp_fusion);
  CHECK_FALSE(back->gpu);
}

TEST_CASE("GPU level: the verifier names the pass, the op and the layout rule it breaks") {
  SUBCASE("an elementwise op whose operand is in another layout than its result") {
    auto f = gpu_transpose();
    const std::string m = verify_after_breaker(*f, [](ir::Function& g) {
      ir::Op* c = first(g, ir::OpKind::convert_layout);  // the values before the store
      ir::replace_all_uses(g.body, c->result(), c->operand(0));
      ir::erase(c);
    });
    CHECK(m.find("IR verifier (after breaker): op 'store'") != std::string::npos);
    CHECK(m.find("must share one layout") != std::string::npos);
  }
  SUBCASE("a buffer made by other than local_alloc, read by other than a tensor-core dot: an error, not a crash") {
    auto f = gpu_transpose();
    const std::string m = verify_after_breaker(*f, [](ir::Function& g) {
      ir::Type& t = first(g, ir::OpKind::load)->result()->type;  // (a f32 tile: also no swizzle)
      t.layout = nullptr;
      t.mem = ir::smem::padded;
    });
    CHECK(m.find("IR verifier (after breaker): op 'load': a shared-memory buffer made by other than local_alloc") != std::string::npos);
  }
  SUBCASE("a conversion to the layout its operand has") {
    auto f = gpu_transpose();
    const std::string m = verify_after_breaker(*f, [](ir::Function& g) {
      ir::Op* c = first(g, ir::OpKind::convert_layout);
      c->result()->type.layout = c->operand(0)->type.layout;
    });
    CHECK(m.find("IR verifier (after breaker): op 'convert_layout': convert_layout to the layout its operand already has") !=
          std::string::npos);
  }
  SUBCASE("a tile without a layout, a scalar with one, a layout of other warps") {
    auto f = gpu_transpose();
    CHECK(verify_after_breaker(*f, [](ir::Function& g) { first(g, ir::OpKind::load)->result()->type.layout = nullptr; })
              .find("op 'load': a tile without a layout at the GPU level") != std::string::npos);
    auto h = gpu_transpose();
    h->num_warps = 8;
    CHECK(error_of([&] { ir::verify(*h, "parse"); }).find("a layout of 4 warp(s) in a kernel of num_warps = 8") != std::string::npos);
  }
  SUBCASE("a tensor-core dot whose result is not the MMA accumulator layout") {
    auto f = ir::parse(R"(kernel @mm(%arg0: ptr<f16> {div=16}, %arg1: ptr<f32> {div=16}) {
  %0 = arange {start = 0, end = 16} : i32[16]
  %1 = expand_dims %0 {axis = 1} : i32[16] -> i32[16,1]
  %2 = expand_dims %0 {axis = 0} : i32[16] -> i32[1,16]
  %3 = broadcast %1 : i32[16,1] -> i32[16,16]
  %4 = broadcast %2 : i32[1,16] -> i32[16,16]
  %5 = add %3, %4 : i32[16,16]
  %6 = splat %arg0 : ptr<f16> -> ptr<f16>[16,16]
  %7 = addptr %6, %5 : ptr<f16>[16,16]
  %8 = load %7 : f16[16,16]
  %9 = constant 0.0 : f32[16,16]
  %10 = dot %8, %8, %9 {precision = tf32} : f32[16,16]
  %11 = splat %arg1 : ptr<f32> -> ptr<f32>[16,16]
  %12 = addptr %11, %5 : ptr<f32>[16,16]
  store %12, %10 : ptr<f32>[16,16], f32[16,16]
  return
}
)",
                       "mm.tir");
    transforms::PassManager::Options o;
    o.verify = true;
    layout::to_gpu_ir(*f, {.mma = nullptr, .lanes = 32}, o);  // no tensor cores: a blocked result
    const std::string m = verify_after_breaker(*f, [](ir::Function& g) {
      g.mma_target = targets::nvptx::mma_forms(80, false);  // (an sm_80 kernel's dot put on the warp MMA)
      layout::set_engine(*first(g, ir::OpKind::dot), layout::mma_engine::warp, {1, 1});
    });
    CHECK(m.find("IR verifier (after breaker): op 'dot': a tensor-core dot's result must be in the MMA accumulator layout of its warps") !=
          std::string::npos);
  }
  SUBCASE("a warpgroup dot's A read from registers in another layout than the engine's register form") {
    // attention's loop (test/ir/golden/assign_layouts_forward.tir): the second dot reads P from registers
    auto f = golden_at_gpu_level("assign_layouts_forward.tir", {.mma = targets::nvptx::mma_forms(90, true), .lanes = 32});
    const std::string m = verify_after_breaker(*f, [](ir::Function& g) {
      ir::Op* second = nullptr;
      ir::walk(g.body, [&](ir::Op& op) {
        if (op.kind == ir::OpKind::dot) second = &op;
      });
      REQUIRE(second);
      REQUIRE(!second->operand(0)->type.is_buffer());
      // P moved into the layout of the loaded tile the dot's B was staged from
      ir::Type t = second->operand(0)->type;
      t.layout = second->operand(1)->def->operand(0)->type.layout;
      ir::Builder b(second->parent);
      b.set_insertion_before(second);
      second->operands[0] = b.create(ir::OpKind::convert_layout, {second->operand(0)}, {t}, {}, second->loc)->result();
    });
    CHECK(m.find("op 'dot': a tensor-core dot's register operand must be in the engine's register layout") != std::string::npos);
  }
  SUBCASE("tile IR holds no layout and no GPU op") {
    auto f = gpu_transpose();
    f->gpu = false;
    CHECK(error_of([&] { ir::verify(*f, "parse"); }).find("a layout in tile IR") != std::string::npos);
    auto t = ir::parse(R"(kernel @k(%arg0: ptr<f32>) {
  %0 = splat %arg0 : ptr<f32> -> ptr<f32>[64]
  %1 = convert_layout %0 : ptr<f32>[64] -> ptr<f32>[64]
  return
}
)",
                       "t.tir");
    CHECK(error_of([&] { ir::verify(*t, "parse"); }).find("op 'convert_layout': an op of the GPU level in tile IR") != std::string::npos);
  }
}

namespace {
/// The K loop of test/ir/golden/pipeline_loops.tir at the GPU level for `caps`, pipelined and placed.
std::unique_ptr<ir::Function> pipelined_mm(layout::target_caps caps) {
  auto f = golden_at_gpu_level("pipeline_loops.tir", caps);
  transforms::PassManager::Options o;
  o.verify = true;
  const analysis::AxisAnalysis axis(*f);
  const bool sm90a = caps.mma == targets::nvptx::mma_forms(90, true);
  const schedule::PipelinePlan plan =
      schedule::plan_pipelines(*f, axis, f->num_stages, 227 * 1024, *targets::nvptx::copy_forms(sm90a ? 90 : 80, sm90a));
  REQUIRE(plan.loops.size() == 1);
  transforms::PassManager pm(o);
  pm.add(schedule::make_pipeline_loops(plan));
  pm.add(transforms::make_dce());
  pm.add(schedule::make_allocate_shared());
  pm.run(*f);
  return f;
}
}  // namespace

TEST_CASE("GPU level: a pipelined loop's rings, copies, waits and barriers print, parse back and break the rules by name") {
  const layout::target_caps sm90{.mma = targets::nvptx::mma_forms(90, true), .lanes = 32};
  auto f = pipelined_mm(sm90);
  const std::string text = ir::print(*f, false);
  CHECK(text.find("mma_wait") != std::string::npos);
  CHECK(ir::print(*ir::parse(text, "p.tir"), false) == text);
  SUBCASE("a warp dot left in flight") {
    auto g = pipelined_mm({.mma = targets::nvptx::mma_forms(80, false), .lanes = 32});
    const std::string m = verify_after_breaker(*g, [](ir::Function& h) {
      auto& a = first(h, ir::OpKind::dot)->attrs.ints;
      a.resize(5, 0);
      a[4] = 1;
    });
    CHECK(m.find("IR verifier (after breaker): op 'dot': only a warpgroup dot is left in flight") != std::string::npos);
  }
  SUBCASE("a copy into a buffer other than swizzled") {
    const std::string m = verify_after_breaker(*f, [](ir::Function& h) { first(h, ir::OpKind::buffer_index)->result()->type.mem = ir::smem::padded; });
    CHECK(m.find("IR verifier (after breaker): op 'buffer_index': buffer_index takes a ring [buffers, rows, cols] to one of its buffers") !=
          std::string::npos);
  }
  SUBCASE("a ring's buffer of another shape") {
    const std::string m = verify_after_breaker(*f, [](ir::Function& h) { first(h, ir::OpKind::buffer_index)->result()->type.shape[0] = 16; });
    CHECK(m.find("op 'buffer_index': buffer_index takes a ring") != std::string::npos);
  }
  SUBCASE("a wait on what is not a token; a token where data belongs; an mma_wait in another layout") {
    CHECK(verify_after_breaker(*f, [](ir::Function& h) {
            ir::Op* w = first(h, ir::OpKind::async_wait);
            w->operands.push_back(first(h, ir::OpKind::iter_ahead)->result(0));
          }).find("op 'async_wait': async_wait names the groups it waits for by their tokens") != std::string::npos);
    auto c1 = pipelined_mm(sm90);  // (each breaker on its own kernel)
    CHECK(verify_after_breaker(*c1, [](ir::Function& h) {
            ir::Op* c = first(h, ir::OpKind::async_commit);
            c->operands = {first(h, ir::OpKind::iter_ahead)->result(1)};
          }).find("op 'async_commit': async_commit groups the copies of its tokens") != std::string::npos);
    auto c2 = pipelined_mm(sm90);
    CHECK(verify_after_breaker(*c2, [](ir::Function& h) {
            ir::Op* w = first(h, ir::OpKind::async_wait);
            ir::Builder b(w->parent);
            b.set_insertion_before(w);
            b.create(ir::OpKind::print, {w->operand(0)}, {}, ir::Attrs{{0}, 0.0, {}}, w->loc);
          }).find("op 'print': operand #0 is a token, which only async_commit, async_wait and control flow take") != std::string::npos);
    auto g = pipelined_mm(sm90);
    CHECK(verify_after_breaker(*g, [](ir::Function& h) {
            first(h, ir::OpKind::mma_wait)->result()->type.layout = first(h, ir::OpKind::convert_layout)->result()->type.layout;
          }).find("op 'mma_wait': mma_wait's result must be in its operand's layout") != std::string::npos);
  }
}

TEST_CASE("GPU level: a token is the GPU level's; it parses and prints back") {
  CHECK(error_of([] { ir::verify(*ir::parse("kernel @k(%arg0: token) {\n  return\n}\n", "t.tir"), "parse"); })
            .find("an asynchronous copies' token in tile IR") != std::string::npos);
  auto f = pipelined_mm({.mma = targets::nvptx::mma_forms(80, false), .lanes = 32});
  const std::string text = ir::print(*f);
  CHECK(text.find(" = async_commit ") != std::string::npos);
  CHECK(text.find(", token) {") != std::string::npos);  // (the loop carries the latest group's token)
  CHECK(ir::print(*ir::parse(text, "again.tir")) == text);
}

TEST_CASE("GPU level: malformed layout text is an error at its line and column") {
  auto message = [](const std::string& text) { return error_of([&] { ir::parse(text, "bad.tir"); }); };
  const std::string l0 = "#L0 = linear<[64] reg = [[1]], lane = [[2], [4], [8], [16], [32]], warp = []>\n";
  const std::string head = "kernel @k(%arg0: i32) attributes {gpu, num_warps = 1, num_stages = 3} {\n";
  CHECK(message(l0 + head + "  %0 = arange {start = 0, end = 64} : i32[64] #L1\n  return\n}\n")
            .find("bad.tir:3:47: expected a layout defined before the kernel ('#L1 = linear<…>'), found '#L1'") != std::string::npos);
  CHECK(message(l0 + head + "  %0 = arange {start = 0, end = 32} : i32[32] #L0\n  return\n}\n")
            .find("bad.tir:3:47: expected a layout of the tile's extents, found '#L0'") != std::string::npos);
  CHECK(message("#L0 = linear<[64] reg = [[64]], lane = [], warp = []>\n" + head + "  return\n}\n")
            .find("bad.tir:1:26: expected a basis inside the tile's extents") != std::string::npos);
  CHECK(message("#L0 = linear<[64] reg = [[1, 0]], lane = [], warp = []>\n" + head + "  return\n}\n")
            .find("bad.tir:1:26: expected a basis of 1 coordinate(s) (the tile's rank)") != std::string::npos);
  CHECK(message(l0 + l0 + head + "  return\n}\n").find("bad.tir:2:1: expected a layout name not defined before") != std::string::npos);
  CHECK(message(l0 + "kernel @k(%arg0: i32) attributes {gpu, num_warps = 3} {\n  return\n}\n")
            .find("bad.tir:2:52: expected a power of two from 1 to 32 warps, found '3'") != std::string::npos);
  CHECK(message(l0 + "kernel @k(%arg0: i32) attributes {gpu, warps = 4} {\n  return\n}\n")
            .find("bad.tir:2:40: expected a kernel attribute (gpu, num_warps, num_stages, fp_fusion, warp_specialize), found 'warps'") != std::string::npos);
}

TEST_CASE("GPU level: a warp-specialized kernel's partitions parse, print back and verify") {
  // the producer region copies, the consumer region waits and releases (schedule/warp_specialize.hpp)
  const std::string text =
      "kernel @k(%arg0: ptr<f16> {div=16} {noalias}, %arg1: i32) attributes {gpu, num_warps = 8, num_stages = 3, warp_specialize = 1} {\n"
      "  %0 = local_alloc {offset = 0} : i64[2] #smem<barriers>\n"
      "  copy_barrier_init %0 {arrivals = 256} : i64[2] #smem<barriers>\n"
      "  barrier {id = 0}\n"
      "  warp_specialize {producer_warps = 4, consumer_regs = 240, producer_regs = 24} region() {\n"
      "    %1 = constant 0 : u32\n"
      "    %2 = constant 1 : u32\n"
      "    copy_barrier_wait %0, %1, %2 : i64[2] #smem<barriers>, u32, u32\n"
      "    yield\n"
      "  } region() {\n"
      "    %3 = constant 0 : u32\n"
      "    %4 = constant 1 : i1\n"
      "    barrier_arrive %0, %3, %4 : i64[2] #smem<barriers>, u32, i1\n"
      "    yield\n"
      "  }\n"
      "  return\n"
      "}\n";
  auto f = ir::parse(text, "ws.tir");
  ir::verify(*f, "parse");
  CHECK(f->warp_specialize == 1);
  const std::string again = ir::print(*f);
  CHECK(again.find("warp_specialize {producer_warps = 4, consumer_regs = 240, producer_regs = 24} region() {") != std::string::npos);
  CHECK(again.find("barrier_arrive %0, ") != std::string::npos);
  CHECK(again.find("warp_specialize = 1}") != std::string::npos);
  CHECK(ir::print(*ir::parse(again, "again.tir")) == again);
  // registers a partition cannot have; the op inside a region
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return error_of([&] { ir::verify(*ir::parse(t, "bad.tir"), "parse"); });
  };
  CHECK(bad("consumer_regs = 240", "consumer_regs = 250").find("multiples of 8 from 24 to 256") != std::string::npos);
  CHECK(bad("producer_warps = 4", "producer_warps = 0").find("producer warps 0 is out of range") != std::string::npos);
  CHECK(bad("warp_specialize = 1}", "warp_specialize = 2}").find("expected 0 or 1") != std::string::npos);
  CHECK(bad("barrier_arrive %0, %3, %4 : i64[2] #smem<barriers>, u32, i1", "barrier_arrive %0, %3, %3 : i64[2] #smem<barriers>, u32, u32")
            .find("valid must be a scalar i1") != std::string::npos);
}

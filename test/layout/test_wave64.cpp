// test/layout/test_wave64.cpp — the warp size is data: the generic GPU passes (layout/
// gpu_passes.hpp: select_mma, assign_layouts, remove_conversions, stage_mma_operands, dce; then
// allocate_shared and insert_barriers) run with a 64-lane target
// description (an AMD CDNA wavefront) on kernels read from IR text (ir::parse). Every layout then
// has six lane bases and owns each element once, the verifier accepts the result after each
// pass; the tensor-core forms, which are 32-lane instructions, are not chosen; the 32-lane run of
// the same kernels gives five lane bases and does choose them.
#include <doctest/doctest.h>

#include "analysis/axis_info.hpp"
#include "ir/ir.hpp"
#include "layout/gpu_passes.hpp"
#include "layout/mma_engine.hpp"
#include "layout/mma_target.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/insert_barriers.hpp"
#include "schedule/shared_scratch.hpp"
#include "targets/nvptx/nvptx_mma_forms.hpp"

using namespace tile;

namespace {

const char* kSoftmax = R"(kernel @softmax(%arg0: ptr<f32> {div=16} {noalias}, %arg1: ptr<f32> {div=16} {noalias}, %arg2: i32 {positive}, %arg3: i32 {positive}) {
  %0 = program_id {axis = 0} : i32
  %1 = arange {start = 0, end = 1024} : i32[1024]
  %2 = splat %arg3 : i32 -> i32[1024]
  %3 = cmp lt %1, %2 : i1[1024]
  %4 = mul %0, %arg2 : i32
  %5 = addptr %arg1, %4 : ptr<f32>
  %6 = splat %5 : ptr<f32> -> ptr<f32>[1024]
  %7 = addptr %6, %1 : ptr<f32>[1024]
  %8 = constant -inf : f32[1024]
  %9 = load %7, %3, %8 : f32[1024]
  %10 = reduce %9 {axis = 0} -> (f32) combine(%11: f32, %12: f32) {
    %13 = maximum %11, %12 : f32
    yield %13 : f32
  }
  %14 = splat %10 : f32 -> f32[1024]
  %15 = sub %9, %14 : f32[1024]
  %16 = exp %15 : f32[1024]
  %17 = reduce %16 {axis = 0} -> (f32) combine(%18: f32, %19: f32) {
    %20 = add %18, %19 : f32
    yield %20 : f32
  }
  %21 = splat %17 : f32 -> f32[1024]
  %22 = div %16, %21 : f32[1024]
  %23 = addptr %arg0, %4 : ptr<f32>
  %24 = splat %23 : ptr<f32> -> ptr<f32>[1024]
  %25 = addptr %24, %1 : ptr<f32>[1024]
  store %25, %22, %3 : ptr<f32>[1024], f32[1024], i1[1024]
  return
}
)";

const char* kDotScan = R"(kernel @dot_scan(%arg0: ptr<f16> {div=16}, %arg1: ptr<f16> {div=16}, %arg2: ptr<f32> {div=16}) {
  %0 = arange {start = 0, end = 64} : i32[64]
  %1 = expand_dims %0 {axis = 1} : i32[64] -> i32[64,1]
  %2 = constant 64 : i32[64,1]
  %3 = mul %1, %2 : i32[64,1]
  %4 = expand_dims %0 {axis = 0} : i32[64] -> i32[1,64]
  %5 = broadcast %3 : i32[64,1] -> i32[64,64]
  %6 = broadcast %4 : i32[1,64] -> i32[64,64]
  %7 = add %5, %6 : i32[64,64]
  %8 = splat %arg0 : ptr<f16> -> ptr<f16>[64,64]
  %9 = addptr %8, %7 : ptr<f16>[64,64]
  %10 = load %9 : f16[64,64]
  %11 = splat %arg1 : ptr<f16> -> ptr<f16>[64,64]
  %12 = addptr %11, %7 : ptr<f16>[64,64]
  %13 = load %12 : f16[64,64]
  %14 = constant 0.0 : f32[64,64]
  %15 = dot %10, %13, %14 {precision = tf32} : f32[64,64]
  %16 = scan %15 {axis = 1} -> (f32[64,64]) combine(%17: f32, %18: f32) {
    %19 = add %17, %18 : f32
    yield %19 : f32
  }
  %20 = splat %arg2 : ptr<f32> -> ptr<f32>[64,64]
  %21 = addptr %20, %7 : ptr<f32>[64,64]
  store %21, %16 : ptr<f32>[64,64], f32[64,64]
  return
}
)";

/// `text` at the GPU level for `warps` warps of `lanes` threads (verified after every pass).
std::unique_ptr<ir::Function> gpu_for(const char* text, int warps, int lanes) {
  auto f = ir::parse(text, "wave64.tir");
  f->num_warps = warps;
  transforms::PassManager::Options o;
  o.verify = true;
  layout::to_gpu_ir(*f, {.mma = targets::nvptx::mma_forms(90, true), .lanes = lanes}, o);
  return f;
}

void check_every_layout(const ir::Function& f, int lanes, int warps) {
  CHECK(f.gpu);
  int tiles = 0;
  auto check = [&](const ir::Value* v) {
    if (v->type.shape.empty() || v->type.is_buffer()) {  // (scalars and shared-memory buffers have none)
      CHECK(!v->type.layout);
      return;
    }
    REQUIRE(v->type.layout);
    const auto& l = *v->type.layout;
    CAPTURE(l.str());
    CHECK(l.num_lanes() == lanes);
    CHECK(l.num_warps() == warps);
    CHECK(l.is_injective());
    ++tiles;
  };
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) {
    for (const auto& r : op.results) check(r.get());
    for (const auto& reg : op.regions)
      for (const auto& a : reg->args) check(a.get());
  });
  CHECK(tiles > 0);
}

int tensor_core_dots(const ir::Function& f) {
  int n = 0;
  ir::walk(const_cast<ir::Block&>(f.body), [&](const ir::Op& op) { n += layout::engine_of(op) != layout::mma_engine::none; });
  return n;
}

}  // namespace

TEST_CASE("wave64: every layout of softmax and of a dot and scan has 64 lanes; no 32-lane tensor-core form") {
  for (const char* text : {kSoftmax, kDotScan}) {
    auto f = ir::parse(text, "wave64.tir");
    ir::verify(*f, "parse");
    CAPTURE(f->name);
    for (int warps : {1, 4, 8}) {
      const auto wave64 = gpu_for(text, warps, 64);
      check_every_layout(*wave64, 64, warps);
      CHECK(tensor_core_dots(*wave64) == 0);
      const auto warp32 = gpu_for(text, warps, 32);
      check_every_layout(*warp32, 32, warps);
      if (f->name == "dot_scan" && warps >= 4) CHECK(tensor_core_dots(*warp32) == 1);
    }
  }
}

TEST_CASE("wave64: a 1024-element row spreads over 4 warps of 64 lanes, 4 elements a thread") {
  auto f = gpu_for(kSoftmax, 4, 64);
  const ir::Value* loaded = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::load) loaded = op.result();
  });
  REQUIRE(loaded);
  REQUIRE(loaded->type.layout);
  const auto& l = *loaded->type.layout;
  CHECK(l.num_regs() == 4);   // 1024 / (64 lanes x 4 warps), one 16-byte vector
  CHECK(l.lane.size() == 6);
  CHECK(l.coords(1, 0, 0) == layout::Coords{1});
  CHECK(l.coords(0, 1, 0) == layout::Coords{4});
  CHECK(l.coords(0, 0, 1) == layout::Coords{256});
}

TEST_CASE("wave64: the barriers of softmax's two reductions across 4 warps of 64 lanes (insert_barriers)") {
  auto f = gpu_for(kSoftmax, 4, 64);
  transforms::PassManager::Options o;
  o.verify = true;
  transforms::PassManager pm(o);
  schedule::add_shared_memory_passes(pm);
  pm.run(*f);
  // each reduce folds the 4 warps' partials through shared memory (one phase); only the second
  // waits for a barrier first (the first one's reads), the store after it meets no load's bytes
  std::vector<ir::OpKind> order;
  for (const auto& op : f->body.ops) {
    if (op->kind == ir::OpKind::reduce) CHECK(schedule::scratch_phases(*op, 4) == 1);
    if (op->kind == ir::OpKind::reduce || op->kind == ir::OpKind::barrier) order.push_back(op->kind);
  }
  CHECK(order == std::vector<ir::OpKind>{ir::OpKind::reduce, ir::OpKind::barrier, ir::OpKind::reduce});
}

namespace {
/// Another vendor's tensor-core forms, as a 64-lane target would describe them to the GPU passes:
/// 16-bit dots of at least 32 x 32 on a warp's MMA with every warp along M, the accumulator in
/// its own layout (here two elements a register along N), both operands padded in shared memory.
class Wave64Forms final : public layout::MmaTarget {
 public:
  std::string_view name() const override { return "wave64-test"; }
  Choice choose(const ir::Op& dot, int num_warps, int lanes) const override {
    const auto& s = dot.result()->type.shape;
    if (lanes != 64 || size_of(dot.operand(0)->type.elem) != 2 || s.size() != 2 || s[0] < 32 || s[1] < 32) return {};
    return {layout::mma_engine::warp, {num_warps, 1}};
  }
  std::string check(const ir::Op& dot, int num_warps) const override {
    return layout::mma_warps_of(dot)[0] == num_warps ? "" : "every warp along M";
  }
  layout::LinearLayout accumulator(const ir::Op& dot, int num_warps) const override {
    return layout::default_blocked(dot.result()->type.shape, num_warps, 2, {1, 0}, 64);
  }
  ir::smem operand_arrangement(const ir::Op&, unsigned k) const override {
    return k == 0 ? ir::smem::padded : ir::smem::padded_transposed;
  }
};
}  // namespace

TEST_CASE("wave64: another target's tensor-core description drives select_mma, assign_layouts, stage_mma_operands and the verifier") {
  static const Wave64Forms forms;
  auto f = ir::parse(kDotScan, "wave64.tir");
  f->num_warps = 4;
  transforms::PassManager::Options o;
  o.verify = true;
  layout::to_gpu_ir(*f, {.mma = &forms, .lanes = 64}, o);
  CHECK(f->mma_target == &forms);
  const ir::Op* dot = nullptr;
  ir::walk(f->body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::dot) dot = &op;
  });
  REQUIRE(dot);
  CHECK(layout::engine_of(*dot) == layout::mma_engine::warp);
  CHECK(layout::mma_warps_of(*dot) == std::array<int, 2>{4, 1});
  CHECK(*dot->result()->type.layout == forms.accumulator(*dot, 4));  // its layout, not NVIDIA's
  CHECK(dot->operand(0)->type.mem == ir::smem::padded);              // its arrangement
  CHECK(dot->operand(1)->type.mem == ir::smem::padded_transposed);
  check_every_layout(*f, 64, 4);
  // the verifier asks the same description: a dot it would not run is named
  layout::set_engine(*const_cast<ir::Op*>(dot), layout::mma_engine::warp, {2, 2});
  std::string message;
  try {
    ir::verify(*f, "breaker");
  } catch (const tile::error& e) {
    message = e.what();
  }
  CHECK(message.find("op 'dot': every warp along M") != std::string::npos);
}

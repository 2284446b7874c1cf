// src/jit/compile_nvptx.cpp — layer: jit. The NVIDIA pipeline to PTX (see compile_nvptx.hpp):
//   key -> the compile cache (jit/compile_cache.hpp: memory, then disk) -> [descriptor loads ->
//   axis info -> layouts -> pipelining -> GPU lowering -> O3 -> PTX]
// Loading on a device is compile_cuda.cpp's; compile-only (the null backend) is ptxas.cpp's.
#include <iostream>
#include <optional>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "analysis/axis_info.hpp"
#include "codegen/gpu/gpu_lowering.hpp"
#include "jit/artifact.hpp"
#include "jit/compile_cache.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/dump.hpp"
#include "jit/llvm_passes.hpp"
#include "jit/occupancy.hpp"
#include "jit/stage_timer.hpp"
#include "layout/gpu_passes.hpp"
#include "schedule/allocate_shared.hpp"
#include "schedule/hoist_loads.hpp"
#include "schedule/defer_dots.hpp"
#include "schedule/take_turns.hpp"
#include "schedule/overlap_dots.hpp"
#include "schedule/insert_barriers.hpp"
#include "schedule/pipeline_loops.hpp"
#include "schedule/software_pipeline.hpp"
#include "schedule/warp_specialize.hpp"
#include "support/build_id.hpp"
#include "support/env.hpp"
#include "targets/nvptx/nvptx_int_abs.hpp"
#include "targets/nvptx/nvptx_copy_forms.hpp"
#include "targets/nvptx/nvptx_mma_forms.hpp"
#include "targets/nvptx/nvptx_target.hpp"
#include "transforms/lower_descriptor_loads.hpp"
#include "transforms/passes.hpp"
#include "transforms/pipeline.hpp"

namespace tile::jit {
namespace {

constexpr const char* kOptions = "O3;gpu-abi=1";

/// `fn` with its descriptor loads rewritten into masked loads, except (`keep_tensor_copies`)
/// those a tensor copy of `a` may move (sm_90a's TMA); null when `fn` has none.
std::unique_ptr<ir::Function> lower_descriptors(const ir::Function& fn, const targets::nvptx::arch& a, bool keep_tensor_copies) {
  if (!transforms::has_descriptor_loads(fn)) return nullptr;
  auto c = ir::clone(fn);
  std::function<bool(const ir::Op&)> keep;
  const layout::MmaTarget* mma = targets::nvptx::mma_forms(a.sm, a.accel);
  const schedule::CopyTarget* copies = targets::nvptx::copy_forms(a.sm, a.accel);
  if (keep_tensor_copies && mma && copies && copies->tensor_copies())
    keep = [&](const ir::Op& op) { return schedule::tensor_copy_candidate(*c, op, fn.num_warps, *mma, *copies); };
  transforms::lower_descriptor_loads(*c, keep);
  auto options = transforms::PassManager::Options::from_env();
  options.dump_ir = false;
  transforms::canonicalize(*c, options);
  return c;
}

/// The host's description of tensor map `k` of `pipes` (what the launch encodes).
drivers::tensor_map_spec tensor_map_of(const ir::Function& f, const schedule::PipelinePlan& pipes, std::size_t k) {
  const ir::Op& l = *pipes.tensor_maps.at(k);
  auto src = [&](const ir::Value* v) {
    drivers::tensor_map_spec::source s;
    const std::optional<schedule::LaunchValue> lv = schedule::launch_value(f, v);  // (tensor_copy_candidate checked it)
    if (!lv) throw tile::error("internal error: a tensor map's value is not known at the launch", l.loc, f.name);
    if (lv->args.empty()) {
      s.value = lv->factor;
      return s;
    }
    s.arg = static_cast<int>(lv->args[0]);
    for (std::size_t i = 1; i < lv->args.size(); ++i) s.times.push_back(static_cast<int>(lv->args[i]));
    s.scale = lv->factor;
    if (lv->args.size() > 1 || lv->factor != 1) s.bits = lv->bits;
    return s;
  };
  drivers::tensor_map_spec t;
  t.elem = l.result()->type.elem;
  t.base.arg = static_cast<int>(l.operand(0)->index);  // (a pointer argument: tensor_copy_candidate)
  t.rows = src(l.operand(1));
  t.cols = src(l.operand(2));
  t.row_stride = src(l.operand(3));
  const std::int64_t es = static_cast<std::int64_t>(size_of(t.elem));
  t.box_rows = static_cast<std::uint32_t>(l.attrs.ints[0]);
  t.swizzle_bytes = static_cast<std::uint32_t>(std::min<std::int64_t>(128, l.attrs.ints[1] * es));
  t.box_cols = t.swizzle_bytes / static_cast<std::uint32_t>(es);
  return t;
}

/// `fn` (the GPU level, its buffers placed and its barriers in: allocate_shared, insert_barriers)
/// as an optimized LLVM module for `a`; its shared bytes and widest exp batch into `k`.
std::unique_ptr<llvm::Module> to_llvm(const ir::Function& fn, const analysis::AxisAnalysis& axis, const targets::nvptx::arch& a,
                                      unsigned tensor_maps, const targets::nvptx::lowering_options& options, llvm::TargetMachine& tm,
                                      llvm::LLVMContext& ctx, ptx_kernel& k, stage_timer* timer) {
  const schedule::SharedPlan shared = schedule::plan_shared(fn);
  // a warp-specialized kernel: its producer warps launched too, with the register cap its
  // partitions redistribute
  targets::nvptx::lowering_options opts = options;
  if (const int regs = schedule::launch_registers(fn); regs > 0)
    opts.max_registers = opts.max_registers > 0 ? std::min(opts.max_registers, regs) : regs;
  k.num_warps = schedule::launch_warps(fn);
  targets::nvptx::NvptxTarget target(a, k.num_warps, tensor_maps, opts);
  codegen::gpu::GpuLowering lowering(ctx, target, /*lanes=*/32, axis);
  lowering.set_shared(&shared);
  std::unique_ptr<llvm::Module> m = lowering.run(fn, k.entry);
  k.shared_bytes = lowering.shared_bytes();
  k.widest_exp_batch = target.widest_exp_batch();
  if (timer) timer->lap("lower to LLVM");
  optimize(*m, tm);
  targets::nvptx::expand_integer_abs(*m);
  if (timer) timer->lap("LLVM O3");
  return m;
}

std::shared_ptr<const ptx_kernel> lower(const ir::Function& original, const targets::nvptx::arch& a,
                                        const targets::nvptx::lowering_options& options, const std::string& digest,
                                        bool dumping, stage_timer& timer) {
  auto k = std::make_shared<ptx_kernel>();
  k->options = options;
  k->entry = entry_name(original.name);
  k->kernel = original.name;
  k->arch = a.name();
  k->num_warps = original.num_warps;
  k->digest = digest;
  for (const auto& arg : original.body.args) k->params.push_back(arg->type.str());
  // shared memory a CTA may opt into: the SM's (sm_90 228 KB, sm_80/sm_87 164 KB, other sm_8x 100
  // KB) less the 1 KB the driver keeps of each block's
  const sm_limits sm = sm_limits_of(a.sm);
  const auto smem_limit = static_cast<std::uint64_t>(sm.shared_bytes - sm.reserved_shared_per_block);
  // descriptor loads: kept for the TMA where tensor_copy_candidate says so (sm_90a), the rest masked
  // loads; should a loop that kept some not be pipelined, all become masked loads
  std::unique_ptr<ir::Function> lowered = lower_descriptors(original, a, true);
  const ir::Function* f = lowered ? lowered.get() : &original;
  // the GPU level of the IR: tensor cores, layouts, conversions (layout/gpu_passes.hpp), then
  // which loops are pipelined
  const layout::target_caps caps{.mma = targets::nvptx::mma_forms(a.sm, a.accel), .lanes = 32};
  const schedule::CopyTarget* copies = targets::nvptx::copy_forms(a.sm, a.accel);
  const auto pass_options = transforms::PassManager::Options::from_env();
  std::unique_ptr<ir::Function> gpu;
  std::optional<analysis::AxisAnalysis> axis_store;
  schedule::PipelinePlan pipes;
  for (int attempt = 0;; ++attempt) {
    gpu = ir::clone(*f);
    layout::to_gpu_ir(*gpu, caps, pass_options);
    axis_store.emplace(*gpu);
    pipes = copies ? schedule::plan_pipelines(*gpu, *axis_store, gpu->num_stages, smem_limit, *copies) : schedule::PipelinePlan{};
    std::size_t kept = 0;
    ir::walk(gpu->body, [&](const ir::Op& o) { kept += o.kind == ir::OpKind::desc_load; });
    // (at most kMaxTensorMaps hidden parameters a kernel: what a launch passes)
    if ((kept == pipes.tensor_maps.size() && kept <= drivers::kMaxTensorMaps) || attempt > 0) {
      if (kept != pipes.tensor_maps.size())
        throw tile::error("internal error: a descriptor load was left for the TMA outside a pipelined loop", original.loc,
                          original.name);
      break;
    }
    lowered = lower_descriptors(original, a, false);
    f = lowered.get();
  }
  for (std::size_t i = 0; i < pipes.tensor_maps.size(); ++i) k->tensor_maps.push_back(tensor_map_of(*gpu, pipes, i));
  // whether it qualifies is the kernel's own (cached with its PTX, whatever the launch or
  // TILE_WARP_SPECIALIZE chose: they pick the variants, first_options and warp_specialized_variant)
  {
    auto ws = schedule::plan_warp_specialization(*gpu, pipes, smem_limit);
    k->warp_specializable = ws.has_value();
    bool now = options.warp_specialize;
    if (!now && options.warp_specialize_by_shared && ws) {
      // the plain plan's rings (a loop's, the largest) alone hold one block an SM
      std::uint64_t rings = 0;
      for (const auto& [loop, l] : pipes.loops) rings = std::max(rings, l.ring_bytes());
      now = blocks_per_sm(sm, block_use{.threads = 32 * gpu->num_warps, .registers = 0,
                                        .shared_bytes = static_cast<std::int64_t>(rings)}) == 1;
    }
    if (now) pipes.warp_specialized = ws;
    k->options.warp_specialize = now && ws.has_value();
    k->options.warp_specialize_by_shared = false;
  }
  if (pass_options.dump_ir && !pipes.loops.empty())
    std::cerr << "// ----- pipelined loops for " << a.name() << " (kernel " << gpu->name << ") ----- //\n"
              << schedule::print_pipelines(*gpu, pipes) << std::flush;
  // the pipelined loops' rings, copies, waits and barriers; every shared-memory buffer placed
  // (offsets into the local_allocs: TILE_DUMP_IR); the barriers between the threads' accesses
  {
    auto o = pass_options;
    o.input_stage = "stage_mma_operands";
    o.dump_input = false;
    transforms::PassManager pm(o);
    if (!pipes.loops.empty()) {
      pm.add(schedule::make_pipeline_loops(pipes));
      pm.add(transforms::make_dce());  // what only fed the loads the rings replaced
      if (env::enabled("TILE_DEFER_DOTS") || env::enabled("TILE_PINGPONG"))
        pm.add(schedule::make_defer_dots());  // (=1) a dot left in flight issued after the next iteration's first
    }
    pm.add(schedule::make_hoist_loads());    // a loop's small loads issued ahead of its dots
    pm.add(schedule::make_overlap_dots());   // independent warpgroup dots issued back to back
    schedule::add_shared_memory_passes(pm);  // buffers placed; the barriers and fences between the threads' accesses
    pm.add(transforms::make_guard_bounded_selects());  // a loop's bound masks behind one uniform compare
    if (env::enabled("TILE_PINGPONG")) pm.add(schedule::make_take_turns());  // (=1) the consumer warpgroups' dots issued in turns
    pm.run(*gpu);
  }
  if (!pipes.loops.empty()) axis_store.emplace(*gpu);  // (the prologues' and copies' values)
  const ir::Function& fn = *gpu;
  const analysis::AxisAnalysis& axis = *axis_store;
  timer.lap("layouts, pipelining");
  llvm::LLVMContext ctx;
  auto tm = targets::nvptx::make_target_machine(a);
  std::unique_ptr<llvm::Module> m = to_llvm(fn, axis, a, static_cast<unsigned>(pipes.tensor_maps.size()), options, *tm, ctx, *k, &timer);
  k->ptx = emit(*m, *tm, emit_kind::assembly);
  timer.lap("PTX");
  if (dumping) {
    dump_artifact(fn.name, digest, "tir", ir::print(*f, true));
    dump_artifact(fn.name, digest, "gtir", ir::print(fn, true));  // the GPU level, as the lowering reads it
    dump_artifact(fn.name, digest, "layouts", layout::print_gpu_ir(fn, &axis) + schedule::print_pipelines(fn, pipes));
    dump_artifact(fn.name, digest, "ll", to_text(*m));
    dump_artifact(fn.name, digest, "ptx", k->ptx);
  }
  return k;
}

}  // namespace

std::string entry_name(const std::string& kernel) {
  std::string s = "tile_";
  for (char c : kernel) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

cache_key ptx_key(const ir::Function& fn, const targets::nvptx::arch& a) {
  cache_key key;
  // the PTX embeds the file and line of asserts and step checks (emit_fail): they are part of the code
  key.ir_hash = ir::structural_hash(fn) ^ (ir::failure_location_hash(fn) * 0x9e3779b97f4a7c15ull);
  key.target = "nvptx-" + a.name();
  key.options = std::string(kOptions) + ";w" + std::to_string(fn.num_warps) + ";s" + std::to_string(fn.num_stages) +
                (fn.fp_fusion ? "" : ";nofma") + (fn.warp_specialize >= 0 ? ";ws" + std::to_string(fn.warp_specialize) : "") +
                (env::enabled("TILE_DEFER_DOTS") ? ";defer" : "") + (env::enabled("TILE_PINGPONG") ? ";pingpong" : "");
  key.version = support::build_id();
  key.kernel = fn.name;
  return key;
}

artifact to_artifact(const ptx_kernel& k, std::string kind, std::string code) {
  artifact a;
  a.kind = std::move(kind);
  a.kernel = k.kernel;
  a.entry = k.entry;
  a.arch = k.arch;
  a.num_warps = k.num_warps;
  a.shared_bytes = k.shared_bytes;
  a.params = k.params;
  a.key = k.digest;
  a.exp_batch = k.options.exp_batch;
  a.widest_exp_batch = k.widest_exp_batch;
  a.tensor_maps = k.tensor_maps;
  a.warp_specialize = k.options.warp_specialize ? 2 : k.warp_specializable ? 1 : 0;
  a.code = std::move(code);
  return a;
}

std::shared_ptr<ptx_kernel> from_artifact(const artifact& a) {
  auto k = std::make_shared<ptx_kernel>();
  k->kernel = a.kernel;
  k->entry = a.entry;
  k->arch = a.arch;
  k->num_warps = a.num_warps;
  k->shared_bytes = a.shared_bytes;
  k->params = a.params;
  k->digest = a.key;
  k->options.exp_batch = a.exp_batch;
  k->widest_exp_batch = a.widest_exp_batch;
  k->tensor_maps = a.tensor_maps;
  k->options.warp_specialize = a.warp_specialize == 2;
  k->warp_specializable = a.warp_specialize >= 1;
  if (a.kind == "ptx") k->ptx = a.code;
  return k;
}

std::shared_ptr<const ptx_kernel> compile_ptx(const ir::Function& fn, const targets::nvptx::arch& a,
                                              const targets::nvptx::lowering_options& options) {
  const bool time = env::enabled("TILE_TIME_PASSES");
  const bool dumping = !dump_dir().empty();
  stage_timer timer;
  cache_key key = ptx_key(fn, a);
  if (options.exp_batch != targets::nvptx::lowering_options{}.exp_batch || options.max_registers > 0)
    key.options += ";expbatch" + std::to_string(options.exp_batch);
  if (options.max_registers > 0) key.options += ";maxnreg" + std::to_string(options.max_registers);
  if (options.warp_specialize) key.options += ";ws";
  if (options.warp_specialize_by_shared) key.options += ";wsshared";
  const std::string digest = key.digest();
  auto k = cached<ptx_kernel>(
      key, "ptx", cache_policy::from_env(), [&] { return lower(fn, a, options, digest, dumping, timer); },
      [](const ptx_kernel& p) { return serialize(to_artifact(p, "ptx", p.ptx)); },
      [&](std::string_view bytes) -> std::shared_ptr<const ptx_kernel> {
        auto art = parse_artifact(bytes);
        // an entry of another kernel under this key's name is not this one's
        if (!art || art->kind != "ptx" || art->kernel != fn.name || art->arch != a.name()) return nullptr;
        return from_artifact(*art);
      });
  if (time) timer.print(fn.name, a.name());
  return k;
}

std::optional<targets::nvptx::lowering_options> lean_variant(const sm_limits& sm, const ptx_kernel& k, const block_use& first) {
  if (!registers_limit(sm, first)) return std::nullopt;
  // The lean form frees a few registers (softmax of 8192 columns on 16 warps: 7, from 47 to 40)
  // and caps them where another block needs them (attention at D = 64, 128 x 64 on 8 warps: 134,
  // and 128 for a second block). Where another block needs many more fewer, the second build
  // would only cost its compile (or spill): softmax of 16384 columns on 16 warps takes 64 both
  // ways, and a third block needs 40. The cap alone is tried only where the next block adds a
  // quarter or more to the warps an SM holds (4 blocks or fewer): a kernel of 12 blocks an SM
  // gains little from a 13th, and every such kernel would be compiled twice.
  constexpr int kReach = 16;
  const int blocks = blocks_per_sm(sm, first);
  const int cap = registers_for(sm, first.threads, blocks + 1);
  if (first.registers - cap > kReach) return std::nullopt;
  const bool batches = k.widest_exp_batch > targets::nvptx::lowering_options::lean().exp_batch;
  if (!batches && blocks > 4) return std::nullopt;
  return targets::nvptx::lowering_options::lean(cap);
}

namespace {
/// The launch's warp_specialize (0, 1), else TILE_WARP_SPECIALIZE's (0, 1), else -1.
int warp_specialize_choice(const ir::Function& fn) {
  if (fn.warp_specialize >= 0) return fn.warp_specialize;
  const std::string mode = env::get("TILE_WARP_SPECIALIZE");
  return mode == "0" ? 0 : mode == "1" ? 1 : -1;
}
}  // namespace

targets::nvptx::lowering_options first_options(const ir::Function& fn) {
  targets::nvptx::lowering_options o;
  const int choice = warp_specialize_choice(fn);
  o.warp_specialize = choice == 1;
  o.warp_specialize_by_shared = choice == -1;
  return o;
}

std::optional<targets::nvptx::lowering_options> plain_variant(const ir::Function& fn, const ptx_kernel& k, std::int64_t spill_bytes) {
  if (!k.options.warp_specialize || warp_specialize_choice(fn) != -1 || spill_bytes <= 0) return std::nullopt;
  return targets::nvptx::lowering_options{};
}

std::optional<targets::nvptx::lowering_options> warp_specialized_variant(const sm_limits& sm, const ir::Function& fn, const ptx_kernel& k,
                                                                         const block_use& first) {
  if (!k.warp_specializable || k.options.warp_specialize || warp_specialize_choice(fn) == 0 || blocks_per_sm(sm, first) != 1)
    return std::nullopt;
  targets::nvptx::lowering_options o;
  o.warp_specialize = true;
  return o;
}

std::string variant_name(const ptx_kernel& k) {
  if (k.options.warp_specialize) return "warp-specialized";
  return k.options != targets::nvptx::lowering_options{} ? "lean" : "";
}

std::string hooks_ptx(const targets::nvptx::arch& a, int num_warps,
                      const std::function<void(codegen::Lowering&, const targets::nvptx::NvptxTarget&)>& body) {
  targets::nvptx::NvptxTarget target(a, num_warps);
  llvm::LLVMContext ctx;
  codegen::Lowering L(ctx, target);
  auto m = std::make_unique<llvm::Module>("hooks", ctx);
  target.configure_module(*m);
  ir::Function f;
  f.name = "hooks";
  L.mod = m.get();
  L.ir_fn = &f;
  L.fn = target.declare_kernel(*m, f, "hooks");
  L.b = std::make_unique<llvm::IRBuilder<>>(llvm::BasicBlock::Create(ctx, "entry", L.fn));
  body(L, target);
  target.emit_return(L);
  auto tm = targets::nvptx::make_target_machine(a);
  return emit(*m, *tm, emit_kind::assembly);
}

std::string gpu_ir_ptx(const ir::Function& gpu_level, const targets::nvptx::arch& a) {
  auto f = ir::clone(gpu_level);
  transforms::PassManager::Options o;
  o.verify = true;
  transforms::PassManager pm(o);
  schedule::add_shared_memory_passes(pm);
  pm.run(*f);
  const analysis::AxisAnalysis axis(*f);
  ptx_kernel k;
  k.entry = entry_name(f->name);
  llvm::LLVMContext ctx;
  auto tm = targets::nvptx::make_target_machine(a);
  std::unique_ptr<llvm::Module> m = to_llvm(*f, axis, a, 0, {}, *tm, ctx, k, nullptr);
  return emit(*m, *tm, emit_kind::assembly);
}

}  // namespace tile::jit

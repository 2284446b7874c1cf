// src/jit/compile_nvptx.cpp — layer: jit. The NVIDIA pipeline (see compile_nvptx.hpp):
//   key -> memory cache -> disk cache (.ptx) -> [axis info -> layouts -> GPU lowering -> O3 -> PTX]
// and for a device: key + device -> disk cache (.cubin) -> [PTX -> ptxas where present, else the driver JIT (cuLink) -> cubin]
// -> cuModuleLoadData. A dump or timing switch bypasses the lookups and still stores results.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "analysis/axis_info.hpp"
#include "codegen/gpu/gpu_lowering.hpp"
#include "drivers/cuda/cuda_driver.hpp"
#include "jit/compile.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/disk_cache.hpp"
#include "jit/dump.hpp"
#include "jit/llvm_passes.hpp"
#include "jit/occupancy.hpp"
#include "jit/ptxas.hpp"
#include "layout/assign_layouts.hpp"
#include "schedule/software_pipeline.hpp"
#include "support/build_id.hpp"
#include "transforms/lower_descriptor_loads.hpp"
#include "transforms/pipeline.hpp"
#include "support/env.hpp"
#include "targets/nvptx/nvptx_target.hpp"
#include "targets/nvptx/nvptx_int_abs.hpp"

namespace tile::jit {
namespace {

constexpr const char* kOptions = "O3;gpu-abi=1";

struct caches {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const ptx_kernel>> ptx;  // digest -> kernel
  std::unique_ptr<disk_cache> disk;
};

caches& the_caches() {
  static caches c;
  return c;
}

disk_cache* disk() {
  caches& c = the_caches();
  std::lock_guard l(c.mu);
  if (!c.disk) c.disk = std::make_unique<disk_cache>(env::get("TILE_CACHE_DIR"));
  return c.disk.get();
}

struct stage_timer {
  std::vector<std::pair<std::string, double>> rows;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    rows.emplace_back(name, std::chrono::duration<double, std::milli>(now - t).count());
    t = now;
  }
  void print(const std::string& kernel, const std::string& target) const {
    double total = 0;
    for (auto& r : rows) total += r.second;
    std::cerr << "// ----- compile timing, " << target << " (kernel " << kernel << ") ----- //\n";
    char line[160];
    for (auto& r : rows) {
      std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", r.first.c_str(), r.second, total > 0 ? 100.0 * r.second / total : 0.0);
      std::cerr << line;
    }
    std::snprintf(line, sizeof line, "  %-16s %10.3f %6.1f%%\n", "total", total, 100.0);
    std::cerr << line << std::flush;
  }
};

/// "tile_<kernel name reduced to [A-Za-z0-9_]>" — readable in profilers.
std::string entry_name(const std::string& kernel) {
  std::string s = "tile_";
  for (char c : kernel) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

cache_key key_for(const ir::Function& fn, const targets::nvptx::arch& a) {
  cache_key key;
  // the PTX embeds the file and line of asserts and step checks (emit_fail): they are part of the code
  key.ir_hash = ir::structural_hash(fn) ^ (ir::failure_location_hash(fn) * 0x9e3779b97f4a7c15ull);
  key.target = "nvptx-" + a.name();
  key.options = std::string(kOptions) + ";w" + std::to_string(fn.num_warps) + ";s" + std::to_string(fn.num_stages) +
                (fn.fp_fusion ? "" : ";nofma");
  key.version = support::build_id();
  key.kernel = fn.name;
  return key;
}

// disk format of a PTX entry: one header line, then the PTX. The header: "tile-ptx shared=N
// warps=W expbatch=E widest=B" and, for TMA kernels, " tmaps=" + one "elem:base:rows:cols:
// stride:box_rows:box_cols:swizzle" per map, ';'-separated, each source "aI" (argument I) or "cV"
// (constant V). E: lowering_options::exp_batch; B: the widest exp batch the code has.
std::string source_text(const drivers::tensor_map_spec::source& s) {
  return s.arg >= 0 ? "a" + std::to_string(s.arg) : "c" + std::to_string(s.value);
}
std::string header(const ptx_kernel& k) {
  std::string h = "tile-ptx shared=" + std::to_string(k.shared_bytes) + " warps=" + std::to_string(k.num_warps) +
                  " expbatch=" + std::to_string(k.options.exp_batch) + " widest=" + std::to_string(k.widest_exp_batch);
  for (std::size_t i = 0; i < k.tensor_maps.size(); ++i) {
    const auto& t = k.tensor_maps[i];
    h += (i == 0 ? " tmaps=" : ";") + std::to_string(static_cast<int>(t.elem)) + ":" + source_text(t.base) + ":" +
         source_text(t.rows) + ":" + source_text(t.cols) + ":" + source_text(t.row_stride) + ":" + std::to_string(t.box_rows) +
         ":" + std::to_string(t.box_cols) + ":" + std::to_string(t.swizzle_bytes);
  }
  return h + "\n";
}
std::string pack(const ptx_kernel& k) { return header(k) + k.ptx; }
bool parse_maps(std::string text, std::vector<drivers::tensor_map_spec>& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    std::vector<std::string> f;
    std::size_t p = pos;
    while (p <= end) {
      std::size_t c = text.find(':', p);
      if (c == std::string::npos || c > end) c = end;
      f.push_back(text.substr(p, c - p));
      p = c + 1;
    }
    if (f.size() != 8) return false;
    try {
      auto src = [&](const std::string& x, drivers::tensor_map_spec::source& s) {
        if (x.size() < 2 || (x[0] != 'a' && x[0] != 'c')) throw std::invalid_argument(x);
        if (x[0] == 'a') s.arg = std::stoi(x.substr(1));
        else s.value = std::stoll(x.substr(1));
      };
      drivers::tensor_map_spec t;
      t.elem = static_cast<dtype>(std::stoi(f[0]));
      src(f[1], t.base);
      src(f[2], t.rows);
      src(f[3], t.cols);
      src(f[4], t.row_stride);
      const long long br = std::stoll(f[5]), bc = std::stoll(f[6]), sw = std::stoll(f[7]);
      // only what the compiler writes (a damaged or foreign entry is compiled again)
      const bool ok = (t.elem == dtype::f16 || t.elem == dtype::bf16) && t.base.arg >= 0 && br >= 1 && br <= 256 &&
                      bc >= 1 && bc <= 256 && (sw == 32 || sw == 64 || sw == 128) && bc * 2 == sw;
      if (!ok) return false;
      t.box_rows = static_cast<std::uint32_t>(br);
      t.box_cols = static_cast<std::uint32_t>(bc);
      t.swizzle_bytes = static_cast<std::uint32_t>(sw);
      out.push_back(t);
    } catch (const std::exception&) {
      return false;
    }
    pos = end + 1;
  }
  return true;
}
bool unpack(const std::string& s, ptx_kernel& k) {
  const auto nl = s.find('\n');
  if (nl == std::string::npos) return false;
  unsigned shared = 0;
  int warps = 0, exp_batch = 0, widest = 0;
  const std::string head = s.substr(0, nl);
  if (std::sscanf(head.c_str(), "tile-ptx shared=%u warps=%d expbatch=%d widest=%d", &shared, &warps, &exp_batch,
                  &widest) != 4 ||
      exp_batch < 1 || widest < 0)
    return false;
  k.options.exp_batch = exp_batch;
  k.widest_exp_batch = widest;
  k.tensor_maps.clear();
  if (const auto t = head.find(" tmaps="); t != std::string::npos && !parse_maps(head.substr(t + 7), k.tensor_maps)) return false;
  k.shared_bytes = shared;
  k.num_warps = warps;
  k.ptx = s.substr(nl + 1);
  return true;
}

/// `fn` with its descriptor loads rewritten into masked loads, except (`tma`) those the TMA may
/// copy; null when `fn` has none.
std::unique_ptr<ir::Function> lower_descriptors(const ir::Function& fn, bool tma) {
  if (!transforms::has_descriptor_loads(fn)) return nullptr;
  auto c = ir::clone(fn);
  std::function<bool(const ir::Op&)> keep;
  if (tma) keep = [&](const ir::Op& op) { return schedule::tma_candidate(*c, op, fn.num_warps); };
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
    if (v->owner == &f.body) s.arg = static_cast<int>(v->index);
    else s.value = v->def->attrs.ints.at(0);
    return s;
  };
  drivers::tensor_map_spec t;
  t.elem = l.result()->type.elem;
  t.base = src(l.operand(0));
  t.rows = src(l.operand(1));
  t.cols = src(l.operand(2));
  t.row_stride = src(l.operand(3));
  const std::int64_t es = static_cast<std::int64_t>(size_of(t.elem));
  t.box_rows = static_cast<std::uint32_t>(l.attrs.ints[0]);
  t.swizzle_bytes = static_cast<std::uint32_t>(std::min<std::int64_t>(128, l.attrs.ints[1] * es));
  t.box_cols = t.swizzle_bytes / static_cast<std::uint32_t>(es);
  return t;
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
  // shared memory a CTA may opt into: the SM's (sm_90 228 KB, sm_80/sm_87 164 KB, other sm_8x 100
  // KB) less the 1 KB the driver keeps of each block's
  const sm_limits sm = sm_limits_of(a.sm);
  const auto smem_limit = static_cast<std::uint64_t>(sm.shared_bytes - sm.reserved_shared_per_block);
  // descriptor loads: kept for the TMA where tma_candidate says so (sm_90a), the rest masked
  // loads; should a loop that kept some not be pipelined, all become masked loads
  const bool tma = a.sm >= 90 && a.accel;
  std::unique_ptr<ir::Function> lowered = lower_descriptors(original, tma);
  const ir::Function* f = lowered ? lowered.get() : &original;
  std::optional<analysis::AxisAnalysis> axis_store;
  std::optional<layout::LayoutPlan> plan_store;
  schedule::PipelinePlan pipes;
  for (int attempt = 0;; ++attempt) {
    axis_store.emplace(*f);
    plan_store = layout::assign_layouts(*f, *axis_store, f->num_warps, {.mma = a.sm >= 80 ? 80 : 0, .wgmma = a.sm >= 90 && a.accel});
    pipes = a.sm >= 80 ? schedule::plan_pipelines(*f, *plan_store, *axis_store, f->num_stages, smem_limit) : schedule::PipelinePlan{};
    std::size_t kept = 0;
    ir::walk(const_cast<ir::Block&>(f->body), [&](const ir::Op& o) { kept += o.kind == ir::OpKind::desc_load; });
    // (at most kMaxTensorMaps hidden parameters a kernel: what a launch passes)
    if ((kept == pipes.tensor_maps.size() && kept <= drivers::kMaxTensorMaps) || attempt > 0) {
      if (kept != pipes.tensor_maps.size())
        throw tile::error("internal error: a descriptor load was left for the TMA outside a pipelined loop", original.loc,
                          original.name);
      break;
    }
    lowered = lower_descriptors(original, false);
    f = lowered.get();
  }
  const ir::Function& fn = *f;
  const analysis::AxisAnalysis& axis = *axis_store;
  const layout::LayoutPlan& plan = *plan_store;
  timer.lap("layouts, pipelining");
  for (std::size_t i = 0; i < pipes.tensor_maps.size(); ++i) k->tensor_maps.push_back(tensor_map_of(fn, pipes, i));
  if (env::enabled("TILE_DUMP_IR"))
    std::cerr << "// ----- layouts for " << a.name() << ", " << fn.num_warps << " warps (kernel " << fn.name << ") ----- //\n"
              << layout::print_plan(fn, plan, &axis) << schedule::print_pipelines(fn, pipes) << std::flush;
  llvm::LLVMContext ctx;
  targets::nvptx::NvptxTarget target(a, fn.num_warps, static_cast<unsigned>(pipes.tensor_maps.size()), options);
  codegen::gpu::GpuLowering lowering(ctx, target, plan, axis);
  lowering.set_pipelines(&pipes);
  std::unique_ptr<llvm::Module> m = lowering.run(fn, k->entry);
  k->shared_bytes = lowering.shared_bytes();
  k->widest_exp_batch = target.widest_exp_batch();
  timer.lap("lower to LLVM");
  auto tm = targets::nvptx::make_target_machine(a);
  optimize(*m, *tm);
  targets::nvptx::expand_integer_abs(*m);
  timer.lap("LLVM O3");
  k->ptx = emit(*m, *tm, emit_kind::assembly);
  timer.lap("PTX");
  if (dumping) {
    dump_artifact(fn.name, digest, "tir", ir::print(fn, true));
    dump_artifact(fn.name, digest, "layouts", layout::print_plan(fn, plan, &axis) + schedule::print_pipelines(fn, pipes));
    dump_artifact(fn.name, digest, "ll", to_text(*m));
    dump_artifact(fn.name, digest, "ptx", k->ptx);
  }
  return k;
}

}  // namespace

std::shared_ptr<const ptx_kernel> compile_ptx(const ir::Function& fn, const targets::nvptx::arch& a,
                                              const targets::nvptx::lowering_options& options) {
  const bool time = env::enabled("TILE_TIME_PASSES");
  const bool dumping = !dump_dir().empty();
  const bool use_cache = env::enabled("TILE_CACHE");
  const bool lookup = use_cache && !dumping && !time;
  stage_timer timer;
  cache_key key = key_for(fn, a);
  if (options != targets::nvptx::lowering_options{}) key.options += ";expbatch" + std::to_string(options.exp_batch);
  const std::string digest = key.digest();
  caches& c = the_caches();
  if (lookup) {
    {
      std::lock_guard l(c.mu);
      auto it = c.ptx.find(digest);
      if (it != c.ptx.end()) {
        count(stat::memory_hit);
        return it->second;
      }
    }
    if (auto hit = disk()->load(key, "ptx")) {
      auto k = std::make_shared<ptx_kernel>();
      if (unpack(*hit, *k)) {
        k->entry = entry_name(fn.name);
        k->kernel = fn.name;
        k->arch = a.name();
        k->digest = digest;
        std::lock_guard l(c.mu);
        c.ptx.emplace(digest, k);
        count(stat::disk_hit);
        return k;
      }
    }
  }
  auto k = lower(fn, a, options, digest, dumping, timer);
  count(stat::compiled);
  if (use_cache) {
    disk()->store(key, pack(*k), "ptx");
    std::lock_guard l(c.mu);
    c.ptx[digest] = k;
  }
  if (time) timer.print(fn.name, a.name());
  return k;
}

namespace {
/// The shared-memory carveout (percent shared) `fn` prefers, -1 for the driver's choice.
/// TILE_SMEM_CARVEOUT=driver (the default) sets none: the driver then configures an SM with the
/// shared memory its resident blocks need and leaves the rest to L1. A global load's data lands
/// in L1 on its way to the registers, so L1's size caps the bytes an SM can have in flight, and a
/// streaming kernel needs about bandwidth x latency / SMs of them: some 25 KB on an H200 (4.8
/// TB/s), 18 KB on an H100. With all shared memory (100 %) an SM keeps about 22 KB of L1: an H100
/// hardly notices, an H200 loses 5-8 % (softmax at 4096-16384 columns against Triton's kernel in
/// the same process, vector add at 2^22-2^28 against the device copy: bench/results/h200.md).
/// 0 … 100: that percentage for every kernel.
int smem_carveout(const ir::Function& fn) {
  const std::string v = env::get("TILE_SMEM_CARVEOUT");
  if (v == "driver") return -1;
  int pct = -1;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), pct);
  if (ec != std::errc() || end != v.data() + v.size() || pct < 0 || pct > 100)
    throw tile::error("kernel '" + fn.name + "': TILE_SMEM_CARVEOUT=" + v +
                          " is not 'driver' or a percentage from 0 to 100",
                      fn.loc, fn.name);
  return pct;
}
}  // namespace

namespace {
/// A kernel's code for the device, loaded: the cubin it came from (empty where the driver loaded
/// the PTX itself: nothing to cache).
struct loaded {
  std::unique_ptr<drivers::cuda_module> mod;
  std::string cubin;
};

/// `k` assembled for the driver's device and loaded with `src`'s settings: by ptxas where the
/// machine has one (TILE_PTXAS=0 turns it off), which compiles the kernel as a whole program,
/// where the driver's linker (cuLink) compiles PTX as relocatable code, whose calls (the slow
/// paths of div.rn and sqrt.rn) follow the ABI and cost registers: 72 instead of 64 for softmax
/// at 16384 columns, 56 instead of 40 for layer norm at 4096 (H100, driver 580), so fewer blocks
/// fit on an SM. A cubin the driver then refuses (a ptxas newer than the driver) falls back to
/// cuLink, and where there is no JIT linker the driver loads the PTX itself.
loaded assemble_and_load(const ptx_kernel& k, drivers::cuda_module_source src, drivers::cuda_driver& drv,
                         const targets::nvptx::arch& a) {
  src.shared_bytes = k.shared_bytes;
  src.tensor_maps = k.tensor_maps;
  src.fmt = drivers::cuda_module_source::format::cubin;
  float jit_ms = 0;
  if (const std::string px = find_ptxas(); !px.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_ptxas(px, k.ptx, a.name(), k.kernel);
    if (r.ok) {
      jit_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
      src.image = std::move(r.cubin);
      try {
        loaded out{drv.load_module(src), src.image};
        out.mod->jit_ms = jit_ms;
        return out;
      } catch (const tile::error&) {
        // the driver's own JIT instead; a failure that is not the image's (a shared-memory need
        // over the limit, a context lost to a fault) comes back from load_module below, as it is
      }
    }
  }
  try {
    src.image = drv.ptx_to_cubin(k.ptx, k.kernel, &jit_ms);
  } catch (const tile::error&) {
    src.image.clear();  // no JIT linker: load the PTX itself (the driver JITs it), nothing cached
  }
  if (src.image.empty()) {
    src.fmt = drivers::cuda_module_source::format::ptx;
    src.image = k.ptx;
    return {drv.load_module(src), {}};
  }
  loaded out{drv.load_module(src), src.image};
  out.mod->jit_ms = jit_ms;  // the JIT ran in cuLink
  return out;
}

sm_limits limits_of(const drivers::cuda_device_info& info) {
  return {.max_threads = info.max_threads_per_sm,
          .max_registers = info.max_registers_per_sm,
          .max_blocks = info.max_blocks_per_sm,
          .shared_bytes = info.max_shared_per_sm,
          .reserved_shared_per_block = info.reserved_shared_per_block};
}

block_use use_of(const drivers::cuda_module& m) {
  return {.threads = 32 * m.num_warps,
          .registers = m.num_regs,
          .shared_bytes = static_cast<std::int64_t>(m.shared_bytes) + m.static_shared_bytes};
}

}  // namespace

bool lean_worth_trying(const sm_limits& sm, const ptx_kernel& k, const block_use& first) {
  if (k.widest_exp_batch <= targets::nvptx::lowering_options::lean().exp_batch || !registers_limit(sm, first)) return false;
  // The lean form frees a few registers (softmax of 8192 columns on 16 warps: 7, from 47 to 40).
  // Where another block needs many more fewer, the second build would only cost its compile:
  // softmax of 16384 columns on 16 warps takes 64 both ways, and a third block needs 40.
  constexpr int kReach = 16;
  return first.registers - registers_for(sm, first.threads, blocks_per_sm(sm, first) + 1) <= kReach;
}

std::string variant_name(const ptx_kernel& k) {
  return k.options == targets::nvptx::lowering_options::lean() ? "lean" : "";
}

std::unique_ptr<drivers::module> compile_cuda(std::shared_ptr<const ir::Function> fn, drivers::cuda_driver& drv) {
  const auto& info = drv.info();
  targets::nvptx::arch a = targets::nvptx::arch_for_device(info.cc_major, info.cc_minor);
  // TILE_TARGET: an older arch's code on this device (sm_80's mma.sync and cp.async on an H100)
  if (const std::string t = env::get("TILE_TARGET"); !t.empty()) {
    const targets::nvptx::arch want = targets::nvptx::parse_arch(t);
    const int cc = info.cc_major * 10 + info.cc_minor;
    if (want.sm > cc || (want.accel && cc != 90))
      throw tile::error("kernel '" + fn->name + "': TILE_TARGET=" + t + " does not run on this device (" + info.arch() +
                            "): name this device's arch or an older one",
                        fn->loc);
    a = want;
  }
  const bool use_cache = env::enabled("TILE_CACHE");
  const bool lookup = use_cache && dump_dir().empty() && !env::enabled("TILE_TIME_PASSES");
  const bool retry = env::enabled("TILE_OCCUPANCY_RETRY");
  // the cubin's key: the PTX's, plus the device and driver that compiled it
  cache_key key = key_for(*fn, a);
  key.target += ";" + info.arch() + ";driver" + std::to_string(info.driver_version);
  // which assembler made the cubin (TILE_PTXAS=0 picks the driver's: another cubin)
  key.target += find_ptxas().empty() ? ";culink" : ";ptxas";
  if (!retry) key.target += ";noretry";  // the cubin kept may be the lean variant's
  drivers::cuda_module_source src;
  src.entry = entry_name(fn->name);
  src.kernel = fn->name;
  src.num_warps = fn->num_warps;
  src.smem_carveout = smem_carveout(*fn);
  if (lookup) {
    if (auto hit = disk()->load(key, "cubin")) {
      ptx_kernel meta;
      const auto nl = hit->find('\n');
      if (nl != std::string::npos && unpack(hit->substr(0, nl + 1), meta)) {
        src.fmt = drivers::cuda_module_source::format::cubin;
        src.image = hit->substr(nl + 1);
        src.shared_bytes = meta.shared_bytes;
        src.tensor_maps = meta.tensor_maps;
        count(stat::disk_hit);
        auto mod = drv.load_module(src);
        mod->variant = variant_name(meta);
        return mod;
      }
    }
  }
  std::shared_ptr<const ptx_kernel> k = compile_ptx(*fn, a);
  loaded best = assemble_and_load(*k, src, drv, a);
  if (const sm_limits sm = limits_of(info); retry && lean_worth_trying(sm, *k, use_of(*best.mod))) {
    try {
      std::shared_ptr<const ptx_kernel> lean = compile_ptx(*fn, a, targets::nvptx::lowering_options::lean());
      loaded other = assemble_and_load(*lean, src, drv, a);
      if (holds_more(sm, use_of(*best.mod), best.mod->local_bytes, use_of(*other.mod), other.mod->local_bytes)) {
        best = std::move(other);
        k = std::move(lean);
      }
    } catch (const tile::error&) {
      // a second try only: the first build stands (an error that is the device's, not the
      // code's, comes back at the launch)
    }
  }
  best.mod->variant = variant_name(*k);
  if (!best.cubin.empty()) {
    if (use_cache) disk()->store(key, header(*k) + best.cubin, "cubin");
    if (!dump_dir().empty()) dump_artifact(fn->name, k->digest, "cubin", best.cubin);
  }
  return std::move(best.mod);
}

}  // namespace tile::jit

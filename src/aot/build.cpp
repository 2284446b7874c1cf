// src/aot/build.cpp — layer: aot (the build step's side: LLVM, in libtile only). Compiles the
// launches a tile::aot::builder lists for each target and writes them out:
//   NVIDIA "sm_XY": build_nvptx (jit/ptxas.hpp: the PTX, the occupancy retry, ptxas where it is
//     found) gives entries "sm_XY" (the cubin) and "ptx:sm_XY" (the PTX), every launch and
//     target at once on the machine's cores;
//   CPU "cpu-x86-64-vN": each kernel lowered for that level (descriptor loads as the masked loads
//     they mean, as device_impl::compile does), optimized, and linked into one LLVM module with
//     internal linkage, so two archives in one program never clash;
// then the archive (aot/catalog.hpp) as a constant in that module, with the table of its CPU
// kernels and a constructor calling tile_aot_register at start-up, emitted as one object.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <fstream>
#include <sstream>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "aot/catalog.hpp"
#include "aot/device_targets.hpp"
#include "aot/record.hpp"
#include "codegen/lowering.hpp"
#include "jit/compile_nvptx.hpp"
#include "jit/disk_cache.hpp"
#include "jit/llvm_passes.hpp"
#include "jit/ptxas.hpp"
#include "targets/cpu/cpu_target.hpp"
#include "targets/nvptx/nvptx_arch.hpp"
#include "tile/runtime/aot.hpp"
#include "transforms/lower_descriptor_loads.hpp"
#include "transforms/pipeline.hpp"

namespace tile::aot {
namespace {

std::vector<std::string> resolved(const std::vector<std::string>& targets) {
  std::vector<std::string> out;
  for (const std::string& t : targets) {
    if (!known_target(t))
      throw tile::error("tile::aot: unknown target '" + t +
                        "' (known: sm_80, sm_86, sm_89, sm_90, sm_90a, cpu, cpu-x86-64, cpu-x86-64-v2, cpu-x86-64-v3, "
                        "cpu-x86-64-v4)");
    std::string r = t == "cpu" ? host_cpu_target() : t;
    if (r.empty()) throw tile::error("tile::aot: target 'cpu': this machine is not x86-64");
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  }
  if (out.empty()) throw tile::error("tile::aot: no targets");
  return out;
}

/// The traced kernel as a CPU backend compiles it: descriptor loads become masked loads.
std::shared_ptr<const ir::Function> for_cpu(const std::shared_ptr<const ir::Function>& fn) {
  if (!transforms::has_descriptor_loads(*fn)) return fn;
  auto c = ir::clone(*fn);
  transforms::lower_descriptor_loads(*c);
  auto options = transforms::PassManager::Options::from_env();
  options.dump_ir = false;
  transforms::canonicalize(*c, options);
  return c;
}

/// A CPU kernel's function in an archive's module.
std::string cpu_symbol(const std::string& prefix, const ir::Function& fn, const std::string& target) {
  return prefix + jit::hex64(jit::xxh64(lookup_key(fn) + "|" + target));
}

std::vector<std::string> params_of(const ir::Function& fn) {
  std::vector<std::string> p;
  for (const auto& arg : fn.body.args) p.push_back(arg->type.str());
  return p;
}

/// Runs job(i) for i in [0, n) on all of the machine's cores; rethrows the first failure in
/// job order.
template <class Job>
void on_all_cores(std::size_t n, const Job& job) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// Every launch compiled for every NVIDIA target (LLVM's NVPTX backend and ptxas dominate a
/// build), in target-major order.
std::vector<jit::nvptx_build> build_gpu(const std::vector<detail::traced_launch>& launches,
                                        const std::vector<std::string>& targets) {
  std::vector<std::pair<targets::nvptx::arch, const ir::Function*>> jobs;
  for (const std::string& t : targets)
    if (t.rfind("cpu-", 0) != 0)
      for (const auto& l : launches) jobs.emplace_back(targets::nvptx::parse_arch(t), l.fn.get());
  std::vector<jit::nvptx_build> out(jobs.size());
  on_all_cores(jobs.size(), [&](std::size_t i) { out[i] = jit::build_nvptx(*jobs[i].second, jobs[i].first, true); });
  return out;
}

/// Every launch lowered and optimized for every CPU target, each in its own LLVM context, as
/// bitcode (linked into the archive's module afterwards, in order), in target-major order.
std::vector<std::string> build_cpu(const std::vector<detail::traced_launch>& launches,
                                   const std::vector<std::string>& targets, const std::string& prefix) {
  struct job {
    std::string target;
    const detail::traced_launch* launch;
  };
  std::vector<job> jobs;
  for (const std::string& t : targets)
    if (t.rfind("cpu-", 0) == 0)
      for (const auto& l : launches) jobs.push_back({t, &l});
  std::vector<std::string> out(jobs.size());
  on_all_cores(jobs.size(), [&](std::size_t i) {
    const targets::cpu::Host machine = targets::cpu::level(llvm_cpu_of(jobs[i].target));
    const std::string sym = cpu_symbol(prefix, *jobs[i].launch->fn, jobs[i].target);
    auto run = for_cpu(jobs[i].launch->fn);
    llvm::LLVMContext ctx;
    targets::cpu::CpuTarget hooks(*run, machine, sym + "_scratch");
    codegen::Lowering lowering(ctx, hooks);
    std::unique_ptr<llvm::Module> m = lowering.run(*run, sym);
    jit::optimize(*m, *targets::cpu::make_target_machine(machine));
    llvm::raw_string_ostream os(out[i]);
    llvm::WriteBitcodeToFile(*m, os);
    os.flush();
  });
  return out;
}

struct cpu_kernel {
  std::string entry;  // the function's name in the module (internal)
  std::string scratch;
};

/// Everything listed, compiled: the archive and the module holding the CPU kernels.
struct compiled_set {
  archive a;
  std::vector<cpu_kernel> cpu;
};

void compile_all(const std::vector<detail::traced_launch>& launches, const std::vector<std::string>& targets,
                 const std::string& name, bool allow_cpu, llvm::Module* module, compiled_set& out) {
  out.a.name = name;
  out.a.choices = {};
  const std::string prefix = "tile_aot_" + jit::hex64(jit::xxh64(name)).substr(0, 8) + "_";
  if (!allow_cpu)
    for (const std::string& t : targets)
      if (t.rfind("cpu-", 0) == 0)
        throw tile::error("tile::aot: an archive file cannot carry CPU kernels (target " + t +
                          "): write an object (write_object, --out *.o) and link it");
  const std::vector<jit::nvptx_build> gpu = build_gpu(launches, targets);
  const std::vector<std::string> cpu_code = build_cpu(launches, targets, prefix);
  std::size_t next_gpu = 0, next_cpu = 0;
  for (const std::string& t : targets) {
    const bool cpu = t.rfind("cpu-", 0) == 0;
    for (const detail::traced_launch& l : launches) {
      const ir::Function& fn = *l.fn;
      entry e;
      e.key = lookup_key(fn);
      e.spec = l.spec;
      e.target = t;
      if (cpu) {
        const std::string sym = cpu_symbol(prefix, fn, t);
        const std::string& bitcode = cpu_code[next_cpu++];
        auto m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, sym), module->getContext());
        if (!m) {
          llvm::consumeError(m.takeError());
          throw tile::error("tile::aot: internal error: the CPU kernel's bitcode does not read back", {}, fn.name);
        }
        if (llvm::Linker::linkModules(*module, std::move(*m)))
          throw tile::error("tile::aot: internal error: linking the CPU kernel into the archive's module failed", {}, fn.name);
        e.code.kind = "cpu";
        e.code.kernel = fn.name;
        e.code.entry = sym;
        e.code.arch = t;
        e.code.params = params_of(fn);
        e.code.key = e.key;
        out.cpu.push_back({sym, sym + "_scratch"});
        out.a.entries.push_back(std::move(e));
        continue;
      }
      const jit::nvptx_build& b = gpu[next_gpu++];
      if (b.assembled && !b.cubin.empty()) {
        entry c = e;
        c.code = jit::to_artifact(*b.k, "cubin", b.cubin);
        out.a.entries.push_back(std::move(c));
      }
      e.target = "ptx:" + t;
      e.code = jit::to_artifact(*b.k, "ptx", b.k->ptx);
      out.a.entries.push_back(std::move(e));
    }
  }
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f || !f.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !f.flush())
    throw tile::error("tile::aot: cannot write " + path);
}

/// A private constant global holding `init` (its arguments built before the new-expression:
/// nothing in it can throw).
llvm::GlobalVariable* constant(llvm::Module& m, llvm::Constant* init, const llvm::Twine& name) {
  return new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init, name);
}

std::string stem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (auto dot = s.find('.'); dot != std::string::npos) s = s.substr(0, dot);
  return s.empty() ? "kernels" : s;
}

/// `path` written by `b`: an object when it ends in .o, else an archive file.
void write_to(const builder& b, const std::string& path, const std::vector<std::string>& targets, const std::string& name) {
  const bool object = path.size() > 2 && path.compare(path.size() - 2, 2, ".o") == 0;
  if (object) b.write_object(path, targets, name);
  else b.write_archive(path, targets, name);
}

/// TILE_AOT_RECORD's writer (aot/record.hpp): the recorded launches, as a build step's.
std::string write_recorded(const std::vector<detail::traced_launch>& launches, const std::string& path,
                           const std::vector<std::string>& targets) {
  const auto t0 = std::chrono::steady_clock::now();
  builder b;
  for (const auto& l : launches) b.add(l);
  write_to(b, path, targets, stem(path));
  std::string ts;
  for (const auto& t : targets) ts += (ts.empty() ? "" : ",") + t;
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.1f s)", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return "tile::aot: recorded " + std::to_string(launches.size()) + " launches for " + ts + " -> " + path + buf;
}

[[maybe_unused]] const bool writer_registered = (set_record_writer(&write_recorded), true);

}  // namespace

builder::builder() : dev_(tile::device::get("interpreter")) {}

void builder::add(detail::traced_launch launch) {
  for (const auto& l : launches_)
    if (lookup_key(*l.fn) == lookup_key(*launch.fn)) return;  // listed twice: compiled once
  launches_.push_back(std::move(launch));
}

void builder::add(detail::autotuner_core::build_choice c) {
  if (c.target.empty())
    throw tile::error("tile::aot::builder::tune: tune on the cpu or a cuda device (the buffers' device has no archive "
                      "target)",
                      {}, c.launch.fn ? c.launch.fn->name : std::string());
  choices_.push_back({c.launch.fn->name, std::move(c.tuning), std::move(c.target), std::move(c.config)});
  add(std::move(c.launch));
}

void builder::write_object(const std::string& path, const std::vector<std::string>& targets, const std::string& name) const {
  const auto ts = resolved(targets);
  llvm::LLVMContext ctx;
  const targets::cpu::Host base = targets::cpu::level("x86-64");  // the constructor runs anywhere
  auto tm = targets::cpu::make_target_machine(base);
  auto module = std::make_unique<llvm::Module>("tile-aot-" + name, ctx);
  module->setTargetTriple(base.triple);
  module->setDataLayout(tm->createDataLayout());
  compiled_set set;
  compile_all(launches_, ts, name, /*allow_cpu=*/true, module.get(), set);
  for (const auto& c : choices_) set.a.choices.push_back({c.kernel, c.tuning, c.target, c.config});

  // the archive, the CPU kernels' table and the constructor registering them
  llvm::Module& m = *module;
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  const std::string blob = serialize(set.a);
  llvm::GlobalVariable* blob_g = constant(m, llvm::ConstantDataArray::getString(ctx, blob, /*AddNull=*/false), "tile_aot_blob");
  blob_g->setAlignment(llvm::Align(16));
  auto cstring = [&](const std::string& s, const char* id) -> llvm::Constant* {
    return constant(m, llvm::ConstantDataArray::getString(ctx, s, true), id);
  };
  auto* sym_ty = llvm::StructType::get(ctx, {ptr, ptr, ptr});
  std::vector<llvm::Constant*> rows;
  for (const cpu_kernel& k : set.cpu) {
    llvm::Function* f = m.getFunction(k.entry);
    llvm::GlobalVariable* s = m.getGlobalVariable(k.scratch);
    if (!f || !s) throw tile::error("tile::aot: internal error: CPU kernel " + k.entry + " missing from the module");
    f->setLinkage(llvm::GlobalValue::InternalLinkage);  // reached through the table only
    s->setLinkage(llvm::GlobalValue::InternalLinkage);
    rows.push_back(llvm::ConstantStruct::get(sym_ty, {cstring(k.entry, "tile_aot_name"), f, s}));
  }
  llvm::Constant* table = llvm::ConstantPointerNull::get(ptr);
  if (!rows.empty())
    table = constant(m, llvm::ConstantArray::get(llvm::ArrayType::get(sym_ty, rows.size()), rows), "tile_aot_cpu");
  auto reg = m.getOrInsertFunction("tile_aot_register", llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                                                                {ptr, i64, ptr, i64, ptr}, false));
  auto* ctor = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                      llvm::GlobalValue::InternalLinkage, "tile_aot_init", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", ctor));
  const std::string origin = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  b.CreateCall(reg, {blob_g, llvm::ConstantInt::get(i64, blob.size()), table, llvm::ConstantInt::get(i64, rows.size()),
                     cstring(origin + " (" + name + ")", "tile_aot_origin")});
  b.CreateRetVoid();
  llvm::appendToGlobalCtors(m, ctor, 65535);
  write_file(path, jit::emit(m, *tm, jit::emit_kind::object));
}

void builder::write_archive(const std::string& path, const std::vector<std::string>& targets, const std::string& name) const {
  compiled_set set;
  compile_all(launches_, resolved(targets), name, /*allow_cpu=*/false, nullptr, set);
  for (const auto& c : choices_) set.a.choices.push_back({c.kernel, c.tuning, c.target, c.config});
  write_file(path, serialize(set.a));
}

int builder::main(int argc, char** argv) const {
  std::string out, name, targets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& v) {
      if (i + 1 >= argc) return false;
      v = argv[++i];
      return true;
    };
    if ((a == "--out" && value(out)) || (a == "--name" && value(name)) || (a == "--targets" && value(targets))) continue;
    std::fprintf(stderr, "%s: unknown or incomplete argument '%s'\nusage: %s --out FILE.o|FILE --targets sm_80,sm_90a,cpu [--name NAME]\n",
                 argv[0], a.c_str(), argv[0]);
    return 2;
  }
  if (out.empty() || targets.empty()) {
    std::fprintf(stderr, "usage: %s --out FILE.o|FILE --targets sm_80,sm_90a,cpu [--name NAME]\n", argv[0]);
    return 2;
  }
  std::vector<std::string> ts;
  std::stringstream ss(targets);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) ts.push_back(t);
  if (name.empty()) name = stem(out);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    write_to(*this, out, ts, name);
  } catch (const tile::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("tile::aot: %zu launches for %s -> %s (%.1f s)\n", launches_.size(), targets.c_str(), out.c_str(), s);
  return 0;
}

}  // namespace tile::aot

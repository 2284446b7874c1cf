// src/aot/build.cpp — layer: aot (the build step's side: LLVM, in libtile only). Compiles the
// launches a tile::aot::builder lists for each target and writes them out:
//   NVIDIA "sm_XY": build_nvptx (jit/ptxas.hpp: the PTX, the occupancy retry, ptxas where it is
//     found) gives entries "sm_XY" (the cubin) and "ptx:sm_XY" (the PTX);
//   CPU "cpu-x86-64-vN": each kernel lowered for that level (descriptor loads as the masked loads
//     they mean, as device_impl::compile does), optimized, and linked into one LLVM module with
//     internal linkage, so two archives in one program never clash;
// then the archive (aot/catalog.hpp) as a constant in that module, with the table of its CPU
// kernels and a constructor calling tile_aot_register at start-up, emitted as one object.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "aot/catalog.hpp"
#include "aot/device_targets.hpp"
#include "codegen/lowering.hpp"
#include "jit/carveout.hpp"
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

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

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

std::vector<std::string> params_of(const ir::Function& fn) {
  std::vector<std::string> p;
  for (const auto& arg : fn.body.args) p.push_back(arg->type.str());
  return p;
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
  const std::string prefix = "tile_aot_" + hex16(jit::xxh64(name)).substr(0, 8) + "_";
  for (const std::string& t : targets) {
    const bool cpu = t.rfind("cpu-", 0) == 0;
    if (cpu && !allow_cpu)
      throw tile::error("tile::aot: an archive file cannot carry CPU kernels (target " + t +
                        "): write an object (write_object, --out *.o) and link it");
    std::unique_ptr<llvm::TargetMachine> tm;
    targets::cpu::Host machine;
    if (cpu) {
      machine = targets::cpu::level(llvm_cpu_of(t));
      tm = targets::cpu::make_target_machine(machine);
    }
    for (const detail::traced_launch& l : launches) {
      const ir::Function& fn = *l.fn;
      entry e;
      e.key = lookup_key(fn);
      e.spec = l.spec;
      e.target = t;
      if (cpu) {
        const std::string sym = prefix + hex16(jit::xxh64(e.key + "|" + t));
        auto run = for_cpu(l.fn);
        targets::cpu::CpuTarget hooks(*run, machine, sym + "_scratch");
        codegen::Lowering lowering(module->getContext(), hooks);
        std::unique_ptr<llvm::Module> m = lowering.run(*run, sym);
        jit::optimize(*m, *tm);
        if (llvm::Linker::linkModules(*module, std::move(m)))
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
      const targets::nvptx::arch a = targets::nvptx::parse_arch(t);
      const jit::nvptx_build b = jit::build_nvptx(fn, a, /*want_cubin=*/true);
      e.smem_carveout = jit::smem_carveout(fn);
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
    const bool object = out.size() > 2 && out.compare(out.size() - 2, 2, ".o") == 0;
    if (object) write_object(out, ts, name);
    else write_archive(out, ts, name);
  } catch (const tile::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("tile::aot: %zu launches for %s -> %s (%.1f s)\n", launches_.size(), targets.c_str(), out.c_str(), s);
  return 0;
}

}  // namespace tile::aot

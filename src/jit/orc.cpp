// src/jit/orc.cpp — layer: jit. See orc.hpp.
#include "jit/orc.hpp"

#include <atomic>
#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include "drivers/cpu/cpu_module.hpp"
#include "targets/cpu/cpu_target.hpp"

namespace tile::jit {
namespace {

std::string message(llvm::Error e) {
  std::string s;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase& i) { s += i.message(); });
  return s;
}

struct Jit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::mutex mu;
  std::atomic<std::uint64_t> counter{0};
};

Jit& the_jit() {
  static Jit* j = [] {
    (void)targets::cpu::host();  // initializes the native target
    auto* r = new Jit;           // never destroyed: compiled code may run until exit
    auto built = llvm::orc::LLJITBuilder().create();
    if (!built) throw tile::error("cpu backend: cannot start LLVM's ORC JIT: " + message(built.takeError()));
    r->jit = std::move(*built);
    return r;
  }();
  return *j;
}

}  // namespace

loaded_code load_object(const std::string& object, const std::string& symbol, const std::string& kernel,
                        const char* data_symbol) {
  Jit& j = the_jit();
  std::lock_guard lock(j.mu);
  auto& es = j.jit->getExecutionSession();
  const std::string name = "tile." + kernel + "." + std::to_string(j.counter++);
  auto jd = es.createJITDylib(name);
  if (!jd) throw tile::error("cpu backend: cannot create a JITDylib: " + message(jd.takeError()), {}, kernel);
  llvm::orc::JITDylib& lib = *jd;
  // tile's run-time services, then the process (C library: expf, memcpy, …)
  llvm::orc::SymbolMap services;
  auto add = [&](const char* n, void* addr) {
    services[j.jit->mangleAndIntern(n)] = {llvm::orc::ExecutorAddr::fromPtr(addr), llvm::JITSymbolFlags::Exported};
  };
  add("tile_cpu_print", reinterpret_cast<void*>(&tile_cpu_print));
  add("tile_cpu_fail", reinterpret_cast<void*>(&tile_cpu_fail));
  if (auto e = lib.define(llvm::orc::absoluteSymbols(std::move(services))))
    throw tile::error("cpu backend: " + message(std::move(e)), {}, kernel);
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(j.jit->getDataLayout().getGlobalPrefix());
  if (!gen) throw tile::error("cpu backend: " + message(gen.takeError()), {}, kernel);
  lib.addGenerator(std::move(*gen));
  if (auto e = j.jit->addObjectFile(lib, llvm::MemoryBuffer::getMemBufferCopy(object, name)))
    throw tile::error("cpu backend: cannot load the compiled kernel: " + message(std::move(e)), {}, kernel);
  auto sym = j.jit->lookup(lib, symbol);
  if (!sym) throw tile::error("cpu backend: cannot find the kernel's entry point: " + message(sym.takeError()), {}, kernel);
  loaded_code r;
  r.entry = sym->toPtr<void*>();
  if (data_symbol) {
    auto d = j.jit->lookup(lib, data_symbol);
    if (!d) throw tile::error("cpu backend: the compiled kernel lacks " + std::string(data_symbol) + ": " + message(d.takeError()), {}, kernel);
    r.data = d->toPtr<void*>();
  }
  llvm::orc::JITDylib* lp = &lib;
  r.keep = std::shared_ptr<void>(static_cast<void*>(lp), [](void*) {
    // JITDylibs stay until exit: removing one while another thread may still be launching its
    // code would need a launch-wide reference count for no measurable gain.
  });
  return r;
}

}  // namespace tile::jit

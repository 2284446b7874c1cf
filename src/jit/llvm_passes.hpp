// src/jit/llvm_passes.hpp — layer: jit. LLVM's half of the compile pipeline: the O3 pipeline
// for a target machine, and emission of object code or assembly text.
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tile::jit {

/// Runs LLVM's default O3 pipeline (vectorizers included) tuned for `tm`.
void optimize(llvm::Module& m, llvm::TargetMachine& tm);

enum class emit_kind { object, assembly };
/// The module compiled to an object file or to assembly text by `tm`.
std::string emit(llvm::Module& m, llvm::TargetMachine& tm, emit_kind kind);

/// The module as LLVM IR text.
std::string to_text(const llvm::Module& m);

}  // namespace tile::jit

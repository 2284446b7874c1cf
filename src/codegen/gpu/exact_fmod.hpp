// src/codegen/gpu/exact_fmod.hpp — layer: codegen (gpu). Exact C fmod for GPU targets (see
// exact_fmod.cpp).
#pragma once

namespace llvm {
class Value;
}

namespace tile::codegen {
class Lowering;
}

namespace tile::codegen::gpu {

/// fmod(x, y) of f32 or f64 values, exactly (C's semantics: the sign of x, NaN for y = 0 or
/// x infinite), through a helper function emitted once per module.
llvm::Value* exact_fmod(Lowering& L, llvm::Value* x, llvm::Value* y);

}  // namespace tile::codegen::gpu

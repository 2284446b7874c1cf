// test/drivers/cuda_abi_check.cpp — built only where cuda.h is installed (never needed to build
// tile): checks, at compile time, that the CUDA types, constants and prototypes declared by hand
// in src/drivers/cuda/cuda_api.hpp match cuda.h — same symbols (the _v2 names), same parameter
// count, and parameters of the same size and kind (pointer, integer of the same signedness or
// enum, floating point) — so the table loaded with dlsym calls each function with its real ABI.
#include <cuda.h>
#include <type_traits>
#include "drivers/cuda/cuda_api.hpp"

template <class A, class B>
constexpr bool same_abi() {
  if (sizeof(A) != sizeof(B)) return false;
  if (std::is_pointer_v<A> || std::is_pointer_v<B>) return std::is_pointer_v<A> && std::is_pointer_v<B>;
  if (std::is_floating_point_v<A> || std::is_floating_point_v<B>) return std::is_same_v<A, B>;
  if (std::is_enum_v<A> || std::is_enum_v<B>) return (std::is_enum_v<A> || std::is_integral_v<A>) && (std::is_enum_v<B> || std::is_integral_v<B>);
  return std::is_integral_v<A> && std::is_integral_v<B> && std::is_signed_v<A> == std::is_signed_v<B>;
}
template <class R1, class... A1, class R2, class... A2>
constexpr bool abi(R1 (*)(A1...), R2 (*)(A2...)) {
  if constexpr (sizeof...(A1) != sizeof...(A2)) return false;
  else return same_abi<R1, R2>() && (same_abi<A1, A2>() && ...);
}
using tile::drivers::cuda_api;
#define CHECK_FN(name, params) static_assert(abi(&::name, decltype(cuda_api::name){}), #name " differs from cuda.h");
TILE_CUDA_API_FUNCTIONS(CHECK_FN)

static_assert(abi(&::cuTensorMapEncodeTiled, decltype(cuda_api::cuTensorMapEncodeTiled){}), "cuTensorMapEncodeTiled differs from cuda.h");
static_assert(sizeof(::CUtensorMap) == sizeof(tile::drivers::cu::CUtensorMap) && alignof(::CUtensorMap) <= alignof(tile::drivers::cu::CUtensorMap));

// Pointee sizes of pointer parameters that matter: CUdeviceptr*, size_t*, CUjit_option*.
static_assert(sizeof(::CUdeviceptr) == sizeof(tile::drivers::cu::CUdeviceptr));
static_assert(sizeof(::CUjit_option) == sizeof(tile::drivers::cu::CUjit_option));
static_assert(sizeof(::CUdevice) == sizeof(tile::drivers::cu::CUdevice));
static_assert(sizeof(::CUresult) == sizeof(tile::drivers::cu::CUresult));

namespace t = tile::drivers::cu;
#define V(x) static_assert(static_cast<long long>(::x) == static_cast<long long>(t::x), #x);
V(CU_POINTER_ATTRIBUTE_CONTEXT) V(CU_POINTER_ATTRIBUTE_MEMORY_TYPE) V(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
V(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) V(CU_POINTER_ATTRIBUTE_RANGE_SIZE) V(CU_MEMORYTYPE_HOST)
V(CU_MEMORYTYPE_DEVICE) V(CU_MEMORYTYPE_ARRAY) V(CU_MEMORYTYPE_UNIFIED)
V(CU_STREAM_CAPTURE_STATUS_NONE) V(CU_STREAM_CAPTURE_STATUS_ACTIVE) V(CU_STREAM_CAPTURE_STATUS_INVALIDATED)
V(CU_STREAM_CAPTURE_MODE_GLOBAL) V(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) V(CU_STREAM_CAPTURE_MODE_RELAXED)
V(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) V(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) V(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
V(CUDA_SUCCESS) V(CUDA_ERROR_INVALID_VALUE) V(CUDA_ERROR_OUT_OF_MEMORY) V(CUDA_ERROR_NOT_INITIALIZED)
V(CUDA_ERROR_DEINITIALIZED) V(CUDA_ERROR_STUB_LIBRARY) V(CUDA_ERROR_NO_DEVICE) V(CUDA_ERROR_INVALID_DEVICE)
V(CUDA_ERROR_INVALID_IMAGE) V(CUDA_ERROR_NO_BINARY_FOR_GPU) V(CUDA_ERROR_INVALID_PTX) V(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
V(CUDA_ERROR_INVALID_HANDLE) V(CUDA_ERROR_NOT_FOUND) V(CUDA_ERROR_NOT_READY) V(CUDA_ERROR_ILLEGAL_ADDRESS)
V(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) V(CUDA_ERROR_ASSERT) V(CUDA_ERROR_HARDWARE_STACK_ERROR)
V(CUDA_ERROR_ILLEGAL_INSTRUCTION) V(CUDA_ERROR_MISALIGNED_ADDRESS) V(CUDA_ERROR_INVALID_ADDRESS_SPACE)
V(CUDA_ERROR_INVALID_PC) V(CUDA_ERROR_LAUNCH_FAILED) V(CUDA_ERROR_UNKNOWN)
V(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) V(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X) V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y) V(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) V(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
V(CU_DEVICE_ATTRIBUTE_WARP_SIZE) V(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK) V(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
V(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) V(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) V(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
V(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) V(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) V(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
V(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) V(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
V(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) V(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
V(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK)
V(CU_JIT_MAX_REGISTERS) V(CU_JIT_THREADS_PER_BLOCK) V(CU_JIT_WALL_TIME) V(CU_JIT_INFO_LOG_BUFFER)
V(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) V(CU_JIT_ERROR_LOG_BUFFER) V(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
V(CU_JIT_OPTIMIZATION_LEVEL) V(CU_JIT_TARGET_FROM_CUCONTEXT) V(CU_JIT_TARGET) V(CU_JIT_FALLBACK_STRATEGY)
V(CU_JIT_GENERATE_DEBUG_INFO) V(CU_JIT_LOG_VERBOSE) V(CU_JIT_GENERATE_LINE_INFO) V(CU_JIT_CACHE_MODE)
V(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) V(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) V(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
V(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) V(CU_FUNC_ATTRIBUTE_NUM_REGS) V(CU_FUNC_ATTRIBUTE_PTX_VERSION)
V(CU_FUNC_ATTRIBUTE_BINARY_VERSION) V(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA) V(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
V(CU_TENSOR_MAP_DATA_TYPE_FLOAT16) V(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) V(CU_TENSOR_MAP_INTERLEAVE_NONE)
V(CU_TENSOR_MAP_SWIZZLE_NONE) V(CU_TENSOR_MAP_SWIZZLE_32B) V(CU_TENSOR_MAP_SWIZZLE_64B) V(CU_TENSOR_MAP_SWIZZLE_128B)
V(CU_TENSOR_MAP_L2_PROMOTION_NONE) V(CU_TENSOR_MAP_L2_PROMOTION_L2_256B) V(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
V(CU_STREAM_DEFAULT) V(CU_STREAM_NON_BLOCKING) V(CU_EVENT_DEFAULT) V(CU_EVENT_BLOCKING_SYNC) V(CU_EVENT_DISABLE_TIMING)
int main() { return 0; }

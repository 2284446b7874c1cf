// src/drivers/cuda/cuda_api.hpp — layer: drivers (cuda). The CUDA driver API as a table of
// function pointers, loaded at run time with dlopen("libcuda.so.1") + dlsym: tile needs no CUDA
// SDK to build and no libcuda to link or start. The few types, constants and prototypes the
// driver uses are declared here, in namespace tile::drivers::cu, with the exact ABI of cuda.h
// (CUDA 13.0; checked against /usr/local/cuda/include/cuda.h, which is never included):
//   CUresult is an int-sized enum, CUdevice an int, CUdeviceptr an unsigned long long (64-bit
//   hosts), contexts, modules, functions, streams and events opaque pointers.
// Where cuda.h #defines a name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2, …) the table's
// member is named after the symbol itself, so `api.cuMemAlloc_v2(&p, n)` calls exactly what a
// program built against cuda.h would call.
//
// A failed call becomes a tile::error through cuda_error(): "<call> failed: <NAME> (<text>)",
// the name and text from cuGetErrorName/cuGetErrorString, naming the kernel where one is given.
// Everything takes the table by reference, so tests can hand the driver a table of fakes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "tile/core/error.hpp"

namespace tile::drivers {

namespace cu {
// Types (cuda.h: CUresult, CUdevice, CUdeviceptr, CUcontext, CUmodule, CUfunction, CUstream, CUevent).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
struct CUlinkState_st;
using CUlinkState = CUlinkState_st*;
struct CUgraph_st;
struct CUgraphExec_st;
using CUgraph = CUgraph_st*;
using CUgraphExec = CUgraphExec_st*;
// Stream capture into a CUDA graph (cuStreamIsCapturing, cuThreadExchangeStreamCaptureMode).
enum CUstreamCaptureStatus : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};
enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};
// CUjitInputType (cuLinkAddData).
enum CUjitInputType : int { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1 };
static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 64 bits on the hosts tile supports");

// CUresult values tile looks at (the rest are reported through cuGetErrorName).
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;
inline constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901;
inline constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906;
inline constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

/// True for the errors a faulting kernel leaves behind: the context is unusable afterwards and
/// every later call reports the same error.
constexpr bool is_sticky(CUresult r) {
  return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_ASSERT || (r >= CUDA_ERROR_HARDWARE_STACK_ERROR && r <= CUDA_ERROR_LAUNCH_FAILED);
}

// CUdevice_attribute (the values tile reads).
enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
};

// CUjit_option (options of cuModuleLoadDataEx). Values travel in a void* slot each; output
// options (log sizes, wall time) are written back INTO the slot, not through it.
enum CUjit_option : int {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,                    // out: float milliseconds, in the slot's low 4 bytes
  CU_JIT_INFO_LOG_BUFFER = 3,              // char*
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,   // in: unsigned capacity; out: bytes written
  CU_JIT_ERROR_LOG_BUFFER = 5,             // char*
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,  // in: unsigned capacity; out: bytes written
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_TARGET_FROM_CUCONTEXT = 8,
  CU_JIT_TARGET = 9,
  CU_JIT_FALLBACK_STRATEGY = 10,
  CU_JIT_GENERATE_DEBUG_INFO = 11,
  CU_JIT_LOG_VERBOSE = 12,  // int: 1 puts register and memory use in the info log
  CU_JIT_GENERATE_LINE_INFO = 13,
  CU_JIT_CACHE_MODE = 14,
};

// CUfunction_attribute.
enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,  // static shared memory
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,  // percent of L1 + shared memory, a hint
};

// cuPointerGetAttribute: what is asked (CUpointer_attribute) and the memory kinds (CUmemorytype).
enum CUpointer_attribute : int {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
};
enum CUmemorytype : int {
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4,
};

// Flags (CUstream_flags, CUevent_flags).
inline constexpr unsigned CU_STREAM_DEFAULT = 0x0;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned CU_EVENT_BLOCKING_SYNC = 0x1;
inline constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;

// Tensor maps (cuTensorMapEncodeTiled, CUDA 12.0+): an opaque 128-byte, 64-byte aligned object
// (cuda.h aligns it to 128) and the enums tile passes.
struct alignas(128) CUtensorMap {
  unsigned long long opaque[16];
};
enum CUtensorMapDataType : int { CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 };
enum CUtensorMapInterleave : int { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum CUtensorMapSwizzle : int {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};
enum CUtensorMapL2promotion : int { CU_TENSOR_MAP_L2_PROMOTION_NONE = 0, CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3 };
enum CUtensorMapFloatOOBfill : int { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };  // zeros
using cuuint32_t = unsigned;
using cuuint64_t = unsigned long long;

/// Dynamic shared memory a kernel may use without opting in (cuFuncSetAttribute).
inline constexpr unsigned kDefaultMaxDynamicShared = 48 * 1024;
}  // namespace cu

// X(member = exported symbol, parameter list). Every function returns CUresult.
#define TILE_CUDA_API_FUNCTIONS(X)                                                                         \
  X(cuGetErrorName, (cu::CUresult error, const char** str))                                                \
  X(cuGetErrorString, (cu::CUresult error, const char** str))                                              \
  X(cuInit, (unsigned flags))                                                                              \
  X(cuDriverGetVersion, (int* version))                                                                    \
  X(cuDeviceGetCount, (int* count))                                                                        \
  X(cuDeviceGet, (cu::CUdevice * device, int ordinal))                                                     \
  X(cuDeviceGetName, (char* name, int len, cu::CUdevice dev))                                              \
  X(cuDeviceGetAttribute, (int* value, cu::CUdevice_attribute attrib, cu::CUdevice dev))                   \
  X(cuDeviceTotalMem_v2, (std::size_t * bytes, cu::CUdevice dev))                                          \
  X(cuDevicePrimaryCtxRetain, (cu::CUcontext * ctx, cu::CUdevice dev))                                     \
  X(cuDevicePrimaryCtxRelease_v2, (cu::CUdevice dev))                                                      \
  X(cuCtxSetCurrent, (cu::CUcontext ctx))                                                                  \
  X(cuCtxGetCurrent, (cu::CUcontext * ctx))                                                                \
  X(cuCtxSynchronize, ())                                                                                  \
  X(cuMemGetInfo_v2, (std::size_t * free_bytes, std::size_t * total_bytes))                                \
  X(cuMemAlloc_v2, (cu::CUdeviceptr * dptr, std::size_t bytes))                                            \
  X(cuMemFree_v2, (cu::CUdeviceptr dptr))                                                                  \
  X(cuMemcpyHtoD_v2, (cu::CUdeviceptr dst, const void* src, std::size_t bytes))                            \
  X(cuMemcpyDtoH_v2, (void* dst, cu::CUdeviceptr src, std::size_t bytes))                                  \
  X(cuMemcpyDtoD_v2, (cu::CUdeviceptr dst, cu::CUdeviceptr src, std::size_t bytes))                        \
  X(cuMemcpyHtoDAsync_v2, (cu::CUdeviceptr dst, const void* src, std::size_t bytes, cu::CUstream stream))  \
  X(cuMemcpyDtoHAsync_v2, (void* dst, cu::CUdeviceptr src, std::size_t bytes, cu::CUstream stream))        \
  X(cuMemcpyDtoDAsync_v2, (cu::CUdeviceptr dst, cu::CUdeviceptr src, std::size_t bytes, cu::CUstream stream)) \
  X(cuMemsetD8_v2, (cu::CUdeviceptr dst, unsigned char value, std::size_t count))                          \
  X(cuMemsetD8Async, (cu::CUdeviceptr dst, unsigned char value, std::size_t count, cu::CUstream stream))   \
  X(cuModuleLoadDataEx, (cu::CUmodule * module, const void* image, unsigned num_options,                   \
                         cu::CUjit_option* options, void** option_values))                                 \
  X(cuModuleUnload, (cu::CUmodule module))                                                                 \
  X(cuModuleGetFunction, (cu::CUfunction * fn, cu::CUmodule module, const char* name))                     \
  X(cuModuleGetGlobal_v2, (cu::CUdeviceptr * dptr, std::size_t * bytes, cu::CUmodule module, const char* name)) \
  X(cuFuncGetAttribute, (int* value, cu::CUfunction_attribute attrib, cu::CUfunction fn))                  \
  X(cuFuncSetAttribute, (cu::CUfunction fn, cu::CUfunction_attribute attrib, int value))                   \
  X(cuLaunchKernel, (cu::CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, \
                     unsigned block_y, unsigned block_z, unsigned shared_bytes, cu::CUstream stream,       \
                     void** params, void** extra))                                                         \
  X(cuStreamCreate, (cu::CUstream * stream, unsigned flags))                                               \
  X(cuStreamDestroy_v2, (cu::CUstream stream))                                                             \
  X(cuStreamSynchronize, (cu::CUstream stream))                                                            \
  X(cuStreamIsCapturing, (cu::CUstream stream, cu::CUstreamCaptureStatus * status))                        \
  X(cuThreadExchangeStreamCaptureMode, (cu::CUstreamCaptureMode * mode))                                   \
  X(cuStreamBeginCapture_v2, (cu::CUstream stream, cu::CUstreamCaptureMode mode))                          \
  X(cuStreamEndCapture, (cu::CUstream stream, cu::CUgraph * graph))                                        \
  X(cuGraphInstantiateWithFlags, (cu::CUgraphExec * exec, cu::CUgraph graph, unsigned long long flags))    \
  X(cuGraphLaunch, (cu::CUgraphExec exec, cu::CUstream stream))                                            \
  X(cuGraphExecDestroy, (cu::CUgraphExec exec))                                                            \
  X(cuGraphDestroy, (cu::CUgraph graph))                                                                   \
  X(cuEventCreate, (cu::CUevent * event, unsigned flags))                                                  \
  X(cuEventRecord, (cu::CUevent event, cu::CUstream stream))                                               \
  X(cuEventSynchronize, (cu::CUevent event))                                                               \
  X(cuEventQuery, (cu::CUevent event))                                                                     \
  X(cuEventElapsedTime_v2, (float* ms, cu::CUevent start, cu::CUevent end))                                \
  X(cuEventDestroy_v2, (cu::CUevent event))                                                                \
  X(cuLinkCreate_v2, (unsigned num_options, cu::CUjit_option* options, void** option_values,               \
                      cu::CUlinkState* state))                                                             \
  X(cuLinkAddData_v2, (cu::CUlinkState state, cu::CUjitInputType type, void* data, std::size_t size,      \
                       const char* name, unsigned num_options, cu::CUjit_option* options,                 \
                       void** option_values))                                                              \
  X(cuLinkComplete, (cu::CUlinkState state, void** cubin, std::size_t* size))                             \
  X(cuLinkDestroy, (cu::CUlinkState state))                                                               \
  X(cuPointerGetAttribute, (void* data, cu::CUpointer_attribute attribute, cu::CUdeviceptr ptr))

/// The CUDA driver API, loaded once per process. Members are null only in hand-made tables.
struct cuda_api {
#define TILE_CUDA_API_MEMBER(name, params) cu::CUresult (*name) params = nullptr;
  TILE_CUDA_API_FUNCTIONS(TILE_CUDA_API_MEMBER)
#undef TILE_CUDA_API_MEMBER

  /// Optional (CUDA 12.0+; null where the driver lacks it): the TMA's tensor maps.
  cu::CUresult (*cuTensorMapEncodeTiled)(cu::CUtensorMap* map, cu::CUtensorMapDataType type, cu::cuuint32_t rank,
                                         void* address, const cu::cuuint64_t* dims, const cu::cuuint64_t* strides,
                                         const cu::cuuint32_t* box, const cu::cuuint32_t* element_strides,
                                         cu::CUtensorMapInterleave interleave, cu::CUtensorMapSwizzle swizzle,
                                         cu::CUtensorMapL2promotion l2, cu::CUtensorMapFloatOOBfill oob) = nullptr;

  void* library = nullptr;  // the dlopen handle (never closed: libcuda does not like unloading)
  int driver_version = 0;   // cuDriverGetVersion: 13000 for CUDA 13.0

  /// The process's table, loaded on first use (thread-safe); null, with the reason in why_not,
  /// when libcuda.so.1 is missing, lacks a symbol, or cuInit fails (e.g. no device).
  static const cuda_api* get(std::string& why_not);

  /// Loads `library` afresh (for tests: a missing library, one without the symbols). Symbols
  /// missing from older drivers fall back to their older names (cuEventElapsedTime_v2, CUDA 12.8,
  /// to cuEventElapsedTime). Null, with the reason, on failure; never throws.
  static std::unique_ptr<cuda_api> load(const char* library, std::string& why_not);
};

/// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)" — the code's name and text from the
/// table's cuGetErrorName/cuGetErrorString; where they do not know it, the name of a code declared
/// above, else "CUresult 12345".
std::string describe_cuda_result(const cuda_api& api, cu::CUresult r);

/// The tile::error for a failed call: "<call> failed: <describe_cuda_result>[: detail]", naming
/// `kernel` when given.
tile::error cuda_error(const cuda_api& api, cu::CUresult r, std::string_view call, std::string kernel = {},
                       std::string_view detail = {}, src_loc where = {});

/// Throws cuda_error(…) unless r is CUDA_SUCCESS.
inline void cuda_check(const cuda_api& api, cu::CUresult r, std::string_view call, std::string kernel = {},
                       src_loc where = {}) {
  if (r != cu::CUDA_SUCCESS) throw cuda_error(api, r, call, std::move(kernel), {}, where);
}

}  // namespace tile::drivers

// src/drivers/cuda/cuda_api.cpp — layer: drivers (cuda). Loading the CUDA driver API with
// dlopen/dlsym, and turning a CUresult into a tile::error.
#include "drivers/cuda/cuda_api.hpp"

#include <dlfcn.h>

#include <cstring>
#include <utility>

namespace tile::drivers {
namespace {

/// Older names for symbols that newer drivers version (the newest name is tried first).
const char* fallback_name(std::string_view symbol) {
  if (symbol == "cuEventElapsedTime_v2") return "cuEventElapsedTime";  // _v2 arrived with CUDA 12.8
  return nullptr;
}

/// Names of the codes tile declares, for when cuGetErrorName cannot help (the toolkit's stub
/// library answers every call with CUDA_ERROR_STUB_LIBRARY, its own name included).
const char* builtin_name(cu::CUresult r) {
  switch (r) {
#define TILE_CU_NAME(code) \
  case cu::code: return #code;
    TILE_CU_NAME(CUDA_SUCCESS)
    TILE_CU_NAME(CUDA_ERROR_INVALID_VALUE)
    TILE_CU_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    TILE_CU_NAME(CUDA_ERROR_NOT_INITIALIZED)
    TILE_CU_NAME(CUDA_ERROR_DEINITIALIZED)
    TILE_CU_NAME(CUDA_ERROR_STUB_LIBRARY)
    TILE_CU_NAME(CUDA_ERROR_NO_DEVICE)
    TILE_CU_NAME(CUDA_ERROR_INVALID_DEVICE)
    TILE_CU_NAME(CUDA_ERROR_INVALID_IMAGE)
    TILE_CU_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    TILE_CU_NAME(CUDA_ERROR_INVALID_PTX)
    TILE_CU_NAME(CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    TILE_CU_NAME(CUDA_ERROR_INVALID_HANDLE)
    TILE_CU_NAME(CUDA_ERROR_NOT_FOUND)
    TILE_CU_NAME(CUDA_ERROR_NOT_READY)
    TILE_CU_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    TILE_CU_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    TILE_CU_NAME(CUDA_ERROR_ASSERT)
    TILE_CU_NAME(CUDA_ERROR_HARDWARE_STACK_ERROR)
    TILE_CU_NAME(CUDA_ERROR_ILLEGAL_INSTRUCTION)
    TILE_CU_NAME(CUDA_ERROR_MISALIGNED_ADDRESS)
    TILE_CU_NAME(CUDA_ERROR_INVALID_ADDRESS_SPACE)
    TILE_CU_NAME(CUDA_ERROR_INVALID_PC)
    TILE_CU_NAME(CUDA_ERROR_LAUNCH_FAILED)
    TILE_CU_NAME(CUDA_ERROR_UNKNOWN)
#undef TILE_CU_NAME
    default: return nullptr;
  }
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

}  // namespace

std::unique_ptr<cuda_api> cuda_api::load(const char* library, std::string& why_not) {
  dlerror();  // clear any stale message
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    why_not = std::string(library) + " not found (no NVIDIA driver): " + dl_error();
    return nullptr;
  }
  auto api = std::make_unique<cuda_api>();
  api->library = handle;
  std::string missing;
  auto resolve = [&](const char* symbol, auto& slot) {
    void* p = dlsym(handle, symbol);
    if (!p)
      if (const char* older = fallback_name(symbol)) p = dlsym(handle, older);
    if (!p) {
      missing += (missing.empty() ? "" : ", ") + std::string(symbol);
      return;
    }
    // POSIX guarantees that a dlsym result converts to a function pointer.
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
  };
#define TILE_CUDA_API_RESOLVE(name, params) resolve(#name, api->name);
  TILE_CUDA_API_FUNCTIONS(TILE_CUDA_API_RESOLVE)
#undef TILE_CUDA_API_RESOLVE
  // optional: a driver without it runs everything but TMA kernels (their launch says why)
  if (void* p = dlsym(handle, "cuTensorMapEncodeTiled"))
    api->cuTensorMapEncodeTiled = reinterpret_cast<decltype(api->cuTensorMapEncodeTiled)>(p);
  if (!missing.empty()) {
    why_not = std::string(library) + " is not a usable CUDA driver (too old?): missing " + missing;
    dlclose(handle);
    return nullptr;
  }
  if (const cu::CUresult r = api->cuInit(0); r != cu::CUDA_SUCCESS) {
    why_not = "cuInit failed: " + describe_cuda_result(*api, r);
    if (r == cu::CUDA_ERROR_STUB_LIBRARY)
      why_not += " (" + std::string(library) + " is the CUDA toolkit's stub, not a driver)";
    // The library stays loaded: unloading libcuda after cuInit is not safe.
    return nullptr;
  }
  if (api->cuDriverGetVersion(&api->driver_version) != cu::CUDA_SUCCESS) api->driver_version = 0;
  return api;
}

const cuda_api* cuda_api::get(std::string& why_not) {
  struct loaded {
    std::unique_ptr<cuda_api> api;
    std::string why;
  };
  // Never destroyed: devices (and their buffers) held by other static objects call the driver
  // from their destructors at exit, whose order against this one's is not fixed; a table freed
  // first would send those calls through freed memory.
  static const loaded* const once = [] {
    auto* l = new loaded;
    l->api = load("libcuda.so.1", l->why);
    return l;
  }();
  if (!once->api) why_not = once->why;
  return once->api.get();
}

std::string describe_cuda_result(const cuda_api& api, cu::CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(r, &name) != cu::CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(r, &text) != cu::CUDA_SUCCESS) text = nullptr;
  if (!name || !*name) name = builtin_name(r);
  std::string s = name ? std::string(name) : "CUresult " + std::to_string(r);
  if (text && *text) s += " (" + std::string(text) + ")";
  return s;
}

tile::error cuda_error(const cuda_api& api, cu::CUresult r, std::string_view call, std::string kernel,
                       std::string_view detail, src_loc where) {
  std::string msg = std::string(call) + " failed: " + describe_cuda_result(api, r);
  if (!detail.empty()) msg += ": " + std::string(detail);
  return tile::error(std::move(msg), where, std::move(kernel));
}

}  // namespace tile::drivers

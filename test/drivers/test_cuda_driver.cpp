// test/drivers/test_cuda_driver.cpp — the CUDA driver (src/drivers/cuda).
//
// Two halves:
//  - Everywhere: the loader's reasons when there is no usable libcuda (missing library, missing
//    symbols, the toolkit's stub), CUresult formatting, and the driver itself run over a table of
//    fake CUDA functions (host memory as device memory): argument packing, the JIT log written
//    back into the option slot, shared-memory opt-in, sticky errors, streams and events.
//  - With a GPU: device query, memory, hand-written PTX kernels loaded and launched (vector add,
//    every argument type, large dynamic shared memory, a cubin from ptxas when present), a PTX
//    syntax error, event timing, streams, external pointers and streams, unknown device indices.
//    Without one, each GPU test is reported as skipped, saying why (test/requires.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "doctest/doctest.h"
#include "drivers/cuda/cuda_api.hpp"
#include "drivers/cuda/cuda_driver.hpp"
#include "../requires.hpp"

namespace {

using namespace tile::drivers;
using tile::dtype;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------------------------
// A fake CUDA driver: one device ("Fake GPU", sm_80), memory in host vectors.
namespace fake {
using namespace tile::drivers::cu;

struct state {
  std::map<CUdeviceptr, std::vector<unsigned char>> mem;
  CUdeviceptr next = 0x10000;
  int retains = 0;
  CUcontext current = nullptr;
  int sync_result = CUDA_SUCCESS;
  // the last module load
  std::string loaded_image;
  std::vector<int> options;
  int max_dynamic_shared = 48 * 1024;
  int set_dynamic_shared = -1;
  int carveout = -1;  // CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT as set
  int num_regs = 32;
  // the last launch
  unsigned grid[3] = {}, block[3] = {}, shared = 0;
  CUstream stream = nullptr;
  std::vector<std::size_t> param_sizes;  // what the "kernel" takes (set by the test)
  std::vector<std::vector<unsigned char>> params;
  int launches = 0;
  int streams = 0, events = 0;
  int set_current = 0;  // cuCtxSetCurrent calls
  CUdeviceptr pinned_host = 0x7f0000000000;  // 4 KiB the fake calls page-locked host memory
  // stream capture: the stream capturing (null: none), this thread's capture mode, what was
  // recorded meanwhile, and the calls made in global mode that a real driver refuses there
  CUstream capturing = nullptr;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  int recorded = 0, stream_syncs = 0, refused = 0;
};
state s;

CUcontext const kCtx = reinterpret_cast<CUcontext>(std::uintptr_t{0xc0});

const std::map<CUresult, std::pair<const char*, const char*>>& names() {
  static const std::map<CUresult, std::pair<const char*, const char*>> m = {
      {CUDA_SUCCESS, {"CUDA_SUCCESS", "no error"}},
      {CUDA_ERROR_OUT_OF_MEMORY, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
      {CUDA_ERROR_INVALID_PTX, {"CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"}},
      {CUDA_ERROR_NOT_FOUND, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {CUDA_ERROR_ILLEGAL_ADDRESS, {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
  };
  return m;
}
CUresult cuGetErrorName(CUresult r, const char** str) {
  auto it = names().find(r);
  *str = it == names().end() ? nullptr : it->second.first;
  return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGetErrorString(CUresult r, const char** str) {
  auto it = names().find(r);
  *str = it == names().end() ? nullptr : it->second.second;
  return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* v) { return *v = 13000, CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { return *n = 1, CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  return *d = 0, CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::snprintf(name, static_cast<std::size_t>(len), "%s", "Fake GPU");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 163 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 164 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 40 << 20; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1410000; break;  // kHz (an A100's)
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 1215000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice) { return *bytes = std::size_t{1} << 30, CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) { return ++s.retains, *c = kCtx, CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return --s.retains, CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { return ++s.set_current, s.current = c, CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext* c) { return *c = s.current, CUDA_SUCCESS; }
CUresult cuCtxSynchronize() {
  if (s.capturing) return ++s.refused, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return s.sync_result;
}
CUresult cuMemGetInfo_v2(std::size_t* f, std::size_t* t) { return *f = 1 << 20, *t = std::size_t{1} << 30, CUDA_SUCCESS; }
bool refuse_in_capture() {  // a global-mode capture is running and this call is one it forbids
  const bool no = s.capturing && s.mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
  if (no) ++s.refused;
  return no;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, std::size_t n) {
  if (refuse_in_capture()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (n > (std::size_t{1} << 30)) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = s.next;
  s.mem[*p] = std::vector<unsigned char>(n, 0xee);  // garbage: the driver must zero it
  s.next += (n + 0xffff) / 0x10000 * 0x10000 + 0x10000;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  if (refuse_in_capture()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return s.mem.erase(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
unsigned char* at(CUdeviceptr p, std::size_t n) {
  for (auto& [base, v] : s.mem)
    if (p >= base && p + n <= base + v.size()) return v.data() + (p - base);
  return nullptr;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* h, std::size_t n) {
  unsigned char* q = at(d, n);
  return q ? (std::memcpy(q, h, n), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyDtoH_v2(void* h, CUdeviceptr d, std::size_t n) {
  unsigned char* q = at(d, n);
  return q ? (std::memcpy(h, q, n), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr src, std::size_t n) {
  unsigned char *q = at(d, n), *r = at(src, n);
  return q && r ? (std::memmove(q, r, n), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* h, std::size_t n, CUstream st) {
  if (st && st == s.capturing) return ++s.recorded, CUDA_SUCCESS;
  return cuMemcpyHtoD_v2(d, h, n);
}
CUresult cuMemcpyDtoHAsync_v2(void* h, CUdeviceptr d, std::size_t n, CUstream st) {
  if (st && st == s.capturing) return ++s.recorded, CUDA_SUCCESS;
  return cuMemcpyDtoH_v2(h, d, n);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, std::size_t n, CUstream) { return cuMemcpyDtoD_v2(d, src, n); }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, std::size_t n) {
  unsigned char* q = at(d, n);
  return q ? (std::memset(q, v, n), CUDA_SUCCESS) : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, std::size_t n, CUstream st) {
  if (st && st == s.capturing) return ++s.recorded, CUDA_SUCCESS;
  return cuMemsetD8_v2(d, v, n);
}

/// Writes `text` into the JIT log buffer options and its length back into the size option's
/// slot, like the real driver does.
void write_log(unsigned n, CUjit_option* o, void** v, CUjit_option buffer, CUjit_option size, const std::string& text) {
  char* buf = nullptr;
  std::size_t cap = 0;
  int size_slot = -1;
  for (unsigned i = 0; i < n; ++i) {
    if (o[i] == buffer) buf = static_cast<char*>(v[i]);
    if (o[i] == size) cap = reinterpret_cast<std::uintptr_t>(v[i]), size_slot = static_cast<int>(i);
  }
  if (!buf || size_slot < 0) return;
  const std::size_t w = std::min(cap - 1, text.size());
  std::memcpy(buf, text.data(), w);
  buf[w] = '\0';
  v[size_slot] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(w + 1));
}
CUresult cuModuleLoadDataEx(CUmodule* m, const void* image, unsigned n, CUjit_option* o, void** v) {
  if (refuse_in_capture()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // (a real one allows it)
  s.loaded_image = static_cast<const char*>(image);
  s.options.assign(o, o + n);
  for (unsigned i = 0; i < n; ++i)
    if (o[i] == CU_JIT_WALL_TIME) {
      const float ms = 2.5f;
      std::memcpy(&v[i], &ms, sizeof ms);
    }
  if (contains(s.loaded_image, "nonsense")) {
    write_log(n, o, v, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
              "ptxas application ptx input, line 11; error   : Unknown symbol 'nonsense'\n"
              "ptxas fatal   : Ptx assembly aborted due to errors\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  write_log(n, o, v, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, "ptxas info    : Used 12 registers\n");
  *m = reinterpret_cast<CUmodule>(std::uintptr_t{0x30});
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_SUCCESS; }
CUresult cuLinkCreate_v2(unsigned, CUjit_option*, void**, CUlinkState*) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuLinkAddData_v2(CUlinkState, CUjitInputType, void*, std::size_t, const char*, unsigned, CUjit_option*, void**) {
  return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuLinkComplete(CUlinkState, void**, std::size_t*) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuLinkDestroy(CUlinkState) { return CUDA_SUCCESS; }
// the fake's allocations are device memory of device 0; anything else is unknown to the driver
// (as a pageable host pointer is), except s.pinned_host: page-locked host memory
CUresult cuPointerGetAttribute(void* data, CUpointer_attribute a, CUdeviceptr p) {
  if (p >= s.pinned_host && p < s.pinned_host + 4096) {
    if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE) return CUDA_ERROR_INVALID_VALUE;
    return *static_cast<unsigned*>(data) = CU_MEMORYTYPE_HOST, CUDA_SUCCESS;
  }
  for (auto& [base, v] : s.mem)
    if (p >= base && p < base + v.size()) {
      switch (a) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *static_cast<unsigned*>(data) = CU_MEMORYTYPE_DEVICE; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data) = 0; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *static_cast<CUdeviceptr*>(data) = base; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<std::size_t*>(data) = v.size(); break;
        default: return CUDA_ERROR_INVALID_VALUE;
      }
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  if (!contains(s.loaded_image, ".entry " + std::string(name) + "(")) return CUDA_ERROR_NOT_FOUND;
  return *f = reinterpret_cast<CUfunction>(std::uintptr_t{0x40}), CUDA_SUCCESS;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr*, std::size_t*, CUmodule, const char*) { return CUDA_ERROR_NOT_FOUND; }
CUresult cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction) {
  switch (a) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = s.num_regs; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = 1024; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = 0; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = std::min(1024, 65536 / s.num_regs / 32 * 32); break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = s.max_dynamic_shared - 1024; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *v = s.carveout; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute a, int v) {
  if (a == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) {
    if (v < 0 || v > 100) return CUDA_ERROR_INVALID_VALUE;
    return s.carveout = v, CUDA_SUCCESS;
  }
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
  return s.set_dynamic_shared = v, CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void** extra) {
  if (extra) return CUDA_ERROR_INVALID_VALUE;
  s.grid[0] = gx, s.grid[1] = gy, s.grid[2] = gz;
  s.block[0] = bx, s.block[1] = by, s.block[2] = bz;
  s.shared = shared;
  s.stream = stream;
  s.params.clear();
  for (std::size_t i = 0; i < s.param_sizes.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(params[i]);
    s.params.emplace_back(p, p + s.param_sizes[i]);
  }
  ++s.launches;
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream* st, unsigned) {
  return *st = reinterpret_cast<CUstream>(std::uintptr_t{0x500} + static_cast<std::uintptr_t>(++s.streams)), CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream) { return --s.streams, CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream st) {
  if (st && st == s.capturing) return ++s.refused, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return ++s.stream_syncs, CUDA_SUCCESS;
}
CUresult cuStreamIsCapturing(CUstream st, CUstreamCaptureStatus* status) {
  *status = st && st == s.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) { return std::swap(*mode, s.mode), CUDA_SUCCESS; }
CUresult cuStreamBeginCapture_v2(CUstream st, CUstreamCaptureMode) { return s.capturing = st, CUDA_SUCCESS; }
CUresult cuStreamEndCapture(CUstream, CUgraph* g) {
  s.capturing = nullptr;
  return *g = reinterpret_cast<CUgraph>(std::uintptr_t{0x700}), CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph, unsigned long long) {
  return *e = reinterpret_cast<CUgraphExec>(std::uintptr_t{0x710}), CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec, CUstream) { return CUDA_SUCCESS; }
CUresult cuGraphExecDestroy(CUgraphExec) { return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph) { return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent* e, unsigned) {
  return *e = reinterpret_cast<CUevent>(std::uintptr_t{0x600} + static_cast<std::uintptr_t>(++s.events)), CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventQuery(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float* ms, CUevent, CUevent) { return *ms = 1.5f, CUDA_SUCCESS; }
CUresult cuEventDestroy_v2(CUevent) { return --s.events, CUDA_SUCCESS; }

const cuda_api& api() {
  static const cuda_api a = [] {
    cuda_api t;
#define TILE_FAKE_SET(name, params) t.name = &fake::name;
    TILE_CUDA_API_FUNCTIONS(TILE_FAKE_SET)
#undef TILE_FAKE_SET
    t.driver_version = 13000;
    return t;
  }();
  return a;
}
}  // namespace fake

const char* kFakeVadd = ".version 7.0\n.target sm_80\n.visible .entry vadd(\n.param .u64 x\n) { ret; }\n";

kernel_arg ptr_arg(std::uint64_t addr) {
  kernel_arg a;
  a.k = kernel_arg::kind::pointer;
  a.addr = addr;
  return a;
}
kernel_arg int_arg(dtype t, std::int64_t v) {
  kernel_arg a;
  a.k = kernel_arg::kind::integer;
  a.t = t;
  a.i = v;
  return a;
}
kernel_arg float_arg(dtype t, double v) {
  kernel_arg a;
  a.k = kernel_arg::kind::floating;
  a.t = t;
  a.f = v;
  return a;
}
template <class T>
T bytes_as(const std::vector<unsigned char>& b) {
  T v{};
  REQUIRE(b.size() == sizeof(T));
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

// ---------------------------------------------------------------------------------------------
// The real GPU, when there is one.

cuda_driver* gpu(std::string& why) {
  static std::string reason;
  static std::unique_ptr<driver> d = make_cuda_driver(0, reason);
  why = reason;
  return static_cast<cuda_driver*>(d.get());
}

/// The test cases on the GPU need one (skipped where there is none) …
constexpr tiletest::needs needs_gpu{"needs a CUDA driver and device", []() -> std::string {
  std::string why;
  return gpu(why) ? "" : "no CUDA driver: " + why;
}};
constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";
/// … and the cubin's, ptxas too.
constexpr tiletest::needs needs_gpu_and_ptxas{"needs a CUDA device and ptxas", []() -> std::string {
  std::string why;
  if (!gpu(why)) return "no CUDA driver: " + why;
  return std::ifstream(kPtxas) ? "" : std::string("no ptxas at ") + kPtxas;
}};
/// The toolkit's stub library.
constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";
constexpr tiletest::needs needs_stub{"needs the CUDA toolkit's stub library", []() -> std::string {
  return std::ifstream(kStub) ? "" : std::string("no CUDA toolkit stub at ") + kStub;
}};

#define TILE_REQUIRE_GPU(var)         \
  std::string why_no_gpu;             \
  cuda_driver* var = gpu(why_no_gpu); \
  REQUIRE_MESSAGE(var, "no CUDA driver: " << why_no_gpu)

// Hand-written PTX (ISA 7.0, sm_80: ptxas 13 assembles it for sm_80, sm_90 and sm_90a; the
// driver JITs it for the device at hand).
const char* kVaddPtx = R"(.version 7.0
.target sm_80
.address_size 64

// out[i] = x[i] + y[i] for i < n, one element per thread.
.visible .entry vadd(
  .param .u64 vadd_x,
  .param .u64 vadd_y,
  .param .u64 vadd_out,
  .param .u32 vadd_n
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [vadd_x];
  ld.param.u64 %rd2, [vadd_y];
  ld.param.u64 %rd3, [vadd_out];
  ld.param.u32 %r1, [vadd_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd4, %r5, 4;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  cvta.to.global.u64 %rd3, %rd3;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
DONE:
  ret;
}
)";

// Writes each parameter's bits, widened to 64 (signed ones sign-extended), to out[0..9].
const char* kPackPtx = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry pack(
  .param .u64 pack_out,
  .param .s8 pack_a,
  .param .s16 pack_b,
  .param .s32 pack_c,
  .param .s64 pack_d,
  .param .u8 pack_e,
  .param .f32 pack_f,
  .param .f64 pack_g,
  .param .b16 pack_h,
  .param .b16 pack_i,
  .param .u64 pack_j
)
{
  .reg .b16 %rs<4>;
  .reg .b32 %r<3>;
  .reg .f32 %f<2>;
  .reg .f64 %fd<2>;
  .reg .b64 %rd<12>;

  ld.param.u64 %rd1, [pack_out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.s8 %rs1, [pack_a];
  cvt.s64.s16 %rd2, %rs1;
  st.global.u64 [%rd1], %rd2;
  ld.param.s16 %rs2, [pack_b];
  cvt.s64.s16 %rd3, %rs2;
  st.global.u64 [%rd1+8], %rd3;
  ld.param.s32 %r1, [pack_c];
  cvt.s64.s32 %rd4, %r1;
  st.global.u64 [%rd1+16], %rd4;
  ld.param.s64 %rd5, [pack_d];
  st.global.u64 [%rd1+24], %rd5;
  ld.param.u8 %rs3, [pack_e];
  cvt.u64.u16 %rd6, %rs3;
  st.global.u64 [%rd1+32], %rd6;
  ld.param.f32 %f1, [pack_f];
  mov.b32 %r2, %f1;
  cvt.u64.u32 %rd7, %r2;
  st.global.u64 [%rd1+40], %rd7;
  ld.param.f64 %fd1, [pack_g];
  mov.b64 %rd8, %fd1;
  st.global.u64 [%rd1+48], %rd8;
  ld.param.b16 %rs1, [pack_h];
  cvt.u64.u16 %rd9, %rs1;
  st.global.u64 [%rd1+56], %rd9;
  ld.param.b16 %rs2, [pack_i];
  cvt.u64.u16 %rd10, %rs2;
  st.global.u64 [%rd1+64], %rd10;
  ld.param.u64 %rd11, [pack_j];
  st.global.u64 [%rd1+72], %rd11;
  ret;
}
)";

// Each thread writes its id into dynamic shared memory at `base` + 4 * tid, then reads its
// neighbour's (tid ^ 1) after a barrier: out[tid] = tid ^ 1 only if the block really has the
// shared memory up to `base` + 4 * ntid.
const char* kSharedPtx = R"(.version 7.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 smem[];

.visible .entry swap(
  .param .u64 swap_out,
  .param .u32 swap_base
)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;

  ld.param.u64 %rd1, [swap_out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [swap_base];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, smem;
  add.u32 %r3, %r3, %r1;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  xor.b32 %r6, %r2, 1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r3, %r6;
  ld.shared.u32 %r7, [%r6];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";

// Line 11 has a syntax error.
const char* kBrokenPtx = R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry broken(
  .param .u64 broken_out
)
{
  .reg .b32 %r<2>;
  mov.u32 %r1, 1;
  add.u32 %r9, %r1, nonsense;
  ret;
}
)";

cuda_module_source ptx(const char* text, const char* entry, int num_warps = 4, std::uint32_t shared = 0) {
  cuda_module_source s;
  s.image = text;
  s.entry = entry;
  s.num_warps = num_warps;
  s.shared_bytes = shared;
  return s;
}

/// Runs vadd over n elements through `d` and checks the result.
void run_vadd(cuda_driver& d, const cuda_module& m, int n) {
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 0.5f * static_cast<float>(i);
  const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(n);
  const std::uint64_t dx = d.alloc(bytes), dy = d.alloc(bytes), dout = d.alloc(bytes);
  d.copy_to_device(dx, x.data(), bytes);
  d.copy_to_device(dy, y.data(), bytes);
  launch_config cfg;
  cfg.kernel = "vadd";
  const int block = 32 * m.num_warps;
  cfg.grid[0] = static_cast<std::uint32_t>((n + block - 1) / block);
  const std::array<kernel_arg, 4> args = {ptr_arg(dx), ptr_arg(dy), ptr_arg(dout), int_arg(dtype::i32, n)};
  d.launch(m, cfg, args);
  d.copy_to_host(out.data(), dout, bytes);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != 1.5f * static_cast<float>(i);
  CHECK(bad == 0);
  d.free(dx);
  d.free(dy);
  d.free(dout);
}

}  // namespace

// =============================================================================================
// Everywhere.

TEST_CASE("cuda api: a missing libcuda gives a clean reason, never a crash") {
  std::string why;
  CHECK(cuda_api::load("libtile_no_such_cuda.so.1", why) == nullptr);
  CHECK(contains(why, "libtile_no_such_cuda.so.1 not found (no NVIDIA driver): "));
  CHECK(contains(why, "libtile_no_such_cuda.so.1"));

  // A library that loads but is no CUDA driver: every missing symbol is named.
  why.clear();
  CHECK(cuda_api::load("libm.so.6", why) == nullptr);
  CHECK(contains(why, "libm.so.6 is not a usable CUDA driver"));
  CHECK(contains(why, "cuInit"));
  CHECK(contains(why, "cuMemAlloc_v2"));
  CHECK(contains(why, "cuEventElapsedTime_v2"));

  // The process's table: loaded once; the same answer every time.
  std::string why1, why2;
  const cuda_api* a = cuda_api::get(why1);
  const cuda_api* b = cuda_api::get(why2);
  CHECK(a == b);
  CHECK(why1 == why2);
  if (!a) {
    MESSAGE("no CUDA driver: " << why1);
    CHECK(!why1.empty());
    CHECK(cuda_device_count() == 0);
    std::string why3;
    CHECK(make_cuda_driver(0, why3) == nullptr);
    CHECK(why3 == why1);
    CHECK_THROWS_WITH_AS(query_device(0), doctest::Contains("no CUDA driver: "), tile::error);
  } else {
    CHECK(why1.empty());
    CHECK(a->driver_version > 0);
  }
}

TEST_CASE("cuda api: the toolkit's stub library is recognised, not mistaken for a driver" * needs_stub) {
  const char* stub = kStub;
  std::string why;
  CHECK(cuda_api::load(stub, why) == nullptr);
  CHECK(why == std::string("cuInit failed: CUDA_ERROR_STUB_LIBRARY (") + stub + " is the CUDA toolkit's stub, not a driver)");
}

TEST_CASE("cuda api: CUresult formatting names the code, the call and the kernel") {
  const cuda_api& api = fake::api();
  CHECK(describe_cuda_result(api, cu::CUDA_ERROR_INVALID_PTX) == "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)");
  CHECK(describe_cuda_result(api, 12345) == "CUresult 12345");  // unknown to cuGetErrorName
  const cuda_api empty{};  // no name functions at all: tile's own names for the codes it declares
  CHECK(describe_cuda_result(empty, cu::CUDA_ERROR_OUT_OF_MEMORY) == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(describe_cuda_result(empty, cu::CUDA_ERROR_STUB_LIBRARY) == "CUDA_ERROR_STUB_LIBRARY");
  CHECK(describe_cuda_result(empty, 4242) == "CUresult 4242");

  tile::error e = cuda_error(api, cu::CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx", "softmax", "the log");
  CHECK(e.kernel() == "softmax");
  CHECK(e.message() == "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): the log");
  CHECK(std::string(e.what()) ==
        "error: kernel 'softmax': cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): the log");

  CHECK_NOTHROW(cuda_check(api, cu::CUDA_SUCCESS, "cuInit"));
  CHECK_THROWS_WITH_AS(cuda_check(api, cu::CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc_v2"),
                       "error: cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", tile::error);
  CHECK(cu::is_sticky(cu::CUDA_ERROR_ILLEGAL_ADDRESS));
  CHECK(cu::is_sticky(cu::CUDA_ERROR_LAUNCH_FAILED));
  CHECK(cu::is_sticky(cu::CUDA_ERROR_ASSERT));
  CHECK(!cu::is_sticky(cu::CUDA_ERROR_OUT_OF_MEMORY));
  CHECK(!cu::is_sticky(cu::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
}

TEST_CASE("cuda driver (fake API): device info, primary context, memory") {
  const cuda_api& api = fake::api();
  fake::s = {};
  {
    cuda_driver d(api, 0);
    CHECK(fake::s.retains == 1);
    CHECK(d.name() == "cuda");
    const cuda_device_info& info = d.info();
    CHECK(info.name == "Fake GPU");
    CHECK(info.sm_count == 4);
    CHECK(info.arch() == "sm_80");
    CHECK(info.compute_capability() == 80);
    CHECK(info.max_shared_per_block_optin == 163 * 1024);
    CHECK(info.l2_bytes == 40 << 20);
    CHECK(info.clock_rate_khz == 1410000);  // the profiler's device info (Proton's clock_rate …)
    CHECK(info.memory_clock_rate_khz == 1215000);
    CHECK(info.memory_bus_width == 5120);
    CHECK(info.total_memory == std::size_t{1} << 30);
    CHECK(info.max_grid[1] == 65535);
    CHECK(info.max_threads_per_sm == 2048);  // the occupancy estimate's limits (jit/occupancy.hpp)
    CHECK(info.max_registers_per_sm == 65536);
    CHECK(info.max_blocks_per_sm == 32);
    CHECK(info.reserved_shared_per_block == 1024);
    CHECK(info.describe() == "Fake GPU (sm_80, 4 SMs, 1.0 GiB)");

    fake::s.current = nullptr;
    const std::uint64_t p = d.alloc(100);
    CHECK(fake::s.current == fake::kCtx);  // made current before the call
    // made current only where it is not (each launch makes its context current: cuCtxSetCurrent
    // is then the costlier call), and again where an engine made another one current meanwhile
    const int sets = fake::s.set_current;
    d.fill(p, 0, 100);
    CHECK(fake::s.set_current == sets);
    fake::s.current = reinterpret_cast<fake::CUcontext>(std::uintptr_t{0xd0});
    d.fill(p, 0, 100);
    CHECK(fake::s.current == fake::kCtx);
    CHECK(fake::s.set_current == sets + 1);
    std::vector<unsigned char> zero(100, 1);
    d.copy_to_host(zero.data(), p, 100);
    CHECK(zero == std::vector<unsigned char>(100, 0));  // zeroed, like the other backends
    std::vector<unsigned char> in(100), out(100);
    for (int i = 0; i < 100; ++i) in[i] = static_cast<unsigned char>(i * 7);
    d.copy_to_device(p, in.data(), 100);
    d.copy_to_host(out.data(), p, 100);
    CHECK(in == out);
    d.fill(p + 10, 0xab, 20);
    d.copy_to_host(out.data(), p, 100);
    CHECK(out[9] == in[9]);
    CHECK(out[10] == 0xab);
    CHECK(out[29] == 0xab);
    CHECK(out[30] == in[30]);
    const std::uint64_t q = d.alloc(100);
    d.copy_on_device(q, p, 100);
    std::vector<unsigned char> out2(100);
    d.copy_to_host(out2.data(), q, 100);
    CHECK(out2 == out);
    d.free(p);
    d.free(q);
    d.free(0);
    CHECK(fake::s.mem.empty());

    CHECK_THROWS_WITH_AS(d.alloc(std::size_t{1} << 40), doctest::Contains("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY"),
                         tile::error);
    CHECK_NOTHROW(d.synchronize());
  }
  CHECK(fake::s.retains == 0);  // released with the driver
}

TEST_CASE("cuda driver (fake API): an unknown device index is a clear error") {
  const cuda_api& api = fake::api();
  fake::s = {};
  CHECK_THROWS_WITH_AS(cuda_driver(api, 3), "error: CUDA device 3 does not exist (this machine has 1 CUDA device: indices 0 to 0)",
                       tile::error);
  CHECK_THROWS_WITH_AS(query_device(api, -1), doctest::Contains("CUDA device -1 does not exist"), tile::error);
  CHECK(fake::s.retains == 0);
}

TEST_CASE("cuda driver (fake API): loading a module, the JIT logs and launch needs") {
  const cuda_api& api = fake::api();
  fake::s = {};
  cuda_driver d(api, 0);

  auto m = d.load_module(ptx(kFakeVadd, "vadd", 8));
  CHECK(m->kernel == "vadd");
  CHECK(m->info_log == "ptxas info    : Used 12 registers");  // the size came back in the option's slot
  CHECK(m->jit_ms == 2.5f);                                   // so did the wall time
  CHECK(m->num_regs == 32);
  CHECK(m->static_shared_bytes == 1024);
  CHECK(fake::s.set_dynamic_shared == -1);  // no opt-in needed
  CHECK(fake::s.options.size() == 6);
  CHECK(fake::s.carveout == -1);  // no carveout asked for: the driver's choice
  CHECK(m->smem_carveout == -1);

  SUBCASE("a carveout asked for is set on the function and read back") {
    cuda_module_source src = ptx(kFakeVadd, "vadd", 8);
    src.smem_carveout = 100;
    auto c = d.load_module(src);
    CHECK(fake::s.carveout == 100);
    CHECK(c->smem_carveout == 100);
  }

  SUBCASE("a JIT failure names the kernel and quotes the JIT's error log") {
    cuda_module_source src = ptx(kBrokenPtx, "broken");
    src.kernel = "my_kernel";
    try {
      d.load_module(src);
      FAIL("no error");
    } catch (const tile::error& e) {
      const std::string msg = e.what();
      CHECK(e.kernel() == "my_kernel");
      CHECK(contains(msg, "kernel 'my_kernel': cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
      CHECK(contains(msg, "loading PTX for sm_80; JIT error log:\nptxas application ptx input, line 11; error   : "
                          "Unknown symbol 'nonsense'\nptxas fatal   : Ptx assembly aborted due to errors"));
      CHECK(msg.back() != '\n');
    }
  }
  SUBCASE("a missing entry point") {
    CHECK_THROWS_WITH_AS(d.load_module(ptx(kFakeVadd, "vsub")),
                         doctest::Contains("kernel 'vsub': cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (named symbol "
                                           "not found): no entry point 'vsub' in the module"),
                         tile::error);
  }
  SUBCASE("dynamic shared memory above the default limit opts in") {
    auto big = d.load_module(ptx(kFakeVadd, "vadd", 4, 100 * 1024));
    CHECK(fake::s.set_dynamic_shared == 100 * 1024);
    CHECK(big->shared_bytes == 100 * 1024);
    fake::s.set_dynamic_shared = -1;
    d.load_module(ptx(kFakeVadd, "vadd", 4, 47 * 1024 - 1024));  // within 48 KiB with the static 1 KiB
    CHECK(fake::s.set_dynamic_shared == -1);
  }
  SUBCASE("more shared memory than the device has") {
    CHECK_THROWS_WITH_AS(d.load_module(ptx(kFakeVadd, "vadd", 4, 200 * 1024)),
                         doctest::Contains("kernel 'vadd': the kernel needs 204800 bytes of shared memory per block; Fake "
                                           "GPU (sm_80) allows at most 166912"),
                         tile::error);
    CHECK_THROWS_WITH_AS(d.load_module(ptx(kFakeVadd, "vadd", 4, 163 * 1024)),
                         doctest::Contains("(1024 static + 166912 dynamic); sm_80 allows at most 166912"), tile::error);
  }
  SUBCASE("num_warps out of range, and more threads than the registers allow") {
    CHECK_THROWS_WITH_AS(d.load_module(ptx(kFakeVadd, "vadd", 64)),
                         doctest::Contains("num_warps = 64 is out of range: sm_80 allows 1 to 32 warps per block"),
                         tile::error);
    fake::s.num_regs = 128;  // 65536 / 128 = 512 threads
    CHECK_THROWS_WITH_AS(d.load_module(ptx(kFakeVadd, "vadd", 32)),
                         doctest::Contains("runs 1024 threads per block (num_warps = 32) but uses 128 registers per "
                                           "thread, which allows at most 512 on sm_80"),
                         tile::error);
  }
}

TEST_CASE("cuda driver (fake API): launches pack each argument by its dtype") {
  const cuda_api& api = fake::api();
  fake::s = {};
  cuda_driver d(api, 0);
  auto m = d.load_module(ptx(kFakeVadd, "vadd", 8, 64 * 1024));

  const std::vector<kernel_arg> args = {
      ptr_arg(0x7f0000001234ull),
      int_arg(dtype::i1, 1),
      int_arg(dtype::i8, -3),
      int_arg(dtype::u8, 250),
      int_arg(dtype::i16, -1234),
      int_arg(dtype::i32, -123456),
      int_arg(dtype::u32, 4000000000ll),
      int_arg(dtype::i64, -(std::int64_t{1} << 40)),
      float_arg(dtype::f32, 1.5),
      float_arg(dtype::f64, -2.25),
      float_arg(dtype::f16, 1.0),
      float_arg(dtype::bf16, -2.0),
  };
  fake::s.param_sizes = {8, 1, 1, 1, 2, 4, 4, 8, 4, 8, 2, 2};
  launch_config cfg;
  cfg.kernel = "vadd";
  cfg.grid[0] = 7, cfg.grid[1] = 2, cfg.grid[2] = 3;
  d.launch(*m, cfg, args);
  REQUIRE(fake::s.launches == 1);
  CHECK(fake::s.grid[0] == 7);
  CHECK(fake::s.grid[1] == 2);
  CHECK(fake::s.grid[2] == 3);
  CHECK(fake::s.block[0] == 256);  // 32 * num_warps
  CHECK(fake::s.block[1] == 1);
  CHECK(fake::s.shared == 64 * 1024);
  CHECK(fake::s.stream == nullptr);  // the default stream
  const auto& p = fake::s.params;
  CHECK(bytes_as<std::uint64_t>(p[0]) == 0x7f0000001234ull);
  CHECK(bytes_as<std::uint8_t>(p[1]) == 1);
  CHECK(bytes_as<std::int8_t>(p[2]) == -3);
  CHECK(bytes_as<std::uint8_t>(p[3]) == 250);
  CHECK(bytes_as<std::int16_t>(p[4]) == -1234);
  CHECK(bytes_as<std::int32_t>(p[5]) == -123456);
  CHECK(bytes_as<std::uint32_t>(p[6]) == 4000000000u);
  CHECK(bytes_as<std::int64_t>(p[7]) == -(std::int64_t{1} << 40));
  CHECK(bytes_as<float>(p[8]) == 1.5f);
  CHECK(bytes_as<double>(p[9]) == -2.25);
  CHECK(bytes_as<std::uint16_t>(p[10]) == 0x3c00);  // f16 1.0
  CHECK(bytes_as<std::uint16_t>(p[11]) == 0xc000);  // bf16 -2.0

  SUBCASE("many arguments") {
    std::vector<kernel_arg> many;
    for (int i = 0; i < 40; ++i) many.push_back(int_arg(dtype::i32, i * 11));
    fake::s.param_sizes.assign(40, 4);
    d.launch(*m, cfg, many);
    for (int i = 0; i < 40; ++i) CHECK(bytes_as<std::int32_t>(fake::s.params[static_cast<std::size_t>(i)]) == i * 11);
  }
  SUBCASE("packed once, launched again as packed: the same bytes, the launch's own grid and stream") {
    tile::drivers::packed_args packed;
    REQUIRE(d.pack(*m, cfg, args, packed));
    CHECK(packed.n == args.size());
    CHECK(fake::s.launches == 1);  // packing launches nothing
    const auto first = fake::s.params;
    cfg.grid[0] = 9;
    d.set_stream(reinterpret_cast<void*>(std::uintptr_t{0x777}));
    d.launch_packed(*m, cfg, packed);
    d.launch_packed(*m, cfg, packed);
    CHECK(fake::s.launches == 3);
    CHECK(fake::s.params == first);
    CHECK(fake::s.grid[0] == 9);
    CHECK(fake::s.block[0] == 256);
    CHECK(fake::s.shared == 64 * 1024);
    CHECK(fake::s.stream == reinterpret_cast<void*>(std::uintptr_t{0x777}));
    d.set_stream(nullptr);
    cfg.grid[1] = 0;  // an empty grid launches nothing here either
    d.launch_packed(*m, cfg, packed);
    CHECK(fake::s.launches == 3);
    cfg.grid[1] = 70000;
    CHECK_THROWS_WITH_AS(d.launch_packed(*m, cfg, packed), doctest::Contains("grid (9, 70000, 3) is larger than"),
                         tile::error);
    std::vector<kernel_arg> many(tile::drivers::packed_args::capacity + 1, int_arg(dtype::i32, 1));
    CHECK_FALSE(d.pack(*m, cfg, many, packed));  // more than it holds: launched with launch()
    kernel_arg bad = float_arg(dtype::i32, 1.0);
    CHECK_THROWS_WITH_AS(d.pack(*m, cfg, std::span<const kernel_arg>(&bad, 1), packed),
                         doctest::Contains("cannot pass a i32 floating-point value"), tile::error);
  }
  SUBCASE("an empty grid launches nothing; a too large one is an error") {
    cfg.grid[1] = 0;
    d.launch(*m, cfg, args);
    CHECK(fake::s.launches == 1);
    cfg.grid[1] = 70000;
    cfg.where = tile::src_loc(std::source_location::current());
    CHECK_THROWS_WITH_AS(d.launch(*m, cfg, args),
                         doctest::Contains("kernel 'vadd': grid (7, 70000, 3) is larger than sm_80 allows (2147483647, 65535, 65535)"),
                         tile::error);
  }
  SUBCASE("a floating value of an integer type is refused, naming the argument") {
    kernel_arg bad = float_arg(dtype::i32, 1.0);
    bad.what = "argument 3 (i32)";
    CHECK_THROWS_WITH_AS(d.launch(*m, cfg, std::span<const kernel_arg>(&bad, 1)),
                         doctest::Contains("argument 0 (argument 3 (i32)): cannot pass a i32 floating-point value"), tile::error);
  }
  SUBCASE("a module of another backend") {
    struct other_module : module {};
    other_module o;
    CHECK_THROWS_WITH_AS(d.launch(o, cfg, args), doctest::Contains("a module compiled for another backend"), tile::error);
  }
  SUBCASE("a fault found later names the last kernel launched") {
    fake::s.sync_result = cu::CUDA_ERROR_ILLEGAL_ADDRESS;
    CHECK_THROWS_WITH_AS(d.synchronize(),
                         "error: cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
                         "encountered): a kernel faulted earlier (the last kernel launched on this device was 'vadd'); "
                         "the CUDA context cannot be used any more",
                         tile::error);
  }
}

TEST_CASE("cuda driver (fake API): streams, external streams and timing") {
  const cuda_api& api = fake::api();
  fake::s = {};
  cuda_driver d(api, 0);
  auto m = d.load_module(ptx(kFakeVadd, "vadd"));
  launch_config cfg;
  fake::s.param_sizes = {};

  void* st = d.create_stream();
  CHECK(st != nullptr);
  CHECK(d.stream() == nullptr);
  d.set_stream(st);
  d.launch(*m, cfg, {});
  CHECK(fake::s.stream == st);
  d.destroy_stream(st);
  CHECK(d.stream() == nullptr);  // back to the default stream
  CHECK(fake::s.streams == 0);

  void* external = reinterpret_cast<void*>(std::uintptr_t{0xabc0});
  d.set_stream(external);
  d.launch(*m, cfg, {});
  CHECK(fake::s.stream == external);
  d.set_stream(nullptr);

  {
    cuda_timing t(d);
    CHECK(fake::s.events == 2);
    t.start();
    d.launch(*m, cfg, {});
    t.stop();
    CHECK(t.elapsed_ms() == 1.5f);
  }
  CHECK(fake::s.events == 0);
  m.reset();
  // Modules and events keep the context; it is released with the last holder.
  CHECK(fake::s.retains == 1);
}

TEST_CASE("cuda driver (fake API): on a stream under capture, work is recorded and nothing waits") {
  const cuda_api& api = fake::api();
  fake::s = {};
  cuda_driver d(api, 0);
  void* st = d.create_stream(true);
  d.set_stream(st);
  const std::uint64_t x = d.alloc(64);
  std::vector<unsigned char> host(64, 7);
  CHECK_FALSE(d.capturing());
  d.copy_to_device(x, host.data(), 64);
  CHECK(fake::s.stream_syncs == 1);  // outside a capture a copy waits

  REQUIRE(api.cuStreamBeginCapture_v2(static_cast<cu::CUstream>(st), cu::CU_STREAM_CAPTURE_MODE_GLOBAL) == cu::CUDA_SUCCESS);
  CHECK(d.capturing());
  d.copy_to_device(x, host.data(), 64);
  d.copy_to_host(host.data(), x, 64);
  d.fill(x, 0, 64);
  CHECK(fake::s.recorded == 3);
  CHECK(fake::s.stream_syncs == 1);  // recorded, not waited for
  // what a global-mode capture forbids runs relaxed: a first launch's module, a buffer
  const std::uint64_t y = d.alloc(32);  // its zeroing is recorded too
  CHECK(fake::s.recorded == 4);
  auto m = d.load_module(ptx(kFakeVadd, "vadd"));
  m.reset();
  d.free(y);
  CHECK(fake::s.mode == cu::CU_STREAM_CAPTURE_MODE_GLOBAL);  // the thread's mode, restored
  // waiting is an error that touches nothing: the capture goes on
  CHECK_THROWS_WITH_AS(d.synchronize(), doctest::Contains("synchronize while the current stream is being captured into a CUDA graph"),
                       tile::error);
  CHECK_THROWS_AS(d.synchronize_stream(), tile::error);
  CHECK(fake::s.refused == 0);
  CHECK(d.capturing());
  cu::CUgraph g = nullptr;
  REQUIRE(api.cuStreamEndCapture(static_cast<cu::CUstream>(st), &g) == cu::CUDA_SUCCESS);
  CHECK_FALSE(d.capturing());
  d.synchronize();
  d.free(x);
  d.set_stream(nullptr);
  d.destroy_stream(st);
}

// =============================================================================================
// On a GPU.

TEST_CASE("cuda (GPU): device query" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  const cuda_device_info& info = d->info();
  MESSAGE("device 0: " << info.describe() << ", driver " << info.driver_version << ", L2 " << info.l2_bytes
                       << " bytes, shared memory per block (opt-in) " << info.max_shared_per_block_optin);
  CHECK(cuda_device_count() >= 1);
  CHECK(info.sm_count > 0);
  CHECK(info.cc_major >= 7);
  CHECK(info.warp_size == 32);
  CHECK(!info.name.empty());
  CHECK(info.max_threads_per_block >= 1024);
  CHECK(info.max_shared_per_block == 48 * 1024);
  CHECK(info.max_shared_per_block_optin >= 48 * 1024);
  CHECK(info.l2_bytes > 0);
  CHECK(info.total_memory > (std::size_t{1} << 30));
  CHECK(info.driver_version >= 12000);
  CHECK(info.max_threads_per_sm >= 1024);
  CHECK(info.max_registers_per_sm == 65536);  // every architecture since Kepler
  CHECK(info.max_blocks_per_sm >= 16);
  CHECK(info.reserved_shared_per_block >= 0);
  const cuda_device_info again = query_device(0);
  CHECK(again.name == info.name);
  CHECK(again.sm_count == info.sm_count);
}

TEST_CASE("cuda (GPU): memory round trip, fill, device-to-device copy" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  const std::size_t n = (1 << 20) + 3;
  std::vector<std::uint8_t> in(n), out(n, 1);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::uint8_t>(i * 131 + 7);
  const std::uint64_t p = d->alloc(n), q = d->alloc(n);
  CHECK(p != 0);
  d->copy_to_host(out.data(), p, n);
  CHECK(out == std::vector<std::uint8_t>(n, 0));  // fresh memory is zeroed
  d->copy_to_device(p, in.data(), n);
  d->copy_to_host(out.data(), p, n);
  CHECK(out == in);
  d->fill(p + 5, 0x5a, 1000);
  d->copy_to_host(out.data(), p, n);
  CHECK(out[4] == in[4]);
  CHECK(out[5] == 0x5a);
  CHECK(out[1004] == 0x5a);
  CHECK(out[1005] == in[1005]);
  d->copy_on_device(q, p, n);
  std::vector<std::uint8_t> out2(n);
  d->copy_to_host(out2.data(), q, n);
  CHECK(out2 == out);
  d->synchronize();
  d->free(p);
  d->free(q);
  const std::uint64_t z = d->alloc(0);  // a zero-byte buffer still has an address
  CHECK(z != 0);
  d->free(z);
}

TEST_CASE("cuda (GPU): a hand-written PTX vector add, loaded and launched" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  auto m = d->load_module(ptx(kVaddPtx, "vadd", 4));
  MESSAGE("vadd: " << m->num_regs << " registers, JIT " << m->jit_ms << " ms; info log: " << m->info_log);
  CHECK(m->num_regs > 0);
  run_vadd(*d, *m, 1000);
  run_vadd(*d, *m, 1 << 20);
  run_vadd(*d, *m, 1);
}

TEST_CASE("cuda (GPU): every argument type reaches the kernel with its bits" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  auto m = d->load_module(ptx(kPackPtx, "pack", 1));
  const std::uint64_t out = d->alloc(10 * 8);
  const std::vector<kernel_arg> args = {
      ptr_arg(out),
      int_arg(dtype::i8, -3),
      int_arg(dtype::i16, -1234),
      int_arg(dtype::i32, -123456),
      int_arg(dtype::i64, -(std::int64_t{1} << 40) - 5),
      int_arg(dtype::u8, 250),
      float_arg(dtype::f32, 1.5),
      float_arg(dtype::f64, -2.25),
      float_arg(dtype::f16, 1.0),
      float_arg(dtype::bf16, -2.0),
      int_arg(dtype::u64, static_cast<std::int64_t>(0xfedcba9876543210ull)),
  };
  launch_config cfg;
  cfg.kernel = "pack";
  d->launch(*m, cfg, args);
  std::array<std::uint64_t, 10> got{};
  d->copy_to_host(got.data(), out, sizeof got);
  CHECK(static_cast<std::int64_t>(got[0]) == -3);
  CHECK(static_cast<std::int64_t>(got[1]) == -1234);
  CHECK(static_cast<std::int64_t>(got[2]) == -123456);
  CHECK(static_cast<std::int64_t>(got[3]) == -(std::int64_t{1} << 40) - 5);
  CHECK(got[4] == 250);
  const float f = 1.5f;
  std::uint32_t fbits;
  std::memcpy(&fbits, &f, 4);
  CHECK(got[5] == fbits);
  const double g = -2.25;
  std::uint64_t gbits;
  std::memcpy(&gbits, &g, 8);
  CHECK(got[6] == gbits);
  CHECK(got[7] == 0x3c00);
  CHECK(got[8] == 0xc000);
  CHECK(got[9] == 0xfedcba9876543210ull);
  d->free(out);
}

TEST_CASE("cuda (GPU): dynamic shared memory above 48 KiB" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  const int threads = 256;
  const std::uint32_t shared = static_cast<std::uint32_t>(d->info().max_shared_per_block_optin);  // all of it
  const std::uint32_t base = shared - 4 * threads;  // the last bytes of the block's shared memory
  auto m = d->load_module(ptx(kSharedPtx, "swap", threads / 32, shared));
  MESSAGE("swap: " << shared << " bytes of dynamic shared memory");
  const std::uint64_t out = d->alloc(4 * threads);
  launch_config cfg;
  cfg.kernel = "swap";
  const std::array<kernel_arg, 2> args = {ptr_arg(out), int_arg(dtype::u32, base)};
  d->launch(*m, cfg, args);
  std::vector<std::uint32_t> got(threads);
  d->copy_to_host(got.data(), out, 4 * threads);
  int bad = 0;
  for (int i = 0; i < threads; ++i) bad += got[static_cast<std::size_t>(i)] != static_cast<std::uint32_t>(i ^ 1);
  CHECK(bad == 0);
  d->free(out);
  CHECK_THROWS_WITH_AS(d->load_module(ptx(kSharedPtx, "swap", 8, shared + 1)), doctest::Contains("bytes of shared memory per block"),
                       tile::error);
}

TEST_CASE("cuda (GPU): a cubin assembled by ptxas" * needs_gpu_and_ptxas) {
  TILE_REQUIRE_GPU(d);
  const char* ptxas = kPtxas;
  const std::string dir = "/tmp/tile_test_cuda_" + std::to_string(::getpid());
  const std::string ptx_path = dir + ".ptx", cubin_path = dir + ".cubin";
  std::ofstream(ptx_path) << kVaddPtx;
  const std::string cmd = std::string(ptxas) + " -arch=" + d->info().arch() + " " + ptx_path + " -o " + cubin_path;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream f(cubin_path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  std::remove(ptx_path.c_str());
  std::remove(cubin_path.c_str());
  cuda_module_source src;
  src.fmt = cuda_module_source::format::cubin;
  src.image = bytes.str();
  src.entry = "vadd";
  auto m = d->load_module(src);
  run_vadd(*d, *m, 5000);
}

TEST_CASE("cuda (GPU): a PTX syntax error is a tile::error with the JIT log" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  cuda_module_source src = ptx(kBrokenPtx, "broken");
  src.kernel = "my_kernel";
  try {
    d->load_module(src);
    FAIL("no error");
  } catch (const tile::error& e) {
    const std::string msg = e.what();
    MESSAGE(msg);
    CHECK(e.kernel() == "my_kernel");
    CHECK(contains(msg, "kernel 'my_kernel': cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX"));
    CHECK(contains(msg, "JIT error log:\n"));
    CHECK(contains(msg, "line 11"));
    CHECK(contains(msg, "nonsense"));
  }
  // The context is fine afterwards.
  auto m = d->load_module(ptx(kVaddPtx, "vadd"));
  run_vadd(*d, *m, 100);
}

TEST_CASE("cuda (GPU): events time a launch" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  auto m = d->load_module(ptx(kVaddPtx, "vadd", 4));
  const int n = 1 << 24;
  const std::size_t bytes = 4u * n;
  const std::uint64_t x = d->alloc(bytes), y = d->alloc(bytes), out = d->alloc(bytes);
  launch_config cfg;
  cfg.kernel = "vadd";
  cfg.grid[0] = n / 128;
  const std::array<kernel_arg, 4> args = {ptr_arg(x), ptr_arg(y), ptr_arg(out), int_arg(dtype::i32, n)};
  d->launch(*m, cfg, args);  // warm up
  cuda_timing t(*d);
  t.start();
  d->launch(*m, cfg, args);
  t.stop();
  const float ms = t.elapsed_ms();
  MESSAGE("vadd over " << n << " floats: " << ms << " ms, " << 3.0 * bytes / (ms * 1e-3) / 1e9 << " GB/s");
  CHECK(ms > 0.0f);
  CHECK(ms < 1000.0f);
  d->free(x);
  d->free(y);
  d->free(out);
}

TEST_CASE("cuda (GPU): streams, external streams and external device pointers" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  auto m = d->load_module(ptx(kVaddPtx, "vadd", 4));
  // A stream the driver creates.
  void* st = d->create_stream(true);
  d->set_stream(st);
  CHECK(d->stream() == st);
  run_vadd(*d, *m, 3000);
  d->synchronize_stream();
  d->destroy_stream(st);
  CHECK(d->stream() == nullptr);

  // A stream and memory made outside the driver (as PyTorch would), on the same primary context.
  const cuda_api& api = d->api();
  d->make_current();
  cu::CUstream ext = nullptr;
  REQUIRE(api.cuStreamCreate(&ext, cu::CU_STREAM_NON_BLOCKING) == cu::CUDA_SUCCESS);
  cu::CUdeviceptr raw = 0;
  REQUIRE(api.cuMemAlloc_v2(&raw, 4 * 64) == cu::CUDA_SUCCESS);
  d->set_stream(ext);
  std::vector<float> ones(64, 1.0f), got(64);
  d->copy_to_device(raw, ones.data(), 4 * 64);
  launch_config cfg;
  cfg.kernel = "vadd";
  const std::array<kernel_arg, 4> args = {ptr_arg(raw), ptr_arg(raw), ptr_arg(raw), int_arg(dtype::i32, 64)};
  d->launch(*m, cfg, args);  // in place: raw = raw + raw
  d->copy_to_host(got.data(), raw, 4 * 64);
  CHECK(got == std::vector<float>(64, 2.0f));
  d->set_stream(nullptr);
  CHECK(api.cuStreamDestroy_v2(ext) == cu::CUDA_SUCCESS);
  CHECK(api.cuMemFree_v2(raw) == cu::CUDA_SUCCESS);
}

TEST_CASE("cuda (GPU): any thread may use the driver (the context is made current per call)" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  auto m = d->load_module(ptx(kVaddPtx, "vadd", 2));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int rep = 0; rep < 5; ++rep) run_vadd(*d, *m, 1000 + 37 * t + rep);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& e : errors) CHECK(e.empty());
}

TEST_CASE("cuda (GPU): an unknown device index is a clear error" * needs_gpu) {
  TILE_REQUIRE_GPU(d);
  const int count = cuda_device_count();
  std::string why;
  CHECK(make_cuda_driver(count + 5, why) == nullptr);
  MESSAGE(why);
  CHECK(contains(why, "CUDA device " + std::to_string(count + 5) + " does not exist (this machine has "));
  CHECK_THROWS_WITH_AS(query_device(count), doctest::Contains("does not exist"), tile::error);
  CHECK_THROWS_WITH_AS(query_device(-1), doctest::Contains("CUDA device -1 does not exist"), tile::error);
}

// src/drivers/cuda/cuda_driver.cpp — layer: drivers (cuda). The CUDA driver: device queries,
// the primary context, memory, module loading (JIT with logs), argument packing and launches,
// streams and events.
#include "drivers/cuda/cuda_driver.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tile::drivers {

static_assert(std::endian::native == std::endian::little, "kernel arguments are packed for a little-endian host");

namespace {

std::string plural(long long n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

/// The error for an index that names no device.
tile::error no_such_device(int index, int count) {
  std::string s = "CUDA device " + std::to_string(index) + " does not exist (this machine has " +
                  plural(count, "CUDA device");
  if (count > 0) s += ": indices 0 to " + std::to_string(count - 1);
  return tile::error(s + ")");
}

const cuda_api& api_or_throw() {
  std::string why;
  const cuda_api* api = cuda_api::get(why);
  if (!api) throw tile::error("no CUDA driver: " + why);
  return *api;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Devices.

std::string cuda_device_info::arch() const { return "sm_" + std::to_string(compute_capability()); }

std::string cuda_device_info::describe() const {
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", static_cast<double>(total_memory) / (1024.0 * 1024.0 * 1024.0));
  return name + " (" + arch() + ", " + plural(sm_count, "SM") + ", " + mem + ")";
}

int cuda_device_count() {
  std::string why;
  const cuda_api* api = cuda_api::get(why);
  int n = 0;
  if (!api || api->cuDeviceGetCount(&n) != cu::CUDA_SUCCESS) return 0;
  return n;
}

cuda_device_info query_device(int index) { return query_device(api_or_throw(), index); }

cuda_device_info query_device(const cuda_api& api, int index) {
  int count = 0;
  cuda_check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (index < 0 || index >= count) throw no_such_device(index, count);
  cu::CUdevice dev = 0;
  cuda_check(api, api.cuDeviceGet(&dev, index), "cuDeviceGet");

  cuda_device_info info;
  info.index = index;
  info.driver_version = api.driver_version;
  char name[256] = {};
  cuda_check(api, api.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, dev), "cuDeviceGetName");
  info.name = name;
  auto attr = [&](cu::CUdevice_attribute a) {
    int v = 0;
    cuda_check(api, api.cuDeviceGetAttribute(&v, a, dev), "cuDeviceGetAttribute");
    return v;
  };
  info.sm_count = attr(cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.cc_major = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.warp_size = attr(cu::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  info.max_threads_per_block = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info.max_shared_per_block = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info.max_shared_per_block_optin = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.max_shared_per_sm = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  info.max_registers_per_block = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  info.max_threads_per_sm = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  info.max_registers_per_sm = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.max_blocks_per_sm = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  info.reserved_shared_per_block = attr(cu::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  info.l2_bytes = attr(cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.clock_rate_khz = attr(cu::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_rate_khz = attr(cu::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_width = attr(cu::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info.max_grid[0] = static_cast<std::uint32_t>(attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X));
  info.max_grid[1] = static_cast<std::uint32_t>(attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y));
  info.max_grid[2] = static_cast<std::uint32_t>(attr(cu::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z));
  cuda_check(api, api.cuDeviceTotalMem_v2(&info.total_memory, dev), "cuDeviceTotalMem_v2");
  return info;
}

// ---------------------------------------------------------------------------------------------
// The primary context.

cuda_context::cuda_context(const cuda_api& api, int index) : api_(&api) {
  cuda_check(api, api.cuDeviceGet(&dev_, index), "cuDeviceGet");
  cuda_check(api, api.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
}

cuda_context::~cuda_context() {
  // At process exit the driver may already be shutting down (CUDA_ERROR_DEINITIALIZED): ignored.
  api_->cuDevicePrimaryCtxRelease_v2(dev_);
}

void cuda_context::make_current() const {
  // a launch makes its context current each time: asking first is the cheaper call where it is
  // already (the usual case), and a thread whose current context an engine changed still gets ours
  cu::CUcontext current = nullptr;
  if (api_->cuCtxGetCurrent(&current) == cu::CUDA_SUCCESS && current == ctx_) return;
  cuda_check(*api_, api_->cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
}

// ---------------------------------------------------------------------------------------------
// Modules.

namespace {

/// This thread's stream-capture mode set to relaxed for the guard's life: the driver calls a
/// capture in global mode forbids (cuMemAlloc, cuMemFree, module loads and unloads) are then
/// allowed while a stream captures, and leave the capture intact. Outside a capture it changes
/// nothing. Never throws.
class relaxed_capture {
 public:
  explicit relaxed_capture(const cuda_api& api) : api_(api) {
    ok_ = api_.cuThreadExchangeStreamCaptureMode(&mode_) == cu::CUDA_SUCCESS;
  }
  ~relaxed_capture() {
    if (ok_) api_.cuThreadExchangeStreamCaptureMode(&mode_);
  }
  relaxed_capture(const relaxed_capture&) = delete;
  relaxed_capture& operator=(const relaxed_capture&) = delete;

 private:
  const cuda_api& api_;
  cu::CUstreamCaptureMode mode_ = cu::CU_STREAM_CAPTURE_MODE_RELAXED;  // the thread's mode while the guard lives
  bool ok_ = false;
};

}  // namespace

cuda_module::~cuda_module() {
  if (handle && ctx) {
    const cuda_api& api = ctx->api();
    relaxed_capture relaxed(api);
    if (api.cuCtxSetCurrent(ctx->handle()) == cu::CUDA_SUCCESS) api.cuModuleUnload(handle);
  }
}

namespace {

constexpr std::size_t kLogBytes = 64 * 1024;

/// `name` as a string that lives as long as the process: a launch records the last kernel it
/// launched by storing this pointer (kernel names are few; each is kept once).
const char* intern(const std::string& name) {
  static std::mutex mu;
  static auto& names = *new std::unordered_set<std::string>;  // never destroyed: read during exit
  std::lock_guard l(mu);
  return names.insert(name).first->c_str();
}

/// The text the JIT wrote into `buf`: `slot` holds the byte count it wrote back (the option's
/// value slot itself, not a pointer), capped at the buffer and cut at the first NUL.
std::string jit_log(const std::string& buf, void* slot) {
  std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(slot)), buf.size());
  n = ::strnlen(buf.data(), n);
  std::string s = buf.substr(0, n);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

void* slot_value(std::uintptr_t v) { return reinterpret_cast<void*>(v); }

}  // namespace

std::string cuda_driver::ptx_to_cubin(const std::string& ptx, const std::string& kernel, float* jit_ms) {
  make_current();
  relaxed_capture relaxed(*api_);
  std::string info_log(kLogBytes, '\0'), error_log(kLogBytes, '\0');
  std::array<cu::CUjit_option, 5> options = {
      cu::CU_JIT_INFO_LOG_BUFFER, cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, cu::CU_JIT_ERROR_LOG_BUFFER,
      cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, cu::CU_JIT_WALL_TIME,
  };
  std::array<void*, 5> values = {info_log.data(), slot_value(kLogBytes), error_log.data(), slot_value(kLogBytes), nullptr};
  cu::CUlinkState state = nullptr;
  cuda_check(*api_, api_->cuLinkCreate_v2(static_cast<unsigned>(options.size()), options.data(), values.data(), &state),
             "cuLinkCreate", kernel);
  struct destroy {
    const cuda_api* api;
    cu::CUlinkState s;
    ~destroy() { api->cuLinkDestroy(s); }
  } guard{api_, state};
  std::string text = ptx;  // cuLinkAddData wants a mutable, NUL-terminated image
  cu::CUresult r = api_->cuLinkAddData_v2(state, cu::CU_JIT_INPUT_PTX, text.data(), text.size() + 1, "tile.ptx", 0, nullptr, nullptr);
  void* cubin = nullptr;
  std::size_t size = 0;
  if (r == cu::CUDA_SUCCESS) r = api_->cuLinkComplete(state, &cubin, &size);
  if (r != cu::CUDA_SUCCESS) {
    std::string log = jit_log(error_log, values[3]);
    throw cuda_error(*api_, r, "cuLinkComplete", kernel,
                     "compiling PTX for " + info_.arch() + "; " + (log.empty() ? std::string("the JIT wrote no error log") : "JIT error log:\n" + log));
  }
  if (jit_ms) std::memcpy(jit_ms, &values[4], sizeof(float));
  return std::string(static_cast<const char*>(cubin), size);  // the state owns cubin: copy before destroying it
}

std::unique_ptr<cuda_module> cuda_driver::load_module(const cuda_module_source& src) {
  const std::string kernel = src.kernel.empty() ? src.entry : src.kernel;
  const char* what = src.fmt == cuda_module_source::format::ptx ? "PTX" : "cubin";
  if (src.image.empty()) throw tile::error(std::string("empty ") + what + " image", {}, kernel);
  if (src.entry.empty()) throw tile::error("no entry point named for the CUDA module", {}, kernel);
  const int warp = info_.warp_size > 0 ? info_.warp_size : 32;  // the device's (CU_DEVICE_ATTRIBUTE_WARP_SIZE)
  const int threads = warp * src.num_warps;
  if (src.num_warps < 1 || threads > info_.max_threads_per_block)
    throw tile::error("num_warps = " + std::to_string(src.num_warps) + " is out of range: " + info_.arch() +
                          " allows 1 to " + std::to_string(info_.max_threads_per_block / warp) + " warps per block",
                      {}, kernel);
  if (src.shared_bytes > static_cast<std::uint32_t>(info_.max_shared_per_block_optin))
    throw tile::error("the kernel needs " + std::to_string(src.shared_bytes) + " bytes of shared memory per block; " +
                          info_.name + " (" + info_.arch() + ") allows at most " +
                          std::to_string(info_.max_shared_per_block_optin),
                      {}, kernel);

  make_current();
  relaxed_capture relaxed(*api_);  // a first launch while the caller's stream captures a graph
  auto mod = std::make_unique<cuda_module>();
  mod->ctx = ctx_;
  mod->kernel = kernel;
  mod->interned_kernel = intern(kernel);
  mod->entry = src.entry;
  mod->num_warps = src.num_warps;
  mod->shared_bytes = src.shared_bytes;
  mod->tensor_maps = src.tensor_maps;

  std::string info_log(kLogBytes, '\0'), error_log(kLogBytes, '\0');
  std::array<cu::CUjit_option, 6> options = {
      cu::CU_JIT_INFO_LOG_BUFFER,  cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_ERROR_LOG_BUFFER, cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_LOG_VERBOSE,      cu::CU_JIT_WALL_TIME,
  };
  std::array<void*, 6> values = {
      info_log.data(),  slot_value(kLogBytes),
      error_log.data(), slot_value(kLogBytes),
      slot_value(1),    nullptr,  // CU_JIT_WALL_TIME: a float is written into this slot
  };
  // PTX must be NUL-terminated: c_str() is.
  const cu::CUresult r = api_->cuModuleLoadDataEx(&mod->handle, src.image.c_str(), static_cast<unsigned>(options.size()),
                                                  options.data(), values.data());
  mod->info_log = jit_log(info_log, values[1]);
  std::memcpy(&mod->jit_ms, &values[5], sizeof(float));
  if (r != cu::CUDA_SUCCESS) {
    mod->handle = nullptr;
    std::string log = jit_log(error_log, values[3]);
    std::string detail = "loading " + std::string(what) + " for " + info_.arch() + "; ";
    detail += log.empty() ? std::string("the JIT wrote no error log") : "JIT error log:\n" + log;
    throw cuda_error(*api_, r, "cuModuleLoadDataEx", kernel, detail);
  }

  if (const cu::CUresult rf = api_->cuModuleGetFunction(&mod->fn, mod->handle, src.entry.c_str()); rf != cu::CUDA_SUCCESS)
    throw cuda_error(*api_, rf, "cuModuleGetFunction", kernel, "no entry point '" + src.entry + "' in the module");

  auto attr = [&](cu::CUfunction_attribute a) {
    int v = 0;
    cuda_check(*api_, api_->cuFuncGetAttribute(&v, a, mod->fn), "cuFuncGetAttribute", kernel);
    return v;
  };
  mod->num_regs = attr(cu::CU_FUNC_ATTRIBUTE_NUM_REGS);
  mod->static_shared_bytes = attr(cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  mod->local_bytes = attr(cu::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  mod->max_threads_per_block = attr(cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  if (threads > mod->max_threads_per_block)
    throw tile::error("the kernel runs " + std::to_string(threads) + " threads per block (num_warps = " +
                          std::to_string(src.num_warps) + ") but uses " + std::to_string(mod->num_regs) +
                          " registers per thread, which allows at most " + std::to_string(mod->max_threads_per_block) +
                          " on " + info_.arch(),
                      {}, kernel);
  const long long total_shared = static_cast<long long>(mod->static_shared_bytes) + src.shared_bytes;
  if (total_shared > info_.max_shared_per_block_optin)
    throw tile::error("the kernel needs " + std::to_string(total_shared) + " bytes of shared memory per block (" +
                          std::to_string(mod->static_shared_bytes) + " static + " + std::to_string(src.shared_bytes) +
                          " dynamic); " + info_.arch() + " allows at most " +
                          std::to_string(info_.max_shared_per_block_optin),
                      {}, kernel);
  // Above the default limit (48 KiB less the static part), a kernel must opt in.
  if (src.shared_bytes > 0 &&
      src.shared_bytes > static_cast<std::uint32_t>(attr(cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)))
    cuda_check(*api_,
               api_->cuFuncSetAttribute(mod->fn, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(src.shared_bytes)),
               "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", kernel);
  if (src.smem_carveout >= 0) {
    cuda_check(*api_,
               api_->cuFuncSetAttribute(mod->fn, cu::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                        std::min(src.smem_carveout, 100)),
               "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)", kernel);
    mod->smem_carveout = attr(cu::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
  }
  return mod;
}

// ---------------------------------------------------------------------------------------------
// The driver.

cuda_driver::cuda_driver(const cuda_api& api, int index)
    : api_(&api), info_(query_device(api, index)), ctx_(std::make_shared<const cuda_context>(api, index)) {}

cuda_driver::~cuda_driver() = default;

void cuda_driver::check(cu::CUresult r, std::string_view call) const {
  if (r == cu::CUDA_SUCCESS) return;
  std::string detail;
  if (cu::is_sticky(r)) {
    const std::string last = last_kernel_.load(std::memory_order_relaxed);
    detail = "a kernel faulted earlier";
    if (!last.empty()) detail += " (the last kernel launched on this device was '" + last + "')";
    detail += "; the CUDA context cannot be used any more";
  }
  throw cuda_error(*api_, r, call, {}, detail);
}

std::uint64_t cuda_driver::alloc(std::size_t bytes) {
  make_current();
  relaxed_capture relaxed(*api_);  // under capture the zeroing below is recorded into the graph
  cu::CUdeviceptr p = 0;
  const cu::CUresult r = api_->cuMemAlloc_v2(&p, bytes ? bytes : 1);
  if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
    std::size_t free_bytes = 0, total = 0;
    std::string detail = "allocating " + std::to_string(bytes) + " bytes";
    if (api_->cuMemGetInfo_v2(&free_bytes, &total) == cu::CUDA_SUCCESS)
      detail += " (" + std::to_string(free_bytes) + " of " + std::to_string(total) + " bytes free on " + info_.name + ")";
    throw cuda_error(*api_, r, "cuMemAlloc_v2", {}, detail);
  }
  check(r, "cuMemAlloc_v2");
  if (bytes) {
    const cu::CUresult rz = api_->cuMemsetD8Async(p, 0, bytes, stream_.load());
    if (rz != cu::CUDA_SUCCESS) {
      api_->cuMemFree_v2(p);
      check(rz, "cuMemsetD8Async");
    }
  }
  return p;
}

void cuda_driver::check_foreign(std::uint64_t addr, std::size_t bytes) const {
  auto hex = [](std::uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return std::string(b);
  };
  const std::string what = "pointer " + hex(addr);
  if (addr == 0) throw tile::error("a null pointer is not memory of " + info_.name);
  make_current();
  unsigned type = 0;
  cu::CUresult r = api_->cuPointerGetAttribute(&type, cu::CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr);
  if (r == cu::CUDA_ERROR_INVALID_VALUE)
    throw tile::error(what + " is not memory the CUDA driver knows (a host pointer from malloc or new?); kernels on " +
                      info_.name + " need device memory (cuMemAlloc, cudaMalloc, torch.cuda)");
  check(r, "cuPointerGetAttribute");
  if (type == cu::CU_MEMORYTYPE_HOST)
    throw tile::error(what + " is page-locked host memory; kernels on " + info_.name +
                      " need device memory (cuMemAlloc, cudaMalloc, torch.cuda)");
  if (type == cu::CU_MEMORYTYPE_ARRAY) throw tile::error(what + " is a CUDA array, not linear device memory");
  int ordinal = -1;
  if (type == cu::CU_MEMORYTYPE_DEVICE)
    check(api_->cuPointerGetAttribute(&ordinal, cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, addr), "cuPointerGetAttribute");
  if (type == cu::CU_MEMORYTYPE_DEVICE && ordinal != info_.index)
    throw tile::error(what + " is memory of CUDA device " + std::to_string(ordinal) + ", not of " + info_.name +
                      " (device " + std::to_string(info_.index) + ")");
  cu::CUcontext owner = nullptr;
  if (type == cu::CU_MEMORYTYPE_DEVICE &&
      api_->cuPointerGetAttribute(&owner, cu::CU_POINTER_ATTRIBUTE_CONTEXT, addr) == cu::CUDA_SUCCESS && owner &&
      owner != ctx_->handle())
    throw tile::error(what + " belongs to another CUDA context on " + info_.name +
                      " than its primary context, which tile's kernels run in");
  if (addr + bytes < addr) throw tile::error(what + " with " + std::to_string(bytes) + " bytes wraps around the address space");
  cu::CUdeviceptr start = 0;
  std::size_t size = 0;
  if (api_->cuPointerGetAttribute(&start, cu::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, addr) == cu::CUDA_SUCCESS &&
      api_->cuPointerGetAttribute(&size, cu::CU_POINTER_ATTRIBUTE_RANGE_SIZE, addr) == cu::CUDA_SUCCESS &&
      addr + bytes > start + size)
    throw tile::error(what + " with " + std::to_string(bytes) + " bytes runs past the end of its allocation (" +
                      hex(start) + ", " + std::to_string(size) + " bytes) by " +
                      std::to_string(addr + bytes - (start + size)) + " bytes");
}

void cuda_driver::free(std::uint64_t addr) noexcept {
  if (addr == 0) return;
  if (api_->cuCtxSetCurrent(ctx_->handle()) != cu::CUDA_SUCCESS) return;
  relaxed_capture relaxed(*api_);
  api_->cuMemFree_v2(addr);  // errors (a faulted context, a driver shutting down) cannot be reported here
}

void cuda_driver::copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  cu::CUstream s = stream_.load();
  check(api_->cuMemcpyHtoDAsync_v2(dst, src, bytes, s), "cuMemcpyHtoDAsync_v2");
  // `src` may be pinned: wait before returning, unless the copy went into a graph
  if (!capturing(s)) check(api_->cuStreamSynchronize(s), "cuStreamSynchronize");
}

void cuda_driver::copy_to_host(void* dst, std::uint64_t src, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  cu::CUstream s = stream_.load();
  check(api_->cuMemcpyDtoHAsync_v2(dst, src, bytes, s), "cuMemcpyDtoHAsync_v2");
  if (!capturing(s)) check(api_->cuStreamSynchronize(s), "cuStreamSynchronize");
}

void cuda_driver::copy_on_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  check(api_->cuMemcpyDtoDAsync_v2(dst, src, bytes, stream_.load()), "cuMemcpyDtoDAsync_v2");
}

void cuda_driver::fill(std::uint64_t dst, unsigned char value, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  check(api_->cuMemsetD8Async(dst, value, bytes, stream_.load()), "cuMemsetD8Async");
}

bool cuda_driver::capturing() const {
  make_current();
  return capturing(stream_.load());
}

bool cuda_driver::capturing(cu::CUstream s) const {
  cu::CUstreamCaptureStatus status = cu::CU_STREAM_CAPTURE_STATUS_NONE;
  const cu::CUresult r = api_->cuStreamIsCapturing(s, &status);
  if (r == cu::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) return true;
  return r == cu::CUDA_SUCCESS && status != cu::CU_STREAM_CAPTURE_STATUS_NONE;
}

namespace {
tile::error waits_in_capture(std::string_view what) {
  return tile::error(std::string(what) +
                     " while the current stream is being captured into a CUDA graph: nothing has run yet, and "
                     "waiting would invalidate the capture; end the capture (cuStreamEndCapture), launch the graph, "
                     "then wait for it");
}
}  // namespace

void cuda_driver::synchronize() {
  if (capturing()) throw waits_in_capture("synchronize");
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

void cuda_driver::synchronize_stream() {
  if (capturing()) throw waits_in_capture("synchronize");
  check(api_->cuStreamSynchronize(stream_.load()), "cuStreamSynchronize");
}

void* cuda_driver::create_stream(bool non_blocking) {
  make_current();
  cu::CUstream s = nullptr;
  check(api_->cuStreamCreate(&s, non_blocking ? cu::CU_STREAM_NON_BLOCKING : cu::CU_STREAM_DEFAULT), "cuStreamCreate");
  return s;
}

void cuda_driver::destroy_stream(void* cu_stream) {
  if (!cu_stream) return;
  cu::CUstream s = static_cast<cu::CUstream>(cu_stream);
  cu::CUstream expected = s;
  stream_.compare_exchange_strong(expected, nullptr);
  make_current();
  check(api_->cuStreamDestroy_v2(s), "cuStreamDestroy_v2");
}

namespace {

/// One kernel argument's bytes, in an 8-byte slot (cuLaunchKernel reads as many as the
/// parameter's size from its address).
std::uint64_t pack_arg(const kernel_arg& a, std::size_t index, std::string_view kernel, const src_loc& where) {
  std::uint64_t slot = 0;
  auto put = [&](const auto& v) { std::memcpy(&slot, &v, sizeof v); };
  auto bad = [&]() -> tile::error {
    return tile::error("argument " + std::to_string(index) + (a.what.empty() ? "" : " (" + std::string(a.what) + ")") +
                           ": cannot pass a " + std::string(tile::name(a.t)) + " " +
                           (a.k == kernel_arg::kind::integer ? "integer" : "floating-point") + " value to a CUDA kernel",
                       where, std::string(kernel));
  };
  switch (a.k) {
    case kernel_arg::kind::pointer: put(static_cast<cu::CUdeviceptr>(a.addr)); break;
    case kernel_arg::kind::integer:
      if (!is_int(a.t)) throw bad();
      switch (size_of(a.t)) {
        case 1: put(static_cast<std::uint8_t>(a.i)); break;
        case 2: put(static_cast<std::uint16_t>(a.i)); break;
        case 4: put(static_cast<std::uint32_t>(a.i)); break;
        default: put(static_cast<std::uint64_t>(a.i)); break;
      }
      break;
    case kernel_arg::kind::floating:
      switch (a.t) {
        case dtype::f32: put(static_cast<float>(a.f)); break;
        case dtype::f64: put(a.f); break;
        case dtype::f16: put(tile::half::from_float(static_cast<float>(a.f))); break;
        case dtype::bf16: put(tile::bfloat16::from_float(static_cast<float>(a.f))); break;
        default: throw bad();
      }
      break;
  }
  return slot;
}

}  // namespace

std::array<std::int64_t, 4> cuda_driver::tensor_map_inputs(const tensor_map_spec& t, std::span<const kernel_arg> args,
                                                           std::string_view kernel, const src_loc& where) const {
  if (!api_->cuTensorMapEncodeTiled)
    throw tile::error("this kernel copies with the TMA, and this driver (" + std::to_string(api_->driver_version) +
                          ") has no cuTensorMapEncodeTiled (CUDA 12.0 or newer is needed)",
                      where, std::string(kernel));
  auto arg = [&](int k) -> std::int64_t {
    if (k < 0 || static_cast<std::size_t>(k) >= args.size())
      throw tile::error("internal error: a tensor map names argument " + std::to_string(k) + " of a launch with " +
                            std::to_string(args.size()),
                        where, std::string(kernel));
    const kernel_arg& a = args[static_cast<std::size_t>(k)];
    return a.k == kernel_arg::kind::pointer ? static_cast<std::int64_t>(a.addr) : a.i;
  };
  auto value = [&](const tensor_map_spec::source& s) -> std::int64_t {
    if (s.arg < 0) return s.value;
    if (s.times.empty() && s.scale == 1) return arg(s.arg);
    // the product as the kernel's integers compute it (wrapping)
    auto p = static_cast<std::uint64_t>(arg(s.arg)) * static_cast<std::uint64_t>(s.scale);
    for (int k : s.times) p *= static_cast<std::uint64_t>(arg(k));
    return s.bits == 32 ? static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(p)))
                        : static_cast<std::int64_t>(p);
  };
  if (t.base.arg < 0 || static_cast<std::size_t>(t.base.arg) >= args.size() ||
      args[static_cast<std::size_t>(t.base.arg)].k != kernel_arg::kind::pointer)
    throw tile::error("internal error: a tensor map's base is not a pointer argument", where, std::string(kernel));
  const std::int64_t rows = value(t.rows), cols = value(t.cols), stride = value(t.row_stride);
  const std::uint64_t es = size_of(t.elem);
  if (rows <= 0 || cols <= 0)
    throw tile::error("a tensor descriptor copied by the TMA has the shape [" + std::to_string(rows) + ", " +
                          std::to_string(cols) + "]: its extents must be positive",
                      where, std::string(kernel));
  if (stride <= 0 || (static_cast<std::uint64_t>(stride) * es) % 16 != 0 || static_cast<std::uint64_t>(stride) * es >= (1ull << 40))
    throw tile::error("a tensor descriptor copied by the TMA has the row stride " + std::to_string(stride) +
                          ": it must be positive, a multiple of 16 bytes and below 2^40 bytes",
                      where, std::string(kernel));
  return {value(t.base), rows, cols, stride};
}

void cuda_driver::encode_tensor_map(cu::CUtensorMap& map, const tensor_map_spec& t, const std::array<std::int64_t, 4>& in,
                                    std::string_view kernel, const src_loc& where) const {
  const auto [base, rows, cols, stride] = in;
  const std::uint64_t es = size_of(t.elem);
  const cu::cuuint64_t dims[2] = {static_cast<cu::cuuint64_t>(cols), static_cast<cu::cuuint64_t>(rows)};
  const cu::cuuint64_t strides[1] = {static_cast<cu::cuuint64_t>(stride) * es};
  const cu::cuuint32_t box[2] = {t.box_cols, t.box_rows};
  const cu::cuuint32_t unit[2] = {1, 1};
  const cu::CUtensorMapSwizzle sw = t.swizzle_bytes == 128  ? cu::CU_TENSOR_MAP_SWIZZLE_128B
                                    : t.swizzle_bytes == 64 ? cu::CU_TENSOR_MAP_SWIZZLE_64B
                                                            : cu::CU_TENSOR_MAP_SWIZZLE_32B;
  const cu::CUresult r = api_->cuTensorMapEncodeTiled(
      &map, t.elem == dtype::bf16 ? cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
      reinterpret_cast<void*>(static_cast<std::uintptr_t>(base)), dims, strides, box, unit,
      cu::CU_TENSOR_MAP_INTERLEAVE_NONE, sw, cu::CU_TENSOR_MAP_L2_PROMOTION_L2_256B, cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != cu::CUDA_SUCCESS)
    throw cuda_error(*api_, r, "cuTensorMapEncodeTiled", std::string(kernel),
                     "tensor [" + std::to_string(rows) + ", " + std::to_string(cols) + "], row stride " + std::to_string(stride) +
                         ", box [" + std::to_string(t.box_rows) + ", " + std::to_string(t.box_cols) + "]",
                     where);
}

const cuda_module& cuda_driver::launchable(const module& m, const launch_config& cfg, std::string_view& kernel) const {
  if (m.made_by != module::backend::cuda)
    throw tile::error("the CUDA driver was given a module compiled for another backend", cfg.where, std::string(cfg.kernel));
  const auto* mod = static_cast<const cuda_module*>(&m);
  kernel = cfg.kernel.empty() ? std::string_view(mod->kernel) : cfg.kernel;
  if (!mod->ctx || mod->ctx->handle() != ctx_->handle())
    throw tile::error("the module was loaded for another CUDA device than " + info_.name + " (device " +
                          std::to_string(info_.index) + ")",
                      cfg.where, std::string(kernel));
  for (int d = 0; d < 3; ++d)
    if (info_.max_grid[d] != 0 && cfg.grid[d] > info_.max_grid[d])
      throw tile::error("grid (" + std::to_string(cfg.grid[0]) + ", " + std::to_string(cfg.grid[1]) + ", " +
                            std::to_string(cfg.grid[2]) + ") is larger than " + info_.arch() + " allows (" +
                            std::to_string(info_.max_grid[0]) + ", " + std::to_string(info_.max_grid[1]) + ", " +
                            std::to_string(info_.max_grid[2]) + ")",
                        cfg.where, std::string(kernel));
  return *mod;
}

bool cuda_driver::pack(const module& m, const launch_config& cfg, std::span<const kernel_arg> args,
                       packed_args& out) const {
  if (m.made_by != module::backend::cuda || args.size() > packed_args::capacity) return false;
  const auto& mod = static_cast<const cuda_module&>(m);
  if (!mod.tensor_maps.empty()) return false;
  const std::string_view kernel = cfg.kernel.empty() ? std::string_view(mod.kernel) : cfg.kernel;
  for (std::size_t i = 0; i < args.size(); ++i) out.slots[i] = pack_arg(args[i], i, kernel, cfg.where);
  out.n = args.size();
  return true;
}

void cuda_driver::launch_packed(const module& m, const launch_config& cfg, const packed_args& args) {
  std::string_view kernel;
  const cuda_module& mod = launchable(m, cfg, kernel);
  if (cfg.grid[0] == 0 || cfg.grid[1] == 0 || cfg.grid[2] == 0) return;
  std::array<void*, packed_args::capacity> params;
  for (std::size_t i = 0; i < args.n; ++i) params[i] = const_cast<std::uint64_t*>(&args.slots[i]);
  issue(mod, cfg, kernel, args.n == 0 ? nullptr : params.data(), args.n);
}

void cuda_driver::launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) {
  std::string_view kernel;
  const cuda_module* mod = &launchable(m, cfg, kernel);
  if (cfg.grid[0] == 0 || cfg.grid[1] == 0 || cfg.grid[2] == 0) return;

  constexpr std::size_t kInline = 32;
  std::array<std::uint64_t, kInline> inline_slots;
  std::array<void*, kInline> inline_params;
  std::vector<std::uint64_t> heap_slots;
  std::vector<void*> heap_params;
  std::uint64_t* slots = inline_slots.data();
  void** params = inline_params.data();
  if (args.size() > kInline) {
    heap_slots.resize(args.size());
    heap_params.resize(args.size());
    slots = heap_slots.data();
    params = heap_params.data();
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    slots[i] = pack_arg(args[i], i, kernel, cfg.where);
    params[i] = &slots[i];
  }
  // the TMA's tensor maps, after the arguments (__grid_constant__ parameters of 128 bytes),
  // encoded again only where the values they come from changed since the module's last launch
  std::array<cu::CUtensorMap, kMaxTensorMaps> maps;
  std::array<void*, kInline + kMaxTensorMaps> inline_all;
  std::vector<void*> heap_all;
  const std::size_t nmaps = mod->tensor_maps.size();
  if (nmaps > 0) {
    if (nmaps > kMaxTensorMaps)
      throw tile::error("internal error: " + std::to_string(nmaps) + " tensor maps, more than a launch passes (" +
                            std::to_string(kMaxTensorMaps) + ")",
                        cfg.where, std::string(kernel));
    std::array<std::int64_t, 4 * kMaxTensorMaps> in{};
    for (std::size_t k = 0; k < nmaps; ++k) {
      const auto v = tensor_map_inputs(mod->tensor_maps[k], args, kernel, cfg.where);
      std::copy(v.begin(), v.end(), in.begin() + static_cast<std::ptrdiff_t>(4 * k));
    }
    // another thread launching this module meanwhile: encode here rather than wait
    std::unique_lock memo(mod->memo.mu, std::try_to_lock);
    if (memo.owns_lock() && mod->memo.valid && mod->memo.inputs == in) {
      std::copy_n(mod->memo.maps.begin(), nmaps, maps.begin());
    } else {
      for (std::size_t k = 0; k < nmaps; ++k) {
        std::array<std::int64_t, 4> v;
        std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(4 * k), 4, v.begin());
        encode_tensor_map(maps[k], mod->tensor_maps[k], v, kernel, cfg.where);
      }
      if (memo.owns_lock()) {
        mod->memo.inputs = in;
        std::copy_n(maps.begin(), nmaps, mod->memo.maps.begin());
        mod->memo.valid = true;
      }
    }
    if (memo.owns_lock()) memo.unlock();
    void** all = inline_all.data();
    if (args.size() > kInline) heap_all.resize(args.size() + nmaps), all = heap_all.data();
    std::copy_n(params, args.size(), all);
    for (std::size_t k = 0; k < nmaps; ++k) all[args.size() + k] = &maps[k];
    params = all;
  }

  issue(*mod, cfg, kernel, args.empty() && nmaps == 0 ? nullptr : params, args.size());
}

void cuda_driver::issue(const cuda_module& mod, const launch_config& cfg, std::string_view kernel, void** params,
                        std::size_t nargs) {
  make_current();
  const unsigned block = static_cast<unsigned>(info_.warp_size > 0 ? info_.warp_size : 32) * static_cast<unsigned>(mod.num_warps);
  const cu::CUresult r = api_->cuLaunchKernel(mod.fn, cfg.grid[0], cfg.grid[1], cfg.grid[2], block, 1, 1,
                                              mod.shared_bytes, stream_.load(), params, nullptr);
  if (r != cu::CUDA_SUCCESS) {
    std::string detail = "grid (" + std::to_string(cfg.grid[0]) + ", " + std::to_string(cfg.grid[1]) + ", " +
                         std::to_string(cfg.grid[2]) + "), " + std::to_string(block) + " threads per block, " +
                         std::to_string(mod.shared_bytes) + " bytes of dynamic shared memory, " +
                         plural(static_cast<long long>(nargs), "argument");
    throw cuda_error(*api_, r, "cuLaunchKernel", std::string(kernel), detail, cfg.where);
  }
  last_kernel_.store(mod.interned_kernel, std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------
// Events.

cuda_event::cuda_event(const cuda_driver& d, bool timing) : drv_(&d), ctx_(d.context()) {
  ctx_->make_current();
  cuda_check(ctx_->api(), ctx_->api().cuEventCreate(&ev_, timing ? cu::CU_EVENT_DEFAULT : cu::CU_EVENT_DISABLE_TIMING),
             "cuEventCreate");
}

cuda_event::~cuda_event() {
  if (ev_ && ctx_->api().cuCtxSetCurrent(ctx_->handle()) == cu::CUDA_SUCCESS) ctx_->api().cuEventDestroy_v2(ev_);
}

void cuda_event::record() { record(drv_->stream()); }

void cuda_event::record(void* cu_stream) {
  ctx_->make_current();
  cuda_check(ctx_->api(), ctx_->api().cuEventRecord(ev_, static_cast<cu::CUstream>(cu_stream)), "cuEventRecord");
}

void cuda_event::synchronize() const {
  ctx_->make_current();
  cuda_check(ctx_->api(), ctx_->api().cuEventSynchronize(ev_), "cuEventSynchronize");
}

bool cuda_event::done() const {
  const cu::CUresult r = ctx_->api().cuEventQuery(ev_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  cuda_check(ctx_->api(), r, "cuEventQuery");
  return true;
}

float cuda_event::elapsed_ms(const cuda_event& start, const cuda_event& end) {
  end.synchronize();
  float ms = 0;
  cuda_check(end.ctx_->api(), end.ctx_->api().cuEventElapsedTime_v2(&ms, start.ev_, end.ev_), "cuEventElapsedTime");
  return ms;
}

// ---------------------------------------------------------------------------------------------

std::unique_ptr<driver> make_cuda_driver(int index, std::string& why_not) {
  const cuda_api* api = cuda_api::get(why_not);
  if (!api) return nullptr;
  try {
    return std::make_unique<cuda_driver>(*api, index);
  } catch (const tile::error& e) {
    why_not = e.message();
    return nullptr;
  }
}

}  // namespace tile::drivers

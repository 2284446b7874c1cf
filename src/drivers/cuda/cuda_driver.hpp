// src/drivers/cuda/cuda_driver.hpp — layer: drivers (cuda). An NVIDIA GPU as a tile device,
// through the CUDA driver API loaded at run time (cuda_api.hpp: no SDK to build, no libcuda to
// link).
//
// One cuda_driver drives one device through the device's primary context (the one the CUDA
// runtime, PyTorch and CuPy share), made current on the calling thread before every call, so
// any thread may use the driver. Work goes to the driver's current stream: the default (null)
// stream unless set_stream() hands it one the driver created or an external CUstream (PyTorch's
// current stream, say). Device pointers from elsewhere need nothing: a kernel_arg's addr is a
// raw device address.
//   alloc     cuMemAlloc_v2, zeroed on the current stream (like the other backends' memory)
//   copies    asynchronous on the current stream, then cuStreamSynchronize: on return the host
//             buffer may be reused (copy_to_device) or read (copy_to_host); on a stream under
//             capture the copy is recorded into the graph without waiting: the graph reads and
//             writes the host memory when it runs, so that memory must outlive the graph
//   fill      cuMemsetD8Async on the current stream (ordered before later work on it)
//   launch    cuLaunchKernel on the current stream, block = 32 * num_warps threads
//   synchronize  cuCtxSynchronize: every stream of the context (an error naming the capture
//             while the current stream is captured: waiting there would invalidate the capture)
// Stream capture (CUDA graphs): launches and copies on a captured stream are recorded into the
// caller's graph. The driver calls a capture in global mode forbids (cuMemAlloc, cuMemFree,
// module loads) run with this thread's capture mode relaxed, so a first launch that compiles
// and loads its kernel, or a buffer allocated meanwhile, leaves the capture intact.
// A cuda_module (PTX text or a cubin, loaded with cuModuleLoadDataEx) holds the function and
// the launch needs it was compiled for. A JIT failure is a tile::error naming the kernel and
// quoting the JIT's error log. A kernel that faults leaves the context unusable ("sticky"
// errors): later calls report it, naming the last kernel launched.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_api.hpp"
#include "drivers/driver.hpp"

namespace tile::drivers {

/// What a device offers (cuDeviceGetAttribute and friends); no context is needed to ask.
struct cuda_device_info {
  int index = 0;
  std::string name;                      // "NVIDIA H100 80GB HBM3"
  int sm_count = 0;                      // multiprocessors
  int cc_major = 0, cc_minor = 0;        // compute capability: 9, 0 on an H100
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_shared_per_block = 0;          // bytes, without opting in (48 KiB)
  int max_shared_per_block_optin = 0;    // bytes, with CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int max_shared_per_sm = 0;             // bytes
  int max_registers_per_block = 0;
  // what one SM holds at once (blocks_per_sm, src/jit/occupancy.hpp)
  int max_threads_per_sm = 0;
  int max_registers_per_sm = 0;
  int max_blocks_per_sm = 0;
  int reserved_shared_per_block = 0;     // bytes the system takes from each block's shared memory
  int l2_bytes = 0;
  int clock_rate_khz = 0;                // SM clock (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  int memory_clock_rate_khz = 0;         // memory clock
  int memory_bus_width = 0;              // bits
  std::size_t total_memory = 0;          // bytes
  std::uint32_t max_grid[3] = {0, 0, 0};
  int driver_version = 0;                // cuDriverGetVersion: 13000 for CUDA 13.0

  int compute_capability() const { return cc_major * 10 + cc_minor; }  // 90
  std::string arch() const;      // "sm_90"
  std::string describe() const;  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)"
};

/// CUDA devices present: 0 when there is no driver.
int cuda_device_count();
/// The device's properties. Throws tile::error without a driver or for an index out of range.
cuda_device_info query_device(int index);
cuda_device_info query_device(const cuda_api& api, int index);

/// A device's primary context, retained while one holder (driver, module, event) lives.
class cuda_context {
 public:
  cuda_context(const cuda_api& api, int index);  // cuDeviceGet + cuDevicePrimaryCtxRetain; throws
  ~cuda_context();                               // cuDevicePrimaryCtxRelease_v2
  cuda_context(const cuda_context&) = delete;
  cuda_context& operator=(const cuda_context&) = delete;

  /// cuCtxSetCurrent on the calling thread, unless it is current there already. Throws tile::error.
  void make_current() const;
  const cuda_api& api() const { return *api_; }
  cu::CUcontext handle() const { return ctx_; }
  cu::CUdevice device() const { return dev_; }

 private:
  const cuda_api* api_;
  cu::CUdevice dev_ = 0;
  cu::CUcontext ctx_ = nullptr;
};

/// The most hidden tensor-map parameters a kernel has (the compiler copies no more loads with the
/// TMA; a launch passes them from its stack).
inline constexpr std::size_t kMaxTensorMaps = 8;

/// A hidden CUtensorMap parameter of a kernel (after its runtime arguments, in order) that each
/// launch encodes from the launch's arguments: a 2-D row-major tensor of `elem` at `base`,
/// `rows` x `cols` elements, `row_stride` elements from one row to the next, copied by the TMA
/// in boxes of box_rows x box_cols elements swizzled over `swizzle_bytes` (32, 64 or 128: the
/// box's row). Zeros are read outside the tensor.
struct tensor_map_spec {
  struct source {
    int arg = -1;             // a runtime argument's index, or
    std::int64_t value = 0;   // (arg < 0) a constant
    /// (arg >= 0) the further runtime arguments and the constant it is multiplied by, in `bits`-bit
    /// two's complement, as the kernel computes it (a descriptor over Z * H * N_CTX rows)
    std::vector<int> times;
    std::int64_t scale = 1;
    int bits = 64;
    bool operator==(const source&) const = default;
  };
  dtype elem = dtype::f16;
  source base, rows, cols, row_stride;
  std::uint32_t box_rows = 0, box_cols = 0, swizzle_bytes = 128;
  bool operator==(const tensor_map_spec&) const = default;
};

/// What to load: the code, its entry point and the launch needs it was compiled for.
struct cuda_module_source {
  enum class format : std::uint8_t { ptx, cubin };
  format fmt = format::ptx;
  std::string image;                // PTX text, or a cubin's bytes
  std::string entry;                // the .entry symbol
  std::string kernel;               // the user's kernel name, for messages (entry when empty)
  int num_warps = 4;                // a block is 32 * num_warps threads
  std::uint32_t shared_bytes = 0;   // dynamic shared memory per block
  std::vector<tensor_map_spec> tensor_maps;  // the kernel's hidden parameters, after the arguments
  /// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, in percent (0 … 100) of the SM's L1 +
  /// shared memory to make shared; -1: the driver's choice (which, for a kernel with little
  /// shared memory, keeps L1 at its largest). Only a preference: the driver still gives a
  /// kernel the shared memory it needs.
  int smem_carveout = -1;
};

/// A kernel loaded on one device's context; unloaded when the last reference goes.
struct cuda_module final : module {
  cuda_module() : module(backend::cuda) {}
  cuda_module(const cuda_module&) = delete;
  cuda_module& operator=(const cuda_module&) = delete;
  ~cuda_module() override;

  std::string kernel;               // the user's kernel name
  std::string entry;                // the function's symbol
  cu::CUmodule handle = nullptr;
  cu::CUfunction fn = nullptr;
  int num_warps = 4;
  std::uint32_t shared_bytes = 0;   // dynamic shared memory per launch
  std::vector<tensor_map_spec> tensor_maps;  // encoded where a launch's values change (tma_memo)
  /// The tensor maps encoded last, with the values they were encoded from: a launch whose
  /// values are the same (a loop launching one kernel on the same buffers) copies them instead
  /// of calling cuTensorMapEncodeTiled again. Guarded by its mutex (TMA kernels only).
  struct tma_memo {
    std::mutex mu;
    bool valid = false;
    std::array<std::int64_t, 4 * kMaxTensorMaps> inputs{};  // base, rows, cols, row stride of each
    std::array<cu::CUtensorMap, kMaxTensorMaps> maps{};
  };
  mutable tma_memo memo;
  const char* interned_kernel = "";  // `kernel`, kept for the whole process (the last launch's name)
  // What the compiled function uses (cuFuncGetAttribute).
  int num_regs = 0;
  int static_shared_bytes = 0;
  int local_bytes = 0;              // spills and local arrays, per thread
  int max_threads_per_block = 0;    // what its register use allows
  int smem_carveout = -1;           // the preferred carveout as the driver reports it (-1: none was set)
  std::string variant;              // which lowering compile_cuda kept: "" the default, "lean" (fewer registers)
  std::string info_log;             // the JIT's info log (registers, spills); empty for a cubin or a JIT-cache hit
  float jit_ms = 0;                 // the JIT's own wall time (CU_JIT_WALL_TIME)
  std::shared_ptr<const cuda_context> ctx;
};

class cuda_driver final : public driver {
 public:
  /// Opens device `index` through `api` (which must outlive the driver). Throws tile::error.
  cuda_driver(const cuda_api& api, int index);
  ~cuda_driver() override;

  std::string name() const override { return "cuda"; }
  std::uint64_t alloc(std::size_t bytes) override;
  void free(std::uint64_t addr) noexcept override;
  void copy_to_device(std::uint64_t dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, std::uint64_t src, std::size_t bytes) override;
  void fill(std::uint64_t dst, unsigned char value, std::size_t bytes) override;
  void synchronize() override;
  /// Packs `args` (pointers as CUdeviceptr, integers at their dtype's width, f32 as float, f64 as
  /// double, f16/bf16 as their 16 bits) and launches `m` (a cuda_module of this device) on the
  /// current stream. An empty grid launches nothing.
  void launch(const module& m, const launch_config& cfg, std::span<const kernel_arg> args) override;
  /// The arguments' slots, for modules without tensor maps (theirs are encoded at each launch).
  bool pack(const module& m, const launch_config& cfg, std::span<const kernel_arg> args,
            packed_args& out) const override;
  void launch_packed(const module& m, const launch_config& cfg, const packed_args& args) override;
  /// The values `t` is encoded from at a launch with `args`: its base address, rows, columns
  /// and row stride (elements); a tile::error naming the kernel and the launch's file:line when
  /// they do not suit the TMA.
  std::array<std::int64_t, 4> tensor_map_inputs(const tensor_map_spec& t, std::span<const kernel_arg> args,
                                                std::string_view kernel, const src_loc& where) const;
  /// Encodes `t` from those values into `map` (cuTensorMapEncodeTiled).
  void encode_tensor_map(cu::CUtensorMap& map, const tensor_map_spec& t, const std::array<std::int64_t, 4>& in,
                         std::string_view kernel, const src_loc& where) const;

  /// Device-to-device copy, ordered on the current stream.
  void copy_on_device(std::uint64_t dst, std::uint64_t src, std::size_t bytes);
  /// Loads PTX (JIT-compiled by the driver for this device) or a cubin. Throws tile::error naming
  /// the kernel, with the JIT's error log, when the code does not load.
  std::unique_ptr<cuda_module> load_module(const cuda_module_source& src);
  /// Compiles PTX to a cubin for this device with the driver's JIT linker (cuLink*), so it can
  /// be cached: a later process loads the cubin without JIT. Throws tile::error naming `kernel`
  /// with the JIT's error log. `jit_ms`: the JIT's wall time.
  std::string ptx_to_cubin(const std::string& ptx, const std::string& kernel, float* jit_ms = nullptr);

  /// The stream work goes to (a CUstream; null: the default stream).
  void* stream() const { return stream_.load(); }
  /// Sends later work to `cu_stream`: one from create_stream or an external CUstream of this
  /// device's primary context (the caller keeps it alive); null for the default stream.
  void set_stream(void* cu_stream) { stream_.store(static_cast<cu::CUstream>(cu_stream)); }
  void set_native_stream(void* native) override { set_stream(native); }
  void* native_stream() const override { return stream(); }
  /// cuStreamIsCapturing on the current stream (true too where the legacy default stream is
  /// used while another stream captures in global mode: using it is an error there).
  bool capturing() const override;
  /// Asks the driver (cuPointerGetAttribute) what `addr` is: device memory of this device,
  /// covering `bytes`, or an error naming what it is instead.
  void check_foreign(std::uint64_t addr, std::size_t bytes) const override;
  void* create_stream(bool non_blocking = false);
  /// Destroys a stream from create_stream (the current stream becomes the default one if it was).
  void destroy_stream(void* cu_stream);
  /// Waits for the current stream only.
  void synchronize_stream();

  const cuda_device_info& info() const { return info_; }
  const cuda_api& api() const { return *api_; }
  const std::shared_ptr<const cuda_context>& context() const { return ctx_; }
  void make_current() const { ctx_->make_current(); }

 private:
  /// The checks every launch makes: the module is a cuda_module of this device, the grid fits.
  const cuda_module& launchable(const module& m, const launch_config& cfg, std::string_view& kernel) const;
  /// cuLaunchKernel of `mod` with `params` (null for none; nargs arguments, for messages) on the
  /// current stream.
  void issue(const cuda_module& mod, const launch_config& cfg, std::string_view kernel, void** params,
             std::size_t nargs);

 public:

 private:
  /// Throws the error for a failed call; a sticky error names the last kernel launched.
  void check(cu::CUresult r, std::string_view call) const;
  /// Whether `s` is being captured (the context already current: the copies ask after their call).
  bool capturing(cu::CUstream s) const;

  const cuda_api* api_;
  cuda_device_info info_;
  std::shared_ptr<const cuda_context> ctx_;
  std::atomic<cu::CUstream> stream_{nullptr};
  // the last kernel launched, for reports of faults found later (cuda_module::interned_kernel:
  // the launch stores a pointer, it copies no string and takes no lock)
  std::atomic<const char*> last_kernel_{""};
};

/// A CUDA event on a driver's context (it keeps the context alive; record() uses the driver,
/// which must outlive that call).
class cuda_event {
 public:
  explicit cuda_event(const cuda_driver& d, bool timing = true);
  ~cuda_event();
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;

  void record();                    // on the driver's current stream
  void record(void* cu_stream);
  void synchronize() const;         // waits until the work recorded before it is done
  bool done() const;                // whether the work recorded before it is done (no wait)
  cu::CUevent handle() const { return ev_; }
  /// Milliseconds between two recorded events; waits for `end`.
  static float elapsed_ms(const cuda_event& start, const cuda_event& end);

 private:
  const cuda_driver* drv_;
  std::shared_ptr<const cuda_context> ctx_;
  cu::CUevent ev_ = nullptr;
};

/// A stopwatch on the GPU's clock around work sent to the driver's current stream:
///   cuda_timing t(drv); t.start(); …launches…; t.stop(); float ms = t.elapsed_ms();
class cuda_timing {
 public:
  explicit cuda_timing(const cuda_driver& d) : start_(d), stop_(d) {}
  void start() { start_.record(); }
  void stop() { stop_.record(); }
  float elapsed_ms() const { return cuda_event::elapsed_ms(start_, stop_); }

 private:
  cuda_event start_, stop_;
};

/// The driver for CUDA device `index`, or null with the reason ("libcuda.so.1 not found (no
/// NVIDIA driver): …", "CUDA device 3 does not exist …") when there is none.
std::unique_ptr<driver> make_cuda_driver(int index, std::string& why_not);

}  // namespace tile::drivers

// src/drivers/cuda/cupti.hpp — layer: drivers (cuda). A CUPTI activity tracer: the device-side
// start and end of every kernel, each matched to the id tile pushed around its launch, for the
// profiler (src/runtime/prof). libcupti is opened at run time with dlopen, like libcuda
// (cuda_api.hpp): tile needs no CUPTI to build, link or start, and profiles without device
// timestamps where there is none.
//
// How it works. CUPTI writes activity records into buffers the tracer hands it (8 MiB each,
// bufferRequested), and hands them back full, from a thread of its own, or from the thread
// that calls cuptiActivityFlushAll (bufferCompleted). Three kinds are enabled:
//  - CONCURRENT_KERNEL (KERNEL where that is refused): one record per kernel execution, with
//    its start/end in ns and the correlation id of the driver call (cuLaunchKernel) that
//    launched it;
//  - EXTERNAL_CORRELATION: while an id is pushed (cuptiActivityPushExternalCorrelationId, per
//    host thread), each driver call is preceded by a record pairing that call's correlation id
//    with the pushed id;
//  - DRIVER: its records are skipped, but CUPTI writes no external-correlation record unless the
//    driver API's own records are on.
// A completed buffer is parsed at once (kernel and external-correlation records kept, the rest
// skipped) and freed. flush() asks CUPTI for every buffer (forced flush), then joins the two
// kinds by correlation id. The records of a launch can arrive in either order and in different
// buffers, so what does not match yet is kept: a kernel record for one more flush (then
// returned with external id 0: launched outside any push), an external-correlation record until
// its kernel comes, however many flushes that takes (a long kernel, flushes without a
// synchronize). A driver call inside the pushed region that launched nothing (a memcpy, a
// context switch) leaves one behind that nothing will match: the oldest (lowest correlation id)
// go once more than kMaxPendingExternal wait.
//
// Record layout. CUPTI writes the newest kernel record version it knows (the library decides,
// not the header a program was built with): CUpti_ActivityKernel10 for CUDA 13, Kernel9 for
// CUDA 12, older ones before. Every version since CUpti_ActivityKernel3 (CUDA 6.5) starts with
// the same 112 bytes (kind … name, below as kernel_record_head); later versions only append.
// The tracer reads that head only, and refuses a library whose cuptiGetVersion lies outside
// [kMinCuptiVersion, kMaxCuptiVersion] — CUDA 11.0 to 13.x — rather than guess at a layout of a
// future major version. test/drivers/cupti_abi_check.cpp checks every offset against the
// Kernel4…Kernel10 structs of the installed cupti_activity.h. Run on an H100 (driver 580.159,
// libcupti of CUDA 13.0, API version 130001): records read, ids matched, ~5 µs of host time
// added per traced launch (driver records and push/pop included).
//
// Everything goes through a table of function pointers (cupti_api), so tests can hand the
// tracer fakes that write records into its buffers (test/drivers/test_cupti.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/cuda/cuda_api.hpp"

namespace tile::drivers {

namespace cupti_abi {
// CUptiResult (cupti_result.h): an int-sized enum; the codes tile names.
using CUptiResult = int;
inline constexpr CUptiResult CUPTI_SUCCESS = 0;
inline constexpr CUptiResult CUPTI_ERROR_INVALID_PARAMETER = 1;
inline constexpr CUptiResult CUPTI_ERROR_INVALID_OPERATION = 7;
inline constexpr CUptiResult CUPTI_ERROR_OUT_OF_MEMORY = 8;
inline constexpr CUptiResult CUPTI_ERROR_MAX_LIMIT_REACHED = 12;  // cuptiActivityGetNextRecord: no more records
inline constexpr CUptiResult CUPTI_ERROR_NOT_COMPATIBLE = 14;
inline constexpr CUptiResult CUPTI_ERROR_NOT_INITIALIZED = 15;
inline constexpr CUptiResult CUPTI_ERROR_QUEUE_EMPTY = 18;  // a pop without a push
inline constexpr CUptiResult CUPTI_ERROR_INVALID_KIND = 21;  // an incomplete or unknown record
inline constexpr CUptiResult CUPTI_ERROR_NOT_SUPPORTED = 27;
inline constexpr CUptiResult CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED = 33;
inline constexpr CUptiResult CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35;
inline constexpr CUptiResult CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39;
inline constexpr CUptiResult CUPTI_ERROR_UNKNOWN = 999;

// CUpti_ActivityKind (cupti_activity.h): the kinds tile enables or reads.
enum CUpti_ActivityKind : int {
  CUPTI_ACTIVITY_KIND_INVALID = 0,
  CUPTI_ACTIVITY_KIND_KERNEL = 3,  // serializes kernels: the fallback only
  CUPTI_ACTIVITY_KIND_DRIVER = 4,
  CUPTI_ACTIVITY_KIND_RUNTIME = 5,
  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION = 39,
};

// CUpti_ExternalCorrelationKind: CUSTOM0..2 are free for tools; tile pushes CUSTOM0.
enum CUpti_ExternalCorrelationKind : int {
  CUPTI_EXTERNAL_CORRELATION_KIND_INVALID = 0,
  CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN = 1,
  CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC = 2,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 = 3,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 = 4,
  CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 = 5,
};

// CUpti_ActivityFlag: cuptiActivityFlushAll's flag that also returns buffers not yet full.
inline constexpr std::uint32_t CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1u << 0;

// Every record is 8-byte aligned and starts with its kind (cupti_common.h: PACKED_ALIGNMENT,
// ACTIVITY_RECORD_ALIGNMENT 8; the fields are laid out naturally aligned, so the packed structs
// of the header and these plain ones agree).
struct alignas(8) CUpti_Activity {
  CUpti_ActivityKind kind;
};

/// The first 112 bytes of every kernel record CUPTI has written since CUpti_ActivityKernel3
/// (CUDA 6.5) up to CUpti_ActivityKernel10 (CUDA 13): the fields up to `name`, with the header's
/// names. The tracer reads kind, start, end, deviceId, streamId, correlationId and name.
struct alignas(8) kernel_record_head {
  CUpti_ActivityKind kind;  // CONCURRENT_KERNEL or KERNEL
  std::uint8_t cacheConfig;  // a union of two 4-bit fields in the header
  std::uint8_t sharedMemoryConfig;
  std::uint16_t registersPerThread;
  int partitionedGlobalCacheRequested;  // CUpti_ActivityPartitionedGlobalCacheConfig
  int partitionedGlobalCacheExecuted;
  std::uint64_t start;  // ns; 0 and 0: no timestamps could be collected
  std::uint64_t end;
  std::uint64_t completed;
  std::uint32_t deviceId;
  std::uint32_t contextId;
  std::uint32_t streamId;
  std::int32_t gridX, gridY, gridZ;
  std::int32_t blockX, blockY, blockZ;
  std::int32_t staticSharedMemory;
  std::int32_t dynamicSharedMemory;
  std::uint32_t localMemoryPerThread;
  std::uint32_t localMemoryTotal;
  std::uint32_t correlationId;  // the launching driver call's
  std::int64_t gridId;
  const char* name;  // the (mangled) kernel name, owned by CUPTI
};
static_assert(sizeof(kernel_record_head) == 112 && offsetof(kernel_record_head, start) == 16 &&
              offsetof(kernel_record_head, correlationId) == 92 && offsetof(kernel_record_head, name) == 104);

/// sizeof(CUpti_ActivityKernel10), the record CUDA 13's CUPTI writes (for fakes that write one).
inline constexpr std::size_t kKernel10Size = 216;

// CUpti_ActivityExternalCorrelation (unchanged since CUDA 8).
struct alignas(8) CUpti_ActivityExternalCorrelation {
  CUpti_ActivityKind kind;  // EXTERNAL_CORRELATION
  CUpti_ExternalCorrelationKind externalKind;
  std::uint64_t externalId;    // the pushed id
  std::uint32_t correlationId;  // the driver call's
  std::uint32_t reserved;
};
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24);

// The buffer callbacks (CUPTIAPI is empty on Linux).
using CUpti_BuffersCallbackRequestFunc = void (*)(std::uint8_t** buffer, std::size_t* size,
                                                  std::size_t* max_num_records);
using CUpti_BuffersCallbackCompleteFunc = void (*)(cu::CUcontext context, std::uint32_t stream_id,
                                                   std::uint8_t* buffer, std::size_t size,
                                                   std::size_t valid_size);

/// The cuptiGetVersion values whose kernel records tile reads: 13 (CUDA 11.0) … 28 (12.9 Update
/// 1), then, from CUDA 13 on, xxyyzz (130000: 13.0, 130001: 13.0 Update 1, …) up to 13.x.
inline constexpr std::uint32_t kMinCuptiVersion = 13;
inline constexpr std::uint32_t kMaxCuptiVersion = 139999;
}  // namespace cupti_abi

// X(member = exported symbol, parameter list). Every function returns CUptiResult.
#define TILE_CUPTI_API_FUNCTIONS(X)                                                                          \
  X(cuptiGetVersion, (std::uint32_t * version))                                                              \
  X(cuptiGetResultString, (cupti_abi::CUptiResult result, const char** str))                                 \
  X(cuptiGetTimestamp, (std::uint64_t * timestamp))                                                          \
  X(cuptiActivityEnable, (cupti_abi::CUpti_ActivityKind kind))                                               \
  X(cuptiActivityDisable, (cupti_abi::CUpti_ActivityKind kind))                                              \
  X(cuptiActivityRegisterCallbacks, (cupti_abi::CUpti_BuffersCallbackRequestFunc requested,                  \
                                     cupti_abi::CUpti_BuffersCallbackCompleteFunc completed))                \
  X(cuptiActivityGetNextRecord, (std::uint8_t * buffer, std::size_t valid_bytes,                             \
                                 cupti_abi::CUpti_Activity * *record))                                       \
  X(cuptiActivityGetNumDroppedRecords, (cu::CUcontext context, std::uint32_t stream_id, std::size_t * dropped)) \
  X(cuptiActivityFlushAll, (std::uint32_t flag))                                                             \
  X(cuptiActivityPushExternalCorrelationId, (cupti_abi::CUpti_ExternalCorrelationKind kind, std::uint64_t id)) \
  X(cuptiActivityPopExternalCorrelationId, (cupti_abi::CUpti_ExternalCorrelationKind kind, std::uint64_t * last_id))

/// The CUPTI functions the tracer calls. Members are null only in hand-made tables.
struct cupti_api {
#define TILE_CUPTI_API_MEMBER(name, params) cupti_abi::CUptiResult (*name) params = nullptr;
  TILE_CUPTI_API_FUNCTIONS(TILE_CUPTI_API_MEMBER)
#undef TILE_CUPTI_API_MEMBER

  void* library = nullptr;  // the dlopen handle (never closed once a tracer used it)
  std::string path;         // where it was found
  std::uint32_t version = 0;  // cuptiGetVersion

  /// Opens `library` (a path or a soname), resolves every function and checks cuptiGetVersion
  /// against [kMinCuptiVersion, kMaxCuptiVersion]. Null, with the reason, on failure (the
  /// library is closed again); never throws. `noload`: only a copy already in the process
  /// (RTLD_NOLOAD: e.g. the one PyTorch's profiler loaded), never a second one.
  static std::unique_ptr<cupti_api> load(const char* library, std::string& why_not, bool noload = false);

  /// Where libcupti is looked for, in order (the first that loads wins): TILE_CUPTI alone when
  /// set; else a copy already loaded (libcupti.so.13, .12, .so); the dynamic loader's search
  /// (libcupti.so, libcupti.so.13, libcupti.so.12); the CUDA toolkit ($CUDA_HOME, $CUDA_PATH,
  /// /usr/local/cuda, /usr/local/cuda-*: extras/CUPTI/lib64, lib64, lib, targets/*/lib); the
  /// nvidia/cu13/lib and nvidia/cuda_cupti/lib folders of Python's site-/dist-packages
  /// ($VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr, /opt/conda). Paths are globbed and
  /// files found twice (symlinks) tried once. The "noload:" prefix marks the RTLD_NOLOAD tries.
  static std::vector<std::string> candidates();

  /// The first candidate that loads; null, with what was tried, when none does.
  static std::unique_ptr<cupti_api> find(std::string& why_not);
};

/// "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" — the table's cuptiGetResultString, else the name of a
/// code declared above, else "CUptiResult 12345".
std::string describe_cupti_result(const cupti_api& api, cupti_abi::CUptiResult r);

/// Device timestamps of kernels, matched to tile's launches (see the top of this file).
/// Thread-safe: push/pop from any thread (CUPTI keeps one id stack per host thread), flush and
/// disable from any one thread at a time.
class cupti_tracer {
 public:
  struct kernel_record {
    std::uint64_t external_id = 0;  // pushed around the launch; 0: none
    std::uint64_t start_ns = 0, end_ns = 0;  // CUPTI's clock (timestamp(): ns since the Unix epoch); both 0: unknown
    std::uint32_t device_id = 0, stream_id = 0;
    std::uint32_t correlation_id = 0;  // CUPTI's id of the launching driver call
    std::string name;                  // as the module named it (mangled where it is)
  };

  /// External-correlation records kept waiting for their kernel records (~3 MB at most).
  static constexpr std::size_t kMaxPendingExternal = std::size_t{1} << 16;
  /// Size of each buffer handed to CUPTI.
  static constexpr std::size_t kBufferBytes = std::size_t{8} << 20;

  /// The process's tracer (CUPTI is process-global), recording: libcupti found (cupti_api::find)
  /// on the first call, then CONCURRENT_KERNEL (else KERNEL), EXTERNAL_CORRELATION and DRIVER
  /// enabled; a tracer disabled earlier is enabled again. Null, with the reason in *why (may be
  /// null), when there is no usable libcupti or CUPTI refuses (insufficient privileges, another
  /// CUPTI client such as Nsight attached, a driver older than the library, …). Never throws.
  static cupti_tracer* open(std::string* why);

  /// A tracer over `api` (tests: a table of fakes), recording. Only one tracer records at a
  /// time (CUPTI's buffer callbacks are process-wide): null, with the reason, while another
  /// does, or when enabling fails.
  static std::unique_ptr<cupti_tracer> create(const cupti_api& api, std::string* why);

  ~cupti_tracer();  // disables it
  cupti_tracer(const cupti_tracer&) = delete;
  cupti_tracer& operator=(const cupti_tracer&) = delete;

  /// Marks the calling thread's next driver calls with `id` (CUSTOM0), until pop_external_id.
  /// Throws tile::error if CUPTI refuses.
  void push_external_id(std::uint64_t id);
  /// Ends the innermost push_external_id of the calling thread. Never throws (an unbalanced pop
  /// is ignored).
  void pop_external_id() noexcept;

  /// cuptiActivityFlushAll(forced), then the kernel records completed since the last call, each
  /// with the id pushed around its launch (0: none), by start time. Kernels still running are
  /// not complete: synchronize first. A kernel record whose external-correlation record has
  /// not arrived is kept for the next call, which returns it with external id 0 if none came;
  /// `last` (the session's final flush) keeps nothing back. Throws tile::error if the flush
  /// fails.
  std::vector<kernel_record> flush(bool last = false);

  /// Stops recording (the kinds disabled, what CUPTI still holds flushed in); the records so
  /// far stay for flush(). open() enables it again.
  void disable();
  bool enabled() const;

  /// Now, on the clock of start_ns/end_ns (cuptiGetTimestamp); 0 if CUPTI fails.
  std::uint64_t timestamp() const;
  /// Records CUPTI dropped for want of a buffer, since the tracer was made.
  std::size_t dropped_records() const;
  /// The kernel activity kind enabled: CONCURRENT_KERNEL, or KERNEL where that was refused.
  cupti_abi::CUpti_ActivityKind kernel_kind() const { return kernel_kind_; }
  const cupti_api& api() const { return api_; }

 private:
  explicit cupti_tracer(const cupti_api& api);
  bool enable(std::string* why);
  void take_buffer(std::uint8_t* buffer, std::size_t valid_bytes);  // on CUPTI's thread
  friend struct cupti_callbacks;

  struct pending_kernel {
    kernel_record record;
    unsigned flushes = 0;  // flushes it has waited for its external id
  };

  cupti_api api_;
  cupti_abi::CUpti_ActivityKind kernel_kind_ = cupti_abi::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  bool enabled_ = false;  // guarded by the callback mutex (cupti.cpp), not mutex_

  mutable std::mutex mutex_;  // guards what the buffer callback fills
  std::vector<pending_kernel> kernels_;
  std::map<std::uint32_t, std::uint64_t> externals_;  // correlation id -> pushed id, oldest first
  std::size_t dropped_ = 0;
};

}  // namespace tile::drivers

// test/drivers/cupti_abi_check.cpp — built only where CUPTI's headers are installed (never needed
// to build tile): checks, at compile time, that the CUPTI types, constants and prototypes declared
// by hand in src/drivers/cuda/cupti.hpp match cupti.h — same symbols, same parameter count and
// kinds (as cuda_abi_check.cpp does for the driver) — and that the kernel record head the tracer
// reads sits at the same offsets in every kernel record version from CUpti_ActivityKernel4 (CUDA
// 9) to CUpti_ActivityKernel10 (CUDA 13), so a libcupti of any version tile accepts writes
// kind, start, end, deviceId, streamId, correlationId and name where the tracer looks.
#include <cupti.h>

#include <cstddef>
#include <type_traits>

#include "drivers/cuda/cupti.hpp"

template <class A, class B>
constexpr bool same_abi() {
  if constexpr (std::is_void_v<A> || std::is_void_v<B>) return std::is_void_v<A> && std::is_void_v<B>;  // callbacks
  else if (sizeof(A) != sizeof(B)) return false;
  else if (std::is_pointer_v<A> || std::is_pointer_v<B>) return std::is_pointer_v<A> && std::is_pointer_v<B>;
  else if (std::is_floating_point_v<A> || std::is_floating_point_v<B>) return std::is_same_v<A, B>;
  else if (std::is_enum_v<A> || std::is_enum_v<B>)
    return (std::is_enum_v<A> || std::is_integral_v<A>) && (std::is_enum_v<B> || std::is_integral_v<B>);
  else return std::is_integral_v<A> && std::is_integral_v<B> && std::is_signed_v<A> == std::is_signed_v<B>;
}
template <class R1, class... A1, class R2, class... A2>
constexpr bool abi(R1 (*)(A1...), R2 (*)(A2...)) {
  if constexpr (sizeof...(A1) != sizeof...(A2)) return false;
  else return same_abi<R1, R2>() && (same_abi<A1, A2>() && ...);
}
using tile::drivers::cupti_api;
#define CHECK_FN(name, params) static_assert(abi(&::name, decltype(cupti_api::name){}), #name " differs from cupti.h");
TILE_CUPTI_API_FUNCTIONS(CHECK_FN)

namespace t = tile::drivers::cupti_abi;

// The callbacks the tracer registers: same parameters as the header's function types.
static_assert(abi(::CUpti_BuffersCallbackRequestFunc{}, t::CUpti_BuffersCallbackRequestFunc{}));
static_assert(abi(::CUpti_BuffersCallbackCompleteFunc{}, t::CUpti_BuffersCallbackCompleteFunc{}));

// Pointees and enums that cross the ABI.
static_assert(sizeof(::CUptiResult) == sizeof(t::CUptiResult));
static_assert(sizeof(::CUpti_ActivityKind) == sizeof(t::CUpti_ActivityKind));
static_assert(sizeof(::CUpti_ExternalCorrelationKind) == sizeof(t::CUpti_ExternalCorrelationKind));
static_assert(sizeof(::CUpti_Activity) == sizeof(t::CUpti_Activity) && alignof(::CUpti_Activity) == alignof(t::CUpti_Activity));

#define V(x) static_assert(static_cast<long long>(::x) == static_cast<long long>(t::x), #x);
V(CUPTI_SUCCESS) V(CUPTI_ERROR_INVALID_PARAMETER) V(CUPTI_ERROR_INVALID_OPERATION) V(CUPTI_ERROR_OUT_OF_MEMORY)
V(CUPTI_ERROR_MAX_LIMIT_REACHED) V(CUPTI_ERROR_NOT_COMPATIBLE) V(CUPTI_ERROR_NOT_INITIALIZED) V(CUPTI_ERROR_QUEUE_EMPTY)
V(CUPTI_ERROR_INVALID_KIND) V(CUPTI_ERROR_NOT_SUPPORTED) V(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
V(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) V(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) V(CUPTI_ERROR_UNKNOWN)
V(CUPTI_ACTIVITY_KIND_INVALID) V(CUPTI_ACTIVITY_KIND_KERNEL) V(CUPTI_ACTIVITY_KIND_DRIVER) V(CUPTI_ACTIVITY_KIND_RUNTIME)
V(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) V(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
V(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID) V(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN)
V(CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC) V(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
V(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) V(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2)
V(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
#undef V

// The version window: the header's own version is inside it.
static_assert(CUPTI_API_VERSION >= t::kMinCuptiVersion && CUPTI_API_VERSION <= t::kMaxCuptiVersion,
              "this CUPTI's kernel record is not among those tile reads: check the head's offsets, then widen the window");

// The kernel record head: each field at the same offset, of the same size, in every version.
#define FIELD_OF(T, Ours, f)                                                                          \
  static_assert(offsetof(T, f) == offsetof(Ours, f), #T "::" #f " moved");                            \
  static_assert(sizeof(std::declval<T&>().f) == sizeof(std::declval<Ours&>().f), #T "::" #f " resized");
#define FIELD(T, f) FIELD_OF(T, t::kernel_record_head, f)
using head = t::kernel_record_head;
#define HEAD(T)                                                                                        \
  FIELD(T, kind) FIELD(T, sharedMemoryConfig) FIELD(T, registersPerThread)                             \
  FIELD(T, partitionedGlobalCacheRequested) FIELD(T, partitionedGlobalCacheExecuted) FIELD(T, start)   \
  FIELD(T, end) FIELD(T, completed) FIELD(T, deviceId) FIELD(T, contextId) FIELD(T, streamId)          \
  FIELD(T, gridX) FIELD(T, gridY) FIELD(T, gridZ) FIELD(T, blockX) FIELD(T, blockY) FIELD(T, blockZ)    \
  FIELD(T, staticSharedMemory) FIELD(T, dynamicSharedMemory) FIELD(T, localMemoryPerThread)            \
  FIELD(T, localMemoryTotal) FIELD(T, correlationId) FIELD(T, gridId) FIELD(T, name)                   \
  static_assert(offsetof(T, cacheConfig) == offsetof(head, cacheConfig) && sizeof(T::cacheConfig) == 1); \
  static_assert(sizeof(T) >= sizeof(head) && alignof(T) == alignof(head), #T);
HEAD(CUpti_ActivityKernel10)
// The versions older libcupti write (cupti_activity_deprecated.h, which cupti_activity.h includes).
HEAD(CUpti_ActivityKernel4) HEAD(CUpti_ActivityKernel5) HEAD(CUpti_ActivityKernel6) HEAD(CUpti_ActivityKernel7)
HEAD(CUpti_ActivityKernel8) HEAD(CUpti_ActivityKernel9)
static_assert(sizeof(CUpti_ActivityKernel10) == t::kKernel10Size);

// The external-correlation record, whole.
using ext = t::CUpti_ActivityExternalCorrelation;
FIELD_OF(::CUpti_ActivityExternalCorrelation, ext, kind) FIELD_OF(::CUpti_ActivityExternalCorrelation, ext, externalKind)
FIELD_OF(::CUpti_ActivityExternalCorrelation, ext, externalId) FIELD_OF(::CUpti_ActivityExternalCorrelation, ext, correlationId)
FIELD_OF(::CUpti_ActivityExternalCorrelation, ext, reserved)
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == sizeof(ext) &&
              alignof(CUpti_ActivityExternalCorrelation) == alignof(ext));
#undef HEAD
#undef FIELD
#undef FIELD_OF

int main() { return 0; }

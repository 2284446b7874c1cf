// test/drivers/cublas_abi_check.cpp — built only where cublas_api.h is installed (never needed to
// build tile or its benches): checks, at compile time, that the cuBLAS types, constants and
// prototypes declared by hand in bench/cublas.hpp (the matmul bench's reference, opened with
// dlopen) match cublas_api.h and library_types.h — same symbols, same parameter count, parameters
// of the same size and kind — so the table loaded with dlsym calls each function with its real ABI.
#include <cublas_api.h>
#include <library_types.h>

#include <type_traits>

#include "../../bench/cublas.hpp"

namespace {
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
}  // namespace

using bench::cublas::api::table;
#define CHECK(name, header_fn) \
  static_assert(abi(header_fn, decltype(table::name){}), #name " differs from cublas_api.h");
CHECK(cublasCreate_v2, &::cublasCreate_v2)
CHECK(cublasDestroy_v2, &::cublasDestroy_v2)
CHECK(cublasGetVersion_v2, &::cublasGetVersion_v2)
CHECK(cublasSetStream_v2, &::cublasSetStream_v2)
CHECK(cublasGetStatusString, &::cublasGetStatusString)
// cublas_api.h adds a C++ overload of cublasGemmEx taking the compute type as a cudaDataType (an
// inline wrapper, not the library's symbol): the exported one, named by its exact prototype.
using gemm_ex_t = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                     const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
CHECK(cublasGemmEx, static_cast<gemm_ex_t>(&::cublasGemmEx))
// Every function of BENCH_CUBLAS_FUNCTIONS is checked above (a new one must be added here too).
#define COUNT(ret, name, params) +1
static_assert(sizeof(table) == (0 BENCH_CUBLAS_FUNCTIONS(COUNT)) * sizeof(void*) && (0 BENCH_CUBLAS_FUNCTIONS(COUNT)) == 6,
              "a function of bench/cublas.hpp is not checked here");

static_assert(sizeof(::cublasHandle_t) == sizeof(bench::cublas::api::cublasHandle_t));
static_assert(sizeof(::cublasStatus_t) == sizeof(bench::cublas::api::cublasStatus_t));
static_assert(sizeof(::cudaStream_t) == sizeof(bench::cublas::api::cudaStream_t));

namespace t = bench::cublas::api;
#define V(x) static_assert(static_cast<long long>(::x) == static_cast<long long>(t::x), #x);
V(CUBLAS_STATUS_SUCCESS) V(CUBLAS_OP_N) V(CUBLAS_OP_T) V(CUDA_R_32F) V(CUDA_R_16F) V(CUDA_R_16BF)
V(CUBLAS_COMPUTE_32F) V(CUBLAS_GEMM_DEFAULT)

int main() { return 0; }

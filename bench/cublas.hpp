// bench/cublas.hpp — cuBLAS for the GPU benches' references, opened at run time with dlopen, as
// tile opens the CUDA driver: nothing of the CUDA SDK is needed to build. The few types, constants
// and functions the benches call are declared here by hand with the ABI of cublas_api.h and
// library_types.h (cuBLAS 13.1 of CUDA 13.0; test/drivers/cublas_abi_check.cpp checks them against
// the headers where they are installed, which are never included here):
//   cublasStatus_t, cublasOperation_t, cudaDataType, cublasComputeType_t and cublasGemmAlgo_t are
//   int-sized enums, cublasHandle_t an opaque pointer, cudaStream_t the driver's CUstream.
//
// The library: $TILE_CUBLAS (a path) if set, else the first of these whose cublasCreate_v2 works
// (a cuBLAS newer than the driver fails there, and the next one is tried): libcublas.so.13 / .12 /
// .so in the loader's path, the CUDA toolkits' (CUDA_HOME, CUDA_PATH, /usr/local/cuda,
// /usr/local/cuda-*: lib64, lib, targets/*/lib), then Python's CUDA wheels (PyTorch's
// dependencies: nvidia/cu13/lib for CUDA 13, nvidia/cublas/lib for CUDA 12) under VIRTUAL_ENV,
// CONDA_PREFIX, ~/.local, /usr/local, /usr and /opt/conda. cuBLAS's own runtime binds to the
// context current on the calling thread: open() makes tile's (the device's primary context)
// current first, so cuBLAS and tile share memory, streams and events.
//
// cuBLAS is column-major. A row-major M×K matrix is the column-major K×M matrix of its transpose,
// so the row-major product C = A·B is computed as Cᵀ = Bᵀ·Aᵀ: cublasGemmEx with the operands
// swapped, m = N, n = M, no transposes and leading dimensions N, K, N (gemm_row_major).
#pragma once

#include <dlfcn.h>
#include <glob.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu.hpp"

namespace bench::cublas {

namespace api {
// Types (cublas_api.h, library_types.h, driver_types.h).
using cublasStatus_t = int;
struct cublasContext;
using cublasHandle_t = cublasContext*;
using cudaStream_t = void*;  // struct CUstream_st*: a driver CUstream is one
enum cublasOperation_t : int { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cudaDataType : int { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum cublasComputeType_t : int { CUBLAS_COMPUTE_32F = 68 };
enum cublasGemmAlgo_t : int { CUBLAS_GEMM_DEFAULT = -1 };
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;

// The functions the benches call: X(return type, symbol, parameters). The symbols are the ones a
// program built with cublas_v2.h calls (cublasCreate is #defined to cublasCreate_v2, …).
#define BENCH_CUBLAS_FUNCTIONS(X)                                                                              \
  X(cublasStatus_t, cublasCreate_v2, (cublasHandle_t * handle))                                               \
  X(cublasStatus_t, cublasDestroy_v2, (cublasHandle_t handle))                                                 \
  X(cublasStatus_t, cublasGetVersion_v2, (cublasHandle_t handle, int* version))                                \
  X(cublasStatus_t, cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream))                          \
  X(const char*, cublasGetStatusString, (cublasStatus_t status))                                               \
  X(cublasStatus_t, cublasGemmEx,                                                                              \
    (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,           \
     const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype, int ldb, \
     const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,                  \
     cublasGemmAlgo_t algo))

/// The functions, resolved from one library.
struct table {
#define BENCH_CUBLAS_MEMBER(ret, name, params) ret(*name) params = nullptr;
  BENCH_CUBLAS_FUNCTIONS(BENCH_CUBLAS_MEMBER)
#undef BENCH_CUBLAS_MEMBER
};
}  // namespace api

/// The cudaDataType of a host element type.
template <class T>
constexpr api::cudaDataType data_type() {
  if constexpr (std::is_same_v<T, tile::half>) return api::CUDA_R_16F;
  else if constexpr (std::is_same_v<T, tile::bfloat16>) return api::CUDA_R_16BF;
  else {
    static_assert(std::is_same_v<T, float>, "cuBLAS element types here: tile::half, tile::bfloat16, float");
    return api::CUDA_R_32F;
  }
}

/// An open cuBLAS with one handle, bound to a tile cuda device's context and stream.
class library {
 public:
  /// The first usable cuBLAS (see the header comment), or null with every refusal in why_not.
  static std::unique_ptr<library> open(const tile::device& dev, std::string& why_not) {
    bench::gpu::driver(dev).make_current();  // cuBLAS's runtime adopts the thread's current context
    const char* user = std::getenv("TILE_CUBLAS");
    const std::vector<std::string> names = user && *user ? std::vector<std::string>{user} : candidates();
    std::string tried;
    std::set<void*> opened;  // the loader's path and a toolkit's directory often name one file
    for (const std::string& name : names) {
      std::string why;
      if (auto lib = try_open(name, why, opened)) return lib;
      if (why.empty()) continue;  // a library already tried under another name
      // Report what was found but refused, not every place that held nothing.
      if ((user && *user) || why.find("cannot open shared object file") == std::string::npos)
        tried += (tried.empty() ? "" : "; ") + why;
    }
    why_not = (user && *user ? std::string("TILE_CUBLAS: ") : std::string("no usable libcublas (TILE_CUBLAS=/path picks one): ")) +
              (tried.empty() ? std::string("none in the loader's path, the CUDA toolkits or Python's nvidia packages") : tried);
    return nullptr;
  }

  library(const library&) = delete;
  library& operator=(const library&) = delete;
  // The library is never closed: its static CUDA runtime registers exit handlers.
  ~library() { fn_.cublasDestroy_v2(handle_); }

  const std::string& path() const { return path_; }
  int version() const { return version_; }  // 130100 for cuBLAS 13.1.0

  /// Later calls go to `cu_stream` (null: the default stream, as tile's driver has by default).
  void set_stream(void* cu_stream) { check(fn_.cublasSetStream_v2(handle_, cu_stream), "cublasSetStream_v2"); }

  /// Row-major C (M×N) = A (M×K) · B (K×N), dense, in T with f32 accumulation (compute type
  /// CUBLAS_COMPUTE_32F, alpha 1, beta 0, the default algorithm); addresses are device pointers.
  /// Asynchronous on the handle's stream; throws tile::error naming the call on a failed status.
  template <class T>
  void gemm_row_major(std::uint64_t a, std::uint64_t b, std::uint64_t c, int M, int N, int K) const {
    const float one = 1.0f, zero = 0.0f;
    const auto t = data_type<T>();
    // Cᵀ (N×M, ld N) = Bᵀ (N×K, ld N) · Aᵀ (K×M, ld K), all column-major views of the row-major data
    const api::cublasStatus_t s =
        fn_.cublasGemmEx(handle_, api::CUBLAS_OP_N, api::CUBLAS_OP_N, N, M, K, &one, ptr(b), t, N, ptr(a), t, K, &zero,
                         ptr(c), t, N, api::CUBLAS_COMPUTE_32F, api::CUBLAS_GEMM_DEFAULT);
    if (s != api::CUBLAS_STATUS_SUCCESS)
      check(s, "cublasGemmEx (m=" + std::to_string(N) + ", n=" + std::to_string(M) + ", k=" + std::to_string(K) +
                   ", type " + std::to_string(int(t)) + ")");
  }

  /// "CUBLAS_STATUS_… (status n)".
  std::string describe(api::cublasStatus_t s) const {
    const char* text = fn_.cublasGetStatusString ? fn_.cublasGetStatusString(s) : nullptr;
    return std::string(text ? text : "unknown status") + " (status " + std::to_string(s) + ")";
  }

 private:
  library(std::string path, const api::table& fn, api::cublasHandle_t h) : path_(std::move(path)), fn_(fn), handle_(h) {
    if (fn_.cublasGetVersion_v2(handle_, &version_) != api::CUBLAS_STATUS_SUCCESS) version_ = 0;
  }

  static void* ptr(std::uint64_t addr) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(addr)); }

  void check(api::cublasStatus_t s, const std::string& call) const {
    if (s != api::CUBLAS_STATUS_SUCCESS) throw tile::error(call + " failed: " + describe(s) + " [" + path_ + "]");
  }

  /// The library at `name` with a handle, or null with why (empty: `opened` already held it).
  static std::unique_ptr<library> try_open(const std::string& name, std::string& why, std::set<void*>& opened) {
    dlerror();
    void* dl = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
      const char* e = dlerror();
      why = e ? e : name + ": dlopen failed";
      return nullptr;
    }
    if (!opened.insert(dl).second) return nullptr;
    api::table fn;
    std::string missing;
    auto resolve = [&](const char* symbol, auto& slot) {
      void* p = dlsym(dl, symbol);
      if (!p) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);  // POSIX: dlsym -> function
    };
#define BENCH_CUBLAS_RESOLVE(ret, name, params) resolve(#name, fn.name);
    BENCH_CUBLAS_FUNCTIONS(BENCH_CUBLAS_RESOLVE)
#undef BENCH_CUBLAS_RESOLVE
    if (!missing.empty()) {
      why = name + " is not a usable libcublas: missing " + missing;
      opened.erase(dl);
      dlclose(dl);  // nothing of it has run yet
      return nullptr;
    }
    api::cublasHandle_t h = nullptr;
    if (const api::cublasStatus_t s = fn.cublasCreate_v2(&h); s != api::CUBLAS_STATUS_SUCCESS) {
      const char* text = fn.cublasGetStatusString(s);
      why = name + ": cublasCreate_v2 failed: " + (text ? text : "?") + " (status " + std::to_string(s) +
            ": no device, or a driver older than this cuBLAS)";
      return nullptr;  // not closed: its runtime may have registered exit handlers
    }
    return std::unique_ptr<library>(new library(name, fn, h));
  }

  static std::vector<std::string> candidates() {
    std::vector<std::string> out = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    std::set<std::string> seen;  // real paths already listed
    auto add_glob = [&](const std::string& pattern) {
      glob_t g{};
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc; ++i) {
          const std::string p = g.gl_pathv[i];
          char real[PATH_MAX];
          if (seen.insert(::realpath(p.c_str(), real) ? std::string(real) : p).second) out.push_back(p);
        }
      }
      globfree(&g);
    };
    auto env = [](const char* v) { const char* s = std::getenv(v); return std::string(s ? s : ""); };
    std::vector<std::string> toolkits;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (std::string v = env(var); !v.empty()) toolkits.push_back(v);
    toolkits.emplace_back("/usr/local/cuda");
    toolkits.emplace_back("/usr/local/cuda-*");
    for (const std::string& t : toolkits)
      for (const char* dir : {"/lib64/", "/lib/", "/targets/*/lib/"}) add_glob(t + dir + "libcublas.so.*[0-9]");
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
      if (std::string v = env(var); !v.empty()) prefixes.push_back(v);
    if (std::string home = env("HOME"); !home.empty()) prefixes.push_back(home + "/.local");
    for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.emplace_back(p);
    for (const std::string& prefix : prefixes)
      for (const char* packages : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages", "/lib/python3/dist-packages"})
        for (const char* sub : {"/nvidia/cu13/lib/", "/nvidia/cublas/lib/"}) add_glob(prefix + packages + sub + "libcublas.so.*[0-9]");
    return out;
  }

  std::string path_;
  api::table fn_;
  api::cublasHandle_t handle_;
  int version_ = 0;
};

}  // namespace bench::cublas

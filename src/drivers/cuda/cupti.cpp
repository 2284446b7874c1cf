// src/drivers/cuda/cupti.cpp — layer: drivers (cuda). Finding and loading libcupti with dlopen,
// the activity buffers CUPTI fills, and the join of kernel records with tile's launch ids (the
// design is at the top of cupti.hpp).
#include "drivers/cuda/cupti.hpp"

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

namespace tile::drivers {

using namespace cupti_abi;

namespace {

const char* builtin_name(CUptiResult r) {
  switch (r) {
#define TILE_CUPTI_NAME(code) \
  case code: return #code;
    TILE_CUPTI_NAME(CUPTI_SUCCESS)
    TILE_CUPTI_NAME(CUPTI_ERROR_INVALID_PARAMETER)
    TILE_CUPTI_NAME(CUPTI_ERROR_INVALID_OPERATION)
    TILE_CUPTI_NAME(CUPTI_ERROR_OUT_OF_MEMORY)
    TILE_CUPTI_NAME(CUPTI_ERROR_MAX_LIMIT_REACHED)
    TILE_CUPTI_NAME(CUPTI_ERROR_NOT_COMPATIBLE)
    TILE_CUPTI_NAME(CUPTI_ERROR_NOT_INITIALIZED)
    TILE_CUPTI_NAME(CUPTI_ERROR_QUEUE_EMPTY)
    TILE_CUPTI_NAME(CUPTI_ERROR_INVALID_KIND)
    TILE_CUPTI_NAME(CUPTI_ERROR_NOT_SUPPORTED)
    TILE_CUPTI_NAME(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED)
    TILE_CUPTI_NAME(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    TILE_CUPTI_NAME(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    TILE_CUPTI_NAME(CUPTI_ERROR_UNKNOWN)
#undef TILE_CUPTI_NAME
    default: return nullptr;
  }
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

/// What a refusal to enable tracing usually means, for the why-message.
std::string hint(const cupti_api& api, CUptiResult r) {
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return " (profiling is restricted to administrators on this machine: "
             "https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return " (another CUPTI client holds CUPTI: Nsight Systems, Nsight Compute or a framework's profiler)";
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_UNKNOWN:
      return " (" + api.path + ", CUPTI API version " + std::to_string(api.version) +
             ": no GPU, or an NVIDIA driver older than this CUPTI? TILE_CUPTI=<path> picks another libcupti)";
    default: return {};
  }
}

std::vector<std::string> glob_paths(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  ::globfree(&g);
  // Newest first where several match (cuda-13.0 before cuda-12.8, python3.12 before python3.10);
  // the unversioned libcupti.so, a symlink to the newest, sorts last and is deduplicated anyway.
  std::sort(out.rbegin(), out.rend());
  return out;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

template <class T>
T read_field(const unsigned char* record, std::size_t offset) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  std::memcpy(&v, record + offset, sizeof v);
  return v;
}

}  // namespace

// ---- loading -------------------------------------------------------------------------------

std::unique_ptr<cupti_api> cupti_api::load(const char* library, std::string& why_not, bool noload) {
  dlerror();
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL | (noload ? RTLD_NOLOAD : 0));
  if (!handle) {
    why_not = noload ? std::string(library) + " is not loaded" : std::string(library) + ": " + dl_error();
    return nullptr;
  }
  auto api = std::make_unique<cupti_api>();
  api->library = handle;
  api->path = library;
  std::string missing;
  auto resolve = [&](const char* symbol, auto& slot) {
    void* p = dlsym(handle, symbol);
    if (!p) {
      missing += (missing.empty() ? "" : ", ") + std::string(symbol);
      return;
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);  // POSIX: dlsym -> function
  };
#define TILE_CUPTI_API_RESOLVE(name, params) resolve(#name, api->name);
  TILE_CUPTI_API_FUNCTIONS(TILE_CUPTI_API_RESOLVE)
#undef TILE_CUPTI_API_RESOLVE
  if (!missing.empty()) {
    why_not = std::string(library) + " is not a usable libcupti: missing " + missing;
    dlclose(handle);
    return nullptr;
  }
  if (const CUptiResult r = api->cuptiGetVersion(&api->version); r != CUPTI_SUCCESS) {
    why_not = std::string(library) + ": cuptiGetVersion failed: " + describe_cupti_result(*api, r);
    dlclose(handle);
    return nullptr;
  }
  if (api->version < kMinCuptiVersion || api->version > kMaxCuptiVersion) {
    why_not = std::string(library) + " has CUPTI API version " + std::to_string(api->version) +
              "; tile reads the kernel records of versions " + std::to_string(kMinCuptiVersion) +
              " (CUDA 11.0) to " + std::to_string(kMaxCuptiVersion) + " (CUDA 13.x) only";
    dlclose(handle);
    return nullptr;
  }
  return api;
}

std::vector<std::string> cupti_api::candidates() {
  if (const std::string user = env_or_empty("TILE_CUPTI"); !user.empty()) return {user};
  std::vector<std::string> out;
  // A copy the process already holds (a framework's profiler loaded it) is the only safe one:
  // a second libcupti in one process fights the first over CUPTI's global state.
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) out.push_back(std::string("noload:") + soname);
  for (const char* soname : {"libcupti.so", "libcupti.so.13", "libcupti.so.12"}) out.emplace_back(soname);

  std::set<std::string> seen;  // real paths already listed
  auto add_glob = [&](const std::string& pattern) {
    for (const std::string& p : glob_paths(pattern)) {
      char real[PATH_MAX];
      const std::string key = ::realpath(p.c_str(), real) ? std::string(real) : p;
      if (seen.insert(key).second) out.push_back(p);
    }
  };
  std::vector<std::string> toolkits;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string v = env_or_empty(var); !v.empty()) toolkits.push_back(v);
  toolkits.emplace_back("/usr/local/cuda");
  for (const std::string& t : glob_paths("/usr/local/cuda-*")) toolkits.push_back(t);
  for (const std::string& t : toolkits)
    for (const char* dir : {"/extras/CUPTI/lib64/", "/lib64/", "/lib/", "/targets/*/lib/"})
      add_glob(t + dir + "libcupti.so*");

  // pip's CUDA wheels: nvidia-cuda-cupti-cu12 puts it in nvidia/cuda_cupti/lib, CUDA 13's
  // wheels in nvidia/cu13/lib.
  std::vector<std::string> prefixes;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (std::string v = env_or_empty(var); !v.empty()) prefixes.push_back(v);
  if (std::string home = env_or_empty("HOME"); !home.empty()) prefixes.push_back(home + "/.local");
  for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.emplace_back(p);
  for (const std::string& prefix : prefixes)
    for (const char* packages : {"/lib/python3*/site-packages", "/lib/python3*/dist-packages", "/lib/python3/dist-packages"})
      for (const char* sub : {"/nvidia/cu13/lib/", "/nvidia/cuda_cupti/lib/"})
        add_glob(prefix + packages + sub + "libcupti.so*");
  return out;
}

std::unique_ptr<cupti_api> cupti_api::find(std::string& why_not) {
  const bool user = !env_or_empty("TILE_CUPTI").empty();
  std::string tried;
  for (const std::string& c : candidates()) {
    const bool noload = c.rfind("noload:", 0) == 0;
    const std::string name = noload ? c.substr(7) : c;
    std::string why;
    if (auto api = load(name.c_str(), why, noload)) return api;
    // Report what was found but refused, not every place that held nothing.
    const bool absent = noload || why.find("cannot open shared object file") != std::string::npos;
    if (user || !absent) tried += (tried.empty() ? "" : "; ") + why;
  }
  if (user)
    why_not = "TILE_CUPTI: " + tried;
  else
    why_not = "no usable libcupti (TILE_CUPTI=/path/to/libcupti.so picks one): " +
              (tried.empty() ? std::string("none in the loader's path, the CUDA toolkit or Python's nvidia packages")
                             : tried);
  return nullptr;
}

std::string describe_cupti_result(const cupti_api& api, CUptiResult r) {
  const char* name = nullptr;
  if (api.cuptiGetResultString && api.cuptiGetResultString(r, &name) != CUPTI_SUCCESS) name = nullptr;
  if (!name || !*name) name = builtin_name(r);
  return name ? std::string(name) : "CUptiResult " + std::to_string(r);
}

// ---- the buffer callbacks ------------------------------------------------------------------

/// CUPTI's buffer callbacks carry no user pointer: they reach the one tracer recording through
/// `active`. The mutex is held while a completed buffer is parsed, so a tracer that stops
/// recording (disable, destructor) waits for a parse in progress on CUPTI's thread.
struct cupti_callbacks {
  static std::mutex& mutex() {
    static std::mutex* m = new std::mutex;  // never destroyed: CUPTI's thread may call at exit
    return *m;
  }
  static cupti_tracer*& active() {
    static cupti_tracer* a = nullptr;
    return a;
  }

  static void requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_num_records) {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, cupti_tracer::kBufferBytes));
    *size = *buffer ? cupti_tracer::kBufferBytes : 0;  // none: CUPTI drops records (and counts them)
    *max_num_records = 0;                               // as many as fit
  }

  static void completed(cu::CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t,
                        std::size_t valid_size) {
    {
      std::lock_guard lock(mutex());
      if (cupti_tracer* t = active(); t && buffer) {
        t->take_buffer(buffer, valid_size);
        std::size_t dropped = 0;
        if (t->api_.cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS && dropped) {
          std::lock_guard state(t->mutex_);
          t->dropped_ += dropped;
        }
      }
    }
    std::free(buffer);
  }
};

// ---- the tracer ----------------------------------------------------------------------------

cupti_tracer::cupti_tracer(const cupti_api& api) : api_(api) {}

cupti_tracer::~cupti_tracer() { disable(); }

std::unique_ptr<cupti_tracer> cupti_tracer::create(const cupti_api& api, std::string* why) {
  std::unique_ptr<cupti_tracer> t(new cupti_tracer(api));
  if (!t->enable(why)) return nullptr;
  return t;
}

cupti_tracer* cupti_tracer::open(std::string* why) {
  static std::mutex m;
  std::lock_guard lock(m);
  // Never destroyed, like cuda_api::get: CUPTI's thread may hand back a buffer at exit.
  static cupti_tracer* tracer = nullptr;
  static std::string load_failed;  // why libcupti could not be loaded (not retried)
  if (!tracer && load_failed.empty()) {
    std::string w;
    if (auto api = cupti_api::find(w))
      tracer = new cupti_tracer(*api);  // the library stays open: CUPTI does not like unloading
    else
      load_failed = w.empty() ? "libcupti could not be loaded" : w;
  }
  if (!tracer) {
    if (why) *why = load_failed;
    return nullptr;
  }
  if (tracer->enabled() || tracer->enable(why)) return tracer;
  return nullptr;
}

bool cupti_tracer::enable(std::string* why) {
  {
    std::lock_guard lock(cupti_callbacks::mutex());
    cupti_tracer*& a = cupti_callbacks::active();
    if (a && a != this) {
      if (why) *why = "another CUPTI tracer of this process is recording";
      return false;
    }
    a = this;
  }
  std::vector<CUpti_ActivityKind> on;
  auto fail = [&](const std::string& call, CUptiResult r) {
    for (auto k = on.rbegin(); k != on.rend(); ++k) api_.cuptiActivityDisable(*k);
    {
      std::lock_guard lock(cupti_callbacks::mutex());
      if (cupti_callbacks::active() == this) cupti_callbacks::active() = nullptr;
    }
    if (why) *why = call + " failed: " + describe_cupti_result(api_, r) + hint(api_, r);
    return false;
  };
  if (CUptiResult r = api_.cuptiActivityRegisterCallbacks(&cupti_callbacks::requested, &cupti_callbacks::completed);
      r != CUPTI_SUCCESS)
    return fail("cuptiActivityRegisterCallbacks", r);
  kernel_kind_ = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (CUptiResult r = api_.cuptiActivityEnable(kernel_kind_); r != CUPTI_SUCCESS) {
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      return fail("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)", r);
    kernel_kind_ = CUPTI_ACTIVITY_KIND_KERNEL;
    if (CUptiResult r2 = api_.cuptiActivityEnable(kernel_kind_); r2 != CUPTI_SUCCESS)
      return fail("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) failed: " + describe_cupti_result(api_, r) +
                      ", and cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL)",
                  r2);
  }
  on.push_back(kernel_kind_);
  if (CUptiResult r = api_.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION); r != CUPTI_SUCCESS)
    return fail("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)", r);
  on.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  // No external-correlation records are written unless the driver API's records are on (seen
  // on an H100, driver 580, CUPTI 13.0: without DRIVER, a pushed launch came back with id 0).
  if (CUptiResult r = api_.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER); r != CUPTI_SUCCESS)
    return fail("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER)", r);
  std::lock_guard lock(cupti_callbacks::mutex());
  enabled_ = true;
  return true;
}

void cupti_tracer::disable() {
  if (!enabled()) return;
  api_.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
  api_.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  api_.cuptiActivityDisable(kernel_kind_);
  // What CUPTI still holds comes in now (the callback runs on this thread or CUPTI's: no lock
  // may be held here).
  api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(cupti_callbacks::mutex());
  if (cupti_callbacks::active() == this) cupti_callbacks::active() = nullptr;
  enabled_ = false;
}

bool cupti_tracer::enabled() const {
  std::lock_guard lock(cupti_callbacks::mutex());
  return enabled_;
}

void cupti_tracer::push_external_id(std::uint64_t id) {
  if (CUptiResult r = api_.cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
      r != CUPTI_SUCCESS)
    throw tile::error("cuptiActivityPushExternalCorrelationId failed: " + describe_cupti_result(api_, r));
}

void cupti_tracer::pop_external_id() noexcept {
  std::uint64_t last = 0;
  (void)api_.cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::uint64_t cupti_tracer::timestamp() const {
  std::uint64_t t = 0;
  return api_.cuptiGetTimestamp(&t) == CUPTI_SUCCESS ? t : 0;
}

std::size_t cupti_tracer::dropped_records() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void cupti_tracer::take_buffer(std::uint8_t* buffer, std::size_t valid_bytes) {
  std::vector<pending_kernel> kernels;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> externals;
  CUpti_Activity* record = nullptr;
  // Stops at the end (CUPTI_ERROR_MAX_LIMIT_REACHED) or at a record CUPTI could not complete
  // (CUPTI_ERROR_INVALID_KIND): nothing after it can be read.
  while (api_.cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS && record) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(record);
    const auto kind = read_field<CUpti_ActivityKind>(bytes, 0);
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      kernel_record k;
      k.start_ns = read_field<std::uint64_t>(bytes, offsetof(kernel_record_head, start));
      k.end_ns = read_field<std::uint64_t>(bytes, offsetof(kernel_record_head, end));
      k.device_id = read_field<std::uint32_t>(bytes, offsetof(kernel_record_head, deviceId));
      k.stream_id = read_field<std::uint32_t>(bytes, offsetof(kernel_record_head, streamId));
      k.correlation_id = read_field<std::uint32_t>(bytes, offsetof(kernel_record_head, correlationId));
      if (const char* name = read_field<const char*>(bytes, offsetof(kernel_record_head, name))) k.name = name;
      kernels.push_back({std::move(k), 0});
    } else if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto ext_kind =
          read_field<CUpti_ExternalCorrelationKind>(bytes, offsetof(CUpti_ActivityExternalCorrelation, externalKind));
      if (ext_kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) continue;  // another tool's ids
      externals.emplace_back(read_field<std::uint32_t>(bytes, offsetof(CUpti_ActivityExternalCorrelation, correlationId)),
                             read_field<std::uint64_t>(bytes, offsetof(CUpti_ActivityExternalCorrelation, externalId)));
    }
  }
  std::lock_guard lock(mutex_);
  for (auto& k : kernels) kernels_.push_back(std::move(k));
  for (const auto& [correlation, id] : externals) externals_[correlation] = id;
  while (externals_.size() > kMaxPendingExternal) externals_.erase(externals_.begin());
}

std::vector<cupti_tracer::kernel_record> cupti_tracer::flush(bool last) {
  // Not under mutex_: CUPTI delivers the buffers through completed() before this returns.
  if (CUptiResult r = api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS)
    throw tile::error("cuptiActivityFlushAll failed: " + describe_cupti_result(api_, r));
  std::vector<kernel_record> out;
  std::lock_guard lock(mutex_);
  std::vector<pending_kernel> waiting;
  for (pending_kernel& k : kernels_) {
    if (auto it = externals_.find(k.record.correlation_id); it != externals_.end()) {
      k.record.external_id = it->second;
      externals_.erase(it);
      out.push_back(std::move(k.record));
    } else if (last || k.flushes >= 1) {
      out.push_back(std::move(k.record));  // launched outside any push
    } else {
      ++k.flushes;
      waiting.push_back(std::move(k));
    }
  }
  kernels_ = std::move(waiting);
  if (last) externals_.clear();
  std::sort(out.begin(), out.end(), [](const kernel_record& a, const kernel_record& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.correlation_id < b.correlation_id;
  });
  return out;
}

}  // namespace tile::drivers

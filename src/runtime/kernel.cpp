// src/runtime/kernel.cpp — layer: runtime. A kernel's life: check a launch against the
// signature, specialize, trace once per specialization (thread-safe), canonicalize, compile for
// the device and launch.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "aot/catalog.hpp"
#include "aot/load_module.hpp"
#include "aot/record.hpp"
#include "frontend/trace.hpp"
#include "runtime/arg_class.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/prof/recorder.hpp"
#include "tile/runtime/kernel.hpp"
#include "transforms/pipeline.hpp"

namespace tile {

const detail::meta_value* meta::find(std::string_view n) const {
  for (auto& v : values_)
    if (v.name == n) return &v;
  return nullptr;
}
bool meta::has(std::string_view n) const { return find(n) != nullptr; }
std::int64_t meta::operator[](std::string_view n) const {
  const auto* v = find(n);
  if (!v) throw tile::error("grid function: no meta-parameter named '" + std::string(n) + "'", loc_);
  if (v->k == detail::meta_value::kind::floating)
    throw tile::error("grid function: meta-parameter '" + std::string(n) + "' is a float; use get_float", loc_);
  return v->i;
}
double meta::get_float(std::string_view n) const {
  const auto* v = find(n);
  if (!v) throw tile::error("grid function: no meta-parameter named '" + std::string(n) + "'", loc_);
  return v->k == detail::meta_value::kind::floating ? v->f : static_cast<double>(v->i);
}

namespace detail {

namespace {
struct compiled {
  std::shared_ptr<ir::Function> fn;
  std::unique_ptr<drivers::module> mod;
};

bool int_fits(std::int64_t v, dtype t, bool from_unsigned64) {
  if (from_unsigned64 && v < 0) return t == dtype::u64;  // a value >= 2^63
  switch (t) {
    case dtype::i8: return v >= INT8_MIN && v <= INT8_MAX;
    case dtype::i16: return v >= INT16_MIN && v <= INT16_MAX;
    case dtype::i32: return v >= INT32_MIN && v <= INT32_MAX;
    case dtype::i64: return !from_unsigned64 || v >= 0;
    case dtype::u8: return v >= 0 && v <= UINT8_MAX;
    case dtype::u16: return v >= 0 && v <= UINT16_MAX;
    case dtype::u32: return v >= 0 && v <= UINT32_MAX;
    case dtype::u64: return true;
    default: return true;
  }
}

constexpr std::size_t kInlineArgs = 16, kInlineMetas = 8;  // see "The launch path allocates nothing" below

/// For each argument: whether it is a pointer whose memory, [addr, addr + bytes), shares no byte
/// with any other pointer argument's (ir::ArgInfo::noalias). The same buffer passed twice, or
/// overlapping views of one, alias; an empty view aliases nothing. Two allocations tile made never
/// share a byte, so the usual launch (each pointer into a buffer of its own) is settled by the
/// allocations' identities alone: a small hash set of them, no pair compared. Where two pointers
/// share an allocation, or one is memory the caller adopted (device::adopt: adopted ranges may
/// overlap anything), each pair of ranges is compared once: 28 pairs for 8 pointers.
class disjoint_pointers {
 public:
  explicit disjoint_pointers(std::span<const launch_arg> args) {
    if (args.size() > local_.size()) heap_ = std::make_unique<bool[]>(args.size());
    bool* out = heap_ ? heap_.get() : local_.data();
    // the non-empty pointers' ranges side by side (the pair loop reads them, not the arguments)
    std::array<span_of, kInlineArgs> local_spans;
    std::unique_ptr<span_of[]> heap_spans;
    if (args.size() > local_spans.size()) heap_spans = std::make_unique<span_of[]>(args.size());
    span_of* spans = heap_spans ? heap_spans.get() : local_spans.data();
    std::size_t n = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      out[i] = args[i].k == launch_arg::kind::pointer;
      if (out[i] && args[i].bytes != 0) spans[n++] = {args[i].addr, args[i].addr + args[i].bytes, i, args[i].alloc};
    }
    if (n <= 1 || distinct_own_allocations(spans, n)) return;
    for (std::size_t x = 0; x < n; ++x)
      for (std::size_t y = x + 1; y < n; ++y)
        if (spans[x].lo < spans[y].hi && spans[y].lo < spans[x].hi) out[spans[x].arg] = out[spans[y].arg] = false;
  }
  bool operator[](std::size_t i) const { return heap_ ? heap_[i] : local_[i]; }

 private:
  struct span_of {
    std::uint64_t lo, hi;  // [lo, hi): the bytes a pointer argument may access
    std::size_t arg;
    const allocation* alloc;
  };
  /// Whether each of the n ranges lies in an allocation tile made (not adopted), no two in the
  /// same one: open addressing over 32 slots (n <= kInlineArgs; more pointers compare pairs).
  static bool distinct_own_allocations(const span_of* spans, std::size_t n) {
    static_assert(kInlineArgs < 32);
    if (n > kInlineArgs) return false;
    std::array<const allocation*, 32> seen{};
    for (std::size_t i = 0; i < n; ++i) {
      const allocation* a = spans[i].alloc;
      if (!a || !a->owned) return false;
      std::size_t h = (reinterpret_cast<std::uintptr_t>(a) >> 4) & 31;
      while (seen[h] && seen[h] != a) h = (h + 1) & 31;
      if (seen[h] == a) return false;
      seen[h] = a;
    }
    return true;
  }
  std::array<bool, kInlineArgs> local_{};
  std::unique_ptr<bool[]> heap_;
};

std::string param_str(const param_desc& p) {
  if (p.k == param_desc::kind::pointer) return "tl::ptr<" + std::string(tile::name(p.t)) + ">";
  return "tl::" + std::string(tile::name(p.t));
}

// The launch path allocates nothing for a kernel whose specialization is cached (up to
// kInlineArgs runtime arguments and kInlineMetas meta-parameters): the per-launch arrays live on
// the stack, the specialization key is built as bytes in a stack buffer (each put an inline
// store) and compared with the last launch's before any lookup, and error messages are built
// only when a launch fails. A launch of 12 arguments (8 pointers) on the null backend executes
// about 3100 instructions (callgrind), 4000 before the shortcut, the inline puts and the
// drivers' arguments built in place.
/// `capacity` elements on the stack when they fit in N, else on the heap; filled by push_back.
/// Only the elements pushed are ever constructed (a launch of 12 arguments makes 12 driver
/// arguments, not 16 zeroed ones and their strings).
template <class T, std::size_t N>
class inline_array {
 public:
  explicit inline_array(std::size_t capacity) {
    if (capacity > N) heap_ = std::allocator<T>().allocate(capacity), heap_capacity_ = capacity;
    data_ = heap_ ? heap_ : reinterpret_cast<T*>(local_);
  }
  inline_array(const inline_array&) = delete;  // data_ points into this object
  inline_array& operator=(const inline_array&) = delete;
  ~inline_array() {
    std::destroy_n(data_, size_);
    if (heap_) std::allocator<T>().deallocate(heap_, heap_capacity_);
  }
  void push_back(T v) { std::construct_at(data_ + size_++, std::move(v)); }
  /// A default-constructed element, in place, to be filled by the caller.
  T& emplace_back() { return *std::construct_at(data_ + size_++); }
  std::span<const T> span() const { return {data_, size_}; }

 private:
  alignas(T) unsigned char local_[N * sizeof(T)];
  T* heap_ = nullptr;
  std::size_t heap_capacity_ = 0;
  T* data_;
  std::size_t size_ = 0;
};

/// A specialization key: bytes appended to a stack buffer (a heap string past 192 bytes).
class key_buffer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!spilled_ && n_ + sizeof v <= local_.size()) {  // inline: a store of sizeof v bytes, no call
      std::memcpy(local_.data() + n_, &v, sizeof v);
      n_ += sizeof v;
      return;
    }
    spill(&v, sizeof v);
  }
  std::string_view view() const { return spilled_ ? std::string_view(heap_) : std::string_view(local_.data(), n_); }

 private:
  /// Past the stack buffer: the key moves to the heap string once, and grows there.
  void spill(const void* p, std::size_t n) {
    if (!spilled_) heap_.assign(local_.data(), n_), spilled_ = true;
    heap_.append(static_cast<const char*>(p), n);
  }
  std::array<char, 192> local_;
  std::size_t n_ = 0;
  bool spilled_ = false;
  std::string heap_;
};

/// Hashing std::string keys and std::string_view probes alike (heterogeneous lookup).
struct key_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
}  // namespace

struct kernel_core::state {
  std::string name;
  std::vector<param_desc> params;
  std::vector<std::string> meta_names;  // owned copies of the meta-parameters' names
  std::size_t runtime_params = 0;       // the parameters that are not meta-parameters
  bool pointer_params = false;          // whether any is a pointer (its launches take their device from it)
  tracer_fn tracer;
  src_loc defined_at;
  struct entry {
    std::shared_future<std::shared_ptr<compiled>> fut;  // waited on while the first launch builds
    std::shared_ptr<const compiled> done;  // set once (under mu) when the build succeeded
  };
  using cache_map = std::unordered_map<std::string, entry, key_hash, std::equal_to<>>;
  std::mutex mu;
  cache_map cache;
  std::size_t traces = 0;
  /// The cache entry launched last, published only once `done` is set: a launch with the same
  /// key (the common case: a loop launching one kernel) takes it without the lock, the hash
  /// lookup or the future. An entry that is done is never erased, and map nodes do not move.
  std::atomic<const cache_map::value_type*> last{nullptr};

  /// The last launch's values and what they resolved to. A launch whose arguments and
  /// meta-parameters equal them field by field (an engine launching a kernel on the same buffers
  /// every frame, a solver's loop) has the same specialization key, so it takes the compiled
  /// kernel and the resolved meta-parameters without checking and classifying again; any other
  /// launch goes the whole way and is remembered. Guarded by its mutex, taken with try_lock: a
  /// launch that finds it taken (another thread launching this kernel) goes the whole way.
  /// What a remembered launch resolved to, kept by both memos below: its meta-parameters in the
  /// kernel's order, options, device, compiled kernel and, where the driver packs them, its
  /// packed arguments.
  struct resolution {
    std::array<meta_value, kInlineMetas> metas;
    std::size_t n_metas = 0;
    int num_warps = 4, num_stages = 3;
    device_impl* dev = nullptr;
    const compiled* c = nullptr;
    bool packed_valid = false;
    drivers::packed_args packed;
  };
  struct repeat_memo {
    std::mutex mu;
    bool valid = false;
    std::size_t n_args = 0, n_given = 0;
    std::array<launch_arg, kInlineArgs> args;
    std::array<const device_impl*, kInlineArgs> arg_dev{};  // each pointer's device (an address alone can be reused)
    std::array<meta_value, kInlineMetas> given;             // the meta-parameters as the launch gave them …
    std::array<std::array<char, 32>, kInlineMetas> given_names;  // … with their names' text (theirs may not live on)
    resolution to;
  };
  mutable repeat_memo memo;

  /// The last typed launch's fingerprint (launch_fingerprint: its argument and meta-parameter
  /// values, compact) and what it resolved to, where the driver packed its arguments: a typed
  /// launch with an equal fingerprint goes from it to the driver (launch_repeat). Guarded as
  /// `memo` is.
  static constexpr std::size_t kFingerprintWords = 4 * kInlineArgs + kInlineMetas;
  struct typed_memo {
    std::mutex mu;
    bool valid = false;
    const void* tag = nullptr;
    std::size_t n_words = 0;
    std::array<std::uint64_t, kFingerprintWords> words;
    resolution to;
  };
  mutable typed_memo typed;

  /// Validated, specialized launch: metas in parameter order, options apart. Filled in place by
  /// prepare() (it holds stack buffers: neither copied nor moved).
  struct prepared {
    prepared(std::size_t n_args, std::size_t n_metas) : classes(n_args), metas(n_metas) {}
    inline_array<arg_class, kInlineArgs> classes;  // each runtime argument's (runtime/arg_class.hpp)
    inline_array<meta_value, kInlineMetas> metas;  // in order of the kernel's meta-parameters
    int num_warps = 4, num_stages = 3;
    bool fp_fusion = true;  // enable_fp_fusion
    int warp_specialize = -1;  // warp_specialize (-1: not given, the compiler's choice)
    device_impl* dev = nullptr;  // an opened device: it lives as long as the process
    key_buffer key;  // each argument's class, the metas, the options, the device
  };

  void prepare(prepared& p, std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const;
  /// The memo's compiled kernel when `args` and `metas` equal the last launch's (p filled as
  /// prepare would for what a launch reads: metas, options, device); null otherwise.
  /// `packed` receives the driver's packed arguments where the memo has them (packed.n set, else
  /// left with n == SIZE_MAX).
  const compiled* repeat(prepared& p, std::span<const launch_arg> args, std::span<const meta_value> metas,
                         drivers::packed_args& packed) const;
  /// Remembers a launch that went the whole way, with its packed arguments where the driver
  /// packed them (null otherwise).
  void remember(const prepared& p, std::span<const launch_arg> args, std::span<const meta_value> metas,
                const compiled& c, const drivers::packed_args* packed) const;
  /// Keeps what the launch `p` resolved to (its packed arguments where given) in `to`.
  static void keep(resolution& to, const prepared& p, const compiled& c, const drivers::packed_args* packed);
  /// Fills `p` (metas, options, device) and `packed` (where kept) from `from`; its compiled kernel.
  static const compiled* restore(const resolution& from, prepared& p, drivers::packed_args& packed);
  /// Remembers a typed launch that resolved to `c` with its arguments packed as `packed`.
  void remember_typed(const launch_fingerprint& fp, const prepared& p, const compiled& c,
                      const drivers::packed_args& packed) const;
  /// The driver's launch configuration of a launch resolved as `p`: the grid (a grid function
  /// called with the meta-parameters), checked; errors name `loc`.
  drivers::launch_config config(const launch_grid& grid, const prepared& p, src_loc loc) const;
  /// The compiled specialization (traced and compiled on first use); it lives as long as the kernel.
  const compiled& get(const prepared& p, src_loc loc);
  std::shared_ptr<compiled> build(const prepared& p) const;
  /// The specialization as messages and archives name it.
  std::string spec_text(const prepared& p) const;
  /// Traced from the prepared launch alone: the arguments' classes, never their values.
  std::shared_ptr<ir::Function> trace(const prepared& p) const;
  /// The driver's launch of `c`: with `packed` arguments where given, else with `kargs`; under
  /// the profiler's observation where one is on. Errors name the kernel and `loc`.
  void issue(device_impl& dev, const compiled& c, const drivers::launch_config& cfg,
             const inline_array<drivers::kernel_arg, kInlineArgs>* kargs, const drivers::packed_args* packed,
             src_loc loc) const;
  [[noreturn]] void fail(const std::string& m, src_loc loc) const { throw tile::error(m, loc, name); }
};

void kernel_core::state::prepare(prepared& p, std::span<const launch_arg> args, std::span<const meta_value> metas,
                                 src_loc loc) const {
  const std::size_t runtime = runtime_params;
  if (args.size() != runtime)
    fail("launched with " + std::to_string(args.size()) + " runtime arguments, the kernel takes " +
             std::to_string(runtime), loc);
  // arguments against parameters; each one's specialization class goes into the key
  const disjoint_pointers disjoint(args);
  std::size_t r = 0;
  for (auto& q : params) {
    if (q.k == param_desc::kind::meta) continue;
    const launch_arg& a = args[r];
    auto which = [&] { return "argument " + std::to_string(r) + " (" + param_str(q) + ")"; };
    if (q.k == param_desc::kind::pointer) {
      if (a.k != launch_arg::kind::pointer)
        fail(which() + " needs a tile::buffer<" + std::string(tile::name(q.t)) + ">, got a number", loc);
      if (a.t != q.t)
        fail(which() + " needs a buffer of " + std::string(tile::name(q.t)) + ", got a buffer of " + std::string(tile::name(a.t)), loc);
      if (!a.alloc) fail(which() + " is an empty buffer", loc);
      if (!p.dev) p.dev = a.alloc->dev.get();
      else if (p.dev != a.alloc->dev.get())
        fail(which() + " is on device '" + a.alloc->dev->name() + "', earlier arguments on '" + p.dev->name() + "'", loc);
    } else if (a.k == launch_arg::kind::pointer) {
      fail(which() + " needs a number, got a buffer", loc);
    } else if (!is_float(q.t)) {
      if (a.k != launch_arg::kind::integer)
        fail(which() + " needs an integer, got a floating-point value", loc);
      if (a.t == dtype::i1 && q.t != dtype::i1) fail(which() + " needs an integer, got a bool", loc);
      bool huge = a.huge_unsigned || (a.t == dtype::u64 && a.i < 0);
      if (!int_fits(a.i, q.t, huge))
        fail(which() + ": the value " + (huge ? std::to_string(static_cast<std::uint64_t>(a.i)) : std::to_string(a.i)) +
                 " does not fit in " + std::string(tile::name(q.t)), loc);
    }
    const arg_class cls = classify(q, a, disjoint[r]);
    p.classes.push_back(cls);
    p.key.put(cls);
    ++r;
  }
  // meta-parameters against the signature
  for (auto& m : metas) {
    const bool fusion = m.name == "enable_fp_fusion";
    const bool specialize = m.name == "warp_specialize";
    const bool option = is_launch_option(m.name);
    bool known = option || std::find(meta_names.begin(), meta_names.end(), m.name) != meta_names.end();
    if (!known) {
      std::string list;
      for (auto& n : meta_names) list += (list.empty() ? "" : ", ") + n;
      fail("unknown meta-parameter '" + std::string(m.name) + "' (the kernel's are: " + (list.empty() ? "none" : list) + ")", loc);
    }
    if (fusion) {
      if (m.k != meta_value::kind::boolean) fail("enable_fp_fusion must be a bool", loc);
      p.fp_fusion = m.i != 0;
    } else if (specialize) {
      if (m.k != meta_value::kind::boolean) fail("warp_specialize must be a bool", loc);
      p.warp_specialize = m.i != 0 ? 1 : 0;
    } else if (option) {
      if (m.k != meta_value::kind::integer || m.i < 1) fail(std::string(m.name) + " must be a positive integer", loc);
      if (m.name == "num_warps") {
        if (m.i > 32 || (m.i & (m.i - 1))) fail("num_warps must be a power of two up to 32, got " + std::to_string(m.i), loc);
        p.num_warps = static_cast<int>(m.i);
      }
      if (m.name == "num_stages") p.num_stages = static_cast<int>(m.i);
    }
  }
  for (auto& q : params) {
    if (q.k != param_desc::kind::meta) continue;
    const meta_value* found = nullptr;
    for (auto& m : metas)
      if (m.name == q.name) {
        if (found) fail("meta-parameter '" + std::string(q.name) + "' given twice", loc);
        found = &m;
      }
    if (!found) fail("missing meta-parameter '" + std::string(q.name) + "'", loc);
    meta_value v = *found;
    if (q.mk == meta_value::kind::integer && v.k != meta_value::kind::integer)
      fail("meta-parameter '" + std::string(q.name) + "' is an integer, got a " +
               (v.k == meta_value::kind::boolean ? "bool" : "float"), loc);
    if (q.mk == meta_value::kind::boolean && v.k != meta_value::kind::boolean)
      fail("meta-parameter '" + std::string(q.name) + "' is a bool", loc);
    if (q.mk == meta_value::kind::floating && v.k == meta_value::kind::boolean)
      fail("meta-parameter '" + std::string(q.name) + "' is a float, got a bool", loc);
    if (q.mk == meta_value::kind::floating && v.k == meta_value::kind::integer) {
      v.f = static_cast<double>(v.i);
      v.k = meta_value::kind::floating;
    }
    v.name = q.name;
    p.metas.push_back(v);
    p.key.put(v.i);
    p.key.put(std::bit_cast<std::uint64_t>(v.f));
  }
  p.key.put(p.num_warps);
  p.key.put(p.num_stages);
  p.key.put(p.fp_fusion);
  p.key.put(p.warp_specialize);
  if (!p.dev) {
    try {
      p.dev = device::best().impl().get();  // opened devices are kept for the whole process
    } catch (const tile::error& e) {
      fail(e.message(), loc);
    }
  }
  p.key.put(p.dev);
}

namespace {
bool same_arg(const launch_arg& a, const launch_arg& b) {
  return a.k == b.k && a.t == b.t && a.addr == b.addr && a.i == b.i &&
         std::bit_cast<std::uint64_t>(a.f) == std::bit_cast<std::uint64_t>(b.f) && a.alloc == b.alloc &&
         a.bytes == b.bytes && a.huge_unsigned == b.huge_unsigned;
}
bool same_meta(const meta_value& a, const meta_value& b, const std::array<char, 32>& b_name) {
  return a.name.size() == b.name.size() && a.k == b.k && a.i == b.i &&
         std::bit_cast<std::uint64_t>(a.f) == std::bit_cast<std::uint64_t>(b.f) &&
         std::memcmp(a.name.data(), b_name.data(), a.name.size()) == 0;
}
}  // namespace

const compiled* kernel_core::state::repeat(prepared& p, std::span<const launch_arg> args,
                                           std::span<const meta_value> metas, drivers::packed_args& packed) const {
  std::unique_lock lock(memo.mu, std::try_to_lock);
  if (!lock.owns_lock() || !memo.valid || memo.n_args != args.size() || memo.n_given != metas.size()) return nullptr;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!same_arg(args[i], memo.args[i])) return nullptr;
    if (args[i].k == launch_arg::kind::pointer && args[i].alloc->dev.get() != memo.arg_dev[i]) return nullptr;
  }
  for (std::size_t i = 0; i < metas.size(); ++i)
    if (!same_meta(metas[i], memo.given[i], memo.given_names[i])) return nullptr;
  return restore(memo.to, p, packed);
}

void kernel_core::state::keep(resolution& to, const prepared& p, const compiled& c, const drivers::packed_args* packed) {
  const std::span<const meta_value> resolved = p.metas.span();
  to.n_metas = resolved.size();
  std::copy(resolved.begin(), resolved.end(), to.metas.begin());
  to.num_warps = p.num_warps;
  to.num_stages = p.num_stages;
  to.dev = p.dev;
  to.c = &c;
  to.packed_valid = packed != nullptr;
  if (packed) {
    std::copy_n(packed->slots.begin(), packed->n, to.packed.slots.begin());
    to.packed.n = packed->n;
  }
}

const compiled* kernel_core::state::restore(const resolution& from, prepared& p, drivers::packed_args& packed) {
  for (std::size_t i = 0; i < from.n_metas; ++i) p.metas.push_back(from.metas[i]);
  p.num_warps = from.num_warps;
  p.num_stages = from.num_stages;
  p.dev = from.dev;
  if (from.packed_valid) {
    std::copy_n(from.packed.slots.begin(), from.packed.n, packed.slots.begin());
    packed.n = from.packed.n;
  }
  return from.c;
}

void kernel_core::state::remember(const prepared& p, std::span<const launch_arg> args, std::span<const meta_value> metas,
                                  const compiled& c, const drivers::packed_args* packed) const {
  const std::span<const meta_value> resolved = p.metas.span();
  if (args.size() > kInlineArgs || metas.size() > kInlineMetas || resolved.size() > kInlineMetas) return;
  if (!pointer_params) return;  // a launch without a pointer takes device::best(), which may change: never remembered
  for (const meta_value& m : metas)
    if (m.name.size() > memo.given_names[0].size()) return;
  std::unique_lock lock(memo.mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  memo.n_args = args.size();
  memo.n_given = metas.size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    memo.args[i] = args[i];
    memo.arg_dev[i] = args[i].k == launch_arg::kind::pointer ? args[i].alloc->dev.get() : nullptr;
  }
  std::copy(metas.begin(), metas.end(), memo.given.begin());
  for (std::size_t i = 0; i < metas.size(); ++i) std::memcpy(memo.given_names[i].data(), metas[i].name.data(), metas[i].name.size());
  keep(memo.to, p, c, packed);
  memo.valid = true;
}

std::string kernel_core::state::spec_text(const prepared& p) const {
  std::string s;
  auto add = [&](const std::string& f) { s += (s.empty() ? "" : ", ") + f; };
  const std::span<const arg_class> classes = p.classes.span();
  std::size_t r = 0;
  for (auto& q : params)
    if (q.k != param_desc::kind::meta) add(param_str(q).substr(4) + describe(classes[r++]));  // (no "tl::")
  for (const meta_value& m : p.metas.span())
    add(std::string(m.name) + "=" +
        (m.k == meta_value::kind::boolean ? (m.i ? "true" : "false")
         : m.k == meta_value::kind::floating ? std::to_string(m.f)
                                             : std::to_string(m.i)));
  add("num_warps=" + std::to_string(p.num_warps));
  add("num_stages=" + std::to_string(p.num_stages));
  if (!p.fp_fusion) add("enable_fp_fusion=false");
  if (p.warp_specialize >= 0) add(p.warp_specialize ? "warp_specialize=true" : "warp_specialize=false");
  return s;
}

std::shared_ptr<compiled> kernel_core::state::build(const prepared& p) const {
  auto c = std::make_shared<compiled>();
  c->fn = trace(p);
  if (aot::recording()) aot::record({c->fn, spec_text(p)});  // TILE_AOT_RECORD
  // kernels built ahead of time (src/aot): a pre-filled cache the full library compiles past,
  // and all libtile_rt has
  const std::vector<std::string>& targets = p.dev->aot_targets();
  if (aot::any() && !targets.empty()) {
    const aot::archive* from = nullptr;
    if (const aot::entry* e = aot::find(aot::lookup_key(*c->fn), targets, &from)) {
      c->mod = aot::load_module(*e, *from, *c->fn, p.dev->driver());
      return c;
    }
  }
  if (!p.dev->compiles()) {
    std::string on;
    for (const auto& t : targets) on += (on.empty() ? "" : ", ") + t;
    const std::string spec = spec_text(p);
    throw tile::error("no prebuilt kernel for this specialization on " + p.dev->name() +
                          (on.empty() ? "" : " (targets " + on + ")") + ":\n    " + spec + aot::nearest(name, spec) +
                          "\n  this program has no compiler (libtile_rt): list the launch in its ahead-of-time build "
                          "(tile::aot::builder), or link libtile",
                      {}, name);
  }
  c->mod = p.dev->compile(c->fn);
  return c;
}

std::shared_ptr<ir::Function> kernel_core::state::trace(const prepared& p) const {
  auto fn = std::make_shared<ir::Function>();
  fn->name = name;
  fn->loc = defined_at;
  fn->num_warps = p.num_warps;
  fn->num_stages = p.num_stages;
  fn->fp_fusion = p.fp_fusion;
  fn->warp_specialize = p.warp_specialize;
  std::vector<node*> nodes;
  {
    frontend::Trace trace(*fn, name);
    const std::span<const arg_class> classes = p.classes.span();
    std::size_t r = 0;
    for (auto& q : params) {
      if (q.k == param_desc::kind::meta) continue;
      ir::Value* v = fn->body.add_arg(ir::Type{q.t, q.k == param_desc::kind::pointer, {}});
      fn->arg_info.push_back(arg_info(classes[r], r));
      if (traced_as_one(classes[r]))
        v = trace.builder().constant_int(v->type, 1, defined_at);  // specialized: equal to 1
      nodes.push_back(v);
      ++r;
    }
    tracer(nodes, p.metas.span());
    trace.builder().set_insertion_end(&fn->body);
    trace.builder().create(ir::OpKind::ret, {}, {}, {}, defined_at);
  }
  transforms::canonicalize(*fn, transforms::PassManager::Options::from_env());
  return fn;
}

const compiled& kernel_core::state::get(const prepared& p, src_loc loc) {
  if (const auto* e = last.load(std::memory_order_acquire); e && e->first == p.key.view()) return *e->second.done;
  std::optional<std::promise<std::shared_ptr<compiled>>> promise;  // (a promise allocates: only on a miss)
  std::shared_future<std::shared_ptr<compiled>> fut;
  std::string key;  // made only when this launch is the one that traces and compiles
  {
    std::lock_guard lock(mu);
    auto it = cache.find(p.key.view());  // no std::string made for the lookup
    if (it != cache.end() && it->second.done) {
      last.store(&*it, std::memory_order_release);
      return *it->second.done;
    }
    if (it != cache.end()) {
      fut = it->second.fut;
    } else {
      key = std::string(p.key.view());
      fut = promise.emplace().get_future().share();
      cache.emplace(key, entry{fut, nullptr});
      ++traces;
    }
  }
  if (key.empty()) return *fut.get();  // waits (outside the lock) while another thread compiles
  try {
    std::shared_ptr<compiled> c = build(p);
    {
      std::lock_guard lock(mu);
      auto it = cache.find(key);
      it->second.done = c;
      last.store(&*it, std::memory_order_release);
    }
    promise->set_value(std::move(c));
  } catch (const tile::error& e) {
    {
      std::lock_guard lock(mu);
      cache.erase(key);  // a failed trace is retried by the next launch
    }
    // Errors found while tracing name the user's line in the kernel; others name the launch.
    auto err = e.where().known() ? e : tile::error(e.message(), loc, name);
    promise->set_exception(std::make_exception_ptr(err));
    throw err;
  } catch (...) {
    {
      std::lock_guard lock(mu);
      cache.erase(key);
    }
    promise->set_exception(std::current_exception());
    throw;
  }
  return *fut.get();
}

kernel_core::kernel_core(std::string name, std::vector<param_desc> params, tracer_fn tracer, src_loc defined_at)
    : s_(std::make_shared<state>()) {
  s_->name = std::move(name);
  s_->params = std::move(params);
  for (auto& p : s_->params)
    if (p.k == param_desc::kind::meta) s_->meta_names.emplace_back(p.name);
  s_->runtime_params = s_->params.size() - s_->meta_names.size();
  for (auto& p : s_->params) s_->pointer_params |= p.k == param_desc::kind::pointer;
  // names must outlive the launch: point the descriptors at the owned copies
  std::size_t m = 0;
  for (auto& p : s_->params)
    if (p.k == param_desc::kind::meta) p.name = s_->meta_names[m++];
  s_->tracer = std::move(tracer);
  s_->defined_at = defined_at;
}

const std::string& kernel_core::name() const { return s_->name; }

std::size_t kernel_core::traces() const {
  std::lock_guard lock(s_->mu);
  return s_->traces;
}

std::string kernel_core::ir(std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const {
  state::prepared p(args.size(), s_->meta_names.size());
  s_->prepare(p, args, metas, loc);
  return ir::print(*s_->get(p, loc).fn);
}

std::uint64_t kernel_core::ir_hash(std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const {
  state::prepared p(args.size(), s_->meta_names.size());
  s_->prepare(p, args, metas, loc);
  try {
    return ir::structural_hash(*s_->trace(p));
  } catch (const tile::error& e) {
    throw e.where().known() ? e : tile::error(e.message(), loc, s_->name);
  }
}

traced_launch kernel_core::trace_launch(std::span<const launch_arg> args, std::span<const meta_value> metas,
                                        src_loc loc) const {
  state::prepared p(args.size(), s_->meta_names.size());
  s_->prepare(p, args, metas, loc);
  try {
    return {s_->trace(p), s_->spec_text(p)};
  } catch (const tile::error& e) {
    throw e.where().known() ? e : tile::error(e.message(), loc, s_->name);
  }
}

std::shared_ptr<const drivers::module> kernel_core::module(std::span<const launch_arg> args,
                                                           std::span<const meta_value> metas, src_loc loc) const {
  state::prepared p(args.size(), s_->meta_names.size());
  s_->prepare(p, args, metas, loc);
  const compiled& c = s_->get(p, loc);
  return {s_, c.mod.get()};  // keeps the kernel's state, and so the compiled kernel, alive
}

drivers::launch_config kernel_core::state::config(const launch_grid& grid, const prepared& p, src_loc loc) const {
  grid3 g = grid.extents;
  if (grid.fn) {
    meta m(p.metas.span(), loc);
    try {
      g = grid.fn(m);
    } catch (const tile::error& e) {
      if (!e.kernel().empty()) throw;
      throw tile::error(e.message(), e.where().known() ? e.where() : loc, name);
    }
  }
  const std::int64_t limits[3] = {std::numeric_limits<std::int32_t>::max(), 65535, 65535};
  const std::int64_t ext[3] = {g.x, g.y, g.z};
  for (int i = 0; i < 3; ++i)
    if (ext[i] < 0 || ext[i] > limits[i])
      fail("grid extent " + std::string(1, "xyz"[i]) + " = " + std::to_string(ext[i]) + " is outside [0, " +
               std::to_string(limits[i]) + "]", loc);
  drivers::launch_config cfg;
  cfg.grid[0] = static_cast<std::uint32_t>(g.x);
  cfg.grid[1] = static_cast<std::uint32_t>(g.y);
  cfg.grid[2] = static_cast<std::uint32_t>(g.z);
  cfg.num_warps = p.num_warps;
  cfg.num_stages = p.num_stages;
  cfg.kernel = name;
  cfg.where = loc;
  return cfg;
}

void kernel_core::state::remember_typed(const launch_fingerprint& fp, const prepared& p, const compiled& c,
                                        const drivers::packed_args& packed) const {
  const std::span<const meta_value> resolved = p.metas.span();
  if (!pointer_params) return;  // a launch without a pointer takes device::best(), which may change: never remembered
  if (fp.words.size() > kFingerprintWords || resolved.size() > kInlineMetas) return;
  std::unique_lock lock(typed.mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  typed.tag = fp.tag;
  typed.n_words = fp.words.size();
  std::copy(fp.words.begin(), fp.words.end(), typed.words.begin());
  keep(typed.to, p, c, &packed);
  typed.valid = true;
}

bool kernel_core::launch_repeat(const launch_grid& grid, const launch_fingerprint& fp, src_loc loc) const {
  state& s = *s_;
  state::prepared p(0, s.meta_names.size());
  drivers::packed_args packed;
  const compiled* c = nullptr;
  {
    std::unique_lock lock(s.typed.mu, std::try_to_lock);
    if (!lock.owns_lock() || !s.typed.valid || s.typed.tag != fp.tag || s.typed.n_words != fp.words.size() ||
        !std::equal(fp.words.begin(), fp.words.end(), s.typed.words.begin()))
      return false;
    c = state::restore(s.typed.to, p, packed);
  }
  s.issue(*p.dev, *c, s.config(grid, p, loc), nullptr, &packed, loc);
  return true;
}

void kernel_core::launch(const launch_grid& grid, std::span<const launch_arg> args, std::span<const meta_value> metas,
                         src_loc loc, const launch_fingerprint* fp) const {
  state::prepared p(args.size(), s_->meta_names.size());
  constexpr std::size_t unpacked = std::numeric_limits<std::size_t>::max();
  drivers::packed_args packed;
  packed.n = unpacked;
  const compiled* hit = s_->repeat(p, args, metas, packed);
  const bool repeated = hit != nullptr;
  if (!repeated) {
    s_->prepare(p, args, metas, loc);
    hit = &s_->get(p, loc);
  }
  const compiled& c = *hit;
  const drivers::launch_config cfg = s_->config(grid, p, loc);
  // A launch that repeats the last one's arguments issues them as the driver packed them then.
  if (packed.n != unpacked) {
    if (fp) s_->remember_typed(*fp, p, c, packed);
    return s_->issue(*p.dev, c, cfg, nullptr, &packed, loc);
  }
  // The drivers' arguments; a pointer's `what` stays empty (drivers::describe_arg builds it
  // where a message needs it).
  inline_array<drivers::kernel_arg, kInlineArgs> kargs(args.size());
  std::size_t r = 0;
  for (auto& q : s_->params) {
    if (q.k == param_desc::kind::meta) continue;
    const launch_arg& a = args[r];
    drivers::kernel_arg& k = kargs.emplace_back();
    k.t = q.t;
    if (q.k == param_desc::kind::pointer) {
      k.k = drivers::kernel_arg::kind::pointer;
      k.addr = a.addr;
      k.extent_bytes = a.bytes;
    } else if (is_float(q.t)) {
      k.k = drivers::kernel_arg::kind::floating;
      k.f = a.k == launch_arg::kind::floating ? a.f : static_cast<double>(a.i);
    } else {
      k.k = drivers::kernel_arg::kind::integer;
      k.i = a.i;
    }
    ++r;
  }
  // Packed once here, where the driver has a packed form, and kept with the memo.
  bool have_packed = false;
  try {
    have_packed = p.dev->driver().pack(*c.mod, cfg, kargs.span(), packed);
  } catch (const tile::error& e) {
    if (e.kernel().empty()) throw tile::error(e.message(), e.where().known() ? e.where() : loc, s_->name);
    throw;
  }
  if (!repeated) s_->remember(p, args, metas, c, have_packed ? &packed : nullptr);
  if (fp && have_packed) s_->remember_typed(*fp, p, c, packed);
  s_->issue(*p.dev, c, cfg, have_packed ? nullptr : &kargs, have_packed ? &packed : nullptr, loc);
}

void kernel_core::state::issue(device_impl& dev, const compiled& c, const drivers::launch_config& cfg,
                               const inline_array<drivers::kernel_arg, kInlineArgs>* kargs,
                               const drivers::packed_args* packed, src_loc loc) const {
  drivers::driver& drv = dev.driver();
  auto go = [&] {
    if (packed)
      drv.launch_packed(*c.mod, cfg, *packed);
    else
      drv.launch(*c.mod, cfg, kargs->span());
  };
  try {
    if (prof::detail::observed()) {  // a profiling session or a launch hook (src/runtime/prof)
      prof::detail::launch_observer obs(dev, cfg, packed ? packed->n : kargs->span().size());
      go();
      obs.done();
    } else {
      go();
    }
  } catch (const tile::error& e) {
    if (e.kernel().empty()) throw tile::error(e.message(), e.where().known() ? e.where() : loc, name);
    throw;
  }
}

}  // namespace detail
}  // namespace tile

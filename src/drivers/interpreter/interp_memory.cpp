// src/drivers/interpreter/interp_memory.cpp — layer: drivers (interpreter). Checked memory access:
// load, store, atomic_rmw and atomic_cas. Every active lane's access [addr, addr + size) must lie
// inside one Region of the launch, else a tile::error names the kernel, the program, the element,
// the address and the nearest buffer. Atomics run under one process-wide mutex.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>

#include "drivers/interpreter/interp_values.hpp"

namespace tile::interp {

namespace {

std::mutex& atomic_mutex() {
  static std::mutex m;
  return m;
}

/// Checks the accesses of the active lanes before any of them happens.
class Checker {
 public:
  /// `origin`: the region the pointers derive from (Val::origin), or -1 for any region.
  Checker(const ir::Op& op, const Context& cx, const char* what, const char* verb, std::uint64_t size, int origin)
      : op_(op), cx_(cx), what_(what), verb_(verb), size_(size) {
    if (origin >= 0 && static_cast<std::size_t>(origin) < cx_.mem.size()) origin_ = &cx_.mem[static_cast<std::size_t>(origin)];
  }

  void check(std::uint64_t addr, std::size_t lane) {
    if (origin_) {
      if (!inside(*origin_, addr)) report(addr, lane);
      return;
    }
    if (last_ && inside(*last_, addr)) return;
    for (const Region& r : cx_.mem)
      if (inside(r, addr)) {
        last_ = &r;
        return;
      }
    report(addr, lane);
  }

 private:
  const ir::Op& op_;
  const Context& cx_;
  const char* what_;
  const char* verb_;
  std::uint64_t size_;
  const Region* last_ = nullptr;
  const Region* origin_ = nullptr;

  bool inside(const Region& r, std::uint64_t addr) const {
    return addr >= r.base && addr - r.base <= r.bytes && r.bytes - (addr - r.base) >= size_;
  }

  [[noreturn]] void report(std::uint64_t addr, std::size_t lane) const {
    const ir::Type& pt = op_.operand(0)->type;
    const ir::Type vt{pt.elem, false, pt.shape};
    char at[32];
    std::snprintf(at, sizeof at, "0x%" PRIx64, addr);
    std::string m = std::string("out-of-bounds ") + what_ + ": " + cx_.program();
    if (pt.shape.empty())
      m += ", scalar (" + vt.str() + ")";
    else
      m += ", element [" + index_text(lane, pt.shape) + "] (of " + vt.str() + ")";
    m += " " + std::string(verb_) + " " + std::to_string(size_) + (size_ == 1 ? " byte" : " bytes") + " at " + at;
    if (origin_)  // derived from one argument: said relative to that argument's buffer
      for (const Region& r : cx_.mem)
        if (&r != origin_ && inside(r, addr)) {
          m += ", inside " + r.what + " although the pointer was derived from " + origin_->what;
          cx_.fail(op_, m);
        }
    // the nearest region by address distance (the pointer's own, when known)
    const Region* best = nullptr;
    std::uint64_t best_d = 0;
    for (const Region& r : cx_.mem) {
      if (origin_ && &r != origin_) continue;
      const std::uint64_t end = r.base + r.bytes;
      std::uint64_t d = addr >= end ? addr - end : addr < r.base ? r.base - addr : 0;
      if (!best || d < best_d) best = &r, best_d = d;
    }
    const bool near = best && addr != 0 && best_d <= std::max<std::uint64_t>(best->bytes, 4096);
    if (!near) {
      m += addr == 0 ? " (a null pointer)" : "";
      m += ", which is not inside any buffer passed to the kernel";
    } else {
      const std::uint64_t end = best->base + best->bytes;
      auto bytes = [](std::uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); };
      if (addr >= end)
        m += ", " + bytes(addr - end) + " past the end of " + best->what;
      else if (addr < best->base)
        m += addr + size_ > best->base ? ", straddling the start of " + best->what
                                       : ", " + bytes(best->base - addr) + " before the start of " + best->what;
      else
        m += ", straddling the end of " + best->what;
    }
    cx_.fail(op_, m);
  }
};

const std::uint8_t* mask_of(const Val* mask, std::size_t& stride) {
  if (!mask) return nullptr;
  stride = mask->stride();
  return mask->p<std::uint8_t>();
}

template <class S>
S read(std::uint64_t addr) {
  S v;
  std::memcpy(&v, reinterpret_cast<const void*>(addr), sizeof(S));
  return v;
}
template <class S>
void write(std::uint64_t addr, S v) {
  std::memcpy(reinterpret_cast<void*>(addr), &v, sizeof(S));
}

}  // namespace

Val eval_load(const ir::Op& op, const Context& cx, const Val& ptr, const Val* mask, const Val* other) {
  const dtype t = ptr.elem;
  const std::size_t n = ptr.n;
  std::size_t ms = 0;
  const std::uint8_t* m = mask_of(mask, ms);
  const std::uint64_t* p = ptr.p<std::uint64_t>();
  Checker chk(op, cx, "load", "reads", static_cast<std::uint64_t>(size_of(t)), ptr.origin);
  for (std::size_t k = 0; k < n; ++k)
    if (!m || m[k * ms]) chk.check(p[k], k);
  return with_storage(t, false, [&](auto tg) {
    using S = typename decltype(tg)::type;
    std::vector<S> r(n);
    const S* o = other ? other->p<S>() : nullptr;
    const std::size_t os = other ? other->stride() : 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (m && !m[k * ms]) {
        r[k] = o ? o[k * os] : S{};
        continue;
      }
      S v = read<S>(p[k]);
      if (t == dtype::i1) v = static_cast<S>(v != 0);
      r[k] = v;
    }
    return make_val(t, false, std::move(r));
  });
}

void eval_store(const ir::Op& op, const Context& cx, const Val& ptr, const Val& value, const Val* mask) {
  const dtype t = ptr.elem;
  const std::size_t n = ptr.n;
  std::size_t ms = 0;
  const std::uint8_t* m = mask_of(mask, ms);
  const std::uint64_t* p = ptr.p<std::uint64_t>();
  Checker chk(op, cx, "store", "writes", static_cast<std::uint64_t>(size_of(t)), ptr.origin);
  for (std::size_t k = 0; k < n; ++k)
    if (!m || m[k * ms]) chk.check(p[k], k);
  with_storage(value, [&](auto tg) {
    using S = typename decltype(tg)::type;
    const S* v = value.p<S>();
    const std::size_t vs = value.stride();
    for (std::size_t k = 0; k < n; ++k)
      if (!m || m[k * ms]) write<S>(p[k], v[k * vs]);
  });
}

namespace {

/// The new memory value of one atomic_rmw lane.
template <class S>
S rmw(atomic_kind kind, S old, S v, dtype t) {
  if constexpr (std::is_same_v<S, std::uint16_t>) {
    if (is_float(t)) {  // f16 / bf16: computed in float, rounded
      const float a = static_cast<float>(float_storage_to_double(old, t));
      const float b = static_cast<float>(float_storage_to_double(v, t));
      float r = b;
      switch (kind) {
        case atomic_kind::add: r = a + b; break;
        case atomic_kind::max: r = max_num(a, b); break;
        case atomic_kind::min: r = min_num(a, b); break;
        case atomic_kind::xchg: return v;
        default: return v;
      }
      return double_to_float_storage<std::uint16_t>(r, t);
    }
  }
  if constexpr (std::is_floating_point_v<S>) {
    switch (kind) {
      case atomic_kind::add: return old + v;
      case atomic_kind::max: return max_num(old, v);
      case atomic_kind::min: return min_num(old, v);
      default: return v;  // xchg
    }
  } else {
    using W = std::conditional_t<(sizeof(S) < sizeof(unsigned)), unsigned, std::make_unsigned_t<S>>;
    S r = v;
    switch (kind) {
      case atomic_kind::add: r = static_cast<S>(static_cast<W>(old) + static_cast<W>(v)); break;
      case atomic_kind::max: r = std::max(old, v); break;
      case atomic_kind::min: r = std::min(old, v); break;
      case atomic_kind::xchg: r = v; break;
      case atomic_kind::bit_and: r = static_cast<S>(old & v); break;
      case atomic_kind::bit_or: r = static_cast<S>(old | v); break;
      case atomic_kind::bit_xor: r = static_cast<S>(old ^ v); break;
    }
    if (t == dtype::i1) r = static_cast<S>(r & 1);
    return r;
  }
}

}  // namespace

Val eval_atomic_rmw(const ir::Op& op, const Context& cx, const Val& ptr, const Val& value, const Val* mask) {
  const dtype t = ptr.elem;
  const auto kind = static_cast<atomic_kind>(op.attrs.ints.at(0));
  const std::size_t n = ptr.n;
  std::size_t ms = 0;
  const std::uint8_t* m = mask_of(mask, ms);
  const std::uint64_t* p = ptr.p<std::uint64_t>();
  Checker chk(op, cx, "atomic", "writes", static_cast<std::uint64_t>(size_of(t)), ptr.origin);
  for (std::size_t k = 0; k < n; ++k)
    if (!m || m[k * ms]) chk.check(p[k], k);
  return with_storage(t, false, [&](auto tg) {
    using S = typename decltype(tg)::type;
    const S* v = value.p<S>();
    const std::size_t vs = value.stride();
    std::vector<S> old(n);
    std::lock_guard lock(atomic_mutex());
    for (std::size_t k = 0; k < n; ++k) {
      if (m && !m[k * ms]) continue;
      S o = read<S>(p[k]);
      if (t == dtype::i1) o = static_cast<S>(o != 0);
      old[k] = o;
      write<S>(p[k], rmw<S>(kind, o, v[k * vs], t));
    }
    return make_val(t, false, std::move(old));
  });
}

Val eval_atomic_cas(const ir::Op& op, const Context& cx, const Val& ptr, const Val& cmp, const Val& value) {
  const dtype t = ptr.elem;
  const std::size_t n = ptr.n;
  const std::uint64_t* p = ptr.p<std::uint64_t>();
  Checker chk(op, cx, "atomic", "writes", static_cast<std::uint64_t>(size_of(t)), ptr.origin);
  for (std::size_t k = 0; k < n; ++k) chk.check(p[k], k);
  return with_storage(t, false, [&](auto tg) {
    using S = typename decltype(tg)::type;
    const S* c = cmp.p<S>();
    const S* v = value.p<S>();
    const std::size_t cs = cmp.stride(), vs = value.stride();
    std::vector<S> old(n);
    std::lock_guard lock(atomic_mutex());
    for (std::size_t k = 0; k < n; ++k) {
      S o = read<S>(p[k]);
      if (t == dtype::i1) o = static_cast<S>(o != 0);
      old[k] = o;
      // compares the memory representation (bit patterns), as hardware CAS does
      if (std::memcmp(&o, &c[k * cs], sizeof(S)) == 0) write<S>(p[k], v[k * vs]);
    }
    return make_val(t, false, std::move(old));
  });
}

}  // namespace tile::interp

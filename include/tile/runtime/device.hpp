// tile/runtime/device.hpp — layer: runtime (public). Devices (backends present on this machine)
// and typed device buffers.
//
//   auto dev = tile::device::best();        // honours TILE_BACKEND=interpreter|…
//   auto x = dev.upload(std::span(host));   // tile::buffer<float>
//   std::vector<float> back = x.to_host();
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"

namespace tile {

namespace detail {
class device_impl;  // a backend's driver and compiler (src/runtime)

/// One allocation of device memory; freed when the last buffer referring to it goes.
struct allocation {
  std::shared_ptr<device_impl> dev;
  std::uint64_t addr = 0;
  std::size_t bytes = 0;
  bool owned = true;  // false: memory the caller allocated (device::adopt), never freed here
  allocation(std::shared_ptr<device_impl> d, std::size_t n);
  /// Memory allocated outside tile, checked by the backend's driver (device::adopt).
  allocation(std::shared_ptr<device_impl> d, std::uint64_t addr, std::size_t n, std::source_location where);
  ~allocation();
  allocation(const allocation&) = delete;
  allocation& operator=(const allocation&) = delete;
};
void copy_to_device(const allocation& a, std::size_t offset, const void* src, std::size_t bytes);
void copy_to_host(const allocation& a, std::size_t offset, void* dst, std::size_t bytes);
/// copy_to_host into memory that lives only until the call returns (buffer::to_host): an error
/// naming `where` while the device's stream is captured into a graph.
void read_to_host(const allocation& a, std::size_t offset, void* dst, std::size_t bytes, std::source_location where);
void fill_bytes(const allocation& a, std::size_t offset, unsigned char value, std::size_t bytes);
}  // namespace detail

template <class T>
class buffer;
template <class T>
struct buffer_view;

/// Work queue of a device. On the interpreter every operation completes before it returns.
class stream {
 public:
  /// Waits for the work sent to it; an error (a kernel's fault, a stream being captured into a
  /// graph) names the caller's line.
  void synchronize(std::source_location where = std::source_location::current()) const;
  const std::shared_ptr<detail::device_impl>& device_impl() const { return dev_; }

 private:
  friend class device;
  explicit stream(std::shared_ptr<detail::device_impl> d) : dev_(std::move(d)) {}
  std::shared_ptr<detail::device_impl> dev_;
};

namespace detail {
class autotuner_core;
}

class device {
 public:
  /// The best backend present (CUDA, HIP, CPU JIT, interpreter, in that order as they land),
  /// or the one TILE_BACKEND names. Never the compile-only "null" backend unless TILE_BACKEND
  /// names it.
  static device best();
  /// A named backend ("interpreter", "cpu", "null"); throws tile::error saying why it is
  /// unavailable.
  static device get(std::string_view backend, int index = 0);
  /// The backends this build knows, each with whether it is present and why not.
  struct backend_status {
    std::string name;
    bool available;
    std::string reason;
  };
  static std::vector<backend_status> backends();

  std::string name() const;     // "interpreter", "null (sm_90a)"
  std::string backend() const;  // "interpreter", "null"
  /// Whether launches on this device run, so buffers hold the kernels' results. False for the
  /// compile-only null backend (TILE_BACKEND=null): kernels are compiled for TILE_TARGET and
  /// every launch is checked, but nothing runs; a program should not check its results there.
  bool computes() const;
  /// Waits for every launch and copy sent to this device; an error (a kernel's fault, a stream
  /// being captured into a graph) names the caller's line.
  void synchronize(std::source_location where = std::source_location::current()) const;
  stream default_stream() const { return stream(impl_); }

  template <class T>
  buffer<T> alloc(std::size_t n) const {
    return buffer<T>(std::make_shared<detail::allocation>(impl_, n * sizeof(T)), n);
  }
  template <class T>
  buffer<T> upload(std::span<const T> host) const {
    buffer<T> b = alloc<T>(host.size());
    b.copy_from(host);
    return b;
  }
  template <class T>
  buffer<T> upload(const std::vector<T>& host) const {
    return upload(std::span<const T>(host));
  }

  /// `n` elements of T at `device_address`, memory the caller allocated and keeps alive (an
  /// engine's own buffers, cuMemAlloc or cudaMalloc memory, a torch tensor's data_ptr()), as a
  /// buffer that kernels and copies use like any other; tile never frees it. The driver checks
  /// the address first: a host pointer, another device's memory or a range past the end of its
  /// allocation is a tile::error naming the caller's line. The interpreter (it checks accesses
  /// against the memory it allocated itself) and the compile-only null backend refuse every
  /// address; the cpu backend takes host memory.
  template <class T>
  buffer<T> adopt(std::uint64_t device_address, std::size_t n,
                  std::source_location where = std::source_location::current()) const {
    if (n > static_cast<std::size_t>(-1) / sizeof(T))
      throw tile::error("device::adopt: " + std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                            " bytes overflow the address space", where);
    return buffer<T>(std::make_shared<detail::allocation>(impl_, device_address, n * sizeof(T), where), n);
  }
  /// Sends this device's later launches and copies to `native`, a stream the caller created
  /// and keeps alive (a CUstream, e.g. PyTorch's current stream); null goes back to the default
  /// stream. Backends without streams accept only null.
  void set_native_stream(void* native, std::source_location where = std::source_location::current()) const;
  /// The stream set_native_stream gave (null: the default stream).
  void* native_stream() const;
  /// Whether that stream is being captured into a CUDA graph (the caller began a capture on
  /// it, cuStreamBeginCapture or cudaStreamBeginCapture): launches, copies and fills are then
  /// recorded into the caller's graph and run each time the graph is launched; host memory a
  /// copy reads or writes must outlive the graph. Waiting (synchronize, buffer::to_host) and
  /// autotuning a kernel not tuned before are errors while it lasts. A kernel launched for
  /// the first time during the capture is compiled and loaded then, outside the graph.
  /// Always false without streams.
  bool capturing() const;

  const std::shared_ptr<detail::device_impl>& impl() const { return impl_; }
  bool operator==(const device& o) const { return impl_ == o.impl_; }

 private:
  friend class detail::autotuner_core;  // times the device its launch arguments live on
  explicit device(std::shared_ptr<detail::device_impl> i) : impl_(std::move(i)) {}
  std::shared_ptr<detail::device_impl> impl_;
};

/// Device memory holding `size()` elements of T. Copies share the memory (like a handle).
template <class T>
class buffer {
 public:
  using element_type = T;
  buffer() = default;
  buffer(std::shared_ptr<detail::allocation> a, std::size_t n) : a_(std::move(a)), n_(n) {}

  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  std::uint64_t address() const { return a_ ? a_->addr : 0; }
  const std::shared_ptr<detail::allocation>& allocation() const { return a_; }

  void copy_from(std::span<const T> host,
                 std::source_location l = std::source_location::current()) const {
    if (host.size() != n_)
      throw tile::error("copy_from: host data has " + std::to_string(host.size()) +
                            " elements, the buffer " + std::to_string(n_), l);
    if (n_) detail::copy_to_device(*a_, 0, host.data(), bytes());
  }
  void copy_from(const std::vector<T>& host,
                 std::source_location l = std::source_location::current()) const {
    copy_from(std::span<const T>(host), l);
  }
  /// The elements, in a new host vector (after the work queued before; an error while the
  /// stream is captured into a graph: copy_to memory that outlives the graph there).
  std::vector<T> to_host(std::source_location l = std::source_location::current()) const {
    std::vector<T> out(n_);
    if (n_) detail::read_to_host(*a_, 0, out.data(), bytes(), l);
    return out;
  }
  /// Copies the elements into `host`, which has as many (after the work queued before; on a
  /// stream captured into a graph the copy is recorded, and `host` is written when the graph
  /// runs).
  void copy_to(std::span<T> host, std::source_location l = std::source_location::current()) const {
    if (host.size() != n_)
      throw tile::error("copy_to: host memory has " + std::to_string(host.size()) + " elements, the buffer " +
                            std::to_string(n_), l);
    if (n_) detail::copy_to_host(*a_, 0, host.data(), bytes());
  }
  void fill_zero() const {
    if (n_) detail::fill_bytes(*a_, 0, 0, bytes());
  }
  /// Elements [offset, offset + count) as a kernel argument (accesses are checked against it).
  buffer_view<T> view(std::size_t offset, std::size_t count,
                      std::source_location l = std::source_location::current()) const {
    if (offset > n_ || count > n_ - offset)
      throw tile::error("buffer view [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                            ") exceeds the buffer's " + std::to_string(n_) + " elements", l);
    return {a_, offset, count};
  }

 private:
  std::shared_ptr<detail::allocation> a_;
  std::size_t n_ = 0;
};

/// A part of a buffer, passed to a kernel as a pointer to its first element.
template <class T>
struct buffer_view {
  using element_type = T;
  std::shared_ptr<detail::allocation> alloc;
  std::size_t offset = 0;
  std::size_t count = 0;
  std::uint64_t address() const { return alloc->addr + offset * sizeof(T); }
};

/// Integer ceiling division on the host (grids).
template <class A, class B>
constexpr auto cdiv(A a, B b) {
  return (a + b - 1) / b;
}

}  // namespace tile

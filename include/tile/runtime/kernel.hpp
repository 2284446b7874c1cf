// tile/runtime/kernel.hpp — layer: runtime (public). Kernels defined inline and launched on a
// grid, Triton style:
//
//   auto add = tile::kernel("add", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n,
//                                     tl::constexpr_<"BLOCK"> BLOCK) { … });
//   add[{tile::cdiv(n, 1024)}](x, out, n, "BLOCK"_c = 1024);
//   add[grid_fn](x, out, n, "BLOCK"_c = 1024);   // grid_fn(const tile::meta&) -> tile::grid3
//
// The launch is checked by the compiler against the kernel's signature: argument count and
// types, and meta-parameter names (a misspelt or missing "BLOCK"_c does not compile). The
// kernel is traced once per specialization (dtypes, meta-parameter values, integers equal to 1,
// pointers and integers divisible by 16) and cached; launching from many threads is safe.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tile/core/dtype.hpp"
#include "tile/core/error.hpp"
#include "tile/core/fixed_string.hpp"
#include "tile/runtime/device.hpp"
#include "tile/tl/types.hpp"

namespace tile::drivers {
struct module;  // a kernel compiled for one backend (src/drivers)
}
namespace tile::ir {
struct Function;  // the tile IR (src/ir)
}

namespace tile {

/// Grid extents (program instances along x, y, z).
struct grid3 {
  std::int64_t x = 1, y = 1, z = 1;
};

namespace detail {
struct meta_value {
  enum class kind : std::uint8_t { integer, floating, boolean };
  std::string_view name;
  kind k = kind::integer;
  std::int64_t i = 0;
  double f = 0.0;
};
struct launch_arg {
  enum class kind : std::uint8_t { pointer, integer, floating };
  kind k = kind::integer;
  dtype t = dtype::i32;
  std::uint64_t addr = 0;        // pointers
  std::int64_t i = 0;            // integers (bit pattern for u64)
  double f = 0.0;                // floats
  const allocation* alloc = nullptr;  // pointers: the memory they may access
  std::uint64_t bytes = 0;       // pointers: the extent of the view from addr
  bool huge_unsigned = false;    // an unsigned 64-bit host value >= 2^63 (stored in i as bits)
};
struct param_desc {
  enum class kind : std::uint8_t { pointer, scalar, meta };
  kind k = kind::scalar;
  dtype t = dtype::i32;
  std::string_view name;  // meta-parameters
  meta_value::kind mk = meta_value::kind::integer;
};
using tracer_fn = std::function<void(std::span<node* const> args, std::span<const meta_value> metas)>;
}  // namespace detail

/// Meta-parameter values, as a grid function sees them.
class meta {
 public:
  meta(std::span<const detail::meta_value> v, src_loc l) : values_(v), loc_(l) {}
  /// An integer (or bool) meta-parameter's value; tile::error if absent.
  std::int64_t operator[](std::string_view name) const;
  double get_float(std::string_view name) const;
  bool has(std::string_view name) const;

 private:
  const detail::meta_value* find(std::string_view name) const;
  std::span<const detail::meta_value> values_;
  src_loc loc_;
};

/// The grid of a launch: up to three extents, or a function of the meta-parameters. Captures
/// the launch's source line.
struct launch_grid {
  std::function<grid3(const meta&)> fn;  // the grid function; empty for fixed extents
  grid3 extents{};                        // the fixed extents (used when fn is empty)
  src_loc loc;

  template <class X>
    requires std::is_integral_v<X>
  launch_grid(X x, std::source_location l = std::source_location::current())  // NOLINT
      : extents{static_cast<std::int64_t>(x), 1, 1}, loc(l) {}
  template <class X, class Y>
    requires std::is_integral_v<X> && std::is_integral_v<Y>
  launch_grid(X x, Y y, std::source_location l = std::source_location::current())
      : extents{static_cast<std::int64_t>(x), static_cast<std::int64_t>(y), 1}, loc(l) {}
  template <class X, class Y, class Z>
    requires std::is_integral_v<X> && std::is_integral_v<Y> && std::is_integral_v<Z>
  launch_grid(X x, Y y, Z z, std::source_location l = std::source_location::current())
      : extents{static_cast<std::int64_t>(x), static_cast<std::int64_t>(y), static_cast<std::int64_t>(z)}, loc(l) {}
  launch_grid(grid3 g, std::source_location l = std::source_location::current())  // NOLINT
      : extents(g), loc(l) {}
  template <class F>
    requires std::is_invocable_r_v<grid3, F, const meta&>
  launch_grid(F f, std::source_location l = std::source_location::current())  // NOLINT
      : fn(std::move(f)), loc(l) {}
};

/// "BLOCK"_c = 1024: a named meta-parameter value at a launch.
template <fixed_string Name, class T>
struct meta_arg {
  static constexpr fixed_string name = Name;
  T value;
};
template <fixed_string Name>
struct meta_name {
  template <class V>
  constexpr auto operator=(V v) const {  // NOLINT: builds a meta_arg, assigns nothing
    if constexpr (std::is_same_v<V, bool>)
      return meta_arg<Name, bool>{v};
    else if constexpr (std::is_integral_v<V>)
      return meta_arg<Name, std::int64_t>{static_cast<std::int64_t>(v)};
    else {
      static_assert(std::is_floating_point_v<V>, "a meta-parameter value is an integer, a bool or a float");
      return meta_arg<Name, double>{static_cast<double>(v)};
    }
  }
};
namespace literals {
template <fixed_string S>
constexpr meta_name<S> operator""_c() {
  return {};
}
}  // namespace literals

namespace detail {

/// A launch's specialization traced (not cached, not compiled): what an ahead-of-time build
/// lists (tile::aot::builder).
struct traced_launch {
  std::shared_ptr<const ir::Function> fn;
  std::string spec;  // the specialization as messages name it: arguments' classes, metas, options
};

struct launch_fingerprint;  // (below)

/// The non-template core of every kernel: specialization, the cache of traced and compiled
/// kernels, and launching (src/runtime/kernel.cpp).
class kernel_core {
 public:
  kernel_core(std::string name, std::vector<param_desc> params, tracer_fn tracer, src_loc defined_at);
  /// Launches; a typed launch passes its fingerprint, remembered with what the launch resolved
  /// to (the compiled kernel, the meta-parameters, the driver's packed arguments).
  void launch(const launch_grid& grid, std::span<const launch_arg> args, std::span<const meta_value> metas,
              src_loc loc, const launch_fingerprint* fp = nullptr) const;
  /// Launches as the last launch remembered with an equal fingerprint did, with this launch's
  /// grid; false, having done nothing, where there is none (the caller then calls launch()).
  bool launch_repeat(const launch_grid& grid, const launch_fingerprint& fp, src_loc loc) const;
  /// The tile IR (after canonicalization) the kernel compiles to for these arguments.
  std::string ir(std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const;
  /// The backend's compiled kernel for these arguments, traced and compiled first if need be
  /// (internal: for tools that launch it through the driver themselves, src/runtime/kernel_access.hpp).
  std::shared_ptr<const drivers::module> module(std::span<const launch_arg> args, std::span<const meta_value> metas,
                                                src_loc loc) const;
  /// The structural hash of the tile IR these arguments trace to (traced now, not cached, not
  /// compiled): what the autotuner's disk cache keys on, so an edited kernel is tuned again.
  std::uint64_t ir_hash(std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const;
  /// These arguments' specialization, checked as a launch checks it and traced now.
  traced_launch trace_launch(std::span<const launch_arg> args, std::span<const meta_value> metas, src_loc loc) const;
  const std::string& name() const;
  /// Number of specializations traced so far.
  std::size_t traces() const;

 private:
  struct state;
  std::shared_ptr<state> s_;
};

// ---- compile-time reflection of the kernel's signature -------------------------------------------
template <class T>
struct param_traits {
  static constexpr bool valid = false;
};
template <class T>
struct param_traits<tl::ptr<T>> {
  static constexpr bool valid = true;
  static constexpr auto kind = param_desc::kind::pointer;
  using elem = std::remove_const_t<T>;
  static constexpr dtype t = dtype_of<elem>;
};
template <class T>
struct param_traits<tl::scalar<T>> {
  static constexpr bool valid = true;
  static constexpr auto kind = param_desc::kind::scalar;
  using elem = T;
  static constexpr dtype t = dtype_of<elem>;
};
template <fixed_string N, class T>
struct param_traits<tl::constexpr_<N, T>> {
  static constexpr bool valid = true;
  static constexpr auto kind = param_desc::kind::meta;
  static constexpr fixed_string name = N;
  using value_type = T;
};

template <class F>
struct fn_sig : fn_sig<decltype(&F::operator())> {};
template <class C, class R, class... P>
struct fn_sig<R (C::*)(P...) const> {
  using params = std::tuple<std::remove_cvref_t<P>...>;
};
template <class C, class R, class... P>
struct fn_sig<R (C::*)(P...)> {
  using params = std::tuple<std::remove_cvref_t<P>...>;
};
template <class R, class... P>
struct fn_sig<R (*)(P...)> {
  using params = std::tuple<std::remove_cvref_t<P>...>;
};
template <class R, class... P>
struct fn_sig<R(P...)> {
  using params = std::tuple<std::remove_cvref_t<P>...>;
};

template <class T>
struct is_meta_arg : std::false_type {};
template <fixed_string N, class T>
struct is_meta_arg<meta_arg<N, T>> : std::true_type {};

template <class T>
struct is_buffer_like : std::false_type {};
template <class T>
struct is_buffer_like<buffer<T>> : std::true_type {};
template <class T>
struct is_buffer_like<buffer_view<T>> : std::true_type {};

/// Does host argument A fit kernel parameter P?
template <class P, class A>
constexpr bool accepts() {
  using H = std::remove_cvref_t<A>;
  using PT = param_traits<P>;
  if constexpr (PT::kind == param_desc::kind::pointer) {
    if constexpr (is_buffer_like<H>::value)
      return std::is_same_v<std::remove_const_t<typename H::element_type>, typename PT::elem>;
    else
      return false;
  } else if constexpr (PT::kind == param_desc::kind::scalar) {
    using E = typename PT::elem;
    if constexpr (std::is_same_v<E, bool>)
      return std::is_same_v<H, bool>;
    else if constexpr (std::is_integral_v<E>)
      return std::is_integral_v<H> && !std::is_same_v<H, bool>;
    else
      return (std::is_arithmetic_v<H> && !std::is_same_v<H, bool>) || std::is_same_v<H, half> ||
             std::is_same_v<H, bfloat16>;
  } else {
    return false;
  }
}

template <class Params>
struct signature;
template <class... P>
struct signature<std::tuple<P...>> {
  static constexpr bool all_valid = (param_traits<P>::valid && ...);
  static constexpr std::size_t count = sizeof...(P);
  static constexpr std::array<bool, count> is_meta = {(param_traits<P>::kind == param_desc::kind::meta)...};
  static constexpr std::size_t runtime_count = (std::size_t{0} + ... + (param_traits<P>::kind != param_desc::kind::meta));
  /// runtime position of each parameter (or of each meta-parameter among the metas)
  static constexpr std::array<std::size_t, count> position = [] {
    std::array<std::size_t, count> pos{};
    std::size_t r = 0, m = 0;
    for (std::size_t i = 0; i < count; ++i) pos[i] = is_meta[i] ? m++ : r++;
    return pos;
  }();
  static constexpr std::array<std::size_t, runtime_count + 1> runtime_params = [] {
    std::array<std::size_t, runtime_count + 1> out{};
    std::size_t r = 0;
    for (std::size_t i = 0; i < count; ++i)
      if (!is_meta[i]) out[r++] = i;
    return out;
  }();

  template <fixed_string N>
  static constexpr bool has_meta() {
    return ((param_traits<P>::kind == param_desc::kind::meta && meta_name_is<P, N>()) || ...);
  }
  template <class Q, fixed_string N>
  static constexpr bool meta_name_is() {
    if constexpr (param_traits<Q>::kind == param_desc::kind::meta)
      return param_traits<Q>::name.view() == N.view();
    else
      return false;
  }
  static std::vector<param_desc> describe() {
    std::vector<param_desc> out;
    (out.push_back(desc<P>()), ...);
    return out;
  }
  template <class Q>
  static param_desc desc() {
    param_desc d;
    d.k = param_traits<Q>::kind;
    if constexpr (param_traits<Q>::kind == param_desc::kind::meta) {
      d.name = param_traits<Q>::name.view();
      using V = typename param_traits<Q>::value_type;
      d.mk = std::is_same_v<V, bool>     ? meta_value::kind::boolean
             : std::is_same_v<V, double> ? meta_value::kind::floating
                                         : meta_value::kind::integer;
    } else {
      d.t = param_traits<Q>::t;
    }
    return d;
  }
};

/// Triton's launch options: meta arguments every kernel takes besides its own constexprs (checked
/// at compile time here, their values at launch by kernel.cpp).
inline constexpr std::array<std::string_view, 5> launch_options{"num_warps", "num_stages", "num_ctas", "enable_fp_fusion",
                                                                "warp_specialize"};
constexpr bool is_launch_option(std::string_view name) {
  for (std::string_view o : launch_options)
    if (o == name) return true;
  return false;
}

template <fixed_string N>
constexpr bool is_launch_option() {
  return is_launch_option(N.view());
}

template <class Sig, class A>
constexpr bool meta_known() {
  if constexpr (is_meta_arg<std::remove_cvref_t<A>>::value) {
    using M = std::remove_cvref_t<A>;
    return Sig::template has_meta<M::name>() || is_launch_option<M::name>();
  } else {
    return true;
  }
}

template <class Q, class A>
constexpr bool arg_names_meta() {
  if constexpr (is_meta_arg<std::remove_cvref_t<A>>::value)
    return std::remove_cvref_t<A>::name.view() == param_traits<Q>::name.view();
  else
    return false;
}
template <class Q, class... A>
constexpr bool meta_provided() {
  if constexpr (param_traits<Q>::kind == param_desc::kind::meta)
    return (arg_names_meta<Q, A>() || ...);
  else
    return true;
}

template <class Params, class... A>
struct launch_check;
template <class... P, class... A>
struct launch_check<std::tuple<P...>, A...> {
  using Sig = signature<std::tuple<P...>>;
  static constexpr std::size_t runtime_args = (std::size_t{0} + ... + !is_meta_arg<std::remove_cvref_t<A>>::value);
  static constexpr bool count_ok = runtime_args == Sig::runtime_count;
  static constexpr bool names_known = (meta_known<Sig, A>() && ...);
  static constexpr bool metas_provided = (meta_provided<P, A...>() && ...);
  template <std::size_t... I>
  static constexpr bool types_ok_impl(std::index_sequence<I...>) {
    using Args = std::tuple<std::remove_cvref_t<A>...>;
    constexpr std::array<bool, sizeof...(A)> meta = {is_meta_arg<std::remove_cvref_t<A>>::value...};
    // runtime position of each argument
    constexpr auto pos = [meta] {
      std::array<std::size_t, sizeof...(A) + 1> p{};
      std::size_t r = 0;
      for (std::size_t i = 0; i < sizeof...(A); ++i) p[i] = meta[i] ? SIZE_MAX : r++;
      return p;
    }();
    return (type_ok<std::tuple_element_t<I, Args>, pos[I]>() && ...);
  }
  template <class Arg, std::size_t Pos>
  static constexpr bool type_ok() {
    if constexpr (Pos == SIZE_MAX || Pos >= Sig::runtime_count) {
      return true;
    } else {
      using Param = std::tuple_element_t<Sig::runtime_params[Pos], std::tuple<P...>>;
      return accepts<Param, Arg>();
    }
  }
  static constexpr bool types_ok = types_ok_impl(std::index_sequence_for<A...>{});
  static constexpr bool ok = count_ok && names_known && metas_provided && types_ok;
};

template <class P, class A>
launch_arg to_launch_arg(const A& a) {
  using H = std::remove_cvref_t<A>;
  launch_arg r;
  if constexpr (param_traits<P>::kind == param_desc::kind::pointer) {
    r.k = launch_arg::kind::pointer;
    r.t = param_traits<P>::t;
    if constexpr (std::is_same_v<H, buffer<typename H::element_type>>) {
      r.addr = a.address();
      r.alloc = a.allocation().get();
      r.bytes = a.bytes();
    } else {
      r.addr = a.address();
      r.alloc = a.alloc.get();
      r.bytes = a.count * sizeof(typename H::element_type);
    }
  } else if constexpr (param_traits<P>::kind == param_desc::kind::scalar) {
    r.t = param_traits<P>::t;
    if constexpr (std::is_integral_v<H>) {
      r.k = is_float(r.t) ? launch_arg::kind::floating : launch_arg::kind::integer;
      r.i = static_cast<std::int64_t>(a);
      r.f = static_cast<double>(a);
      if constexpr (std::is_unsigned_v<H> && sizeof(H) == 8) r.huge_unsigned = r.i < 0;
    } else {
      r.k = launch_arg::kind::floating;
      r.f = static_cast<double>(a);
    }
  }
  return r;
}

template <class T>
meta_value to_meta_value(const T& m) {
  meta_value v;
  v.name = T::name.view();
  if constexpr (std::is_same_v<decltype(m.value), bool>) {
    v.k = meta_value::kind::boolean;
    v.i = m.value;
  } else if constexpr (std::is_same_v<decltype(m.value), double>) {
    v.k = meta_value::kind::floating;
    v.f = m.value;
  } else {
    v.k = meta_value::kind::integer;
    v.i = m.value;
  }
  return v;
}

/// A typed launch's values, compact (bound_launch::launch_positional): `tag` names the C++ types
/// of the launch's arguments, its meta-parameters' names among them (one object per such list),
/// then one word for each number and meta-parameter value (its bits) and four for each buffer or
/// view (allocation, address, bytes, device). Launches of one kernel with equal fingerprints are
/// the same launch: a repeat compares these words instead of checking its arguments again.
struct launch_fingerprint {
  const void* tag = nullptr;
  std::span<const std::uint64_t> words;
};
template <class... A>
inline constexpr char fingerprint_tag = 0;

template <class A>
struct is_buffer_arg : std::false_type {};
template <class T>
struct is_buffer_arg<buffer<T>> : std::true_type {};
template <class T>
struct is_buffer_arg<buffer_view<T>> : std::true_type {};

template <class A>
constexpr std::size_t fingerprint_words() {
  return is_buffer_arg<A>::value ? 4 : 1;
}
/// A number's word: an integer's (or bool's) value, a floating-point value's bits as a double.
template <class T>
std::uint64_t fingerprint_bits(const T& v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<std::uint64_t>(v);
  else
    return std::bit_cast<std::uint64_t>(static_cast<double>(v));
}
template <class A>
void put_fingerprint(const A& a, std::uint64_t*& w) {
  if constexpr (is_meta_arg<A>::value) {
    *w++ = fingerprint_bits(a.value);
  } else if constexpr (!is_buffer_arg<A>::value) {
    *w++ = fingerprint_bits(a);
  } else {
    using T = typename A::element_type;
    const allocation* al;
    std::uint64_t addr, bytes;
    if constexpr (std::is_same_v<A, buffer<T>>) {
      al = a.allocation().get();
      addr = al ? al->addr : 0;
      bytes = a.bytes();
    } else {
      al = a.alloc.get();
      addr = al ? al->addr + a.offset * sizeof(T) : 0;
      bytes = a.count * sizeof(T);
    }
    *w++ = reinterpret_cast<std::uintptr_t>(al);
    *w++ = addr;
    *w++ = bytes;
    *w++ = al ? reinterpret_cast<std::uintptr_t>(al->dev.get()) : 0;  // (an address alone can be reused)
  }
}

/// A launch argument that stands for several: a parameter struct whose members are kernel
/// arguments in order (<tile/runtime/params.hpp> specializes it for structs adapted with
/// Boost.Hana). `members(s)`: references to s's members, a std::tuple.
template <class T, class = void>
struct param_struct : std::false_type {};

/// The arguments `a` stands for: a parameter struct's members, or `a` itself (references).
template <class A>
auto launch_args_of(A& a) {
  if constexpr (param_struct<std::remove_cvref_t<A>>::value)
    return param_struct<std::remove_cvref_t<A>>::members(a);
  else
    return std::forward_as_tuple(a);
}
template <class... A>
constexpr bool has_param_struct = (param_struct<std::remove_cvref_t<A>>::value || ...);
/// The launch_check of a launch's arguments with its parameter structs' members in their place.
template <class Params, class Flat>
struct flat_launch_check;
template <class Params, class... M>
struct flat_launch_check<Params, std::tuple<M...>> : launch_check<Params, M...> {};

template <class P>
P make_param(std::span<node* const> nodes, std::span<const meta_value> metas, std::size_t pos) {
  if constexpr (param_traits<P>::kind == param_desc::kind::meta) {
    using V = typename param_traits<P>::value_type;
    const meta_value& m = metas[pos];
    V v{};
    if constexpr (std::is_same_v<V, double>)
      v = m.k == meta_value::kind::floating ? m.f : static_cast<double>(m.i);
    else
      v = static_cast<V>(m.i);
    return P{v};
  } else {
    return P(nodes[pos]);
  }
}

}  // namespace detail

/// A launch argument checked at run time (for launches assembled dynamically, e.g. by an
/// engine's scripting layer): a buffer, a view or a number.
class arg {
 public:
  template <class T>
  arg(const buffer<T>& b) {  // NOLINT
    value.k = detail::launch_arg::kind::pointer;
    value.t = dtype_of<T>;
    value.addr = b.address();
    value.alloc = b.allocation().get();
    value.bytes = b.bytes();
  }
  template <class T>
  arg(const buffer_view<T>& v) {  // NOLINT
    value.k = detail::launch_arg::kind::pointer;
    value.t = dtype_of<T>;
    value.addr = v.address();
    value.alloc = v.alloc.get();
    value.bytes = v.count * sizeof(T);
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  arg(T v) {  // NOLINT
    value.t = dtype_of<T>;
    if constexpr (std::is_integral_v<T>) {
      value.k = detail::launch_arg::kind::integer;
      value.i = static_cast<std::int64_t>(v);
    } else {
      value.k = detail::launch_arg::kind::floating;
      value.f = v;
    }
  }
  detail::launch_arg value;
};

/// A meta-parameter value checked at run time: tile::named("BLOCK", 1024).
struct named {
  std::string name;
  detail::meta_value value;
  template <class V>
    requires std::is_arithmetic_v<V>
  named(std::string n, V v) : name(std::move(n)) {
    if constexpr (std::is_same_v<V, bool>) {
      value.k = detail::meta_value::kind::boolean;
      value.i = v;
    } else if constexpr (std::is_integral_v<V>) {
      value.i = static_cast<std::int64_t>(v);
    } else {
      value.k = detail::meta_value::kind::floating;
      value.f = static_cast<double>(v);
    }
  }
};

template <class F>
class kernel_t;
template <class F>
class autotuned_kernel;
template <class F>
class bound_autotuned;

/// A kernel bound to a grid; calling it launches.
template <class F>
class bound_launch {
 public:
  bound_launch(const kernel_t<F>& k, launch_grid g) : k_(k), g_(std::move(g)) {}
  template <class... A>
  void operator()(A&&... args) const;

 private:
  template <class... A>
  void launch_positional(const A&... args) const;
  const kernel_t<F>& k_;
  launch_grid g_;
};

template <class F>
class kernel_t {
 public:
  using params = typename detail::fn_sig<F>::params;
  using sig = detail::signature<params>;
  static_assert(sig::all_valid,
                "kernel parameters must be tl::ptr<T>, tl scalar types (tl::i32, tl::f32, …) or "
                "tl::constexpr_<\"NAME\">");

  kernel_t(std::string name, F fn, src_loc defined_at)
      : core_(std::move(name), sig::describe(), make_tracer(std::move(fn)), defined_at) {}

  /// Bind a grid: add[{blocks}](args…), add[{x, y}](…), add[grid_fn](…).
  bound_launch<F> operator[](launch_grid g) const { return {*this, std::move(g)}; }

  /// The tile IR this kernel traces to for these arguments (after canonicalization).
  template <class... A>
  std::string ir(A&&... args) const {
    check<A...>();
    auto [rt, metas] = collect(args...);
    return core_.ir(std::span(rt.data(), sig::runtime_count), metas, {});
  }

  /// Launch with arguments checked at run time against the kernel's signature (count, types,
  /// meta-parameter names); errors name the launch's file:line.
  void launch(const launch_grid& g, const std::vector<arg>& args, const std::vector<named>& metas = {}) const {
    std::vector<detail::launch_arg> rt;
    for (auto& a : args) rt.push_back(a.value);
    std::vector<detail::meta_value> mv;
    for (auto& m : metas) {
      mv.push_back(m.value);
      mv.back().name = m.name;
    }
    core_.launch(g, rt, mv, g.loc);
  }

  /// This launch's specialization, checked as the launch would be and traced now (what
  /// tile::aot::builder lists): `k.trace_launch(x, y, out, n, "BLOCK"_c = 1024)`.
  template <class... A>
  detail::traced_launch trace_launch(A&&... args) const {
    check<A...>();
    auto [rt, metas] = collect(args...);
    return core_.trace_launch(std::span(rt.data(), sig::runtime_count), metas, {});
  }

  const std::string& name() const { return core_.name(); }
  const detail::kernel_core& core() const { return core_; }

  template <class... A>
  static constexpr bool launchable = detail::launch_check<params, A...>::ok;

 private:
  friend class bound_launch<F>;
  friend class autotuned_kernel<F>;
  friend class bound_autotuned<F>;
  /// check() for a launch with parameter structs: its messages name them.
  template <class... A>
  static constexpr void check_struct() {
    using C = detail::flat_launch_check<params, decltype(std::tuple_cat(detail::launch_args_of(std::declval<A&>())...))>;
    static_assert(C::count_ok, "a parameter struct's members, with the launch's other runtime arguments, must be the kernel's runtime arguments in order: their number differs");
    static_assert(C::types_ok, "a parameter struct's member does not match the kernel parameter at its position: tl::ptr<T> takes a tile::buffer<T> or buffer_view<T>; integer scalars a C++ integer; float scalars a number");
  }
  template <class... A>
  static constexpr void check() {
    using C = detail::launch_check<params, A...>;
    static_assert(C::count_ok, "wrong number of runtime arguments for this kernel (meta-parameters go as \"NAME\"_c = value)");
    static_assert(C::types_ok, "an argument does not match its kernel parameter: tl::ptr<T> takes a tile::buffer<T> or buffer_view<T>; tl::i32 and other integer scalars take a C++ integer; float scalars take a number");
    static_assert(C::names_known, "unknown meta-parameter: a \"NAME\"_c at this launch is not a tl::constexpr_<\"NAME\"> of the kernel (misspelt?)");
    static_assert(C::metas_provided, "missing meta-parameter: every tl::constexpr_<\"NAME\"> of the kernel needs \"NAME\"_c = value at the launch");
  }

  /// The runtime arguments and the meta-parameter values of a launch, in arrays (no allocation).
  /// Each argument's slot is known at compile time: runtime argument R goes to rt[R] directly.
  template <class... A>
  static auto collect(const A&... args) {
    constexpr std::size_t n_metas = (std::size_t{0} + ... + detail::is_meta_arg<std::remove_cvref_t<A>>::value);
    std::array<detail::launch_arg, sig::runtime_count> rt;
    std::array<detail::meta_value, n_metas> metas;
    collect_at(std::index_sequence_for<A...>{}, rt, metas, args...);
    return std::pair{rt, metas};
  }
  /// How many of the first `k` flags equal `v`: an argument's index among the runtime arguments
  /// (v false) or among the meta-parameters (v true).
  template <std::size_t N>
  static constexpr std::size_t count_before(const std::array<bool, N>& flags, std::size_t k, bool v) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < k && i < N; ++i) c += flags[i] == v;
    return c;
  }
  template <std::size_t... K, class Rt, class Metas, class... A>
  static void collect_at(std::index_sequence<K...>, Rt& rt, Metas& metas, const A&... args) {
    constexpr std::array<bool, sizeof...(A)> is_meta = {detail::is_meta_arg<std::remove_cvref_t<A>>::value...};
    (collect_one<is_meta[K], count_before(is_meta, K, is_meta[K])>(args, rt, metas), ...);
  }
  template <bool IsMeta, std::size_t Slot, class A, class Rt, class Metas>
  static void collect_one(const A& a, Rt& rt, Metas& metas) {
    if constexpr (IsMeta)
      metas[Slot] = detail::to_meta_value(a);
    else if constexpr (Slot < sig::runtime_count)  // (more arguments than parameters: check() says so)
      rt[Slot] = to_arg<Slot>(a);
  }
  template <std::size_t I, class A>
  static detail::launch_arg to_arg(const A& a) {
    using Param = std::tuple_element_t<sig::runtime_params[I], params>;
    if constexpr (detail::accepts<Param, A>())
      return detail::to_launch_arg<Param>(a);
    else
      return {};
  }

  static detail::tracer_fn make_tracer(F fn) {
    auto f = std::make_shared<F>(std::move(fn));
    return [f](std::span<detail::node* const> nodes, std::span<const detail::meta_value> metas) {
      invoke(*f, nodes, metas, std::make_index_sequence<sig::count>{});
    };
  }
  template <std::size_t... I>
  static void invoke(F& f, std::span<detail::node* const> nodes, std::span<const detail::meta_value> metas,
                     std::index_sequence<I...>) {
    f(detail::make_param<std::tuple_element_t<I, params>>(nodes, metas, sig::position[I])...);
  }

  detail::kernel_core core_;
};

template <class F>
template <class... A>
void bound_launch<F>::operator()(A&&... args) const {
  if constexpr (detail::has_param_struct<A...>) {  // its members in its place
    kernel_t<F>::template check_struct<A...>();
    std::apply([this](auto&&... flat) { (*this)(flat...); }, std::tuple_cat(detail::launch_args_of(args)...));
  } else {
    launch_positional(args...);
  }
}

template <class F>
template <class... A>
void bound_launch<F>::launch_positional(const A&... args) const {
  kernel_t<F>::template check<A...>();
  constexpr std::size_t n_words = (std::size_t{0} + ... + detail::fingerprint_words<A>());
  std::array<std::uint64_t, n_words> words;
  std::uint64_t* w = words.data();
  (detail::put_fingerprint(args, w), ...);
  const detail::launch_fingerprint fp{&detail::fingerprint_tag<A...>, std::span<const std::uint64_t>(words)};
  if (k_.core_.launch_repeat(g_, fp, g_.loc)) return;  // the last launch's values again
  auto [rt, metas] = kernel_t<F>::collect(args...);
  k_.core_.launch(g_, std::span(rt.data(), kernel_t<F>::sig::runtime_count), metas, g_.loc, &fp);
}

/// Define a kernel from a lambda or a function: tile::kernel("name", [](tl::ptr<float> x, …) {…}).
template <class F>
kernel_t<std::decay_t<F>> kernel(std::string name, F&& fn, std::source_location l = std::source_location::current()) {
  return kernel_t<std::decay_t<F>>(std::move(name), std::forward<F>(fn), l);
}

}  // namespace tile

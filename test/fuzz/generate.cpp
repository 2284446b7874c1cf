// test/fuzz/generate.cpp — the program generator: a kernel body that draws its ops from a seeded
// generator while it is traced, and writes the same program as C++ (fuzz.hpp).
//
// The generator keeps the values a program has made (their dtype, shape and how exactly each
// backend computes them) and draws each next op among those its visible values allow:
//   leaves       loads (contiguous, strided, reversed, broadcast, transposed, masked with an
//                `other`), tensor-descriptor blocks past the tensor's edge, constants of special
//                values, arange, program_id, the scalar arguments, Philox random numbers;
//   elementwise  + - * / % & | ^ << >>, comparisons, where, && || !, minimum / maximum / clamp,
//                neg, abs, ~, floor, ceil, sqrt, rsqrt, exp, exp2, log, log2, sin, cos, erf,
//                sigmoid, fma, cdiv, umulhi, fast_div / fast_sqrt / fast_exp, cast, bitcast;
//   tiles        sum / max / min / argmax / argmin / reduce on any axis, cumsum / cumprod /
//                associative_scan forwards and reversed, expand_dims, broadcast_to, reshape,
//                trans, permute, join, split, dot (f16, bf16, f32 at each precision, i8, f64);
//   memory       the io window loaded, stored and loaded again (a store through a view that
//                overlaps an input), atomics on io (their old values used) and on targets that
//                every program updates, stores of results to out (masked and not);
//   control      for_range and while_ with carried tiles, if_ with and without else, nested.
// Values the backends compute differently within the documented tolerance (transcendentals,
// tree-ordered float sums, tensor-core dots, fma where fusion is on) are "inexact": they only flow
// into ops that keep a small error small (+ - * neg abs min max where casts between floats,
// reductions, dots, shape ops, stores), never into a comparison, an integer conversion, a
// bitcast or a denominator, so that a difference in the results is a bug, not rounding.
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <limits>

#include "fuzz.hpp"

namespace fuzz {
namespace {

using tile::dtype;
using shape = std::vector<std::int64_t>;

constexpr dtype all_dtypes[] = {dtype::i1,  dtype::i8,  dtype::i16, dtype::i32, dtype::i64, dtype::u8, dtype::u16,
                                dtype::u32, dtype::u64, dtype::f16, dtype::bf16, dtype::f32, dtype::f64};

std::string tag(dtype d) { return "tl::" + std::string(tile::name(d)); }  // tl::f16: an element-type tag
std::string dtype_expr(dtype d) { return "tile::dtype::" + std::string(tile::name(d)); }

template <class F>
decltype(auto) with_type(dtype d, F&& f) {
  switch (d) {
    case dtype::i1: return f(std::type_identity<bool>{});
    case dtype::i8: return f(std::type_identity<std::int8_t>{});
    case dtype::i16: return f(std::type_identity<std::int16_t>{});
    case dtype::i32: return f(std::type_identity<std::int32_t>{});
    case dtype::i64: return f(std::type_identity<std::int64_t>{});
    case dtype::u8: return f(std::type_identity<std::uint8_t>{});
    case dtype::u16: return f(std::type_identity<std::uint16_t>{});
    case dtype::u32: return f(std::type_identity<std::uint32_t>{});
    case dtype::u64: return f(std::type_identity<std::uint64_t>{});
    case dtype::f16: return f(std::type_identity<tile::half>{});
    case dtype::bf16: return f(std::type_identity<tile::bfloat16>{});
    case dtype::f32: return f(std::type_identity<float>{});
    default: return f(std::type_identity<double>{});
  }
}

struct rng {
  std::uint64_t s;
  std::uint64_t next() {  // splitmix64: the same sequence on every platform
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return n <= 1 ? 0 : static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  bool chance(int percent) { return below(100) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(below(static_cast<int>(v.size())))]; }
};

std::string hexfloat(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char b[64];
  std::snprintf(b, sizeof b, "%a", v);
  return b;
}

std::string shape_text(const shape& s) {
  std::string t = "{";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "}";
}

constexpr double inf = std::numeric_limits<double>::infinity();

/// The unit roundoff of a float dtype (0 for integers).
double unit(dtype d) {
  switch (d) {
    case dtype::f16: return 0x1p-11;
    case dtype::bf16: return 0x1p-8;
    case dtype::f32: return 0x1p-24;
    case dtype::f64: return 0x1p-53;
    default: return 0;
  }
}
/// The largest magnitude of a dtype.
double range(dtype d) {
  switch (d) {
    case dtype::f16: return 65504.0;
    case dtype::bf16: return 3.3895313892515355e38;
    case dtype::f32: return 3.4028234663852886e38;
    case dtype::f64: return 1.7976931348623157e308;
    case dtype::i1: return 1;
    default: return std::ldexp(1.0, tile::bits(d));
  }
}

std::int64_t numel(const shape& s) {
  std::int64_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

/// A literal of dtype d: special values often, ordinary ones otherwise (as a double or an
/// integer, with its C++ text).
struct literal {
  bool is_float = false;
  double f = 0;
  std::int64_t i = 0;
  std::string text;
};

literal make_literal(rng& r, dtype d, bool special_ok = true) {
  literal l;
  if (tile::is_float(d)) {
    l.is_float = true;
    const double big = d == dtype::f16 ? 65504.0 : d == dtype::bf16 ? 3.3895313892515355e38 : d == dtype::f32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
    const double tiny = d == dtype::f16 ? 5.960464477539063e-08 : d == dtype::bf16 || d == dtype::f32 ? 1.401298464324817e-45 : 4.9406564584124654e-324;
    const std::vector<double> specials = {0.0, -0.0, 1.0, -1.0, 0.5, std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(), std::nan(""), big, -big, tiny, -tiny};
    if (special_ok && r.chance(35))
      l.f = r.pick(specials);
    else
      l.f = static_cast<double>(r.below(2001) - 1000) / static_cast<double>(1 << r.below(6));
    l.text = hexfloat(l.f);
  } else if (d == dtype::i1) {
    l.i = r.below(2);
    l.text = l.i ? "true" : "false";
  } else {
    const int b = tile::bits(d);
    const bool sgn = tile::is_signed(d);
    const std::int64_t lo = sgn ? (b == 64 ? INT64_MIN : -(std::int64_t{1} << (b - 1))) : 0;
    const std::int64_t hi = b == 64 ? INT64_MAX : sgn ? (std::int64_t{1} << (b - 1)) - 1 : (std::int64_t{1} << b) - 1;
    std::vector<std::int64_t> specials = {0, 1, lo, hi, b - 1, b, b + 1};
    if (sgn) specials.push_back(-1);
    if (special_ok && r.chance(35))
      l.i = r.pick(specials);
    else
      l.i = std::clamp<std::int64_t>(r.below(201) - (sgn ? 100 : 0), lo, hi);
    l.text = l.i == INT64_MIN ? "INT64_MIN" : std::to_string(l.i) + (l.i > INT32_MAX || l.i < INT32_MIN ? "ll" : "");
  }
  return l;
}

tl::operand literal_operand(const literal& l) {
  if (l.is_float) return tl::operand(l.f);
  if (l.text == "true" || l.text == "false") return tl::operand(l.i != 0);
  return tl::operand(l.i);
}

/// One value of the program.
struct val {
  tl::tensor* t = nullptr;
  dtype dt = dtype::i32;
  shape sh;
  exactness ex;
  bool computed_float = false;  // a float that may be a computed NaN (its bits unspecified)
  std::string name;
  int depth = 0;    // the control-flow depth it was made at
  double mag = inf;  // a bound of |value| (infinite: unknown, or special values)
  double err = 0;   // where not exact: a bound of |backend - interpreter| (infinite: unknown)
  int weight = 1;   // ops in the value's cone (the heaviest values are the ones stored)
};

struct gen {
  const config& cfg;
  program& prog;
  rng r;
  std::deque<tl::tensor> objs;  // stable addresses: outer tiles must stay the objects a loop carries
  std::vector<val> vals;        // visible values (a body's values leave with it)
  tl::tensor in, fin, iin, io, out, n, k, pid;
  std::string indent = "  ";
  int next_id = 0;
  int depth = 0;
  int loop_depth = 0;  // loops around the op being made (an if_ in a loop runs every iteration)
  std::size_t out_used = atomic_slot_bytes;
  std::size_t io_used = 0;
  std::size_t probe_low = out_bytes;  // --probe's stores: from the end of out down to here
  shape main;  // the program's main 2-D shape
  int ops_left = 0;

  gen(const config& c, program& p) : cfg(c), prog(p), r{c.seed * 0x2545F4914F6CDD1Dull + 17} {}

  void line(const std::string& s) { prog.cpp += indent + s + "\n"; }

  /// Record a value: `mag` bounds its magnitude, `err` (where `ex` is not exact everywhere) its
  /// difference between backends. A float past its dtype's range is unbounded.
  val& add(tl::tensor t, const std::string& expr, exactness ex, bool computed_float, double mag = inf, double err = 0) {
    objs.push_back(std::move(t));
    val v;
    v.t = &objs.back();
    v.dt = v.t->dtype();
    v.sh = v.t->shape();
    v.ex = ex;
    v.computed_float = computed_float && tile::is_float(v.dt);
    v.name = "v" + std::to_string(next_id++);
    v.depth = depth;
    v.mag = std::isnan(mag) ? inf : mag;
    if (tile::is_float(v.dt) ? v.mag > range(v.dt) : v.mag > range(v.dt)) v.mag = tile::is_float(v.dt) ? inf : range(v.dt);
    if (!tile::is_float(v.dt)) ex = {};  // integers are exact everywhere (nothing inexact converts to one)
    v.err = ex.all() ? 0 : (std::isnan(err) || !(v.mag < inf) ? inf : err);
    for (std::size_t i = 0; i + 1 < expr.size(); ++i)  // the values the expression names
      if (expr[i] == 'v' && std::isdigit(static_cast<unsigned char>(expr[i + 1])) && (i == 0 || !std::isalnum(static_cast<unsigned char>(expr[i - 1])))) {
        std::size_t j = i + 1;
        while (j < expr.size() && std::isdigit(static_cast<unsigned char>(expr[j]))) ++j;
        const std::string ref = expr.substr(i, j - i);
        for (const val& o : vals)
          if (o.name == ref) v.weight = std::min(v.weight + o.weight, 1 << 20);
      }
    line("tl::tensor " + v.name + " = " + expr + ";");
    ++prog.ops;
    vals.push_back(v);
    if (cfg.probe) probe(vals.back());
    return vals.back();
  }

  // ---- choices ------------------------------------------------------------------------------
  dtype any_dtype() {
    static const std::vector<dtype> common = {dtype::i32, dtype::f32, dtype::f16, dtype::i64, dtype::u32};
    return r.chance(40) ? r.pick(common) : all_dtypes[r.below(13)];
  }
  shape any_shape() {
    switch (r.below(6)) {
      case 0: return {};
      case 1: return {main[0]};
      case 2: return {main[1]};
      case 3: return {main[1], main[0]};
      default: return main;
    }
  }
  static bool broadcastable(const shape& a, const shape& b) {
    if (a.empty() || b.empty()) return true;
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return false;
    return true;
  }
  /// A visible value satisfying `ok`, the later ones more likely; -1 if none.
  int find(const std::function<bool(const val&)>& ok) {
    std::vector<int> c;
    for (int i = 0; i < static_cast<int>(vals.size()); ++i)
      if (ok(vals[static_cast<std::size_t>(i)])) c.push_back(i);
    if (c.empty()) return -1;
    if (r.chance(50)) return c.back();
    return r.pick(c);
  }
  /// A value satisfying `ok`, or a new leaf of dtype `d` and shape `s` when there is none (or
  /// sometimes anyway).
  int operand(const std::function<bool(const val&)>& ok, dtype d, const shape& s) {
    const int i = r.chance(25) ? -1 : find(ok);
    if (i >= 0) return i;
    leaf(d, s);
    return static_cast<int>(vals.size()) - 1;
  }
  val& at(int i) { return vals[static_cast<std::size_t>(i)]; }

  // ---- leaves -------------------------------------------------------------------------------
  /// An index tile of shape s (i32), with the largest index it can hold; `injective`: distinct
  /// lanes distinct indices.
  std::pair<std::string, tl::tensor> index(const shape& s, bool injective, std::int64_t& span) {
    if (s.empty()) {
      span = 0;
      return {"0", tl::zeros<std::int32_t>({})};
    }
    if (s.size() == 1) {
      const std::int64_t e = s[0];
      tl::tensor a = tl::arange(0, e);
      switch (injective ? r.below(3) : r.below(5)) {
        case 0: span = e - 1; return {"tl::arange(0, " + std::to_string(e) + ")", a};
        case 1: {
          const int st = 2 + r.below(3);
          span = (e - 1) * st;
          return {"tl::arange(0, " + std::to_string(e) + ") * " + std::to_string(st), a * st};
        }
        case 2: span = e - 1; return {std::to_string(e - 1) + " - tl::arange(0, " + std::to_string(e) + ")", (e - 1) - a};
        case 3: span = (e - 1) / 2; return {"tl::arange(0, " + std::to_string(e) + ") / 2", a / 2};
        default: span = 0; return {"tl::arange(0, " + std::to_string(e) + ") * 0", a * 0};
      }
    }
    // 2-D (and 3-D through the first two axes' rows): rows * a + cols * b
    const std::int64_t R = s[0], C = s[1];
    std::int64_t ra = C, cb = 1;
    std::string form;
    switch (injective ? r.below(3) : r.below(5)) {
      case 0: ra = C, cb = 1; break;        // row-major
      case 1: ra = 1, cb = R; break;        // transposed
      case 2: ra = 2 * C, cb = 2; break;    // strided
      case 3: ra = 0, cb = 1; break;        // rows broadcast
      default: ra = C, cb = 0; break;       // columns broadcast
    }
    tl::tensor rows = tl::expand_dims(tl::arange(0, R), 1);
    tl::tensor cols = tl::expand_dims(tl::arange(0, C), 0);
    const bool rev = r.chance(20);
    std::string ctext = "tl::expand_dims(tl::arange(0, " + std::to_string(C) + "), 0)";
    if (rev) {
      cols = (C - 1) - cols;
      ctext = "(" + std::to_string(C - 1) + " - " + ctext + ")";
    }
    span = (R - 1) * ra + (C - 1) * cb;
    tl::tensor idx = rows * ra + cols * cb;
    std::string text = "tl::expand_dims(tl::arange(0, " + std::to_string(R) + "), 1) * " + std::to_string(ra) + " + " +
                       ctext + " * " + std::to_string(cb);
    if (s.size() == 3) {  // a trailing axis of s[2]: its own stride after the rows and columns
      const std::int64_t Z = s[2];
      tl::tensor z = tl::expand_dims(tl::expand_dims(tl::arange(0, Z), 0), 0);
      idx = tl::expand_dims(idx, 2) + z * (span + 1);
      text = "tl::expand_dims(" + text + ", 2) + tl::expand_dims(tl::expand_dims(tl::arange(0, " + std::to_string(Z) +
             "), 0), 0) * " + std::to_string(span + 1);
      span = span + (Z - 1) * (span + 1);
    }
    return {text, idx};
  }

  /// The linear position of each lane of a tile of shape s (row-major), for masks.
  std::pair<std::string, tl::tensor> linear(const shape& s) {
    if (s.size() == 1) return {"tl::arange(0, " + std::to_string(s[0]) + ")", tl::arange(0, s[0])};
    tl::tensor rows = tl::expand_dims(tl::arange(0, s[0]), 1);
    tl::tensor cols = tl::expand_dims(tl::arange(0, s[1]), 0);
    tl::tensor lin = rows * s[1] + cols;
    std::string text = "(tl::expand_dims(tl::arange(0, " + std::to_string(s[0]) + "), 1) * " + std::to_string(s[1]) +
                       " + tl::expand_dims(tl::arange(0, " + std::to_string(s[1]) + "), 0))";
    if (s.size() == 3) {
      lin = tl::expand_dims(lin, 2) * s[2] + tl::expand_dims(tl::expand_dims(tl::arange(0, s[2]), 0), 0);
      text = "(tl::expand_dims(" + text + ", 2) * " + std::to_string(s[2]) + " + tl::expand_dims(tl::expand_dims(tl::arange(0, " +
             std::to_string(s[2]) + "), 0), 0))";
    }
    return {text, lin};
  }

  /// The typed pointer to input array d.
  std::pair<std::string, tl::tensor> array_ptr(dtype d, std::int64_t elem_offset) {
    const std::int64_t bytes = static_cast<std::int64_t>(static_cast<std::size_t>(d) * array_stride) +
                               elem_offset * tile::size_of(d);
    return with_type(d, [&]<class T>(std::type_identity<T>) {
      return std::pair<std::string, tl::tensor>{"tl::pointer_cast<" + tag(d) + "::element_type>(in + " + std::to_string(bytes) + ")",
                                                tl::pointer_cast<T>(in + bytes)};
    });
  }

  void load_input(dtype d, const shape& s) {
    std::int64_t span = 0;
    auto [itext, idx] = index(s, false, span);
    if (span >= static_cast<std::int64_t>(array_len)) {
      auto [lt, lin] = linear(s);
      itext = lt;
      idx = lin;
      span = numel(s) - 1;
    }
    // a base that moves with the program where the array allows it
    const std::int64_t room = static_cast<std::int64_t>(array_len) - 1 - span;
    const std::int64_t per_pid = std::max<std::int64_t>(0, std::min<std::int64_t>(room / max_programs, 1 + r.below(64)));
    const std::int64_t base0 = r.below(static_cast<int>(std::max<std::int64_t>(1, room - per_pid * (max_programs - 1) + 1)));
    std::string ptext;
    tl::tensor p;
    double mag = inf;
    if (d == dtype::f32 && r.chance(30)) {
      mag = 4;
      ptext = "fin + " + std::to_string(base0);
      p = fin + base0;
    } else if (d == dtype::i32 && r.chance(30)) {
      mag = 8;
      ptext = "iin + " + std::to_string(base0);
      p = iin + base0;
    } else {
      auto [t, pp] = array_ptr(d, base0);
      ptext = t;
      p = pp;
    }
    ptext = "(" + ptext + " + pid * " + std::to_string(per_pid) + ")";
    p = p + pid * per_pid;
    std::string ptrs = ptext + " + " + (s.empty() ? std::string("0") : "(" + itext + ")");
    tl::tensor ptr = s.empty() ? p : p + idx;
    if (!s.empty() && r.chance(40)) {  // masked, with an `other`
      auto [ltext, lin] = linear(s);
      const literal o = make_literal(r, d);
      tl::tensor v = tl::load(ptr, lin < n, literal_operand(o));
      add(v, "tl::load(" + ptrs + ", " + ltext + " < n, " + o.text + ")", {}, false, std::max(mag, o.is_float ? std::fabs(o.f) : std::fabs(double(o.i))));
      return;
    }
    add(tl::load(ptr), "tl::load(" + ptrs + ")", {}, false, mag);
  }

  void descriptor_load(dtype d, const shape& s) {
    // a [rows, cols] tensor inside the array, rows from n; blocks at offsets past its edges
    const std::int64_t BR = s[0], BC = s[1];
    const std::int64_t cols = BC + r.below(9);
    const std::int64_t max_rows = static_cast<std::int64_t>(array_len) / cols;
    auto [ptext, base] = array_ptr(d, 0);
    const bool rows_from_n = r.chance(50);
    const std::int64_t rows = std::min<std::int64_t>(max_rows, BR + r.below(8));
    tl::tensor rows_t = rows_from_n ? tl::minimum(n, tl::constant<std::int32_t>(static_cast<std::int64_t>(max_rows))) : tl::constant<std::int32_t>(rows);
    std::string rows_text = rows_from_n ? "tl::minimum(n, tl::constant<std::int32_t>(" + std::to_string(max_rows) + "))"
                                        : "tl::constant<std::int32_t>(" + std::to_string(rows) + ")";
    auto desc = tl::make_tensor_descriptor(base, {rows_t, cols}, {cols, 1}, {BR, BC});
    const std::int64_t o0 = r.below(static_cast<int>(rows + 2)) - 1, o1 = r.below(static_cast<int>(cols)) - 2;
    line("auto d" + std::to_string(next_id) + " = tl::make_tensor_descriptor(" + ptext + ", {" + rows_text + ", " +
         std::to_string(cols) + "}, {" + std::to_string(cols) + ", 1}, {" + std::to_string(BR) + ", " + std::to_string(BC) + "});");
    const std::string dname = "d" + std::to_string(next_id);
    if (r.chance(50))
      add(desc.load({pid + o0, tl::operand(o1)}), dname + ".load({pid + " + std::to_string(o0) + ", " + std::to_string(o1) + "})", {}, false);
    else
      add(desc.load({tl::operand(o0), tl::operand(o1)}), dname + ".load({" + std::to_string(o0) + ", " + std::to_string(o1) + "})", {}, false);
  }

  void leaf(dtype d, const shape& s) {
    int c = r.below(100);
    if (s.size() > 2 || numel(s) > static_cast<std::int64_t>(array_len)) c = 62 + c % 13;  // too large to load: a constant
    if (c < 55) return load_input(d, s);
    if (c < 62 && s.size() == 2 && d != dtype::i1) return descriptor_load(d, s);
    if (c < 75) {  // a constant tile
      const literal l = make_literal(r, d);
      add(tl::full(s, literal_operand(l), d), "tl::full(" + shape_text(s) + ", " + l.text + ", " + dtype_expr(d) + ")", {}, false,
          l.is_float ? std::fabs(l.f) : std::fabs(double(l.i)));
      return;
    }
    if (c < 85 && !s.empty()) {  // arange-derived integers, cast
      auto [ltext, lin] = linear(s);
      add(tl::cast(lin, d), "tl::cast(" + ltext + ", " + dtype_expr(d) + ")", {}, false, double(numel(s)));
      return;
    }
    if (c < 92) {  // program_id, num_programs, n, k
      const int w = r.below(4);
      const char* nm = w == 0 ? "pid" : w == 1 ? "n" : w == 2 ? "k" : "tl::num_programs(0)";
      tl::tensor src = w == 0 ? pid : w == 1 ? n : w == 2 ? k : tl::num_programs(0);
      tl::tensor v = tl::cast(src, d);
      std::string text = std::string("tl::cast(") + nm + ", " + dtype_expr(d) + ")";
      if (!s.empty()) {
        v = tl::broadcast_to(v, s);
        text = "tl::broadcast_to(" + text + ", " + shape_text(s) + ")";
      }
      add(v, text, {}, false, 64);
      return;
    }
    // Philox random numbers
    tl::tensor offs;
    std::string otext;
    if (s.empty()) {
      offs = pid * 7;
      otext = "pid * 7";
    } else {
      auto [lt, lin] = linear(s);
      offs = lin + pid * 1000;
      otext = lt + " + pid * 1000";
    }
    const int seed = r.below(1000);
    int kind = r.below(3);
    if (kind == 1 && !tile::is_float(d)) kind = 0;  // randn's values are inexact: cast only to floats
    if (kind == 0) {
      add(tl::rand(seed, offs), "tl::rand(" + std::to_string(seed) + ", " + otext + ")", {}, false, 1);
    } else if (kind == 1) {
      add(tl::randn(seed, offs), "tl::randn(" + std::to_string(seed) + ", " + otext + ")", {false, false}, true, 16, 1e-5);
    } else {
      add(tl::randint(n, offs), "tl::randint(n, " + otext + ")", {}, false);
    }
    if (vals.back().dt != d) cast_to(static_cast<int>(vals.size()) - 1, d);
  }

  void cast_to(int i, dtype d) {
    const val v = at(i);
    add(tl::cast(*v.t, d), "tl::cast(" + v.name + ", " + dtype_expr(d) + ")", v.ex, true, v.mag, v.err + unit(d) * v.mag);
  }

  // ---- ops ----------------------------------------------------------------------------------
  static bool exact(const val& v) { return v.ex.all(); }
  static bool numeric(const val& v) { return v.dt != dtype::i1; }
  exactness fused(const val& a, const val& b) const {
    exactness e = a.ex | b.ex;
    if (cfg.fp_fusion && (tile::is_float(a.dt) || tile::is_float(b.dt))) e.gpu = false;
    return e;
  }

  void binary() {
    const int kind = r.below(14);
    static const char* names[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "minimum", "maximum", "cmp", "logic"};
    const std::string op = names[kind];
    const bool arith = kind <= 2 || kind == 10 || kind == 11;
    const bool bits = kind >= 5 && kind <= 9;
    const bool logic = kind == 13;
    auto ok_a = [&](const val& v) {
      if (logic) return v.dt == dtype::i1;
      if (bits) return tile::is_int(v.dt) && v.dt != dtype::i1 && exact(v);
      if (arith) return numeric(v);
      return numeric(v) && exact(v);  // / % cmp
    };
    const dtype d0 = logic ? dtype::i1 : bits ? r.pick(std::vector<dtype>{dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::u8, dtype::u32, dtype::u64}) : any_dtype();
    const int a = operand(ok_a, d0 == dtype::i1 && !logic ? dtype::i32 : d0, any_shape());
    const shape sa = at(a).sh;
    auto ok_b = [&](const val& v) {
      if (!ok_a(v) || !broadcastable(sa, v.sh)) return false;
      if (kind == 3 && !exact(v)) return false;  // denominators exact
      return true;
    };
    const bool use_literal = !logic && r.chance(20);
    const val va = at(a);
    tl::tensor res;
    std::string text;
    exactness ex = va.ex;
    double mag = inf, err = va.err;
    if (use_literal) {
      const literal l = make_literal(r, va.dt, true);
      if (l.is_float && !tile::is_float(va.dt)) return;
      const tl::operand lo = literal_operand(l);
      if (!apply(kind, op, *va.t, lo, va.name, l.text, res, text)) return;
      if (cfg.fp_fusion && tile::is_float(va.dt) && kind <= 2) ex.gpu = false;
      const double ml = l.is_float ? (std::isnan(l.f) ? inf : std::fabs(l.f)) : std::fabs(double(l.i));
      mag = result_mag(kind, va.mag, ml);
      err = kind == 2 ? va.err * ml : va.err;
    } else {
      const int b = operand(ok_b, va.dt, sa);
      const val vb = at(b);
      if (!broadcastable(va.sh, vb.sh) || !ok_a(vb)) return;
      if (kind == 3 && !exact(vb)) return;
      if (!apply(kind, op, *va.t, *vb.t, va.name, vb.name, res, text)) return;
      ex = kind <= 2 ? fused(va, vb) : va.ex | vb.ex;
      mag = result_mag(kind, va.mag, vb.mag);
      err = kind == 2 ? va.err * vb.mag + vb.err * va.mag + va.err * vb.err : std::max(va.err, vb.err) + (kind <= 1 ? std::min(va.err, vb.err) : 0);
    }
    // one rounding of the result on top of the operands' differences (fusion: the rounding saved)
    add(res, text, ex, true, mag, err + 2 * unit(res.dtype()) * mag);
  }

  /// |a op b| from |a| <= ma and |b| <= mb (comparisons and logic: 1; bits: unbounded).
  static double result_mag(int kind, double ma, double mb) {
    switch (kind) {
      case 0:
      case 1: return ma + mb;
      case 2: return ma * mb;
      case 4: return ma;
      case 10:
      case 11: return std::max(ma, mb);
      case 12:
      case 13: return 1;
      default: return inf;
    }
  }

  bool apply(int kind, const std::string& op, const tl::operand& a, const tl::operand& b, const std::string& an,
             const std::string& bn, tl::tensor& res, std::string& text) {
    switch (kind) {
      case 0: res = a + b; break;
      case 1: res = a - b; break;
      case 2: res = a * b; break;
      case 3: res = a / b; break;
      case 4: res = a % b; break;
      case 5: res = a & b; break;
      case 6: res = a | b; break;
      case 7: res = a ^ b; break;
      case 8: res = a << b; break;
      case 9: res = a >> b; break;
      case 10: res = tl::minimum(a, b); text = "tl::minimum(" + an + ", " + bn + ")"; return true;
      case 11: res = tl::maximum(a, b); text = "tl::maximum(" + an + ", " + bn + ")"; return true;
      case 12: {
        static const char* c[] = {"==", "!=", "<", "<=", ">", ">="};
        const int w = r.below(6);
        switch (w) {
          case 0: res = a == b; break;
          case 1: res = a != b; break;
          case 2: res = a < b; break;
          case 3: res = a <= b; break;
          case 4: res = a > b; break;
          default: res = a >= b; break;
        }
        text = an + " " + c[w] + " " + bn;
        return true;
      }
      default: {
        const bool conj = r.chance(50);
        res = conj ? (a && b) : (a || b);
        text = an + (conj ? " && " : " || ") + bn;
        return true;
      }
    }
    text = an + " " + op + " " + bn;
    return true;
  }

  void unary() {
    static const char* names[] = {"-", "tl::abs", "~", "!", "tl::floor", "tl::ceil", "tl::sqrt", "tl::rsqrt", "tl::exp", "tl::exp2",
                                  "tl::log", "tl::log2", "tl::sin", "tl::cos", "tl::erf", "tl::sigmoid", "tl::fast_sqrt", "tl::fast_exp"};
    const int kind = r.below(18);
    const bool transcendental = kind >= 8 && kind <= 15;
    auto ok = [&](const val& v) {
      if (kind == 2) return tile::is_int(v.dt) && v.dt != dtype::i1 && exact(v);
      if (kind == 3) return v.dt == dtype::i1;
      if (kind <= 1) return numeric(v);
      if (v.dt == dtype::f64 && (transcendental || kind >= 16)) return false;  // no f64 libdevice on the GPU
      return numeric(v) && exact(v);
    };
    const dtype d = kind == 3 ? dtype::i1 : kind == 2 ? dtype::i32 : r.chance(70) ? r.pick(std::vector<dtype>{dtype::f32, dtype::f16, dtype::bf16}) : any_dtype();
    if (d == dtype::f64 && (transcendental || kind >= 16)) return;
    const int a = operand(ok, d, any_shape());
    const val va = at(a);
    if (!ok(va)) return;
    tl::tensor res;
    switch (kind) {
      case 0: res = -*va.t; break;
      case 1: res = tl::abs(*va.t); break;
      case 2: res = ~*va.t; break;
      case 3: res = !*va.t; break;
      case 4: res = tl::floor(*va.t); break;
      case 5: res = tl::ceil(*va.t); break;
      case 6: res = tl::sqrt(*va.t); break;
      case 7: res = tl::rsqrt(*va.t); break;
      case 8: res = tl::exp(*va.t); break;
      case 9: res = tl::exp2(*va.t); break;
      case 10: res = tl::log(*va.t); break;
      case 11: res = tl::log2(*va.t); break;
      case 12: res = tl::sin(*va.t); break;
      case 13: res = tl::cos(*va.t); break;
      case 14: res = tl::erf(*va.t); break;
      case 15: res = tl::sigmoid(*va.t); break;
      case 16: res = tl::fast_sqrt(*va.t); break;
      default: res = tl::fast_exp(*va.t); break;
    }
    exactness ex = va.ex;
    if (transcendental) ex = {false, false};
    if (kind >= 16) ex.gpu = false;
    // magnitudes and the GPU's documented errors (LANGUAGE.md): about 2 ulp for exp, exp2 and the
    // fast forms; 2^-22 absolute for log2's lg2.approx (and the series); 2^-20 for sin / cos;
    // 1.5e-7 for erf
    const double m = va.mag, u = unit(res.dtype()) > 0 ? unit(res.dtype()) : 0x1p-24;
    double mag = m, err = va.err;
    switch (kind) {
      case 4: case 5: mag = m + 1; break;
      case 6: case 16: mag = std::sqrt(m); err = kind == 16 ? 4 * u * mag : 0; break;
      case 7: mag = inf; break;
      case 8: case 17: mag = std::exp(m); err = 8 * u * mag * (1 + m); break;
      case 9: mag = std::exp2(m); err = 8 * u * mag; break;
      case 10: case 11: mag = 160; err = 0x1p-20 + 8 * u * 160; break;
      case 12: case 13: mag = 1; err = 0x1p-19; break;
      case 14: mag = 1; err = 4e-7; break;
      case 15: mag = 1; err = 16 * u; break;
      default: break;
    }
    if (tile::is_float(res.dtype()) && unit(res.dtype()) > 0x1p-24) err += 2 * unit(res.dtype()) * mag;  // f16 / bf16: the final rounding may flip
    add(res, std::string(names[kind]) + "(" + va.name + ")", ex, true, mag, err);
  }

  void ternary() {
    const int kind = r.below(6);  // where, clamp, fma, cdiv, umulhi, fast_div
    if (kind == 0) {
      const int c = operand([&](const val& v) { return v.dt == dtype::i1; }, dtype::i1, any_shape());
      const val vc = at(c);
      const dtype d = any_dtype();
      const int a = operand([&](const val& v) { return broadcastable(vc.sh, v.sh) && numeric(v); }, d, vc.sh);
      const val va = at(a);
      const int b = operand([&](const val& v) { return broadcastable(vc.sh, v.sh) && broadcastable(va.sh, v.sh) && v.dt == va.dt; }, va.dt, vc.sh);
      const val vb = at(b);
      if (!broadcastable(vc.sh, va.sh) || !broadcastable(va.sh, vb.sh) || !broadcastable(vc.sh, vb.sh)) return;
      // a select keeps its operands' bits: loaded NaNs stay loaded NaNs when both types agree
      add(tl::where(*vc.t, *va.t, *vb.t), "tl::where(" + vc.name + ", " + va.name + ", " + vb.name + ")", va.ex | vb.ex,
          va.computed_float || vb.computed_float || va.dt != vb.dt, std::max(va.mag, vb.mag), std::max(va.err, vb.err));
      return;
    }
    if (kind == 1 || kind == 2) {
      const dtype d = kind == 2 ? r.pick(std::vector<dtype>{dtype::f32, dtype::f16, dtype::f64, dtype::bf16}) : any_dtype();
      auto ok = [&](const val& v) { return v.dt == d && (kind == 2 || exact(v)); };
      const int a = operand(ok, d, any_shape());
      const val va = at(a);
      const int b = operand([&](const val& v) { return ok(v) && broadcastable(va.sh, v.sh); }, d, va.sh);
      const val vb = at(b);
      const int c = operand([&](const val& v) { return ok(v) && broadcastable(va.sh, v.sh) && broadcastable(vb.sh, v.sh); }, d, va.sh);
      const val vc = at(c);
      if (!broadcastable(va.sh, vb.sh) || !broadcastable(va.sh, vc.sh) || !broadcastable(vb.sh, vc.sh)) return;
      if (va.dt != d || vb.dt != d || vc.dt != d || !ok(va) || !ok(vb) || !ok(vc)) return;
      if (kind == 1)
        add(tl::clamp(*va.t, *vb.t, *vc.t), "tl::clamp(" + va.name + ", " + vb.name + ", " + vc.name + ")", va.ex | vb.ex | vc.ex, true,
            std::max({va.mag, vb.mag, vc.mag}), std::max({va.err, vb.err, vc.err}));
      else
        add(tl::fma(*va.t, *vb.t, *vc.t), "tl::fma(" + va.name + ", " + vb.name + ", " + vc.name + ")", va.ex | vb.ex | vc.ex, true,
            va.mag * vb.mag + vc.mag,
            va.err * vb.mag + vb.err * va.mag + va.err * vb.err + vc.err + 2 * unit(d) * (va.mag * vb.mag + vc.mag));
      return;
    }
    const dtype d = kind == 5 ? dtype::f32 : r.pick(std::vector<dtype>{dtype::i32, dtype::u32, dtype::i64, dtype::u64});
    auto ok = [&](const val& v) { return v.dt == d && exact(v); };
    const int a = operand(ok, d, any_shape());
    const val va = at(a);
    const int b = operand([&](const val& v) { return ok(v) && broadcastable(va.sh, v.sh); }, d, va.sh);
    const val vb = at(b);
    if (!ok(va) || !ok(vb) || !broadcastable(va.sh, vb.sh)) return;
    if (kind == 3)
      add(tl::cdiv(*va.t, *vb.t), "tl::cdiv(" + va.name + ", " + vb.name + ")", {}, false);
    else if (kind == 4)
      add(tl::umulhi(*va.t, *vb.t), "tl::umulhi(" + va.name + ", " + vb.name + ")", {}, false);
    else
      add(tl::fast_div(*va.t, *vb.t), "tl::fast_div(" + va.name + ", " + vb.name + ")", {true, false}, true, inf, inf);
  }

  void conversion() {
    const int a = operand([&](const val&) { return true; }, any_dtype(), any_shape());
    const val va = at(a);
    if (r.chance(75)) {
      dtype d = any_dtype();
      if (!exact(va) && !tile::is_float(d)) d = r.chance(50) ? dtype::f32 : dtype::f64;
      if (!exact(va) && !tile::is_float(va.dt)) return;
      add(tl::cast(*va.t, d), "tl::cast(" + va.name + ", " + dtype_expr(d) + ")", va.ex, true, va.mag,
          va.err + 2 * unit(d) * va.mag);
      return;
    }
    // bitcast between types of one width (not i1; not a float that may be a computed NaN)
    if (va.dt == dtype::i1 || !exact(va) || va.computed_float) return;
    std::vector<dtype> same;
    for (dtype d : all_dtypes)
      if (d != dtype::i1 && d != va.dt && tile::bits(d) == tile::bits(va.dt)) same.push_back(d);
    if (same.empty()) return;
    const dtype d = r.pick(same);
    with_type(d, [&]<class T>(std::type_identity<T>) {
      add(tl::bitcast<T>(*va.t), "tl::bitcast<" + tag(d) + "::element_type>(" + va.name + ")", {}, false);
    });
  }

  void reduction() {
    const int kind = r.below(9);  // sum max min argmax argmin reduce(+) reduce(max) reduce(^) reduce(|)
    const bool arg = kind == 3 || kind == 4;
    const bool bitwise = kind == 7 || kind == 8;
    auto ok = [&](const val& v) {
      if (v.sh.empty() || v.dt == dtype::i1) return false;
      if (bitwise) return tile::is_int(v.dt) && exact(v);
      if (arg) return exact(v);
      if (kind == 5 || kind == 6) return v.dt == dtype::f32 || v.dt == dtype::i32 || v.dt == dtype::f16 || v.dt == dtype::i64;
      return true;
    };
    shape s = any_shape();
    if (s.empty()) s = main;
    const int a = operand(ok, bitwise ? dtype::i32 : r.chance(50) ? dtype::f32 : any_dtype(), s);
    const val va = at(a);
    if (!ok(va)) return;
    const int axis = r.below(static_cast<int>(va.sh.size()));
    const std::string ax = std::to_string(axis);
    exactness ex = va.ex;
    const bool float_sum = tile::is_float(va.dt) && (kind == 0 || kind == 5);
    if (float_sum) ex.gpu = false;  // a tree on the GPU
    tl::tensor res;
    std::string text;
    switch (kind) {
      case 0: res = tl::sum(*va.t, axis); text = "tl::sum(" + va.name + ", " + ax + ")"; break;
      case 1: res = tl::max(*va.t, axis); text = "tl::max(" + va.name + ", " + ax + ")"; break;
      case 2: res = tl::min(*va.t, axis); text = "tl::min(" + va.name + ", " + ax + ")"; break;
      case 3: res = tl::argmax(*va.t, axis); text = "tl::argmax(" + va.name + ", " + ax + ")"; break;
      case 4: res = tl::argmin(*va.t, axis); text = "tl::argmin(" + va.name + ", " + ax + ")"; break;
      case 5: res = tl::reduce(*va.t, axis, [](tl::tensor x, tl::tensor y) { return x + y; });
        text = "tl::reduce(" + va.name + ", " + ax + ", [](tl::tensor x, tl::tensor y) { return x + y; })"; break;
      case 6: res = tl::reduce(*va.t, axis, [](tl::tensor x, tl::tensor y) { return tl::maximum(x, y); });
        text = "tl::reduce(" + va.name + ", " + ax + ", [](tl::tensor x, tl::tensor y) { return tl::maximum(x, y); })"; break;
      case 7: res = tl::reduce(*va.t, axis, [](tl::tensor x, tl::tensor y) { return x ^ y; });
        text = "tl::reduce(" + va.name + ", " + ax + ", [](tl::tensor x, tl::tensor y) { return x ^ y; })"; break;
      default: res = tl::reduce(*va.t, axis, [](tl::tensor x, tl::tensor y) { return x | y; });
        text = "tl::reduce(" + va.name + ", " + ax + ", [](tl::tensor x, tl::tensor y) { return x | y; })"; break;
    }
    const double len = double(va.sh[static_cast<std::size_t>(axis)]);
    const bool summing = kind == 0 || kind == 5;
    const double mag = arg ? len : summing ? len * va.mag : va.mag;
    const double u = unit(res.dtype());
    // a sum in any order: (n - 1)·u·Σ|x| apart from the left fold (LANGUAGE.md); f16 / bf16 sums
    // round every step in the interpreter
    const double err = summing ? len * va.err + 2 * len * u * mag : va.err;
    add(res, text, ex, !arg, mag, err);
  }

  void scan() {
    const int kind = r.below(4);  // cumsum cumprod scan(max) scan(^)
    auto ok = [&](const val& v) {
      if (v.sh.empty() || v.dt == dtype::i1) return false;
      if (kind == 3) return tile::is_int(v.dt) && exact(v);
      if (kind == 2) return v.dt == dtype::f32 || v.dt == dtype::i32 || v.dt == dtype::u32;
      return true;
    };
    shape s = any_shape();
    if (s.empty()) s = main;
    const int a = operand(ok, kind == 3 ? dtype::i32 : r.chance(50) ? dtype::f32 : any_dtype(), s);
    const val va = at(a);
    if (!ok(va)) return;
    const int axis = r.below(static_cast<int>(va.sh.size()));
    const bool rev = r.chance(30);
    const std::string tail = ", " + std::to_string(axis) + (rev ? ", true" : "") + ")";
    exactness ex = va.ex;
    if (tile::is_float(va.dt) && kind <= 1) ex.gpu = false;  // parallel scans combine in a tree
    tl::tensor res;
    std::string text;
    switch (kind) {
      case 0: res = tl::cumsum(*va.t, axis, rev); text = "tl::cumsum(" + va.name + tail; break;
      case 1: res = tl::cumprod(*va.t, axis, rev); text = "tl::cumprod(" + va.name + tail; break;
      case 2:
        res = tl::associative_scan(*va.t, axis, [](tl::tensor x, tl::tensor y) { return tl::maximum(x, y); }, rev);
        text = "tl::associative_scan(" + va.name + ", " + std::to_string(axis) + ", [](tl::tensor x, tl::tensor y) { return tl::maximum(x, y); }" +
               (rev ? ", true" : "") + ")";
        break;
      default:
        res = tl::associative_scan(*va.t, axis, [](tl::tensor x, tl::tensor y) { return x ^ y; }, rev);
        text = "tl::associative_scan(" + va.name + ", " + std::to_string(axis) + ", [](tl::tensor x, tl::tensor y) { return x ^ y; }" +
               (rev ? ", true" : "") + ")";
        break;
    }
    const double len = double(va.sh[static_cast<std::size_t>(axis)]);
    const double u = unit(res.dtype());
    double mag = va.mag, err = va.err;
    if (kind == 0) mag = len * va.mag, err = len * va.err + 2 * len * u * mag;
    if (kind == 1) mag = std::pow(std::max(va.mag, 1.0), len), err = va.ex.all() ? 2 * len * u * mag : inf;
    add(res, text, ex, true, mag, err);
  }

  void shape_op() {
    const int kind = r.below(7);  // expand_dims broadcast_to reshape trans permute join split
    const int a = operand([&](const val& v) {
      if (kind == 0) return v.sh.size() <= 1;
      if (kind == 1) return v.sh.size() <= 2;
      if (kind == 3 || kind == 4) return v.sh.size() == 2;
      if (kind == 5) return v.sh.size() <= 2;
      if (kind == 6) return !v.sh.empty() && v.sh.back() == 2;
      return v.sh.size() >= 1;
    }, any_dtype(), kind == 6 ? shape{main[0], 2} : main);
    const val va = at(a);
    switch (kind) {
      case 0: {
        if (va.sh.size() > 1) return;
        const int axis = va.sh.empty() ? 0 : r.below(2);
        add(tl::expand_dims(*va.t, axis), "tl::expand_dims(" + va.name + ", " + std::to_string(axis) + ")", va.ex, va.computed_float, va.mag, va.err);
        return;
      }
      case 1: {
        shape to = main;
        if (va.sh.size() == 1) to = {main[0], va.sh[0]};
        if (va.sh.size() == 2)  // stretch the extents of 1
          for (std::size_t i = 0; i < 2; ++i) to[i] = va.sh[i] == 1 ? main[i] : va.sh[i];
        add(tl::broadcast_to(*va.t, to), "tl::broadcast_to(" + va.name + ", " + shape_text(to) + ")", va.ex, va.computed_float, va.mag, va.err);
        return;
      }
      case 2: {
        if (va.sh.empty()) return;
        const std::int64_t ne = numel(va.sh);
        std::vector<shape> cands = {{ne}};
        for (std::int64_t a0 = 1; a0 <= ne; a0 *= 2)
          if (ne / a0 <= 64 && a0 <= 64) cands.push_back({a0, ne / a0});
        const shape to = r.pick(cands);
        add(tl::reshape(*va.t, to), "tl::reshape(" + va.name + ", " + shape_text(to) + ")", va.ex, va.computed_float, va.mag, va.err);
        return;
      }
      case 3:
        if (va.sh.size() != 2) return;
        add(tl::trans(*va.t), "tl::trans(" + va.name + ")", va.ex, va.computed_float, va.mag, va.err);
        return;
      case 4:
        if (va.sh.size() != 2) return;
        add(tl::permute(*va.t, {1, 0}), "tl::permute(" + va.name + ", {1, 0})", va.ex, va.computed_float, va.mag, va.err);
        return;
      case 5: {
        if (va.sh.size() > 2) return;
        const int b = operand([&](const val& v) { return v.dt == va.dt && v.sh == va.sh; }, va.dt, va.sh);
        const val vb = at(b);
        if (vb.dt != va.dt || vb.sh != va.sh) return;
        add(tl::join(*va.t, *vb.t), "tl::join(" + va.name + ", " + vb.name + ")", va.ex | vb.ex, va.computed_float || vb.computed_float,
            std::max(va.mag, vb.mag), std::max(va.err, vb.err));
        return;
      }
      default: {
        if (va.sh.empty() || va.sh.back() != 2) return;
        auto [lo, hi] = tl::split(*va.t);
        const std::string pair = "s" + std::to_string(next_id);
        line("auto [" + pair + "a, " + pair + "b] = tl::split(" + va.name + ");");
        add(lo, pair + "a", va.ex, va.computed_float, va.mag, va.err);
        add(hi, pair + "b", va.ex, va.computed_float, va.mag, va.err);
        return;
      }
    }
  }

  void dot() {
    static const std::vector<dtype> types = {dtype::f16, dtype::bf16, dtype::f32, dtype::i8, dtype::f64};
    const dtype d = r.pick(types);
    const std::int64_t M = 16 << r.below(2), N = 16 << r.below(2), K = 16 << r.below(2);
    // operands from the tame arrays (floats: no specials, so that a sum's order cannot turn inf
    // into NaN) or from values of the right shape
    auto mk = [&](std::int64_t rows, std::int64_t cols) -> int {
      const int i = find([&](const val& v) { return v.dt == d && v.sh == shape{rows, cols}; });
      if (i >= 0 && r.chance(50)) return i;
      std::int64_t span = 0;
      auto [itext, idx] = index({rows, cols}, false, span);
      if (span >= static_cast<std::int64_t>(array_len)) {
        auto [lt, lin] = linear({rows, cols});
        itext = lt;
        idx = lin;
        span = rows * cols - 1;
      }
      const int step = span + 3 * (max_programs - 1) < static_cast<std::int64_t>(array_len) ? 3 : 0;
      if (d == dtype::f32 || d == dtype::f16 || d == dtype::bf16) {
        tl::tensor v = tl::load(fin + (idx + pid * step));
        std::string text = "tl::load(fin + (" + itext + " + pid * " + std::to_string(step) + "))";
        if (d != dtype::f32) {
          v = tl::cast(v, d);
          text = "tl::cast(" + text + ", " + dtype_expr(d) + ")";
        }
        add(v, text, {}, false, 4);
      } else {
        load_input(d, {rows, cols});
      }
      return static_cast<int>(vals.size()) - 1;
    };
    const int a = mk(M, K), b = mk(K, N);
    const val va = at(a), vb = at(b);
    if (va.dt != d || vb.dt != d) return;
    const bool tensor_core = d == dtype::f16 || d == dtype::bf16 || d == dtype::i8 || d == dtype::f32;
    exactness ex = va.ex | vb.ex;
    std::string prec;
    tl::tensor res;
    if (d == dtype::f32 && r.chance(50)) {
      const bool ieee = r.chance(50);
      prec = ieee ? "tl::precision::ieee" : "tl::precision::tf32x3";
      res = tl::dot(*va.t, *vb.t, ieee ? tl::precision::ieee : tl::precision::tf32x3);
    } else {
      res = tl::dot(*va.t, *vb.t);
      if (tensor_core && d != dtype::i8) ex.gpu = false;
    }
    // the tensor cores' order and rounding: K·2^-22·Σ|a·b| (LANGUAGE.md), and the operands' own
    const double kk = double(K), mag = kk * va.mag * vb.mag;
    const double err = kk * (va.err * vb.mag + vb.err * va.mag) + (d == dtype::f64 ? 0 : 2 * kk * 0x1p-22 * mag);
    add(res, "tl::dot(" + va.name + ", " + vb.name + (prec.empty() ? "" : ", " + prec) + ")", ex, true, mag, err);
  }

  // ---- memory -------------------------------------------------------------------------------
  /// A window of io for this program: byte offset (program 0) of `count` elements of d.
  std::int64_t io_take(dtype d, std::int64_t count) {
    const std::int64_t sz = tile::size_of(d);
    std::int64_t off = (static_cast<std::int64_t>(io_used) + 15) / 16 * 16;
    if (off + count * sz > static_cast<std::int64_t>(io_window)) return -1;
    io_used = static_cast<std::size_t>(off + count * sz);
    return off;
  }

  std::pair<std::string, tl::tensor> io_ptr(dtype d, std::int64_t off) {
    return with_type(d, [&]<class T>(std::type_identity<T>) {
      return std::pair<std::string, tl::tensor>{
          "tl::pointer_cast<" + tag(d) + "::element_type>(io + pid * " + std::to_string(io_window) + " + " + std::to_string(off) + ")",
          tl::pointer_cast<T>(io + pid * static_cast<std::int64_t>(io_window) + off)};
    });
  }

  /// io: load a window, store a value over it, load it again through another index order.
  void inplace() {
    const shape s = r.chance(50) ? main : shape{main[0]};
    const int a = operand([&](const val& v) { return v.sh == s && v.dt != dtype::i1; }, any_dtype(), s);
    const val va = at(a);
    if (va.sh != s || va.dt == dtype::i1) return;
    const std::int64_t count = numel(s);
    const std::int64_t off = io_take(va.dt, count);
    if (off < 0) return;
    auto [ptext, p] = io_ptr(va.dt, off);
    std::int64_t span = 0;
    auto [itext, idx] = index(s, true, span);
    if (span >= count) {  // strided: keep it inside the window
      auto [lt, lin] = linear(s);
      itext = lt;
      idx = lin;
    }
    // (in a loop, a later iteration's first load reads the value an earlier one stored)
    if (depth > 0)
      add(tl::load(p + idx), "tl::load(" + ptext + " + " + itext + ")", va.ex, true, inf, va.ex.all() ? 0 : inf);
    else
      add(tl::load(p + idx), "tl::load(" + ptext + " + " + itext + ")", {}, false);
    if (s.size() == 2 && r.chance(40)) {
      // through a descriptor of the window as a [rows, cols] tensor, the block at (0, c0): the
      // part past the tensor's edge (rows from n, columns from the block's offset) is not written
      const std::int64_t R = s[0], C = s[1], c0 = r.below(static_cast<int>(C));
      auto desc = tl::make_tensor_descriptor(p, {tl::minimum(n, tl::constant<std::int32_t>(R)), tl::operand(C)}, {C, 1}, {R, C});
      desc.store({0, c0}, *va.t);
      line("tl::make_tensor_descriptor(" + ptext + ", {tl::minimum(n, tl::constant<std::int32_t>(" + std::to_string(R) + ")), " +
           std::to_string(C) + "}, {" + std::to_string(C) + ", 1}, {" + std::to_string(R) + ", " + std::to_string(C) + "}).store({0, " +
           std::to_string(c0) + "}, " + va.name + ");");
    } else {
      line("tl::store(" + ptext + " + " + itext + ", " + va.name + ");");
      tl::store(p + idx, *va.t);
    }
    auto [lt, lin] = linear(s);
    add(tl::load(p + lin), "tl::load(" + ptext + " + " + lt + ")", va.ex, va.computed_float, va.mag, va.err);
    prog.slots.push_back({va.name + " stored to io", true, va.dt, static_cast<std::size_t>(off), static_cast<std::size_t>(count),
                          io_window, va.ex, va.err});
  }

  void atomic() {
    static const char* names[] = {"atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"};
    const int kind = r.below(8);
    std::vector<dtype> types = {dtype::i32, dtype::u32, dtype::i64, dtype::u64, dtype::f32};
    if (kind == 0 || kind == 1 || kind == 2) types.push_back(dtype::f64);
    if (kind == 0) types.push_back(dtype::f16);
    if (kind >= 3 && kind <= 5) types = {dtype::i32, dtype::u32, dtype::i64, dtype::u64};
    if (kind == 7) types = {dtype::i32, dtype::u32, dtype::i64, dtype::u64};
    const dtype d = r.pick(types);
    const shape s = r.chance(50) ? shape{main[0]} : main;
    const int a = operand([&](const val& v) { return v.dt == d && v.sh == s && exact(v); }, d, s);
    const val va = at(a);
    if (va.dt != d || va.sh != s || !exact(va)) return;
    const bool shared = kind <= 5 && r.chance(50);  // the shared targets: order unknown, old values unused
    // float sums in an unknown order: only of bounded values (a bound on the rounding)
    if (shared && tile::is_float(d) && kind == 0 && !(va.mag < 1e30)) return;
    if (shared) {
      // the targets of one kind of atomic on one dtype (64 bytes each): atomics of one kind
      // commute, so their result does not depend on the order the programs' atomics land in;
      // two kinds (an add and a max) on one target would
      const std::int64_t sz = tile::size_of(d);
      const std::int64_t slot_bytes = 64;
      const std::int64_t dt_index = std::find(std::begin(all_dtypes), std::end(all_dtypes), d) - std::begin(all_dtypes);
      const std::int64_t base = (kind * 13 + dt_index) * slot_bytes;
      const std::int64_t count = slot_bytes / sz;
      auto [lt, lin] = linear(s);
      with_type(d, [&]<class T>(std::type_identity<T>) {
        tl::tensor p = tl::pointer_cast<T>(out + base) + (lin + pid) % count;
        const std::string ptext = "tl::pointer_cast<" + tag(d) + "::element_type>(out + " + std::to_string(base) + ") + (" + lt + " + pid) % " +
                                  std::to_string(count);
        tl::tensor old;
        switch (kind) {
          case 0: old = tl::atomic_add(p, *va.t); break;
          case 1: old = tl::atomic_max(p, *va.t); break;
          case 2: old = tl::atomic_min(p, *va.t); break;
          case 3: old = tl::atomic_and(p, *va.t); break;
          case 4: old = tl::atomic_or(p, *va.t); break;
          default: old = tl::atomic_xor(p, *va.t); break;
        }
        line(std::string("tl::") + names[kind] + "(" + ptext + ", " + va.name + ");");
        const bool order = tile::is_float(d) && kind == 0;
        // at most 9 executions (two nested loops of 3) of every program's lanes on a target
        const double adds = double(max_programs) * double(numel(s) / count + 1) * 9;
        const double err = order ? 2 * adds * adds * unit(d) * std::max(va.mag, 1.0) : 0;
        bool found = false;
        for (auto& sl : prog.slots)
          if (sl.what == std::string(names[kind]) + " targets " + std::string(tile::name(d))) {
            found = true;
            if (order) sl.exact = {false, false}, sl.err += err;
          }
        if (!found)
          prog.slots.push_back({std::string(names[kind]) + " targets " + std::string(tile::name(d)), false, d, static_cast<std::size_t>(base),
                                static_cast<std::size_t>(count), 0, order ? exactness{false, false} : exactness{}, err});
      });
      return;
    }
    // the program's own io window, one lane an element: the old values are known
    const std::int64_t count = numel(s);
    const std::int64_t off = io_take(d, count);
    if (off < 0) return;
    auto [ptext, p] = io_ptr(d, off);
    auto [lt, lin] = linear(s);
    const bool masked = r.chance(30);
    tl::tensor old;
    std::string text;
    const std::string ptrs = ptext + " + " + lt;
    tl::tensor ptr = p + lin;
    if (kind == 7) {
      const int c = operand([&](const val& v) { return v.dt == d && broadcastable(s, v.sh) && exact(v); }, d, s);
      const val vc = at(c);
      if (vc.dt != d || !broadcastable(s, vc.sh) || !exact(vc)) return;
      old = tl::atomic_cas(ptr, *vc.t, *va.t);
      text = "tl::atomic_cas(" + ptrs + ", " + vc.name + ", " + va.name + ")";
    } else {
      tl::operand m = masked ? tl::operand(lin < n) : tl::operand();
      const std::string mt = masked ? ", " + lt + " < n" : "";
      switch (kind) {
        case 0: old = tl::atomic_add(ptr, *va.t, m); break;
        case 1: old = tl::atomic_max(ptr, *va.t, m); break;
        case 2: old = tl::atomic_min(ptr, *va.t, m); break;
        case 3: old = tl::atomic_and(ptr, *va.t, m); break;
        case 4: old = tl::atomic_or(ptr, *va.t, m); break;
        case 5: old = tl::atomic_xor(ptr, *va.t, m); break;
        default: old = tl::atomic_xchg(ptr, *va.t, m); break;
      }
      text = std::string("tl::") + names[kind] + "(" + ptrs + ", " + va.name + mt + ")";
    }
    // f32 atom.add on the GPU flushes subnormals (LANGUAGE.md): the window is close there
    // (in a loop the old values are earlier results: a float window's then as exact as they)
    const bool flush = d == dtype::f32 && kind == 0;
    const exactness ex = flush ? exactness{true, false} : exactness{};
    const double err = flush ? 0x1p-120 : 0;
    add(old, text, depth > 0 ? ex : exactness{}, depth > 0, inf, depth > 0 ? err : 0);
    prog.slots.push_back({"io window of " + text, true, d, static_cast<std::size_t>(off), static_cast<std::size_t>(count), io_window, ex, err});
  }

  void store_out(int i) {
    const val v = at(i);
    const std::int64_t count = std::max<std::int64_t>(1, numel(v.sh));
    const std::int64_t sz = tile::size_of(v.dt);
    const std::size_t off = (out_used + 15) / 16 * 16;
    const std::size_t bytes = static_cast<std::size_t>(count * sz) * max_programs;
    if (off + bytes > probe_low) return;
    out_used = off + bytes;
    with_type(v.dt, [&]<class T>(std::type_identity<T>) {
      tl::tensor p = tl::pointer_cast<T>(out + static_cast<std::int64_t>(off)) + pid * count;
      std::string ptext = "tl::pointer_cast<" + tag(v.dt) + "::element_type>(out + " + std::to_string(off) + ") + pid * " + std::to_string(count);
      if (v.sh.empty()) {
        tl::store(p, *v.t);
        line("tl::store(" + ptext + ", " + v.name + ");");
      } else {
        std::int64_t span = 0;
        auto [itext, idx] = index(v.sh, true, span);
        if (span >= count) {
          auto [lt, lin] = linear(v.sh);
          itext = lt;
          idx = lin;
        }
        if (r.chance(30)) {
          auto [lt, lin] = linear(v.sh);
          tl::store(p + idx, *v.t, lin < n);
          line("tl::store(" + ptext + " + " + itext + ", " + v.name + ", " + lt + " < n);");
        } else {
          tl::store(p + idx, *v.t);
          line("tl::store(" + ptext + " + " + itext + ", " + v.name + ");");
        }
      }
    });
    prog.slots.push_back({v.name + " stored to out", false, v.dt, off, static_cast<std::size_t>(count), static_cast<std::size_t>(count * sz), v.ex, v.err});
  }

  /// --probe: store `v` where it is made, row-major, drawing nothing from the generator (the
  /// program is the seed's own plus these stores). A value made in a loop keeps its last
  /// iteration's; a branch not taken leaves its slot untouched.
  void probe(const val& v) {
    const std::int64_t count = std::max<std::int64_t>(1, numel(v.sh));
    const std::int64_t sz = tile::size_of(v.dt);
    const std::size_t bytes = static_cast<std::size_t>(count * sz) * max_programs;
    if (bytes > probe_low) return;
    const std::size_t off = (probe_low - bytes) / 16 * 16;  // from the end of out down
    if (off < out_used) return;
    probe_low = off;
    with_type(v.dt, [&]<class T>(std::type_identity<T>) {
      tl::tensor p = tl::pointer_cast<T>(out + static_cast<std::int64_t>(off)) + pid * count;
      const std::string ptext = "tl::pointer_cast<" + tag(v.dt) + "::element_type>(out + " + std::to_string(off) + ") + pid * " + std::to_string(count);
      if (v.sh.empty()) {
        tl::store(p, *v.t);
        line("tl::store(" + ptext + ", " + v.name + ");  // probe");
      } else {
        auto [lt, lin] = linear(v.sh);
        tl::store(p + lin, *v.t);
        line("tl::store(" + ptext + " + " + lt + ", " + v.name + ");  // probe");
      }
    });
    prog.slots.push_back({v.name + " (probe)", false, v.dt, off, static_cast<std::size_t>(count), static_cast<std::size_t>(count * sz), v.ex, v.err});
  }

  // ---- control flow -------------------------------------------------------------------------
  /// Reassign `outer` (a value made before the body) from a body value of its dtype and shape.
  /// Carried through a loop its magnitude is unknown (the body may grow it every iteration).
  void reassign(val& outer, const val& from, bool loop) {
    *outer.t = *from.t;
    line(outer.name + " = " + from.name + ";");
    outer.ex = outer.ex | from.ex;
    outer.computed_float = outer.computed_float || from.computed_float;
    outer.mag = loop ? inf : std::max(outer.mag, from.mag);
    outer.err = outer.ex.all() ? 0 : loop ? inf : std::max(outer.err, from.err);
    outer.weight = std::min(outer.weight + from.weight, 1 << 20);
  }

  /// The heaviest visible value not yet in `taken` (-1 if none).
  int heaviest(const std::vector<int>& taken) const {
    int best = -1;
    for (int i = 0; i < static_cast<int>(vals.size()); ++i)
      if (std::find(taken.begin(), taken.end(), i) == taken.end() && (best < 0 || vals[static_cast<std::size_t>(i)].weight > vals[static_cast<std::size_t>(best)].weight))
        best = i;
    return best;
  }

  /// Ops in a body, then the carried values reassigned from body values of their dtype and shape.
  /// Ops in a body, then the carried values reassigned from body values of their dtype and
  /// shape. In a loop a later iteration sees what the body carried, so a value carried there is
  /// never made less exact than it was when the body was built (its ops relied on that).
  void body(int ops, const std::vector<int>& carried, bool loop) {
    for (int i = 0; i < ops; ++i) step();
    for (int o : carried) {
      const val& outer = at(o);
      const int from = find([&](const val& v) {
        const bool as_exact = (v.ex.cpu || !outer.ex.cpu) && (v.ex.gpu || !outer.ex.gpu);
        return v.dt == outer.dt && v.sh == outer.sh && v.depth == depth && (!loop || as_exact);
      });
      if (from >= 0) reassign(vals[static_cast<std::size_t>(o)], at(from), loop);
    }
  }

  void control() {
    if (depth >= 2) return;
    const std::size_t outer_count = vals.size();
    const int kind = r.below(4);
    const int ops = 2 + r.below(5);
    const std::string saved = indent;
    // up to two values made before the body are carried (chosen first: in a loop the body sees
    // them with an unknown magnitude, as later iterations do)
    std::vector<int> carried;
    for (int c = 0; c < 2 && outer_count > 0; ++c) {
      const int o = r.below(static_cast<int>(outer_count));
      if (std::find(carried.begin(), carried.end(), o) == carried.end()) carried.push_back(o);
    }
    const bool repeats = kind <= 2 || loop_depth > 0;  // the body may run more than once
    if (repeats)
      for (int o : carried) {
        at(o).mag = inf;
        if (!at(o).ex.all()) at(o).err = inf;
      }
    if (kind <= 1) {  // for_range
      const int lo = r.below(2), step_by = 1 + r.below(2);
      const bool runtime_hi = r.chance(70);
      const int hi = r.below(4);
      line("tl::for_range(" + std::to_string(lo) + ", " + (runtime_hi ? std::string("k") : std::to_string(hi)) +
           (step_by > 1 ? ", " + std::to_string(step_by) : "") + ", [&](tl::tensor i" + std::to_string(depth) + ") {");
      auto fn = [&](tl::tensor iv) {
        ++depth;
        indent += "  ";
        add(iv, "i" + std::to_string(depth - 1), {}, false, 8);
        ++loop_depth;
        body(ops, carried, true);
        --loop_depth;
        vals.resize(outer_count);
        indent = saved;
        --depth;
      };
      if (runtime_hi)
        tl::for_range(lo, k, step_by, fn);
      else
        tl::for_range(lo, hi, step_by, fn);
      line("});");
      return;
    }
    if (kind == 2) {  // while_ with its own counter
      tl::tensor& cnt = objs.emplace_back(tl::zeros<std::int32_t>({}));
      const std::string cname = "c" + std::to_string(next_id++);
      line("tl::tensor " + cname + " = tl::zeros<std::int32_t>({});");
      line("tl::while_([&] { return " + cname + " < k; }, [&] {");
      tl::while_([&] { return cnt < k; },
                 [&] {
                   ++depth;
                   indent += "  ";
                   ++loop_depth;
                   body(ops, carried, true);
                   --loop_depth;
                   cnt = cnt + 1;
                   line(cname + " = " + cname + " + 1;");
                   vals.resize(outer_count);
                   indent = saved;
                   --depth;
                 });
      line("});");
      return;
    }
    // if_ on a scalar condition, with or without else
    tl::tensor cond;
    std::string ctext;
    switch (r.below(3)) {
      case 0: cond = pid % 2 == 0; ctext = "pid % 2 == 0"; break;
      case 1: {
        const int c = r.below(40);
        cond = n > c;
        ctext = "n > " + std::to_string(c);
        break;
      }
      default: {
        const int i = find([&](const val& v) { return v.sh.empty() && tile::is_int(v.dt) && v.dt != dtype::i1 && exact(v); });
        if (i < 0) {
          cond = k > 1;
          ctext = "k > 1";
        } else {
          cond = *at(i).t > 0;
          ctext = at(i).name + " > 0";
        }
      }
    }
    const bool with_else = r.chance(50);
    line("tl::if_(" + ctext + ", [&] {");
    auto branch = [&] {
      ++depth;
      indent += "  ";
      body(ops, carried, repeats);
      vals.resize(outer_count);
      indent = saved;
      --depth;
    };
    if (with_else) {
      tl::if_(cond, branch, [&] {
        line("}, [&] {");
        branch();
      });
    } else {
      tl::if_(cond, branch);
    }
    line("});");
  }

  void step() {
    const int c = r.below(100);
    if (c < 22) return binary();
    if (c < 34) return unary();
    if (c < 42) return ternary();
    if (c < 50) return conversion();
    if (c < 58) return reduction();
    if (c < 63) return scan();
    if (c < 72) return shape_op();
    if (c < 75) return dot();
    if (c < 80) return inplace();
    if (c < 85) return atomic();
    if (c < 88 && depth > 0) {  // a store in a body: each iteration's, the last one stays
      const int i = heaviest({});
      if (i >= 0) store_out(i);
      return;
    }
    if (c < 92 && depth < 2) return control();
    return leaf(any_dtype(), any_shape());
  }
};

}  // namespace

void build(const config& cfg, program& prog, tl::ptr<std::uint8_t> in, tl::ptr<float> fin, tl::ptr<std::int32_t> iin,
           tl::ptr<std::uint8_t> io, tl::ptr<std::uint8_t> out, tl::i32 n, tl::i32 k) {
  prog = {};
  gen g(cfg, prog);
  g.in = in, g.fin = fin, g.iin = iin, g.io = io, g.out = out, g.n = n, g.k = k;
  g.pid = tl::program_id(0);
  g.main = {std::int64_t{1} << g.r.below(6), std::int64_t{1} << g.r.below(6)};
  prog.cpp = "auto k = tile::kernel(\"fuzz\", [](tl::ptr<std::uint8_t> in, tl::ptr<float> fin, tl::ptr<std::int32_t> iin, "
             "tl::ptr<std::uint8_t> io, tl::ptr<std::uint8_t> out, tl::i32 n, tl::i32 k) {\n  auto pid = tl::program_id(0);\n";
  const int ops = 6 + g.r.below(20);
  for (int i = 0; i < ops; ++i) g.step();
  // store the heaviest values (the most ops behind them), the last one made, and another
  const int stores = 2 + g.r.below(3);
  std::vector<int> chosen;
  for (int s = 0; s < stores && !g.vals.empty(); ++s) {
    const int i = s == 0 ? static_cast<int>(g.vals.size()) - 1 : s == stores - 1 ? g.r.below(static_cast<int>(g.vals.size())) : g.heaviest(chosen);
    if (i < 0 || std::find(chosen.begin(), chosen.end(), i) != chosen.end()) continue;
    chosen.push_back(i);
    g.store_out(i);
  }
  prog.cpp += "});\n";
}

config choose(std::uint64_t seed) {
  rng r{seed ^ 0x5DEECE66Dull};
  config c;
  c.seed = seed;
  c.programs = 1 + r.below(max_programs);
  c.n = r.below(48);
  c.k = r.below(4);
  c.num_warps = 1 << r.below(4);
  c.fp_fusion = r.chance(25);
  return c;
}

}  // namespace fuzz

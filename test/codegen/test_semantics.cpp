// test/codegen/test_semantics.cpp — elementwise semantics on the CPU backend against the
// interpreter, bit for bit: integer arithmetic at every width (div/rem by 0 and INT_MIN / -1,
// shifts by >= the width and by negative amounts, umulhi, signed vs unsigned min/max and
// comparisons, abs(INT_MIN), i1 as a 1-bit type), float arithmetic at every float width
// (minimum/maximum with NaN and ±0, fma, rsqrt, floor/ceil, fmod signs, comparisons with NaN,
// f16/bf16 rounding after every op), the math functions (exp, exp2, log, log2, sin, cos, erf, sqrt),
// and select.
#include "codegen_helpers.hpp"

using namespace cg;

namespace {

/// The interesting bit patterns of a w-bit integer (as u64, truncated by arr_bits).
std::vector<u64> int_specials(int w) {
  const u64 one = 1;
  const u64 mn = one << (w - 1);  // INT_MIN's pattern
  std::vector<u64> s = {0, 1, 2, 3, 7, ~u64{0}, ~u64{0} - 1, ~u64{0} - 2, ~u64{0} - 6, mn, mn + 1, mn - 1, mn - 2,
                        static_cast<u64>(w - 1), static_cast<u64>(w), static_cast<u64>(w + 1), static_cast<u64>(2 * w),
                        31, 32, 33, 63, 64, 65, 127, 128, 255, 256, u64{0} - static_cast<u64>(w),
                        u64{0} - static_cast<u64>(w - 1), 0x5555555555555555ull, 0xaaaaaaaaaaaaaaaaull, mn >> 1};
  return s;
}

/// Pairs (a, b): every pair of specials, then random pairs (the shift amount b mostly small).
std::pair<std::vector<u64>, std::vector<u64>> int_pairs(int w) {
  const auto s = int_specials(w);
  std::vector<u64> a, b;
  for (u64 x : s)
    for (u64 y : s) a.push_back(x), b.push_back(y);
  auto& g = rng();
  for (int i = 0; i < 4096; ++i) {
    a.push_back(g() >> (g() % 64));
    b.push_back(i % 2 ? g() >> (g() % 64) : g() % static_cast<u64>(2 * w + 3));
  }
  return {a, b};
}

}  // namespace

TEST_CASE("integers: arithmetic, division by 0 and INT_MIN / -1, shifts, umulhi, min/max, comparisons at every width") {
  const std::vector<OpKind> bin = {OpKind::add, OpKind::sub, OpKind::mul, OpKind::div, OpKind::rem, OpKind::bit_and,
                                   OpKind::bit_or, OpKind::bit_xor, OpKind::shl, OpKind::shr, OpKind::minimum,
                                   OpKind::maximum, OpKind::umulhi};
  const std::vector<OpKind> un = {OpKind::neg, OpKind::abs, OpKind::bit_not};
  std::vector<OutFn> outs;
  std::vector<std::string> names;
  for (OpKind k : bin) outs.push_back(binary(k)), names.emplace_back(ir::op_name(k));
  for (OpKind k : un) outs.push_back(unary(k)), names.emplace_back(ir::op_name(k));
  for (auto p : {CmpPred::eq, CmpPred::ne, CmpPred::lt, CmpPred::le, CmpPred::gt, CmpPred::ge})
    outs.push_back(compare(p)), names.push_back("cmp " + std::string(ir::pred_name(p)));
  // select(a < b, a, b) and x -> i1 casts of both
  outs.push_back([](K& k, const std::vector<Value*>& x) {
    return k.v(OpKind::select, {k.cmp(CmpPred::lt, x[0], x[1]), x[1], x[0]}, x[0]->type);
  });
  names.emplace_back("select(a < b, b, a)");
  for (dtype t : kInts) {
    CAPTURE(name(t));
    auto [a, b] = int_pairs(bits(t));
    Both r = run_ew("ints", {arr_bits(t, a), arr_bits(t, b)}, outs);
    same_outputs(std::string(name(t)), r, 2, names);
  }
}

TEST_CASE("integers: spot checks of the cpu's results (div/rem by 0, INT_MIN / -1, shifts, umulhi, abs(INT_MIN))") {
  Both r = run_ew("i32spot",
                  {arr(dtype::i32, std::vector<i32>{7, INT32_MIN, INT32_MIN, -7, -1, 1, -8}),
                   arr(dtype::i32, std::vector<i32>{0, -1, 2, 2, 40, -1, 1})},
                  {binary(OpKind::div), binary(OpKind::rem), binary(OpKind::shl), binary(OpKind::shr), binary(OpKind::umulhi),
                   unary(OpKind::abs)});
  CHECK(r.cpu[2].get<i32>(0) == 0);                      // 7 / 0
  CHECK(r.cpu[3].get<i32>(0) == 0);                      // 7 % 0
  CHECK(r.cpu[2].get<i32>(1) == INT32_MIN);              // INT_MIN / -1 wraps
  CHECK(r.cpu[3].get<i32>(1) == 0);                      // INT_MIN % -1
  CHECK(r.cpu[3].get<i32>(3) == -1);                     // -7 % 2: the sign of the dividend
  CHECK(r.cpu[4].get<i32>(4) == 0);                      // -1 << 40
  CHECK(r.cpu[5].get<i32>(4) == -1);                     // -1 >> 40 (arithmetic)
  CHECK(r.cpu[4].get<i32>(5) == 0);                      // 1 << -1 (a huge amount)
  CHECK(r.cpu[5].get<i32>(6) == -4);                     // -8 >> 1
  CHECK(r.cpu[6].get<i32>(4) == 39);                     // umulhi(0xffffffff, 40)
  CHECK(r.cpu[7].get<i32>(1) == INT32_MIN);              // abs(INT_MIN)
  Both u = run_ew("u64spot", {arr(dtype::u64, std::vector<u64>{~u64{0}, 1ull << 63}), arr(dtype::u64, std::vector<u64>{~u64{0}, 3})},
                  {binary(OpKind::umulhi), binary(OpKind::minimum), binary(OpKind::shr)});
  CHECK(u.cpu[2].get<u64>(0) == ~u64{0} - 1);
  CHECK(u.cpu[2].get<u64>(1) == 1);
  CHECK(u.cpu[3].get<u64>(1) == 3);           // unsigned min
  CHECK(u.cpu[4].get<u64>(1) == 1ull << 60);  // logical shift
}

TEST_CASE("i1 in memory: any nonzero byte loads as 1; stores write 0 or 1") {
  Arr in(dtype::i1, 8);
  const unsigned char bytes[] = {0, 1, 2, 0x80, 0xff, 0x10, 0, 3};
  std::memcpy(in.bytes.data(), bytes, 8);
  Both r = run_ew("i1mem", {in}, {cast_to(dtype::i32), unary(OpKind::bit_not), [](K&, const std::vector<Value*>& x) { return x[0]; }});
  same_outputs("i1 loads", r, 1, {"-> i32", "not", "copy"});
  CHECK(r.cpu[1].get<i32>(2) == 1);
  CHECK(r.cpu[3].bytes[3] == 1);
}

namespace {

/// Special values of float dtype t: zeros, ones, halves, the extremes of the format, infinities,
/// NaNs with several signs and payloads (quiet and signalling).
Arr float_specials(dtype t) {
  double tiny = 0, big = 0, small_normal = 0;
  std::vector<u64> nans;
  switch (t) {
    case dtype::f16: tiny = std::ldexp(1.0, -24), big = 65504.0, small_normal = std::ldexp(1.0, -14), nans = {0x7e00, 0xfe00, 0x7d01, 0x7e55}; break;
    case dtype::bf16:
      tiny = std::ldexp(1.0, -133), big = std::ldexp(255.0, 120), small_normal = std::ldexp(1.0, -126), nans = {0x7fc0, 0xffc0, 0x7f81, 0x7fd5};
      break;
    case dtype::f32:
      tiny = std::ldexp(1.0, -149), big = 3.4028234663852886e38, small_normal = std::ldexp(1.0, -126),
      nans = {0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc00123, 0xffa0000f};
      break;
    default:
      tiny = std::ldexp(1.0, -1074), big = 1.7976931348623157e308, small_normal = std::ldexp(1.0, -1022),
      nans = {0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull, 0x7ff8000000012345ull};
  }
  std::vector<double> d = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 7.5, -7.5, 0.1, -0.1,
                           1e-3, 100.0, -100.0, INFINITY, -INFINITY, tiny, -tiny, big, -big, small_normal, -small_normal};
  Arr a = arr_floats(t, d);
  Arr r(t, a.n() + nans.size());
  std::memcpy(r.bytes.data(), a.bytes.data(), a.bytes.size());
  for (std::size_t i = 0; i < nans.size(); ++i) r.set_bits(a.n() + i, nans[i]);
  return r;
}

/// n random values of float dtype t: random bit patterns (every class) and values of moderate size.
Arr float_randoms(dtype t, std::size_t n) {
  auto& g = rng();
  Arr a(t, n);
  std::uniform_real_distribution<double> u(-20.0, 20.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 2) {
      a.set_bits(i, g());
    } else {
      const double x = std::exp2(u(g)) * (g() & 1 ? -1 : 1);
      a.set_bits(i, arr_floats(t, {x}).bits(0));
    }
  }
  return a;
}

Arr concat(const Arr& x, const Arr& y) {
  Arr r(x.t, x.n() + y.n());
  std::memcpy(r.bytes.data(), x.bytes.data(), x.bytes.size());
  std::memcpy(r.bytes.data() + x.bytes.size(), y.bytes.data(), y.bytes.size());
  return r;
}

/// Every pair of specials, then random pairs.
std::pair<Arr, Arr> float_pairs(dtype t) {
  const Arr s = float_specials(t);
  Arr a(t, s.n() * s.n()), b(t, s.n() * s.n());
  for (std::size_t i = 0; i < s.n(); ++i)
    for (std::size_t j = 0; j < s.n(); ++j) a.set_bits(i * s.n() + j, s.bits(i)), b.set_bits(i * s.n() + j, s.bits(j));
  return {concat(a, float_randoms(t, 4096)), concat(b, float_randoms(t, 4096))};
}

}  // namespace

TEST_CASE("floats: arithmetic, fmod, minimum/maximum (NaN, ±0), comparisons, unary ops at every float width") {
  const std::vector<OpKind> bin = {OpKind::add, OpKind::sub, OpKind::mul, OpKind::div, OpKind::rem, OpKind::minimum, OpKind::maximum};
  const std::vector<OpKind> un = {OpKind::neg, OpKind::abs, OpKind::floor, OpKind::ceil, OpKind::sqrt, OpKind::rsqrt};
  std::vector<OutFn> outs;
  std::vector<std::string> names;
  for (OpKind k : bin) outs.push_back(binary(k)), names.emplace_back(ir::op_name(k));
  for (OpKind k : un) outs.push_back(unary(k)), names.emplace_back(ir::op_name(k));
  for (auto p : {CmpPred::eq, CmpPred::ne, CmpPred::lt, CmpPred::le, CmpPred::gt, CmpPred::ge})
    outs.push_back(compare(p)), names.push_back("cmp " + std::string(ir::pred_name(p)));
  outs.push_back([](K& k, const std::vector<Value*>& x) {
    return k.v(OpKind::select, {k.cmp(CmpPred::ge, x[0], x[1]), x[0], x[1]}, x[0]->type);
  });
  names.emplace_back("select(a >= b, a, b)");
  for (dtype t : kFloats) {
    CAPTURE(name(t));
    auto [a, b] = float_pairs(t);
    Both r = run_ew("floats", {a, b}, outs);
    // known disagreements on NaN bits, checked strictly by the next test: add/mul of two NaNs,
    // floor/ceil of a signalling NaN (f16/bf16 results: any NaN is fine anyway)
    same_outputs(std::string(name(t)), r, 2, names, [&](std::size_t j, std::size_t i) {
      if (names[j] == "add" || names[j] == "mul") return is_nan_bits(t, a.bits(i)) && is_nan_bits(t, b.bits(i));
      if (names[j] == "floor" || names[j] == "ceil") return is_snan_bits(t, a.bits(i));
      return false;
    });
  }
}

// NaN bits are not part of the contract (interpreter.cpp: "a NaN result is some NaN; its sign,
// payload and quiet bit are unspecified", as on GPUs, whose arithmetic returns a canonical NaN):
//  - add and mul of two NaNs: the interpreter happens to return the second operand's NaN (GCC
//    commutes `u + v`; x86 returns the first source's), the cpu backend the first's;
//  - floor and ceil of a signalling NaN: the C library returns it unchanged, llvm.floor/ceil
//    (roundss) quiet it.
// So here both backends must give a NaN for every element, whatever its bits.
TEST_CASE("floats: add/mul of two NaNs and floor/ceil of signalling NaNs give NaNs on both backends") {
  auto all_nan = [](const Both& r, std::size_t first, std::size_t count, dtype t, const char* what) {
    for (std::size_t k = first; k < first + count; ++k) {
      int bad = 0;
      for (std::size_t i = 0; i < r.cpu[k].n(); ++i)
        bad += !is_nan_bits(t, r.cpu[k].bits(i)) || !is_nan_bits(t, r.interp[k].bits(i));
      CHECK_MESSAGE(bad == 0, what << " output " << k << ": " << bad << " non-NaN results");
    }
  };
  for (dtype t : {dtype::f32, dtype::f64}) {
    CAPTURE(name(t));
    const Arr s = float_specials(t);
    std::vector<u64> nans;
    for (std::size_t i = 0; i < s.n(); ++i)
      if (is_nan_bits(t, s.bits(i))) nans.push_back(s.bits(i));
    std::vector<u64> a, b;
    for (u64 x : nans)
      for (u64 y : nans) a.push_back(x), b.push_back(y);
    Both r = run_ew("nan2", {arr_bits(t, a), arr_bits(t, b)}, {binary(OpKind::add), binary(OpKind::mul)});
    all_nan(r, 2, 2, t, "two NaNs: add, mul");
    std::vector<u64> sn;
    for (u64 x : nans)
      if (is_snan_bits(t, x)) sn.push_back(x), sn.push_back(x ^ (u64{1} << (bits(t) - 1)));
    REQUIRE(!sn.empty());
    Both f = run_ew("snan", {arr_bits(t, sn)}, {unary(OpKind::floor), unary(OpKind::ceil)});
    all_nan(f, 1, 2, t, "signalling NaN: floor, ceil");
  }
}

TEST_CASE("floats: spot checks of the cpu's minimum/maximum, fmod and floor/ceil") {
  const float nan = NAN;
  Both r = run_ew("fspot", {arr(dtype::f32, std::vector<float>{nan, 1.0f, -0.0f, 0.0f, -7.5f, 7.5f, -1.5f}),
                            arr(dtype::f32, std::vector<float>{2.0f, nan, 0.0f, -0.0f, 2.0f, -2.0f, 1.0f})},
                  {binary(OpKind::minimum), binary(OpKind::maximum), binary(OpKind::rem), unary(OpKind::floor), unary(OpKind::ceil)});
  CHECK(r.cpu[2].get<float>(0) == 2.0f);  // minNum: NaN yields the other
  CHECK(r.cpu[2].get<float>(1) == 1.0f);
  CHECK(std::signbit(r.cpu[2].get<float>(2)));  // min(-0, +0) = -0
  CHECK(std::signbit(r.cpu[2].get<float>(3)));
  CHECK(!std::signbit(r.cpu[3].get<float>(2)));  // max(-0, +0) = +0
  CHECK(!std::signbit(r.cpu[3].get<float>(3)));
  CHECK(r.cpu[4].get<float>(4) == -1.5f);  // fmod: the sign of the dividend
  CHECK(r.cpu[4].get<float>(5) == 1.5f);
  CHECK(r.cpu[5].get<float>(6) == -2.0f);
  CHECK(r.cpu[6].get<float>(6) == -1.0f);
}

TEST_CASE("floats: fma rounds once in the compute type, then to the dtype") {
  for (dtype t : kFloats) {
    CAPTURE(name(t));
    // every triple of 12 specials, then random triples
    const Arr s = float_specials(t);
    const std::size_t m = 12;
    const std::size_t pick[m] = {0, 1, 2, 3, 4, 17, 19, 20, 21, 23, 25, s.n() - 1};
    Arr a(t, m * m * m), b(t, m * m * m), c(t, m * m * m);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j)
        for (std::size_t k = 0; k < m; ++k) {
          const std::size_t at = (i * m + j) * m + k;
          a.set_bits(at, s.bits(pick[i])), b.set_bits(at, s.bits(pick[j])), c.set_bits(at, s.bits(pick[k]));
        }
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: exact with one rounding (f32), and its f64 analogue
    a = concat(concat(a, float_randoms(t, 4096)), arr_floats(t, {1.0 + std::ldexp(1.0, -12), 1.0 + std::ldexp(1.0, -30)}));
    b = concat(concat(b, float_randoms(t, 4096)), arr_floats(t, {1.0 + std::ldexp(1.0, -12), 1.0 + std::ldexp(1.0, -30)}));
    c = concat(concat(c, float_randoms(t, 4096)), arr_floats(t, {-1.0, -1.0}));
    Both r = run_ew("fma", {a, b, c}, {[](K& k, const std::vector<Value*>& x) { return k.v(OpKind::fma, {x[0], x[1], x[2]}, x[0]->type); }});
    same_outputs(std::string(name(t)), r, 3, {"fma"});
    if (t == dtype::f32) CHECK(r.cpu[3].get<float>(a.n() - 2) == std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24));
    if (t == dtype::f64) CHECK(r.cpu[3].get<double>(a.n() - 1) == std::ldexp(1.0, -29) + std::ldexp(1.0, -60));
  }
}

namespace {

const std::vector<OpKind> kMath = {OpKind::exp, OpKind::exp2, OpKind::log, OpKind::log2, OpKind::sin,
                                   OpKind::cos, OpKind::erf, OpKind::sqrt, OpKind::rsqrt};

/// About 10^4 inputs for the math functions: moderate and large ranges, tiny and huge positives,
/// random bit patterns, the special values.
Arr math_inputs(dtype t) {
  auto& g = rng();
  std::vector<double> d;
  auto uni = [&](double lo, double hi, int n) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (int i = 0; i < n; ++i) d.push_back(u(g));
  };
  uni(-10, 10, 2000);
  uni(-100, 100, 2000);
  uni(-1e5, 1e5, 1000);
  uni(-1e-3, 1e-3, 1000);
  std::uniform_real_distribution<double> e(-60, 60);
  for (int i = 0; i < 2000; ++i) d.push_back(std::exp2(e(g)));
  d.insert(d.end(), {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, INFINITY, -INFINITY, NAN, 3.141592653589793, -3.141592653589793,
                     1.5707963267948966, 88.7, 89.0, 709.7, 710.0, -87.0, -104.0, -745.0, 1e30, -1e30, 1e300});
  return concat(arr_floats(t, d), float_randoms(t, 2000));
}

}  // namespace

TEST_CASE("math functions, f32 and f64: within 1 ulp of the interpreter (expected: identical)") {
  // Tolerance: the cpu backend calls the same C library functions (expf, exp, sinf, …) as the
  // interpreter's std:: calls, and sqrt/rsqrt are IEEE operations, so 0 ulp is expected; the test
  // allows 1 ulp (a libm entry point chosen differently, e.g. a vector variant, may legitimately
  // differ by that much) and reports the largest difference seen. NaN results must be NaN on
  // both sides with the same bits.
  std::vector<OutFn> outs;
  for (OpKind k : kMath) outs.push_back(unary(k));
  for (dtype t : {dtype::f32, dtype::f64}) {
    const Arr in = math_inputs(t);
    Both r = run_ew("math", {in}, outs);
    std::string report;
    for (std::size_t j = 0; j < kMath.size(); ++j) {
      CAPTURE(name(t));
      CAPTURE(ir::op_name(kMath[j]));
      const Arr &x = r.interp[1 + j], &y = r.cpu[1 + j];
      u64 worst = 0;
      std::size_t worst_at = 0;
      for (std::size_t i = 0; i < in.n(); ++i) {
        const u64 d = ulp_distance(t, x.bits(i), y.bits(i));
        if (d > worst) worst = d, worst_at = i;
      }
      if (worst > 1)
        FAIL_CHECK(ir::op_name(kMath[j]) << " " << name(t) << ": " << worst << " ulp at input " << hex(in.bits(worst_at), in.width())
                                          << ": interp " << hex(x.bits(worst_at), x.width()) << ", cpu "
                                          << hex(y.bits(worst_at), y.width()));
      report += " " + std::string(ir::op_name(kMath[j])) + "=" + std::to_string(worst);
    }
    MESSAGE("max ulp, cpu vs interpreter, " << name(t) << " over " << in.n() << " inputs:" << report);
  }
}

TEST_CASE("math functions and rounding, f16 and bf16: all 65536 patterns, computed in f32 and rounded once") {
  std::vector<OutFn> outs;
  std::vector<std::string> names;
  for (OpKind k : kMath) outs.push_back(unary(k)), names.emplace_back(ir::op_name(k));
  for (OpKind k : {OpKind::neg, OpKind::abs, OpKind::floor, OpKind::ceil}) outs.push_back(unary(k)), names.emplace_back(ir::op_name(k));
  // x + x, x * x, x / 3, x - 0.1 (binary ops round after each op), fma(x, x, x)
  for (OpKind k : {OpKind::add, OpKind::mul}) {
    outs.push_back([k](K& kk, const std::vector<Value*>& x) { return kk.bin(k, x[0], x[0]); });
    names.push_back(std::string(ir::op_name(k)) + "(x, x)");
  }
  outs.push_back([](K& k, const std::vector<Value*>& x) { return k.bin(OpKind::div, x[0], k.splat(k.cf(x[0]->type.scalar(), 3.0), x[0]->type.shape)); });
  names.emplace_back("x / 3");
  outs.push_back([](K& k, const std::vector<Value*>& x) { return k.bin(OpKind::sub, x[0], k.splat(k.cf(x[0]->type.scalar(), 0.1), x[0]->type.shape)); });
  names.emplace_back("x - 0.1");
  outs.push_back([](K& k, const std::vector<Value*>& x) { return k.v(OpKind::fma, {x[0], x[0], x[0]}, x[0]->type); });
  names.emplace_back("fma(x, x, x)");
  std::vector<u64> all(65536);
  for (u64 i = 0; i < 65536; ++i) all[i] = i;
  for (dtype t : {dtype::f16, dtype::bf16}) {
    CAPTURE(name(t));
    Both r = run_ew("math16", {arr_bits(t, all)}, outs);
    same_outputs(std::string(name(t)), r, 1, names);
  }
}

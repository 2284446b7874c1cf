// test/interp/test_float.cpp — the interpreter's float semantics: f16/bf16 rounding after every
// op, math functions, NaN handling of comparisons and min/max, fma, and every kind of cast
// (saturation, NaN, correct rounding without double rounding, bitcast).
#include <cmath>
#include <cstdint>
#include <limits>

#include "build_helpers.hpp"

using namespace it;
using i8 = std::int8_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using f16 = tile::half;
using bf16 = tile::bfloat16;

namespace {
const float nanf_ = std::numeric_limits<float>::quiet_NaN();
const float inff_ = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("f16 and bf16 round to nearest even after every op") {
  // 2048 + 1 in f16: halfway between 2048 and 2050, ties to even -> 2048; 2048 + 3 -> 2052
  CHECK(bits_of(ew2<f16>(OpKind::add, dtype::f16, std::vector<f16>{H(2048), H(2048), H(2048)},
                         {H(1), H(3), H(2)}, dtype::f16)) == bits_of(std::vector<f16>{H(2048), H(2052), H(2050)}));
  // a chain: (2048 + 1) + 1 stays 2048 in f16 (each add rounds), f32 would give 2050
  {
    K k("chain", {P(dtype::f16)});
    Value* one = k.cf(T(dtype::f16), 1.0);
    Value* x = k.bin(OpKind::add, k.cf(T(dtype::f16), 2048.0), one);
    x = k.bin(OpKind::add, x, one);
    k.store(k.arg(0), x);
    Buf<f16> out(1, H(0));
    launch(k.done(), {}, {out.arg()}, {out.region()});
    CHECK(static_cast<float>(out.data[0]) == 2048.0f);
  }
  // bf16: 256 + 1 -> 256; 1/3 rounds to the nearest bf16
  CHECK(bits_of(ew2<bf16>(OpKind::add, dtype::bf16, std::vector<bf16>{BF(256), BF(256)}, {BF(1), BF(3)}, dtype::bf16)) ==
        bits_of(std::vector<bf16>{BF(256), BF(260)}));
  CHECK(bits_of(ew2<bf16>(OpKind::div, dtype::bf16, std::vector<bf16>{BF(1)}, {BF(3)}, dtype::bf16)) ==
        bits_of(std::vector<bf16>{BF(1.0f / 3.0f)}));
  // f16 overflow to inf
  CHECK(std::isinf(static_cast<float>(ew2<f16>(OpKind::mul, dtype::f16, std::vector<f16>{H(300)}, {H(300)}, dtype::f16)[0])));
}

TEST_CASE("math functions in the compute precision, rounded to the type") {
  const std::vector<float> xs{0.5f, 1.0f, 2.0f, 4.0f};
  auto f32 = [&](OpKind k) { return ew1<float>(k, dtype::f32, xs, dtype::f32); };
  for (std::size_t i = 0; i < xs.size(); ++i) {
    CHECK(f32(OpKind::exp)[i] == std::exp(xs[i]));
    CHECK(f32(OpKind::exp2)[i] == std::exp2(xs[i]));
    CHECK(f32(OpKind::log)[i] == std::log(xs[i]));
    CHECK(f32(OpKind::log2)[i] == std::log2(xs[i]));
    CHECK(f32(OpKind::sqrt)[i] == std::sqrt(xs[i]));
    CHECK(f32(OpKind::rsqrt)[i] == 1.0f / std::sqrt(xs[i]));
    CHECK(f32(OpKind::sin)[i] == std::sin(xs[i]));
    CHECK(f32(OpKind::cos)[i] == std::cos(xs[i]));
    CHECK(f32(OpKind::erf)[i] == std::erf(xs[i]));
  }
  CHECK(ew1<float>(OpKind::floor, dtype::f32, std::vector<float>{-1.5f, 1.5f}, dtype::f32) == std::vector<float>{-2, 1});
  CHECK(ew1<float>(OpKind::ceil, dtype::f32, std::vector<float>{-1.5f, 1.5f}, dtype::f32) == std::vector<float>{-1, 2});
  CHECK(ew1<float>(OpKind::abs, dtype::f32, std::vector<float>{-1.5f, 0.0f}, dtype::f32) == std::vector<float>{1.5f, 0});
  CHECK(ew1<double>(OpKind::exp, dtype::f64, std::vector<double>{1.0}, dtype::f64)[0] == std::exp(1.0));
  // f16: exp computed in float, rounded once to f16
  auto e = ew1<f16>(OpKind::exp, dtype::f16, std::vector<f16>{H(1)}, dtype::f16);
  CHECK(e[0].bits == H(std::exp(1.0f)).bits);
  CHECK(static_cast<float>(e[0]) == 2.71875f);
  // rem is fmod (sign of the dividend); float div by zero is inf
  CHECK(ew2<float>(OpKind::rem, dtype::f32, std::vector<float>{-7.5f, 7.5f}, {2.0f, -2.0f}, dtype::f32) ==
        std::vector<float>{-1.5f, 1.5f});
  CHECK(ew2<float>(OpKind::div, dtype::f32, std::vector<float>{1.0f}, {0.0f}, dtype::f32)[0] == inff_);
}

TEST_CASE("float NaN: ordered comparisons, minNum/maxNum") {
  CHECK(cmp2<float>(CmpPred::eq, dtype::f32, {nanf_, 1}, {nanf_, 1}) == std::vector<u8>{0, 1});
  CHECK(cmp2<float>(CmpPred::ne, dtype::f32, {nanf_, 1}, {nanf_, 1}) == std::vector<u8>{1, 0});
  CHECK(cmp2<float>(CmpPred::lt, dtype::f32, {nanf_, 1}, {1, nanf_}) == std::vector<u8>{0, 0});
  CHECK(cmp2<float>(CmpPred::ge, dtype::f32, {nanf_, 2}, {1, 2}) == std::vector<u8>{0, 1});
  CHECK(cmp2<f16>(CmpPred::lt, dtype::f16, {H(1), H(2)}, {H(2), H(1)}) == std::vector<u8>{1, 0});
  auto mn = ew2<float>(OpKind::minimum, dtype::f32, std::vector<float>{nanf_, 1, nanf_, -0.0f, 0.0f}, {1, nanf_, nanf_, 0.0f, -0.0f},
                       dtype::f32);
  CHECK(mn[0] == 1.0f);
  CHECK(mn[1] == 1.0f);
  CHECK(std::isnan(mn[2]));
  CHECK(std::signbit(mn[3]));
  CHECK(std::signbit(mn[4]));
  auto mx = ew2<double>(OpKind::maximum, dtype::f64, std::vector<double>{std::nan(""), 3, -0.0}, {2, std::nan(""), 0.0},
                        dtype::f64);
  CHECK(mx[0] == 2.0);
  CHECK(mx[1] == 3.0);
  CHECK(!std::signbit(mx[2]));
}

TEST_CASE("fma: one rounding in the compute type") {
  // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24: exact with fma, 2^-11 with a separate mul and add
  const float a = 1.0f + std::ldexp(1.0f, -12);
  auto r = ew<float, float>(OpKind::fma, dtype::f32, {{a}, {a}, {-1.0f}}, dtype::f32);
  CHECK(r[0] == std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24));
  auto h = ew<f16, f16>(OpKind::fma, dtype::f16, {{H(2048)}, {H(1)}, {H(1)}}, dtype::f16);
  CHECK(static_cast<float>(h[0]) == 2048.0f);
}

TEST_CASE("cast float -> int: truncation, saturation, NaN -> 0; -> i1 is x != 0") {
  const std::vector<float> x{2.9f, -1.9f, 3e9f, -3e9f, nanf_, inff_, -inff_, 2147483648.0f};
  CHECK(ew1<i32>(OpKind::cast, dtype::f32, x, dtype::i32) ==
        std::vector<i32>{2, -1, INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, INT32_MAX});
  CHECK(ew1<u8>(OpKind::cast, dtype::f32, std::vector<float>{-5, 300, 255.9f, nanf_, -0.5f}, dtype::u8) ==
        std::vector<u8>{0, 255, 255, 0, 0});
  CHECK(ew1<i64>(OpKind::cast, dtype::f64, std::vector<double>{1e19, -1e19, 9223372036854775808.0, -9223372036854775808.0},
                 dtype::i64) == std::vector<i64>{INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN});
  CHECK(ew1<u64>(OpKind::cast, dtype::f32, std::vector<float>{1e20f, 1e19f, -1.0f}, dtype::u64) ==
        std::vector<u64>{UINT64_MAX, static_cast<u64>(1e19f), 0});
  CHECK(ew1<i8>(OpKind::cast, dtype::f16, std::vector<f16>{H(-200), H(127.5f)}, dtype::i8) == std::vector<i8>{-128, 127});
  CHECK(ew1<u8>(OpKind::cast, dtype::f32, std::vector<float>{0.0f, -0.0f, 0.5f, nanf_, -2.0f}, dtype::i1) ==
        std::vector<u8>{0, 0, 1, 1, 1});
}

TEST_CASE("cast int -> int by the source's signedness; -> i1 is x != 0") {
  CHECK(ew1<u8>(OpKind::cast, dtype::i32, std::vector<i32>{-1, 256, 257}, dtype::u8) == std::vector<u8>{255, 0, 1});
  CHECK(ew1<i32>(OpKind::cast, dtype::u8, std::vector<u8>{255, 0}, dtype::i32) == std::vector<i32>{255, 0});
  CHECK(ew1<i32>(OpKind::cast, dtype::i8, std::vector<i8>{-1, 127}, dtype::i32) == std::vector<i32>{-1, 127});
  CHECK(ew1<u32>(OpKind::cast, dtype::i8, std::vector<i8>{-1}, dtype::u32) == std::vector<u32>{0xffffffffu});
  CHECK(ew1<i64>(OpKind::cast, dtype::u32, std::vector<u32>{0xffffffffu}, dtype::i64) == std::vector<i64>{4294967295});
  CHECK(ew1<u8>(OpKind::cast, dtype::i32, std::vector<i32>{2, 0, -1, 256}, dtype::i1) == std::vector<u8>{1, 0, 1, 1});
  CHECK(ew1<i32>(OpKind::cast, dtype::i1, std::vector<u8>{1, 0}, dtype::i32) == std::vector<i32>{1, 0});
}

TEST_CASE("cast int -> float rounds once to nearest even") {
  CHECK(ew1<float>(OpKind::cast, dtype::i32, std::vector<i32>{16777217, 16777219, -16777217}, dtype::f32) ==
        std::vector<float>{16777216.0f, 16777220.0f, -16777216.0f});
  CHECK(ew1<double>(OpKind::cast, dtype::i64, std::vector<i64>{(1ll << 53) + 1}, dtype::f64) ==
        std::vector<double>{9007199254740992.0});
  CHECK(ew1<float>(OpKind::cast, dtype::u64, std::vector<u64>{UINT64_MAX}, dtype::f32) == std::vector<float>{18446744073709551616.0f});
  CHECK(bits_of(ew1<f16>(OpKind::cast, dtype::i32, std::vector<i32>{65519, 65520, 70000, -2049, 2049}, dtype::f16)) ==
        bits_of(std::vector<f16>{H(65504), H(inff_), H(inff_), H(-2048), H(2048)}));
  // 2^24 + 2^16 + 1 -> bf16 is 2^24 + 2^17 (just above the halfway point); going through f32
  // first would round twice and give 2^24
  auto b = ew1<bf16>(OpKind::cast, dtype::i32, std::vector<i32>{16842753, 16842752}, dtype::bf16);
  CHECK(static_cast<float>(b[0]) == 16908288.0f);
  CHECK(static_cast<float>(b[1]) == 16777216.0f);  // exactly halfway: ties to even
  CHECK(static_cast<float>(ew1<bf16>(OpKind::cast, dtype::u64, std::vector<u64>{UINT64_MAX}, dtype::bf16)[0]) ==
        18446744073709551616.0f);
}

TEST_CASE("cast float -> float rounds once to nearest even") {
  // 1 + 2^-11 + 2^-40 is just above halfway between two f16 values: up; via f32 it would tie
  const double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  auto h = ew1<f16>(OpKind::cast, dtype::f64, std::vector<double>{d, 1.0 + std::ldexp(1.0, -11), 1e6, -1e-10},
                    dtype::f16);
  CHECK(static_cast<float>(h[0]) == 1.0f + std::ldexp(1.0f, -10));
  CHECK(static_cast<float>(h[1]) == 1.0f);
  CHECK(std::isinf(static_cast<float>(h[2])));
  CHECK(h[3].bits == 0x8000);  // -0
  auto bf = ew1<bf16>(OpKind::cast, dtype::f64, std::vector<double>{1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)},
                      dtype::bf16);
  CHECK(static_cast<float>(bf[0]) == 1.0f + std::ldexp(1.0f, -7));
  CHECK(ew1<float>(OpKind::cast, dtype::f64, std::vector<double>{0.1}, dtype::f32) == std::vector<float>{0.1f});
  CHECK(ew1<double>(OpKind::cast, dtype::f16, std::vector<f16>{H(0.1f)}, dtype::f64)[0] == static_cast<double>(static_cast<float>(H(0.1f))));
  CHECK(bits_of(ew1<f16>(OpKind::cast, dtype::f32, std::vector<float>{65520.0f, 65519.0f, nanf_}, dtype::f16))[0] == 0x7c00);
  CHECK(bits_of(ew1<bf16>(OpKind::cast, dtype::f16, std::vector<f16>{H(1.0f / 3.0f)}, dtype::bf16)) ==
        bits_of(std::vector<bf16>{BF(static_cast<float>(H(1.0f / 3.0f)))}));
  CHECK(std::isnan(ew1<double>(OpKind::cast, dtype::f32, std::vector<float>{nanf_}, dtype::f64)[0]));
}

TEST_CASE("bitcast reinterprets the bits, NaN payloads included") {
  CHECK(ew1<i32>(OpKind::bitcast, dtype::f32, std::vector<float>{1.0f, -0.0f}, dtype::i32) ==
        std::vector<i32>{0x3f800000, INT32_MIN});
  CHECK(ew1<u16>(OpKind::bitcast, dtype::f16, std::vector<f16>{H(1.0f)}, dtype::u16) == std::vector<u16>{0x3c00});
  CHECK(ew1<u64>(OpKind::bitcast, dtype::f64, std::vector<double>{1.0}, dtype::u64) == std::vector<u64>{0x3ff0000000000000ull});
  // signalling-NaN patterns survive u16 -> f16 -> u16 and i32 -> f32 -> i32
  K k("nanbits", {P(dtype::u16), P(dtype::u16), P(dtype::i32), P(dtype::i32)});
  Value* h = k.v(OpKind::bitcast, {k.load(k.ptrs(k.arg(0), 2))}, T(dtype::f16, {2}));
  k.store(k.ptrs(k.arg(1), 2), k.v(OpKind::bitcast, {h}, T(dtype::u16, {2})));
  Value* f = k.v(OpKind::bitcast, {k.load(k.ptrs(k.arg(2), 1))}, T(dtype::f32, {1}));
  k.store(k.ptrs(k.arg(3), 1), k.v(OpKind::bitcast, {f}, T(dtype::i32, {1})));
  Buf<u16> in(std::vector<u16>{0x7c01, 0xfd55}), out(2, 0);
  Buf<i32> in2(std::vector<i32>{0x7f800001}), out2(1, 0);
  launch(k.done(), {}, {in.arg(), out.arg(), in2.arg(), out2.arg()},
         {in.region(), out.region(), in2.region(), out2.region()});
  CHECK(out.data == in.data);
  CHECK(out2.data == in2.data);

  // i1 has no bit pattern of its own width to reinterpret
  K b1("bitcast_i1", {P(dtype::u8)});
  b1.store(b1.arg(0), b1.v(OpKind::bitcast, {b1.ci(T(dtype::i1), 1)}, T(dtype::u8), {}, L(5)));
  Buf<u8> ob(1, 0);
  auto msg = error_of([&] { launch(b1.done(), {}, {ob.arg()}, {ob.region()}); });
  CHECK(msg == "/home/user/kernels/kern.cpp:5: error: kernel 'bitcast_i1': interpreter: bitcast to or from i1 (i1 to u8)");
  CHECK(ob.data[0] == 0);
}

TEST_CASE("pointer <-> i64 casts keep the address; constants round to their dtype") {
  K k("consts", {P(dtype::f16), P(dtype::i64), P(dtype::u8)});
  k.store(k.arg(0), k.cf(T(dtype::f16), 2049.0));  // rounds to 2048
  Value* addr = k.cast(k.arg(1), dtype::i64);
  Value* back = k.v(OpKind::cast, {addr}, P(dtype::i64));
  k.store(back, addr);
  k.store(k.arg(2), k.ci(T(dtype::u8), 257));  // wraps to 1
  Buf<f16> h(1, H(0));
  Buf<i64> a(1, 0);
  Buf<u8> u(1, 0);
  launch(k.done(), {}, {h.arg(), a.arg(), u.arg()}, {h.region(), a.region(), u.region()});
  CHECK(static_cast<float>(h.data[0]) == 2048.0f);
  CHECK(a.data[0] == static_cast<i64>(reinterpret_cast<std::uintptr_t>(a.data.data())));
  CHECK(u.data[0] == 1);
}

TEST_CASE("float and integer kernel arguments are converted to the argument's dtype") {
  K k("args", {T(dtype::f16), T(dtype::i8), T(dtype::i1), P(dtype::f16), P(dtype::i8), P(dtype::u8)});
  k.store(k.arg(3), k.arg(0));
  k.store(k.arg(4), k.arg(1));
  k.store(k.arg(5), k.cast(k.arg(2), dtype::u8));
  Buf<f16> h(1, H(0));
  Buf<i8> b(1, 0);
  Buf<u8> c(1, 0);
  launch(k.done(), {}, {F(2049.0), I(255), I(2), h.arg(), b.arg(), c.arg()}, {h.region(), b.region(), c.region()});
  CHECK(static_cast<float>(h.data[0]) == 2048.0f);
  CHECK(b.data[0] == -1);
  CHECK(c.data[0] == 1);
}

TEST_CASE("f16 / bf16 minimum and maximum ignore NaN; results are exact values of the type") {
  auto mn = ew2<f16>(OpKind::minimum, dtype::f16, std::vector<f16>{H(nanf_), H(1.5f), H(-2)}, {H(3), H(nanf_), H(-1)},
                     dtype::f16);
  CHECK(bits_of(mn) == bits_of(std::vector<f16>{H(3), H(1.5f), H(-2)}));
  auto mx = ew2<bf16>(OpKind::maximum, dtype::bf16, std::vector<bf16>{BF(nanf_), BF(-7)}, {BF(0.5f), BF(-8)}, dtype::bf16);
  CHECK(bits_of(mx) == bits_of(std::vector<bf16>{BF(0.5f), BF(-7)}));
}

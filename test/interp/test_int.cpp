// test/interp/test_int.cpp — the interpreter's integer semantics: wrapping, division by zero,
// shifts, unsigned comparisons, umulhi, i1 arithmetic, min/max/abs/neg/not, select, addptr.
#include <cstdint>
#include <limits>

#include "build_helpers.hpp"

using namespace it;
using i8 = std::int8_t;
using i16 = std::int16_t;
using i32 = std::int32_t;
using i64 = std::int64_t;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

TEST_CASE("integers wrap at their width") {
  CHECK(ew2<i32>(OpKind::add, dtype::i32, std::vector<i32>{INT32_MAX, -5}, {1, 3}, dtype::i32) ==
        std::vector<i32>{INT32_MIN, -2});
  CHECK(ew2<i8>(OpKind::add, dtype::i8, std::vector<i8>{127, -128}, {1, -1}, dtype::i8) == std::vector<i8>{-128, 127});
  CHECK(ew2<u8>(OpKind::sub, dtype::u8, std::vector<u8>{0, 5}, {1, 3}, dtype::u8) == std::vector<u8>{255, 2});
  CHECK(ew2<u16>(OpKind::mul, dtype::u16, std::vector<u16>{65535, 300}, {65535, 300}, dtype::u16) ==
        std::vector<u16>{1, static_cast<u16>(90000 % 65536)});
  CHECK(ew2<i16>(OpKind::mul, dtype::i16, std::vector<i16>{-32768, 200}, {-1, 200}, dtype::i16) ==
        std::vector<i16>{-32768, static_cast<i16>(40000 - 65536)});
  CHECK(ew2<i64>(OpKind::mul, dtype::i64, std::vector<i64>{INT64_MAX}, {2}, dtype::i64) == std::vector<i64>{-2});
  CHECK(ew2<u64>(OpKind::add, dtype::u64, std::vector<u64>{UINT64_MAX}, {2}, dtype::u64) == std::vector<u64>{1});
  CHECK(ew1<i32>(OpKind::neg, dtype::i32, std::vector<i32>{INT32_MIN, 5}, dtype::i32) == std::vector<i32>{INT32_MIN, -5});
}

TEST_CASE("integer division truncates; by zero gives 0; INT_MIN / -1 wraps") {
  const std::vector<i32> a{7, -7, 7, -7, 5, INT32_MIN, INT32_MIN, 0};
  const std::vector<i32> b{2, 2, -2, -2, 0, -1, 1, 0};
  CHECK(ew2<i32>(OpKind::div, dtype::i32, a, b, dtype::i32) == std::vector<i32>{3, -3, -3, 3, 0, INT32_MIN, INT32_MIN, 0});
  CHECK(ew2<i32>(OpKind::rem, dtype::i32, a, b, dtype::i32) == std::vector<i32>{1, -1, 1, -1, 0, 0, 0, 0});
  CHECK(ew2<i8>(OpKind::div, dtype::i8, std::vector<i8>{-128, -128}, {-1, 0}, dtype::i8) == std::vector<i8>{-128, 0});
  CHECK(ew2<i64>(OpKind::div, dtype::i64, std::vector<i64>{INT64_MIN, 9}, {-1, 0}, dtype::i64) ==
        std::vector<i64>{INT64_MIN, 0});
  CHECK(ew2<i64>(OpKind::rem, dtype::i64, std::vector<i64>{INT64_MIN, 9}, {-1, 0}, dtype::i64) == std::vector<i64>{0, 0});
  // unsigned: the bit patterns divide unsigned
  CHECK(ew2<u32>(OpKind::div, dtype::u32, std::vector<u32>{0xffffffffu, 10}, {2, 0}, dtype::u32) ==
        std::vector<u32>{0x7fffffffu, 0});
  CHECK(ew2<u8>(OpKind::rem, dtype::u8, std::vector<u8>{255, 7}, {10, 0}, dtype::u8) == std::vector<u8>{5, 0});
}

TEST_CASE("shifts: >= width gives 0 (or -1); shr is arithmetic for signed, logical for unsigned") {
  CHECK(ew2<i32>(OpKind::shl, dtype::i32, std::vector<i32>{1, 1, 1, 3, 1}, {0, 31, 32, 40, -1}, dtype::i32) ==
        std::vector<i32>{1, INT32_MIN, 0, 0, 0});
  CHECK(ew2<i32>(OpKind::shr, dtype::i32, std::vector<i32>{-8, -8, 8, -1, 8, -8}, {1, 32, 32, 31, -1, 100}, dtype::i32) ==
        std::vector<i32>{-4, -1, 0, -1, 0, -1});
  CHECK(ew2<u32>(OpKind::shr, dtype::u32, std::vector<u32>{0x80000000u, 0x80000000u, 0xffffffffu}, {31, 32, 4}, dtype::u32) ==
        std::vector<u32>{1, 0, 0x0fffffffu});
  CHECK(ew2<i8>(OpKind::shl, dtype::i8, std::vector<i8>{1, 3}, {7, 8}, dtype::i8) == std::vector<i8>{-128, 0});
  CHECK(ew2<u8>(OpKind::shl, dtype::u8, std::vector<u8>{0xff, 1}, {4, 8}, dtype::u8) == std::vector<u8>{0xf0, 0});
  CHECK(ew2<i64>(OpKind::shr, dtype::i64, std::vector<i64>{INT64_MIN, INT64_MIN}, {63, 64}, dtype::i64) ==
        std::vector<i64>{-1, -1});
  CHECK(ew2<u64>(OpKind::shr, dtype::u64, std::vector<u64>{1ull << 63, 1ull << 63}, {63, 64}, dtype::u64) ==
        std::vector<u64>{1, 0});
}

TEST_CASE("unsigned and pointer comparisons are unsigned; signed ones signed") {
  CHECK(cmp2<u32>(CmpPred::lt, dtype::u32, {1, 0x80000000u}, {0xffffffffu, 1}) == std::vector<u8>{1, 0});
  CHECK(cmp2<i32>(CmpPred::lt, dtype::i32, {1, INT32_MIN}, {-1, 1}) == std::vector<u8>{0, 1});
  CHECK(cmp2<u8>(CmpPred::ge, dtype::u8, {200, 3}, {100, 3}) == std::vector<u8>{1, 1});
  CHECK(cmp2<i8>(CmpPred::ge, dtype::i8, {-56, 3}, {100, 4}) == std::vector<u8>{0, 0});
  CHECK(cmp2<u64>(CmpPred::gt, dtype::u64, {UINT64_MAX, 0}, {0, 1}) == std::vector<u8>{1, 0});
  CHECK(cmp2<i64>(CmpPred::gt, dtype::i64, {-1, 0}, {0, -1}) == std::vector<u8>{0, 1});
  CHECK(cmp2<i32>(CmpPred::eq, dtype::i32, {5, 5}, {5, 6}) == std::vector<u8>{1, 0});
  CHECK(cmp2<i32>(CmpPred::ne, dtype::i32, {5, 5}, {5, 6}) == std::vector<u8>{0, 1});
  CHECK(cmp2<i32>(CmpPred::le, dtype::i32, {5, 5, 5}, {4, 5, 6}) == std::vector<u8>{0, 1, 1});

  // pointers: compare addresses unsigned (an address with the top bit set is "large")
  K k("ptrcmp", {T(dtype::i64), T(dtype::i64), P(dtype::u8)});
  Value* a = k.v(OpKind::cast, {k.arg(0)}, P(dtype::f32));
  Value* b = k.v(OpKind::cast, {k.arg(1)}, P(dtype::f32));
  Value* lt = k.cmp(CmpPred::lt, a, b);
  Value* gt = k.cmp(CmpPred::gt, a, b);
  k.store(k.arg(2), k.cast(lt, dtype::u8));
  k.store(k.v(OpKind::addptr, {k.arg(2), k.ci(T(dtype::i32), 1)}, P(dtype::u8)), k.cast(gt, dtype::u8));
  Buf<u8> out(2, 7);
  launch(k.done(), {}, {I(-16), I(16), out.arg()}, {out.region()});
  CHECK(out.data == std::vector<u8>{0, 1});
}

TEST_CASE("umulhi: the high half of the full unsigned product") {
  CHECK(ew2<u32>(OpKind::umulhi, dtype::u32, std::vector<u32>{0xffffffffu, 0x10000u, 3}, {0xffffffffu, 0x10000u, 5},
                 dtype::u32) == std::vector<u32>{0xfffffffeu, 1, 0});
  // signed operands: the bit patterns multiply unsigned (-1 is 0xffffffff)
  CHECK(ew2<i32>(OpKind::umulhi, dtype::i32, std::vector<i32>{-1, -1}, {2, -1}, dtype::i32) == std::vector<i32>{1, -2});
  CHECK(ew2<u64>(OpKind::umulhi, dtype::u64, std::vector<u64>{UINT64_MAX, 1ull << 32, 0x123456789abcdefull},
                 {UINT64_MAX, 1ull << 32, 0xfedcba9876543210ull}, dtype::u64) ==
        std::vector<u64>{UINT64_MAX - 1, 1, 0x121fa00ad77d742ull});
  CHECK(ew2<i64>(OpKind::umulhi, dtype::i64, std::vector<i64>{-1}, {-1}, dtype::i64) == std::vector<i64>{-2});
}

TEST_CASE("min, max, abs, not; abs(INT_MIN) = INT_MIN") {
  CHECK(ew2<i32>(OpKind::minimum, dtype::i32, std::vector<i32>{-1, 5}, {1, -5}, dtype::i32) == std::vector<i32>{-1, -5});
  CHECK(ew2<u32>(OpKind::maximum, dtype::u32, std::vector<u32>{0xffffffffu, 5}, {1, 6}, dtype::u32) ==
        std::vector<u32>{0xffffffffu, 6});
  CHECK(ew2<u8>(OpKind::minimum, dtype::u8, std::vector<u8>{200, 5}, {100, 6}, dtype::u8) == std::vector<u8>{100, 5});
  CHECK(ew1<i32>(OpKind::abs, dtype::i32, std::vector<i32>{INT32_MIN, -3, 4}, dtype::i32) ==
        std::vector<i32>{INT32_MIN, 3, 4});
  CHECK(ew1<i8>(OpKind::abs, dtype::i8, std::vector<i8>{-128, -1}, dtype::i8) == std::vector<i8>{-128, 1});
  CHECK(ew1<i32>(OpKind::bit_not, dtype::i32, std::vector<i32>{0, -1, 5}, dtype::i32) == std::vector<i32>{-1, 0, -6});
  CHECK(ew1<u16>(OpKind::bit_not, dtype::u16, std::vector<u16>{0, 1}, dtype::u16) == std::vector<u16>{0xffff, 0xfffe});
  CHECK(ew2<i32>(OpKind::bit_xor, dtype::i32, std::vector<i32>{6}, {3}, dtype::i32) == std::vector<i32>{5});
  CHECK(ew2<i32>(OpKind::bit_and, dtype::i32, std::vector<i32>{6}, {3}, dtype::i32) == std::vector<i32>{2});
  CHECK(ew2<i32>(OpKind::bit_or, dtype::i32, std::vector<i32>{6}, {3}, dtype::i32) == std::vector<i32>{7});
}

TEST_CASE("i1 arithmetic stays 0/1; not is logical not; loads read nonzero bytes as 1") {
  const std::vector<u8> a{0, 0, 1, 1}, b{0, 1, 0, 1};
  CHECK(ew2<u8>(OpKind::add, dtype::i1, a, b, dtype::i1) == std::vector<u8>{0, 1, 1, 0});
  CHECK(ew2<u8>(OpKind::mul, dtype::i1, a, b, dtype::i1) == std::vector<u8>{0, 0, 0, 1});
  CHECK(ew2<u8>(OpKind::bit_or, dtype::i1, a, b, dtype::i1) == std::vector<u8>{0, 1, 1, 1});
  CHECK(ew2<u8>(OpKind::shl, dtype::i1, a, b, dtype::i1) == std::vector<u8>{0, 0, 1, 0});
  CHECK(ew2<u8>(OpKind::umulhi, dtype::i1, a, b, dtype::i1) == std::vector<u8>{0, 0, 0, 0});
  CHECK(ew1<u8>(OpKind::bit_not, dtype::i1, a, dtype::i1) == std::vector<u8>{1, 1, 0, 0});
  CHECK(ew1<u8>(OpKind::neg, dtype::i1, a, dtype::i1) == std::vector<u8>{0, 0, 1, 1});
  CHECK(ew1<u8>(OpKind::bit_not, dtype::i1, std::vector<u8>{2, 0}, dtype::i1) == std::vector<u8>{0, 1});
  CHECK(cmp2<u8>(CmpPred::lt, dtype::i1, a, b) == std::vector<u8>{0, 1, 0, 0});
}

TEST_CASE("select and addptr (offsets extended by their signedness)") {
  K k("sel", {P(dtype::i32), P(dtype::i32)});
  Value* x = k.load(k.ptrs(k.arg(0), 4));
  Value* c = k.cmp(CmpPred::gt, x, k.splat(k.ci(T(dtype::i32), 1), {4}));
  Value* s = k.v(OpKind::select, {c, x, k.splat(k.ci(T(dtype::i32), -9), {4})}, x->type);
  k.store(k.ptrs(k.arg(1), 4), s);
  Buf<i32> in({0, 1, 2, 3}), out(4, 0);
  launch(k.done(), {}, {in.arg(), out.arg()}, {in.region(), out.region()});
  CHECK(out.data == std::vector<i32>{-9, -9, 2, 3});

  // p + (i8)-1 steps back one element; p + (u8)255 steps forward 255 elements
  K k2("addptr", {P(dtype::i16), P(dtype::i64)});
  Value* base = k2.v(OpKind::addptr, {k2.arg(0), k2.ci(T(dtype::i32), 1)}, P(dtype::i16));
  Value* back = k2.v(OpKind::addptr, {base, k2.ci(T(dtype::i8), -1)}, P(dtype::i16));
  Value* fwd = k2.v(OpKind::addptr, {k2.arg(0), k2.ci(T(dtype::u8), 255)}, P(dtype::i16));
  Value* d1 = k2.bin(OpKind::sub, k2.cast(back, dtype::i64), k2.cast(k2.arg(0), dtype::i64));
  Value* d2 = k2.bin(OpKind::sub, k2.cast(fwd, dtype::i64), k2.cast(k2.arg(0), dtype::i64));
  k2.store(k2.arg(1), d1);
  k2.store(k2.v(OpKind::addptr, {k2.arg(1), k2.ci(T(dtype::i32), 1)}, P(dtype::i64)), d2);
  Buf<i16> dummy(1, 0);
  Buf<i64> o2(2, 5);
  launch(k2.done(), {}, {dummy.arg(), o2.arg()}, {dummy.region(), o2.region()});
  CHECK(o2.data == std::vector<i64>{0, 510});
}

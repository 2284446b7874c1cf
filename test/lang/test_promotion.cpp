// test/lang/test_promotion.cpp — the typing rules as tables, observed inside kernels: the dtype
// of a binary op on every pair of the 13 dtypes (a hand-written table of Triton's rules, see
// docs/LANGUAGE.md), which ops are defined on which dtypes, weak typing of C++ literals and
// meta-parameters, scalar kernel arguments, math functions, pointer arithmetic.
//
// The dtype of a result is recorded into a host variable while the kernel is traced (tiles are
// made with tl::zeros(shape, dtype), so one kernel covers every pair through meta-parameters).
#include <array>
#include <map>

#include "lang_test.hpp"

using namespace lt;

namespace {

constexpr dtype kAll[] = {dtype::i1, dtype::i8,  dtype::i16, dtype::i32,  dtype::i64, dtype::u8, dtype::u16,
                          dtype::u32, dtype::u64, dtype::f16, dtype::bf16, dtype::f32, dtype::f64};
constexpr int kN = 13;

// The dtype of a + b: row a, column b, in the order of kAll. Floats win (f64 > f32 > f16/bf16;
// f16 with bf16 gives f32); two integers follow C's usual arithmetic conversions without integer
// promotion (same signedness: the wider; mixed: the unsigned one if at least as wide, else the
// signed one); i1 is the narrowest signed integer.
const char* const kTable[kN][kN] = {
    //  i1     i8     i16    i32    i64    u8     u16    u32    u64    f16    bf16    f32    f64
    {"i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"},      // i1
    {"i8", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"},      // i8
    {"i16", "i16", "i16", "i32", "i64", "i16", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"},  // i16
    {"i32", "i32", "i32", "i32", "i64", "i32", "i32", "u32", "u64", "f16", "bf16", "f32", "f64"},  // i32
    {"i64", "i64", "i64", "i64", "i64", "i64", "i64", "i64", "u64", "f16", "bf16", "f32", "f64"},  // i64
    {"u8", "u8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"},     // u8
    {"u16", "u16", "u16", "i32", "i64", "u16", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"},  // u16
    {"u32", "u32", "u32", "u32", "i64", "u32", "u32", "u32", "u64", "f16", "bf16", "f32", "f64"},  // u32
    {"u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "u64", "f16", "bf16", "f32", "f64"},  // u64
    {"f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f16", "f32", "f32", "f64"},   // f16
    {"bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "bf16", "f32", "bf16", "f32", "f64"},  // bf16
    {"f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f32", "f64"},   // f32
    {"f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64", "f64"},   // f64
};

std::string dname(dtype t) { return std::string(tile::name(t)); }

enum op_kind : int { ADD, SUB, MUL, DIV, REM, MIN, MAX, WHERE, AND, OR, XOR, SHL, SHR, EQ, LT, GE, UMULHI, LAND, FMA, NUM_OPS };
const char* const kOpNames[] = {"+", "-", "*", "/", "%", "minimum", "maximum", "where", "&", "|",
                                "^", "<<", ">>", "==", "<", ">=", "umulhi", "&&", "fma"};

tl::tensor apply(int op, const tl::tensor& x, const tl::tensor& y) {
  switch (op) {
    case ADD: return x + y;
    case SUB: return x - y;
    case MUL: return x * y;
    case DIV: return x / y;
    case REM: return x % y;
    case MIN: return tl::minimum(x, y);
    case MAX: return tl::maximum(x, y);
    case WHERE: return tl::where(tl::arange(0, 4) < 2, x, y);
    case AND: return x & y;
    case OR: return x | y;
    case XOR: return x ^ y;
    case SHL: return x << y;
    case SHR: return x >> y;
    case EQ: return x == y;
    case LT: return x < y;
    case GE: return x >= y;
    case UMULHI: return tl::umulhi(x, y);
    case LAND: return x && y;
    default: return tl::fma(x, y, x);
  }
}

/// The expected dtype name of `a op b`, or "error".
std::string expected(int op, int ia, int ib) {
  const std::string t = kTable[ia][ib];
  const bool fl = ref_is_float(kAll[ia]) || ref_is_float(kAll[ib]);
  switch (op) {
    case AND: case OR: case XOR: case SHL: case SHR:
      return fl ? "error" : t;
    case EQ: case LT: case GE: case LAND:
      return "i1";
    case UMULHI:
      return fl || (t != "i32" && t != "i64" && t != "u32" && t != "u64") ? "error" : t;
    case FMA:
      return ref_is_float(ref_promote(kAll[ia], kAll[ib])) ? t : "error";
    default:
      return t;
  }
}

/// Records "dtype" or "error" for each (A, B, OP) traced.
struct recorder {
  std::map<std::array<std::int64_t, 3>, std::string> seen;
};

}  // namespace

TEST_CASE("promotion: the hand-written table agrees with the helpers' reference (lang_test.hpp)") {
  for (int a = 0; a < kN; ++a)
    for (int b = 0; b < kN; ++b) {
      INFO(dname(kAll[a]) << " with " << dname(kAll[b]));
      CHECK(dname(ref_promote(kAll[a], kAll[b])) == kTable[a][b]);
      CHECK(std::string(kTable[a][b]) == kTable[b][a]);  // symmetric
    }
}

TEST_CASE("promotion: result dtype of every op on every dtype pair (observed while tracing)") {
  recorder rec;
  auto k = tile::kernel("promote", [&rec](tl::ptr<std::int32_t> dummy, tl::constexpr_<"A"> A, tl::constexpr_<"B"> B,
                                          tl::constexpr_<"OP"> OP) {
    (void)dummy;
    auto x = tl::zeros({4}, static_cast<dtype>(static_cast<std::int64_t>(A)));
    auto y = tl::zeros({4}, static_cast<dtype>(static_cast<std::int64_t>(B)));
    auto r = apply(static_cast<int>(OP), x, y);
    rec.seen[{A, B, OP}] = dname(r.dtype()) + (r.shape() == tl::shape_t{4} ? "" : " (bad shape)");
  });
  auto dummy = dev().alloc<std::int32_t>(1);
  std::size_t bad = 0;
  std::string first;
  for (int op = 0; op < NUM_OPS; ++op)
    for (int a = 0; a < kN; ++a)
      for (int b = 0; b < kN; ++b) {
        const std::int64_t da = static_cast<std::int64_t>(kAll[a]), db = static_cast<std::int64_t>(kAll[b]);
        std::string got;
        try {
          k[{1}](dummy, "A"_c = da, "B"_c = db, "OP"_c = op);
          got = rec.seen[{da, db, op}];
        } catch (const tile::error& e) {
          got = "error";
        }
        const std::string want = expected(op, a, b);
        if (got != want) {
          if (bad < 40)
            first += "\n  " + dname(kAll[a]) + " " + kOpNames[op] + " " + dname(kAll[b]) + ": got " + got + ", want " + want;
          ++bad;
        }
      }
  CHECK_MESSAGE(bad == 0, bad << " of " << NUM_OPS * kN * kN << " (op, dtype, dtype) cases differ:" << first);
}

TEST_CASE("promotion: unary ops and math functions") {
  recorder rec;
  enum { NEG, NOT, LNOT, EXP, SQRT, ABS, FLOOR, SIGMOID, ERF, CDIV, CLAMP, PLUS, NUM };
  const char* names[] = {"-x", "~x", "!x", "exp", "sqrt", "abs", "floor", "sigmoid", "erf", "cdiv(x, 3)", "clamp(x, 0, 1)", "+x"};
  auto k = tile::kernel("unary_types", [&rec](tl::ptr<std::int32_t> dummy, tl::constexpr_<"A"> A, tl::constexpr_<"OP"> OP) {
    (void)dummy;
    auto x = tl::zeros({4}, static_cast<dtype>(static_cast<std::int64_t>(A)));
    tl::tensor r;
    switch (static_cast<int>(OP)) {
      case NEG: r = -x; break;
      case NOT: r = ~x; break;
      case LNOT: r = !x; break;
      case EXP: r = tl::exp(x); break;
      case SQRT: r = tl::sqrt(x); break;
      case ABS: r = tl::abs(x); break;
      case FLOOR: r = tl::floor(x); break;
      case SIGMOID: r = tl::sigmoid(x); break;
      case ERF: r = tl::erf(x); break;
      case CDIV: r = tl::cdiv(x, 3); break;
      case CLAMP: r = tl::clamp(x, 0, 1); break;
      default: r = +x; break;
    }
    rec.seen[{A, OP, 0}] = dname(r.dtype());
  });
  auto dummy = dev().alloc<std::int32_t>(1);
  std::size_t bad = 0;
  std::string first;
  for (int op = 0; op < NUM; ++op)
    for (dtype t : kAll) {
      if (t == dtype::i1 && (op == CDIV || op == CLAMP)) continue;  // literals do not take i1's dtype
      const std::int64_t dt = static_cast<std::int64_t>(t);
      std::string got;
      try {
        k[{1}](dummy, "A"_c = dt, "OP"_c = op);
        got = rec.seen[{dt, op, 0}];
      } catch (const tile::error&) {
        got = "error";
      }
      const bool fl = ref_is_float(t);
      std::string want;
      switch (op) {
        case NOT: want = fl ? "error" : dname(t); break;
        case LNOT: want = "i1"; break;
        case EXP: case SQRT: case SIGMOID: case ERF: want = fl ? dname(t) : "f32"; break;  // math on ints computes in f32
        default: want = dname(t); break;  // -x, abs, floor, cdiv, clamp, +x keep the dtype
      }
      if (got != want) {
        if (bad < 30) first += "\n  " + std::string(names[op]) + " of " + dname(t) + ": got " + got + ", want " + want;
        ++bad;
      }
    }
  CHECK_MESSAGE(bad == 0, bad << " cases differ:" << first);
}

TEST_CASE("promotion: weak literals (tile op literal, literal op tile)") {
  recorder rec;
  enum { ONE, MINUS_ONE, BIG300, HUGE40, HALF, TRUE_, MAX_U64, NUM };
  const char* names[] = {"1", "-1", "300", "2^40", "0.5", "true", "2^64 - 1 (unsigned long long)"};
  auto k = tile::kernel("weak", [&rec](tl::ptr<std::int32_t> dummy, tl::constexpr_<"T"> T, tl::constexpr_<"L"> L,
                                       tl::constexpr_<"REV"> REV) {
    (void)dummy;
    auto x = tl::zeros({4}, static_cast<dtype>(static_cast<std::int64_t>(T)));
    tl::operand lit;
    switch (static_cast<int>(L)) {
      case ONE: lit = tl::operand(1); break;
      case MINUS_ONE: lit = tl::operand(-1); break;
      case BIG300: lit = tl::operand(300); break;
      case HUGE40: lit = tl::operand(std::int64_t{1} << 40); break;
      case HALF: lit = tl::operand(0.5); break;
      case TRUE_: lit = tl::operand(true); break;
      default: lit = tl::operand(~0ull); break;
    }
    tl::tensor r = REV ? lit + x : x + lit;
    rec.seen[{T, L, REV}] = dname(r.dtype());
  });
  auto dummy = dev().alloc<std::int32_t>(1);
  std::size_t bad = 0;
  std::string first;
  for (int l = 0; l < NUM; ++l)
    for (dtype t : kAll)
      for (int rev = 0; rev < 2; ++rev) {
        const std::int64_t dt = static_cast<std::int64_t>(t);
        std::string got;
        try {
          k[{1}](dummy, "T"_c = dt, "L"_c = l, "REV"_c = rev);
          got = rec.seen[{dt, l, rev}];
        } catch (const tile::error&) {
          got = "error";
        }
        const bool fl = ref_is_float(t), i1 = t == dtype::i1, uns = ref_is_unsigned(t);
        const int w = ref_width(t);
        std::string want;
        switch (l) {
          case ONE: want = i1 ? "i32" : dname(t); break;
          case MINUS_ONE: want = i1 ? "i32" : uns ? "error" : dname(t); break;  // -1 does not fit an unsigned dtype
          case BIG300: want = i1 ? "i32" : (!fl && w == 8) ? "error" : dname(t); break;
          case HUGE40: want = i1 ? "i64" : (!fl && w < 64) ? "error" : dname(t); break;
          case HALF: want = fl ? dname(t) : "f32"; break;
          case TRUE_: want = dname(t); break;
          default: want = "error"; break;  // does not fit in i64
        }
        if (got != want) {
          if (bad < 40)
            first += "\n  " + (rev ? std::string(names[l]) + " + " + dname(t) : dname(t) + " + " + names[l]) + ": got " +
                     got + ", want " + want;
          ++bad;
        }
      }
  CHECK_MESSAGE(bad == 0, bad << " cases differ:" << first);
}

TEST_CASE("promotion: literal op literal, meta-parameters, scalar arguments") {
  std::vector<std::string> got;
  auto k = tile::kernel("lits", [&got](tl::ptr<std::int32_t> dummy, tl::i16 s16, tl::u8 su8, tl::f16 sh,
                                       tl::constexpr_<"BLOCK"> BLOCK, tl::constexpr_<"SCALE", double> SCALE,
                                       tl::constexpr_<"FLAG", bool> FLAG) {
    (void)dummy;
    auto i8 = tl::zeros<std::int8_t>({4});
    auto f16 = tl::zeros<half>({4});
    auto u8 = tl::zeros<std::uint8_t>({4});
    const tl::tensor rs[] = {
        tl::operand(1) + tl::operand(2),                     // i32
        tl::operand(std::int64_t{1} << 40) + tl::operand(1),  // i64
        tl::operand(0.5) + tl::operand(1),                    // f32
        tl::operand(true) & tl::operand(false),               // i1
        tl::operand(0.5) * tl::operand(true),                 // f32
        tl::operand(3) < tl::operand(4.5),                    // i1
        i8 + BLOCK,                                           // i8: an int meta-parameter is an int literal
        f16 * SCALE,                                          // f16: a float meta-parameter is a float literal
        i8 * SCALE,                                           // f32
        u8 + FLAG,                                            // u8: a bool meta-parameter is a bool literal
        s16 + u8,                                             // i16: scalar arguments are strongly typed
        su8 + i8,                                             // u8
        sh + tl::zeros<float>({4}),                           // f32
        sh * 2,                                               // f16
        s16 * 0.5,                                            // f32
        su8 - 1.0,                                            // f32
        tl::program_id(0) * BLOCK,                            // i32
    };
    for (const auto& r : rs) got.push_back(dname(r.dtype()));
  });
  auto dummy = dev().alloc<std::int32_t>(1);
  REQUIRE(run([&] { k[{1}](dummy, 1, 2, half(1.f), "BLOCK"_c = 4, "SCALE"_c = 0.5, "FLAG"_c = true); }));
  // an int meta-parameter that does not fit the tile's dtype is an error, like a literal
  auto kb = tile::kernel("big_meta", [](tl::ptr<std::int32_t> p, tl::constexpr_<"BIG"> BIG) {
    tl::store(p + tl::arange(0, 4), tl::arange(0, 4) + BIG);
  });
  auto out = dev().alloc<std::int32_t>(4);
  std::string msg;
  CHECK(throws_tile_error([&] { kb[{1}](out, "BIG"_c = std::int64_t{1} << 33); }, &msg));
  CHECK_MESSAGE(msg.find("test_promotion.cpp") != std::string::npos, msg);
  REQUIRE(run([&] { kb[{1}](out, "BIG"_c = 1000); }));
  check_equal(out.to_host(), std::vector<std::int32_t>{1000, 1001, 1002, 1003}, "arange + meta");
  const std::vector<std::string> want{"i32", "i64", "f32", "i1", "f32", "i1", "i8", "f16", "f32",
                                      "u8",  "i16", "u8",  "f32", "f16", "f32", "f32", "i32"};
  CHECK(got == want);
}

TEST_CASE("promotion: pointer arithmetic") {
  std::vector<std::string> got;
  auto k = tile::kernel("ptrs", [&got](tl::ptr<half> p, tl::constexpr_<"CASE"> CASE) {
    auto offs = tl::arange(0, 4);
    tl::tensor r;
    switch (static_cast<int>(CASE)) {
      case 0: r = p + offs; break;                                   // ptr<f16>[4]
      case 1: r = p + tl::cast<std::int64_t>(offs); break;           // i64 offsets
      case 2: r = p + tl::cast<std::uint8_t>(offs); break;           // u8 offsets
      case 3: r = offs + p; break;                                   // int + ptr
      case 4: r = p - 1; break;                                      // scalar ptr
      case 5: r = p + 1.5; break;                                    // error: float offset
      case 6: r = p * 2; break;                                      // error
      case 7: r = p - (p + offs); break;                             // error: ptr - ptr
      case 8: r = 1 - p; break;                                      // error: int - ptr
      case 9: r = p + tl::cast<float>(offs); break;                  // error
      default: r = tl::pointer_cast<float>(p + offs); break;         // ptr<f32>[4]
    }
    got.push_back(dname(r.dtype()) + (r.is_pointer() ? "*" : "") + "[" + std::to_string(r.numel()) + "]");
  });
  auto buf = dev().alloc<half>(8);
  const std::vector<std::string> want{"f16*[4]", "f16*[4]", "f16*[4]", "f16*[4]", "f16*[1]", "error",
                                      "error",   "error",   "error",   "error",   "f32*[4]"};
  for (int c = 0; c <= 10; ++c) {
    INFO("case " << c);
    got.clear();
    std::string g;
    try {
      k[{1}](buf, "CASE"_c = c);
      g = got.empty() ? "nothing" : got.back();
    } catch (const tile::error&) {
      g = "error";
    }
    CHECK(g == want[static_cast<std::size_t>(c)]);
  }
}

// test/errors/test_trace_errors.cpp — bad kernels, found while tracing. Each error must name the
// kernel and the file:line of the offending statement in the user's code (recorded with
// __LINE__ on that statement's own line), say what is wrong in words a user can act on, and leak
// nothing internal. A failed trace is never cached: the next launch reports the error again, and
// a launch that traces correctly works.
#include "error_test.hpp"

#include <stdexcept>

using namespace tile::literals;
using errtest::expect_error;
using tl::_;
using tl::newaxis;

namespace {

/// Launches `k` (a kernel taking (tl::ptr<float>, tl::i32)) twice; both launches must fail
/// with the same error at `line`.
template <class K>
void trace_fails(const K& k, const std::vector<std::string>& words, const int& line,
                 std::source_location here = std::source_location::current()) {
  auto buf = errtest::interp().alloc<float>(64);
  auto first = expect_error([&] { k[{1}](buf, 64); }, words, k.name(), line, here);
  auto again = expect_error([&] { k[{1}](buf, 64); }, words, k.name(), line, here);
  if (first && again) CHECK(std::string(first->what()) == again->what());
}

/// Traces `k` once, so that the line variables its body sets are known before the words that
/// quote them are built (the error itself is checked by trace_fails).
template <class K>
void record_lines(const K& k) {
  auto buf = errtest::interp().alloc<float>(64);
  try {
    k[{1}](buf, 64);
  } catch (const tile::error&) {
  }
}

}  // namespace

// ---- elementwise operators ------------------------------------------------------------------

TEST_CASE("shape mismatch in a binary op") {
  int line = 0;
  auto k = tile::kernel("shape_mismatch", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::arange(0, 16), b = tl::arange(0, 32);
    line = __LINE__; auto c = a + b;
    tl::store(out + tl::arange(0, 32), tl::cast<float>(c));
  });
  trace_fails(k, {"shape mismatch in +", "cannot broadcast [16] with [32]"}, line);
}

TEST_CASE("shape mismatch between 2-D tiles") {
  int line = 0;
  auto k = tile::kernel("shape_mismatch_2d", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({4, 8}), b = tl::zeros<float>({8, 4});
    line = __LINE__; auto c = a * b;
    tl::store(out, tl::sum(c));
  });
  trace_fails(k, {"shape mismatch in *", "cannot broadcast [4, 8] with [8, 4]"}, line);
}

TEST_CASE("bitwise operators on floats") {
  int line = 0;
  auto k_and = tile::kernel("and_float", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = v & v;
    tl::store(out + tl::arange(0, 16), w);
  });
  trace_fails(k_and, {"operator & needs integer operands", "f32[16]"}, line);
  auto k_xor = tile::kernel("xor_float", [&line](tl::ptr<float> out, tl::i32 n) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = v ^ n;
    tl::store(out + tl::arange(0, 16), w);
  });
  trace_fails(k_xor, {"operator ^ needs integer operands", "f32[16]"}, line);
  auto k_not = tile::kernel("not_float", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = ~v;
    tl::store(out + tl::arange(0, 16), w);
  });
  trace_fails(k_not, {"operator ~ needs an integer operand", "f32[16]"}, line);
}

TEST_CASE("shifts of floats") {
  int line = 0;
  auto k = tile::kernel("shift_float", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = v << 1;
    tl::store(out + tl::arange(0, 16), w);
  });
  trace_fails(k, {"operator << needs integer operands", "f32[16]"}, line);
  auto k2 = tile::kernel("shift_right_float", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::arange(0, 16);
    line = __LINE__; auto w = v >> 1.5f;
    tl::store(out + tl::arange(0, 16), tl::cast<float>(w));
  });
  trace_fails(k2, {"operator >> needs integer operands", "f32[16]"}, line);
}

TEST_CASE("pointer plus a float tile") {
  int line = 0;
  auto k = tile::kernel("ptr_plus_float", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = out + tl::zeros<float>({16});
    tl::store(p, 1.0f);
  });
  trace_fails(k, {"pointer offsets must be integers", "f32[16]"}, line);
}

TEST_CASE("pointer times an integer; integer minus a pointer") {
  int line = 0;
  auto k = tile::kernel("ptr_times_int", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = out * 2;
    tl::store(p, 1.0f);
  });
  trace_fails(k, {"invalid operands to *", "ptr<f32>", "pointers support + and - of integers"}, line);
  auto k2 = tile::kernel("int_minus_ptr", [&line](tl::ptr<float> out, tl::i32 n) {
    line = __LINE__; auto p = n - out;
    tl::store(p, 1.0f);
  });
  trace_fails(k2, {"invalid operands to -", "ptr<f32>"}, line);
}

TEST_CASE("integer literal too large for the tile's dtype") {
  int line = 0;
  auto k = tile::kernel("literal_range", [&line](tl::ptr<std::int8_t> out) {
    auto v = tl::zeros<std::int8_t>({16});
    line = __LINE__; auto w = v + 1000;
    tl::store(out + tl::arange(0, 16), w);
  });
  auto buf = errtest::interp().alloc<std::int8_t>(16);
  expect_error([&] { k[{1}](buf); }, {"integer literal 1000 does not fit in i8"}, "literal_range", line);
}

TEST_CASE("use of a tensor that was never assigned") {
  int line = 0;
  auto k = tile::kernel("unassigned", [&line](tl::ptr<float> out, tl::i32) {
    tl::tensor t;
    line = __LINE__; auto u = t + 1.0f;
    tl::store(out + tl::arange(0, 16), u);
  });
  trace_fails(k, {"never assigned"}, line);
}

TEST_CASE("querying a tensor that was never assigned names the query's line") {
  int line = 0;
  auto k = tile::kernel("query_unassigned", [&line](tl::ptr<float> out, tl::i32) {
    tl::tensor t;
    line = __LINE__; auto n = t.numel();
    tl::store(out, static_cast<float>(n));
  });
  trace_fails(k, {"never assigned"}, line);
}

TEST_CASE("bitcast between dtypes of different widths; pointer cast to i32") {
  int line = 0;
  auto k = tile::kernel("bitcast_width", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = tl::bitcast<double>(v);
    tl::store(out + tl::arange(0, 16), tl::cast<float>(w));
  });
  trace_fails(k, {"bitcast from f32[16] to f64", "same width"}, line);
  auto k2 = tile::kernel("ptr_to_i32", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto a = tl::cast<std::int32_t>(out);
    tl::store(out, tl::cast<float>(a));
  });
  trace_fails(k2, {"a pointer converts only to i64 or u64, not i32"}, line);
}

// ---- creation -------------------------------------------------------------------------------

TEST_CASE("non-power-of-two arange") {
  int line = 0;
  auto k = tile::kernel("arange_npot", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto r = tl::arange(0, 10);
    tl::store(out + r, 1.0f);
  });
  trace_fails(k, {"arange(0, 10)", "the length 10 must be a power of two"}, line);
}

TEST_CASE("arange with end <= start; the same kernel then traces with a good END") {
  int line = 0;
  auto k = tile::kernel("arange_empty", [&line](tl::ptr<float> out, tl::constexpr_<"END"> END) {
    line = __LINE__; auto r = tl::arange(8, END);
    tl::store(out + r, 1.0f);
  });
  auto buf = errtest::interp().alloc<float>(64);
  expect_error([&] { k[{1}](buf, "END"_c = 8); }, {"arange(8, 8)", "end must be greater than start"}, "arange_empty",
               line);
  expect_error([&] { k[{1}](buf, "END"_c = 4); }, {"arange(8, 4)", "end must be greater than start"}, "arange_empty",
               line);
  k[{1}](buf, "END"_c = 16);
  auto h = buf.to_host();
  CHECK(h[7] == 0.0f);
  CHECK(h[8] == 1.0f);
  CHECK(h[15] == 1.0f);
  CHECK(h[16] == 0.0f);
  expect_error([&] { k[{1}](buf, "END"_c = 8); }, {"arange(8, 8)"}, "arange_empty", line);
}

TEST_CASE("zeros with a non-power-of-two shape") {
  int line = 0;
  auto k = tile::kernel("zeros_npot", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto z = tl::zeros<float>({16, 12});
    tl::store(out, tl::sum(z));
  });
  trace_fails(k, {"power-of-two extents", "[16, 12]"}, line);
}

TEST_CASE("a tile of more than 2^20 elements") {
  int line = 0;
  auto k = tile::kernel("zeros_huge", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto z = tl::zeros<float>({2048, 1024});
    tl::store(out, tl::sum(z));
  });
  trace_fails(k, {"at most 1048576 elements", "2097152"}, line);
}

TEST_CASE("full with a tile as its value") {
  int line = 0;
  auto k = tile::kernel("full_tile", [&line](tl::ptr<float> out, tl::i32) {
    auto r = tl::arange(0, 16);
    line = __LINE__; auto f = tl::full<float>({16}, r);
    tl::store(out + r, f);
  });
  trace_fails(k, {"fill value must be a scalar", "[16]"}, line);
}

TEST_CASE("program_id and num_programs of axis 3 or -1") {
  int line = 0;
  auto k = tile::kernel("pid_axis", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = tl::program_id(3);
    tl::store(out + p, 1.0f);
  });
  trace_fails(k, {"program_id", "axis must be 0, 1 or 2, got 3"}, line);
  auto k2 = tile::kernel("nprog_axis", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = tl::num_programs(-1);
    tl::store(out + p, 1.0f);
  });
  trace_fails(k2, {"num_programs", "axis must be 0, 1 or 2, got -1"}, line);
}

// ---- memory ---------------------------------------------------------------------------------

TEST_CASE("storing an f32 tile through an f16 pointer needs a cast") {
  int line = 0;
  auto k = tile::kernel("store_narrow", [&line](tl::ptr<tile::half> out) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; tl::store(out + tl::arange(0, 16), v);
  });
  auto buf = errtest::interp().alloc<tile::half>(16);
  expect_error([&] { k[{1}](buf); }, {"tl::store", "f32[16]", "ptr<f16>", "tl::cast<f16>"}, "store_narrow", line);
}

TEST_CASE("storing a [64] tile through [32] pointers") {
  int line = 0;
  auto k = tile::kernel("store_shape", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({64});
    line = __LINE__; tl::store(out + tl::arange(0, 32), v);
  });
  trace_fails(k, {"tl::store", "[64]", "[32]"}, line);
}

TEST_CASE("load from a non-pointer tile, and from a literal") {
  int line = 0;
  auto k = tile::kernel("load_nonptr", [&line](tl::ptr<float> out, tl::i32 n) {
    line = __LINE__; auto v = tl::load(n + tl::arange(0, 16));
    tl::store(out + tl::arange(0, 16), tl::cast<float>(v));
  });
  trace_fails(k, {"tl::load expects a pointer", "got i32[16]"}, line);
  auto k2 = tile::kernel("load_literal", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto v = tl::load(5);
    tl::store(out, v);
  });
  trace_fails(k2, {"tl::load expects a pointer", "literal"}, line);
}

TEST_CASE("load with other but no mask") {
  int line = 0;
  auto k = tile::kernel("load_other", [&line](tl::ptr<float> out, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; auto v = tl::load(out + offs, {}, 0.0f);
    tl::store(out + offs, v);
  });
  trace_fails(k, {"tl::load", "`other` needs a `mask`"}, line);
}

TEST_CASE("a non-boolean mask on a load and on a store") {
  int line = 0;
  auto k = tile::kernel("mask_int", [&line](tl::ptr<float> out, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; auto v = tl::load(out + offs, offs);
    tl::store(out + offs, v);
  });
  trace_fails(k, {"tl::load", "mask must be a boolean", "i32[16]"}, line);
  auto k2 = tile::kernel("mask_float", [&line](tl::ptr<float> out, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; tl::store(out + offs, 1.0f, tl::zeros<float>({16}));
  });
  trace_fails(k2, {"tl::store", "mask must be a boolean", "f32[16]"}, line);
}

TEST_CASE("a mask or an `other` of the wrong shape") {
  int line = 0;
  auto k = tile::kernel("mask_shape", [&line](tl::ptr<float> out, tl::i32 n) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; tl::store(out + tl::arange(0, 16), v, tl::arange(0, 32) < n);
  });
  trace_fails(k, {"tl::store", "mask", "[16]", "[32]"}, line);
  auto k2 = tile::kernel("other_shape", [&line](tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; auto v = tl::load(out + offs, offs < n, tl::zeros<float>({32}));
    tl::store(out + offs, v);
  });
  trace_fails(k2, {"tl::load", "other", "[16]", "[32]"}, line);
}

TEST_CASE("atomics on unsupported dtypes") {
  int line = 0;
  auto k = tile::kernel("atomic_i8", [&line](tl::ptr<std::int8_t> out) {
    line = __LINE__; tl::atomic_add(out + tl::arange(0, 16), 1);
  });
  auto buf = errtest::interp().alloc<std::int8_t>(16);
  expect_error([&] { k[{1}](buf); }, {"atomic_add is not supported on ptr<i8>"}, "atomic_i8", line);
  auto k2 = tile::kernel("atomic_and_f32", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; tl::atomic_and(out + tl::arange(0, 16), 1.0f);
  });
  trace_fails(k2, {"atomic_and is not supported on ptr<f32>"}, line);
}

TEST_CASE("where between pointers to different types") {
  int line = 0;
  auto k = tile::kernel("where_ptrs", [&line](tl::ptr<float> a, tl::ptr<std::int32_t> b, tl::i32 n) {
    line = __LINE__; auto p = tl::where(n > 0, a, b);
    tl::store(p, 1.0f);
  });
  auto dev = errtest::interp();
  auto a = dev.alloc<float>(4);
  auto b = dev.alloc<std::int32_t>(4);
  expect_error([&] { k[{1}](a, b, 1); }, {"where", "ptr<f32>", "ptr<i32>"}, "where_ptrs", line);
}

TEST_CASE("assigning a non-pointer to a tl::ptr") {
  const std::string file = errtest::file_name_of(__FILE__);
  int line = 0;
  auto k = tile::kernel("ptr_init", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; tl::ptr<float> p = tl::arange(0, 16);
    tl::store(p, 1.0f);
    tl::store(out, 1.0f);
  });
  record_lines(k);
  trace_fails(k, {"not a pointer to the same type", "tl::ptr<f32>", "it is i32[16]",
                  "created at " + file + ":" + std::to_string(line)}, line);
}

TEST_CASE("assignment of a non-pointer to a tl::ptr names the line that created the value") {
  // operator= cannot capture its line: the value's own tl:: call names it.
  const std::string file = errtest::file_name_of(__FILE__);
  int line = 0;
  auto k = tile::kernel("ptr_assign", [&line](tl::ptr<float> out, tl::i32) {
    tl::ptr<float> p = out + 1;
    line = __LINE__; p = tl::arange(0, 16);
    tl::store(p, 1.0f);
  });
  record_lines(k);
  trace_fails(k, {"not a pointer to the same type", "tl::ptr<f32>", "it is i32[16]",
                  "created at " + file + ":" + std::to_string(line)}, line);
  // the case: a float tile computed from offsets
  auto k2 = tile::kernel("ptr_assign_cast", [&line](tl::ptr<float> x, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; x = tl::cast<float>(offs);
    tl::store(x, 1.0f);
  });
  record_lines(k2);
  trace_fails(k2, {"not a pointer to the same type", "tl::ptr<f32>", "it is f32[16]",
                   "created at " + file + ":" + std::to_string(line)}, line);
  // a pointer to another type, made on an earlier line than the assignment: that line is named
  auto k3 = tile::kernel("ptr_assign_other", [&line](tl::ptr<float> x, tl::i32) {
    line = __LINE__; auto q = tl::pointer_cast<std::int32_t>(x + tl::arange(0, 8)(_, newaxis));
    x = q;
    tl::store(x, 1.0f);
  });
  record_lines(k3);
  trace_fails(k3, {"not a pointer to the same type", "tl::ptr<f32>", "it is ptr<i32>[8,1]",
                   "created at " + file + ":" + std::to_string(line)}, line);
}

TEST_CASE("assigning a kernel argument or a loop index to a tl::ptr") {
  // A value no tl:: call created has no line of its own: a kernel argument is reported at the
  // launch, a loop's index at its loop.
  int line = 0;
  auto k = tile::kernel("ptr_assign_arg", [](tl::ptr<float> x, tl::i32 n) {
    x = n;
    tl::store(x, 1.0f);
  });
  auto buf = errtest::interp().alloc<float>(16);
  expect_error([&] { line = __LINE__; k[{1}](buf, 16); },
               {"not a pointer to the same type", "tl::ptr<f32>", "it is i32, a kernel argument"}, "ptr_assign_arg",
               line);
  const std::string file = errtest::file_name_of(__FILE__);
  int loop = 0;
  auto k2 = tile::kernel("ptr_assign_index", [&loop](tl::ptr<float> x, tl::i32 n) {
    loop = __LINE__; tl::for_range(0, n, [&](tl::tensor i) {
      x = i;
      tl::store(x, 1.0f);
    });
  });
  record_lines(k2);
  trace_fails(k2, {"not a pointer to the same type", "it is i32, the index of the tl::for_range at " + file + ":" +
                   std::to_string(loop)}, loop);
}

// ---- shapes ---------------------------------------------------------------------------------

TEST_CASE("reshape changing the element count") {
  int line = 0;
  auto k = tile::kernel("reshape_count", [&line](tl::ptr<float> out, tl::i32) {
    auto r = tl::arange(0, 32);
    line = __LINE__; auto s = tl::reshape(r, {4, 4});
    tl::store(out + tl::arange(0, 16), tl::cast<float>(tl::reshape(s, {16})));
  });
  trace_fails(k, {"reshape from [32] to [4, 4]", "changes the number of elements"}, line);
}

TEST_CASE("permute with a bad order") {
  int line = 0;
  auto k = tile::kernel("permute_order", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 16});
    line = __LINE__; auto t = tl::permute(v, {0, 0});
    tl::store(out, tl::sum(t));
  });
  trace_fails(k, {"permute", "(0, 0) is not a permutation", "f32[16,16]"}, line);
  auto k2 = tile::kernel("permute_rank", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 16});
    line = __LINE__; auto t = tl::permute(v, {1, 0, 2});
    tl::store(out, tl::sum(t));
  });
  trace_fails(k2, {"permute", "(1, 0, 2) is not a permutation"}, line);
}

TEST_CASE("split of a tile whose last axis is not 2") {
  int line = 0;
  auto k = tile::kernel("split_axis", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 4});
    line = __LINE__; auto [a, b] = tl::split(v);
    tl::store(out + tl::arange(0, 16), tl::sum(a, 1) + tl::sum(b, 1));
  });
  trace_fails(k, {"split", "last axis has extent 2", "f32[16,4]"}, line);
}

TEST_CASE("expand_dims and indexing out of range") {
  int line = 0;
  auto k = tile::kernel("expand_axis", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::arange(0, 16);
    line = __LINE__; auto w = tl::expand_dims(v, 3);
    tl::store(out, tl::cast<float>(tl::sum(w)));
  });
  trace_fails(k, {"expand_dims", "axis 3 is out of range for a tile of rank 1"}, line);
  auto k2 = tile::kernel("index_rank", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::arange(0, 16);
    line = __LINE__; auto w = v(_, _, newaxis);
    tl::store(out, tl::cast<float>(tl::sum(w)));
  });
  trace_fails(k2, {"indexing a tile of rank 1 with 2 `_` markers"}, line);
}

// ---- reductions and dot ---------------------------------------------------------------------

TEST_CASE("reduction axis out of range") {
  int line = 0;
  auto k = tile::kernel("reduce_axis", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 16});
    line = __LINE__; auto s = tl::sum(v, 2);
    tl::store(out + tl::arange(0, 16), s);
  });
  trace_fails(k, {"axis 2 is out of range for a tile of rank 2"}, line);
  auto k2 = tile::kernel("scan_axis", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto s = tl::cumsum(v, 1);
    tl::store(out + tl::arange(0, 16), s);
  });
  trace_fails(k2, {"scan", "axis 1 is out of range for a tile of rank 1"}, line);
  auto k3 = tile::kernel("argmax_axis", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto s = tl::argmax(v, 1);
    tl::store(out, tl::cast<float>(s));
  });
  trace_fails(k3, {"axis 1 is out of range for a tile of rank 1"}, line);
}

TEST_CASE("reduction of a scalar") {
  int line = 0;
  auto k = tile::kernel("reduce_scalar", [&line](tl::ptr<float> out, tl::i32) {
    auto p = tl::program_id(0);
    line = __LINE__; auto s = tl::max(p, 0);
    tl::store(out, tl::cast<float>(s));
  });
  trace_fails(k, {"needs a tile, got a scalar"}, line);
}

TEST_CASE("a reduction of a literal") {
  int line = 0;
  auto k = tile::kernel("sum_literal", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto s = tl::sum(5.0f);
    tl::store(out, s);
  });
  trace_fails(k, {"literal"}, line);
}

TEST_CASE("a combine function returning the wrong dtype") {
  int line = 0;
  auto k = tile::kernel("combine_dtype", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::arange(0, 16);
    line = __LINE__; auto s = tl::reduce(v, 0, [](tl::tensor a, tl::tensor b) { return tl::cast<float>(a + b); });
    tl::store(out, tl::cast<float>(s));
  });
  trace_fails(k, {"combine function must return i32 scalars", "returned f32"}, line);
}

TEST_CASE("dot inner dimensions differ") {
  int line = 0;
  auto k = tile::kernel("dot_inner", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({32, 16}), b = tl::zeros<float>({32, 32});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  });
  trace_fails(k, {"dot: inner dimensions differ", "f32[32,16] (K = 16)", "f32[32,32] (K = 32)"}, line);
}

TEST_CASE("dot with K < 16") {
  int line = 0;
  auto k = tile::kernel("dot_small", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({16, 8}), b = tl::zeros<float>({8, 16});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  });
  trace_fails(k, {"dot needs M, N and K of at least 16", "K = 8"}, line);
}

TEST_CASE("dot of mixed dtypes") {
  int line = 0;
  auto k = tile::kernel("dot_mixed", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<tile::half>({16, 16}), b = tl::zeros<float>({16, 16});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  });
  trace_fails(k, {"dot: both inputs must have one dtype", "f16[16,16]", "f32[16,16]"}, line);
}

TEST_CASE("dot of an unsupported dtype, of 1-D tiles, with a wrong accumulator") {
  int line = 0;
  auto k = tile::kernel("dot_i32", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<std::int32_t>({16, 16});
    line = __LINE__; auto c = tl::dot(a, a);
    tl::store(out, tl::cast<float>(tl::sum(c)));
  });
  trace_fails(k, {"dot does not support i32 inputs"}, line);
  auto k2 = tile::kernel("dot_1d", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({16});
    line = __LINE__; auto c = tl::dot(a, a);
    tl::store(out, tl::sum(c));
  });
  trace_fails(k2, {"dot needs two 2-D tiles", "f32[16]"}, line);
  auto k3 = tile::kernel("dot_acc", [&line](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<tile::half>({16, 16});
    line = __LINE__; auto c = tl::dot(a, a, tl::zeros<tile::half>({16, 16}));
    tl::store(out, tl::sum(c));
  });
  trace_fails(k3, {"accumulator must be f32 for f16 inputs", "f16[16,16]"}, line);
}

// ---- control flow ---------------------------------------------------------------------------

TEST_CASE("loop-carried tile changes shape in for_range") {
  int line = 0, assigned = 0;
  auto k = tile::kernel("carried_shape", [&](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, n, [&](tl::tensor) {
      assigned = __LINE__; acc = tl::zeros<float>({32});
    });
    tl::store(out + tl::arange(0, 16), acc);
  });
  // reported at the assignment (where editors jump), the loop's line in the text
  record_lines(k);
  const std::string loop_at = "tl::for_range at " + errtest::file_name_of(__FILE__) + ":" + std::to_string(line) + ": ";
  trace_fails(k, {loop_at, "changes type from f32[16] to f32[32]", "created on this line"}, assigned);
}

TEST_CASE("loop-carried tile changes dtype in for_range") {
  int line = 0, assigned = 0;
  auto k = tile::kernel("carried_dtype_for", [&](tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    auto x = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, n, [&](tl::tensor) {
      x = x + 1.0f;
      assigned = __LINE__; x = tl::cast<std::int32_t>(x);
    });
    tl::store(out + offs, tl::cast<float>(x));
  });
  record_lines(k);
  const std::string loop_at = "tl::for_range at " + errtest::file_name_of(__FILE__) + ":" + std::to_string(line) + ": ";
  trace_fails(k, {loop_at, "changes type from f32[16] to i32[16]", "created on this line"}, assigned);
}

TEST_CASE("for_range bounds must be integer scalars") {
  int line = 0;
  auto k = tile::kernel("for_float", [&line](tl::ptr<float> out, tl::i32) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, 2.5f, [&](tl::tensor) { acc += 1.0f; });
    tl::store(out + tl::arange(0, 16), acc);
  });
  trace_fails(k, {"tl::for_range", "upper bound must be an integer scalar", "f32"}, line);
}

TEST_CASE("loop-carried tile changes dtype in while_") {
  int line = 0, assigned = 0;
  auto k = tile::kernel("carried_dtype", [&](tl::ptr<float> out, tl::i32 n) {
    auto i = tl::zeros<std::int32_t>({16});
    line = __LINE__; tl::while_([&] { return tl::max(i) < n; }, [&] {
      assigned = __LINE__; i = tl::cast<float>(i) + 1.0f;
    });
    tl::store(out + tl::arange(0, 16), tl::cast<float>(i));
  });
  record_lines(k);
  const std::string loop_at = "tl::while_ at " + errtest::file_name_of(__FILE__) + ":" + std::to_string(line) + ": ";
  trace_fails(k, {loop_at, "changes type from i32[16] to f32[16]", "created on this line"}, assigned);
}

TEST_CASE("the while_ condition may not assign a tile") {
  int line = 0;
  auto k = tile::kernel("while_cond_assign", [&line](tl::ptr<float> out, tl::i32 n) {
    auto i = tl::zeros<std::int32_t>({});
    line = __LINE__; tl::while_([&] { i = i + 1; return i < n; }, [&] { i = i + 2; });
    tl::store(out, tl::cast<float>(i));
  });
  trace_fails(k, {"tl::while_", "condition may not assign tiles"}, line);
}

TEST_CASE("the while_ condition must be a scalar") {
  int line = 0;
  auto k = tile::kernel("while_cond_tile", [&line](tl::ptr<float> out, tl::i32 n) {
    auto i = tl::zeros<std::int32_t>({16});
    line = __LINE__; tl::while_([&] { return i < n; }, [&] { i = i + 1; });
    tl::store(out + tl::arange(0, 16), tl::cast<float>(i));
  });
  trace_fails(k, {"tl::while_", "condition must be a scalar", "i1[16]"}, line);
}

TEST_CASE("if_ branches return different types") {
  int line = 0;
  auto k = tile::kernel("if_types", [&line](tl::ptr<float> out, tl::i32 n) {
    line = __LINE__; auto v = tl::if_(n > 0, [] { return tl::zeros<float>({16}); }, [] { return tl::zeros<float>({32}); });
    tl::store(out + tl::arange(0, 16), v);
  });
  trace_fails(k, {"tl::if_", "different types", "f32[16]", "f32[32]"}, line);
}

TEST_CASE("a tile assigned in if_ branches with different types") {
  int line = 0;
  auto k = tile::kernel("if_assign_types", [&line](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::if_(n > 0, [&] { acc = tl::zeros<std::int32_t>({16}); });
    tl::store(out + tl::arange(0, 16), acc);
  });
  trace_fails(k, {"tl::if_", "i32[16]", "f32[16]"}, line);
  // the assignment on a line of its own is named, the if_'s line in the text
  int if_line = 0, assigned = 0;
  auto k2 = tile::kernel("if_assign_types_lines", [&](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    if_line = __LINE__; tl::if_(n > 0, [&] {
      assigned = __LINE__; acc = tl::zeros<std::int32_t>({16});
    });
    tl::store(out + tl::arange(0, 16), acc);
  });
  record_lines(k2);
  const std::string if_at = "tl::if_ at " + errtest::file_name_of(__FILE__) + ":" + std::to_string(if_line) + ": ";
  trace_fails(k2, {if_at, "type i32[16] in one and f32[16] in the other", "created on this line"}, assigned);
}

TEST_CASE("the if_ condition must be a scalar") {
  int line = 0;
  auto k = tile::kernel("if_tile", [&line](tl::ptr<float> out, tl::i32) {
    auto c = tl::arange(0, 16) > 3;
    line = __LINE__; tl::if_(c, [] {});
    tl::store(out, 1.0f);
  });
  trace_fails(k, {"tl::if_", "condition must be a scalar", "tl::where", "i1[16]"}, line);
}

// ---- debugging and hints --------------------------------------------------------------------

TEST_CASE("static_assert_ fails at trace time; a good meta value then traces") {
  int line = 0;
  auto k = tile::kernel("static_check", [&line](tl::ptr<float> out, tl::constexpr_<"BLOCK"> BLOCK) {
    line = __LINE__; tl::static_assert_(BLOCK % 32 == 0, "BLOCK must be a multiple of 32");
    tl::store(out + tl::arange(0, BLOCK), 2.0f);
  });
  auto buf = errtest::interp().alloc<float>(64);
  expect_error([&] { k[{1}](buf, "BLOCK"_c = 16); }, {"BLOCK must be a multiple of 32"}, "static_check", line);
  k[{1}](buf, "BLOCK"_c = 32);
  CHECK(buf.to_host()[31] == 2.0f);
  CHECK(buf.to_host()[32] == 0.0f);
  auto k2 = tile::kernel("static_default", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; tl::static_assert_(false);
    tl::store(out, 1.0f);
  });
  trace_fails(k2, {"static_assert_ failed"}, line);
}

TEST_CASE("device_print of a literal") {
  int line = 0;
  auto k = tile::kernel("print_literal", [&line](tl::ptr<float> out, tl::i32) {
    line = __LINE__; tl::device_print("x = ", 5);
    tl::store(out, 1.0f);
  });
  trace_fails(k, {"device_print", "not literals"}, line);
}

TEST_CASE("a hint on a float tile") {
  int line = 0;
  auto k = tile::kernel("hint_float", [&line](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = tl::multiple_of(v, 16);
    tl::store(out + tl::arange(0, 16), w);
  });
  trace_fails(k, {"hints apply to integers and pointers", "f32[16]"}, line);
}

// ---- outside a kernel, and recovery ---------------------------------------------------------

TEST_CASE("tl:: ops outside a kernel") {
  int line = 0;
  line = __LINE__; expect_error([] { (void)tl::arange(0, 16); }, {"only inside a kernel"}, "", line);
  line = __LINE__; expect_error([] { (void)tl::program_id(0); }, {"only inside a kernel"}, "", line);
  line = __LINE__; expect_error([] { (void)tl::zeros<float>({16}); }, {"only inside a kernel"}, "", line);
}

TEST_CASE("a trace error inside a loop body leaves no trace state behind") {
  int line = 0;
  auto bad = tile::kernel("bad_body", [&line](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      tl::if_(n > 2, [&] {
        line = __LINE__; acc = acc + tl::arange(0, 32);
      });
    });
    tl::store(out + tl::arange(0, 16), acc);
  });
  auto good = tile::kernel("good_body", [](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor i) { acc += tl::cast<float>(i); });
    tl::store(out + tl::arange(0, 16), acc);
  });
  auto buf = errtest::interp().alloc<float>(16);
  expect_error([&] { bad[{1}](buf, 4); }, {"shape mismatch in +", "[16]", "[32]"}, "bad_body", line);
  good[{1}](buf, 5);  // 0 + 1 + 2 + 3 + 4
  CHECK(buf.to_host() == std::vector<float>(16, 10.0f));
  // the failed trace did not leave a kernel "being traced" on this thread
  line = __LINE__; expect_error([] { (void)tl::arange(0, 16); }, {"only inside a kernel"}, "", line);
}

TEST_CASE("a C++ exception thrown by the kernel body passes through unchanged") {
  auto k = tile::kernel("throws", [](tl::ptr<float> out, tl::constexpr_<"FAIL", bool> FAIL) {
    if (FAIL) throw std::invalid_argument("the user's own exception");
    tl::store(out + tl::arange(0, 16), 3.0f);
  });
  auto buf = errtest::interp().alloc<float>(16);
  CHECK_THROWS_WITH_AS(k[{1}](buf, "FAIL"_c = true), "the user's own exception", std::invalid_argument);
  k[{1}](buf, "FAIL"_c = false);
  CHECK(buf.to_host()[15] == 3.0f);
  CHECK_THROWS_AS(k[{1}](buf, "FAIL"_c = true), std::invalid_argument);  // not cached as a success
  CHECK(k.core().traces() >= 2);
}

// test/errors/test_trace_errors.cpp — bad kernels: each error names the offending op's file and
// line, and the kernel.
#include "error_test.hpp"

using namespace tile::literals;
using errtest::expect_error;

namespace {
int line = 0;  // the offending statement's line, recorded on that same line

// Launches a one-argument kernel whose body is `body` and expects the error `words` at `line`.
template <class Body>
void bad_kernel(const char* name, Body body, std::vector<std::string> words) {
  auto k = tile::kernel(name, [body](tl::ptr<float> out, tl::i32 n) { body(out, n); });
  auto buf = errtest::interp().alloc<float>(64);
  expect_error([&] { k[{1}](buf, 64); }, {std::move(words), line, name});
  // the failed trace is not cached: a second launch reports the same error again
  expect_error([&] { k[{1}](buf, 64); }, {{}, line, name});
}
}  // namespace

TEST_CASE("shape mismatch in a binary op") {
  bad_kernel("shape_mismatch", [](tl::ptr<float> out, tl::i32) {
    auto a = tl::arange(0, 16), b = tl::arange(0, 32);
    line = __LINE__; auto c = a + b;
    tl::store(out + tl::arange(0, 32), tl::cast<float>(c));
  }, {"shape mismatch", "[16]", "[32]"});
}

TEST_CASE("dot inner dimensions differ") {
  bad_kernel("dot_inner", [](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({32, 16}), b = tl::zeros<float>({32, 32});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  }, {"inner dimensions differ", "K = 16", "K = 32"});
}

TEST_CASE("dot with K < 16") {
  bad_kernel("dot_small", [](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<float>({16, 8}), b = tl::zeros<float>({8, 16});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  }, {"at least 16", "K = 8"});
}

TEST_CASE("dot of mixed dtypes") {
  bad_kernel("dot_mixed", [](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<tile::half>({16, 16}), b = tl::zeros<float>({16, 16});
    line = __LINE__; auto c = tl::dot(a, b);
    tl::store(out, tl::sum(c));
  }, {"one dtype", "f16", "f32"});
}

TEST_CASE("dot of an unsupported dtype") {
  bad_kernel("dot_i32", [](tl::ptr<float> out, tl::i32) {
    auto a = tl::zeros<int>({16, 16});
    line = __LINE__; auto c = tl::dot(a, a);
    tl::store(out, tl::cast<float>(tl::sum(c)));
  }, {"does not support i32"});
}

TEST_CASE("non-power-of-two arange") {
  bad_kernel("arange_npot", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto r = tl::arange(0, 10);
    tl::store(out + r, 1.0f);
  }, {"arange(0, 10)", "power of two"});
}

TEST_CASE("arange with end <= start") {
  bad_kernel("arange_empty", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto r = tl::arange(8, 8);
    tl::store(out + r, 1.0f);
  }, {"end must be greater than start"});
}

TEST_CASE("zeros with a non-power-of-two shape") {
  bad_kernel("zeros_npot", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto z = tl::zeros<float>({16, 12});
    tl::store(out, tl::sum(z));
  }, {"power-of-two", "[16, 12]"});
}

TEST_CASE("reshape changing the element count") {
  bad_kernel("reshape_count", [](tl::ptr<float> out, tl::i32) {
    auto r = tl::arange(0, 32);
    line = __LINE__; auto s = tl::reshape(r, {4, 4});
    tl::store(out + tl::arange(0, 16), tl::cast<float>(tl::reshape(s, {16})));
  }, {"reshape from [32] to [4, 4]", "number of elements"});
}

TEST_CASE("storing f32 through an f16 pointer needs a cast") {
  auto k = tile::kernel("store_narrow", [](tl::ptr<tile::half> out) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; tl::store(out + tl::arange(0, 16), v);
  });
  auto buf = errtest::interp().alloc<tile::half>(16);
  expect_error([&] { k[{1}](buf); }, {{"f32[16]", "ptr<f16>", "tl::cast<f16>"}, line, "store_narrow"});
}

TEST_CASE("storing a [64] tile through [32] pointers") {
  bad_kernel("store_shape", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({64});
    line = __LINE__; tl::store(out + tl::arange(0, 32), v);
  }, {"tl::store", "[64]", "[32]"});
}

TEST_CASE("load from a non-pointer") {
  bad_kernel("load_nonptr", [](tl::ptr<float> out, tl::i32 n) {
    line = __LINE__; auto v = tl::load(n + tl::arange(0, 16));
    tl::store(out + tl::arange(0, 16), tl::cast<float>(v));
  }, {"tl::load expects a pointer", "i32[16]"});
}

TEST_CASE("load with other but no mask") {
  bad_kernel("load_other", [](tl::ptr<float> out, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; auto v = tl::load(out + offs, {}, 0.0f);
    tl::store(out + offs, v);
  }, {"`other` needs a `mask`"});
}

TEST_CASE("a non-boolean mask") {
  bad_kernel("mask_int", [](tl::ptr<float> out, tl::i32) {
    auto offs = tl::arange(0, 16);
    line = __LINE__; auto v = tl::load(out + offs, offs);
    tl::store(out + offs, v);
  }, {"mask must be a boolean", "i32[16]"});
}

TEST_CASE("bitwise and on floats") {
  bad_kernel("and_float", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = v & v;
    tl::store(out + tl::arange(0, 16), w);
  }, {"operator &", "integer operands", "f32[16]"});
}

TEST_CASE("shift of floats") {
  bad_kernel("shift_float", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16});
    line = __LINE__; auto w = v << 1;
    tl::store(out + tl::arange(0, 16), w);
  }, {"operator <<", "integer operands"});
}

TEST_CASE("pointer plus float") {
  bad_kernel("ptr_plus_float", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = out + tl::zeros<float>({16});
    tl::store(p, 1.0f);
  }, {"pointer offsets must be integers", "f32[16]"});
}

TEST_CASE("pointer times int") {
  bad_kernel("ptr_times_int", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = out * 2;
    tl::store(p, 1.0f);
  }, {"invalid operands to *", "ptr<f32>"});
}

TEST_CASE("program_id axis out of range") {
  bad_kernel("pid_axis", [](tl::ptr<float> out, tl::i32) {
    line = __LINE__; auto p = tl::program_id(3);
    tl::store(out + p, 1.0f);
  }, {"program_id", "axis must be 0, 1 or 2", "3"});
}

TEST_CASE("reduction axis out of range") {
  bad_kernel("reduce_axis", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 16});
    line = __LINE__; auto s = tl::sum(v, 2);
    tl::store(out + tl::arange(0, 16), s);
  }, {"axis 2 is out of range", "rank 2"});
}

TEST_CASE("permute with a bad order") {
  bad_kernel("permute_order", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 16});
    line = __LINE__; auto t = tl::permute(v, {0, 0});
    tl::store(out, tl::sum(t));
  }, {"(0, 0) is not a permutation"});
}

TEST_CASE("split of a tile whose last axis is not 2") {
  bad_kernel("split_axis", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::zeros<float>({16, 4});
    line = __LINE__; auto [a, b] = tl::split(v);
    tl::store(out + tl::arange(0, 16), tl::sum(a, 1) + tl::sum(b, 1));
  }, {"last axis has extent 2", "f32[16,4]"});
}

TEST_CASE("static_assert_ fails at trace time") {
  bad_kernel("static_check", [](tl::ptr<float> out, tl::i32) {
    auto v = tl::arange(0, 16);
    line = __LINE__; tl::static_assert_(v.numel() == 32, "BLOCK must be 32");
    tl::store(out + v, 1.0f);
  }, {"BLOCK must be 32"});
}

TEST_CASE("loop-carried tile changes shape in for_range") {
  bad_kernel("carried_shape", [](tl::ptr<float> out, tl::i32 n) {
    auto acc = tl::zeros<float>({16});
    line = __LINE__; tl::for_range(0, n, [&](tl::tensor) { acc = tl::zeros<float>({32}); });
    tl::store(out + tl::arange(0, 16), acc);
  }, {"changes type from f32[16] to f32[32]"});
}

TEST_CASE("loop-carried tile changes dtype in while_") {
  bad_kernel("carried_dtype", [](tl::ptr<float> out, tl::i32 n) {
    auto i = tl::zeros<int>({16});
    line = __LINE__; tl::while_([&] { return tl::max(i) < n; }, [&] { i = tl::cast<float>(i) + 1.0f; });
    tl::store(out + tl::arange(0, 16), tl::cast<float>(i));
  }, {"tl::while_", "changes type from i32[16] to f32[16]"});
}

TEST_CASE("while_ condition may not assign tiles") {
  bad_kernel("while_cond_assign", [](tl::ptr<float> out, tl::i32 n) {
    auto i = tl::zeros<int>({});
    line = __LINE__; tl::while_([&] { i = i + 1; return i < n; }, [&] { i = i + 2; });
    tl::store(out, tl::cast<float>(i));
  }, {"condition may not assign tiles"});
}

TEST_CASE("if_ branches return different types") {
  bad_kernel("if_types", [](tl::ptr<float> out, tl::i32 n) {
    line = __LINE__; auto v = tl::if_(n > 0, [] { return tl::zeros<float>({16}); }, [] { return tl::zeros<float>({32}); });
    tl::store(out + tl::arange(0, 16), v);
  }, {"tl::if_", "different types", "f32[16]", "f32[32]"});
}

TEST_CASE("if_ condition must be a scalar") {
  bad_kernel("if_tile", [](tl::ptr<float> out, tl::i32) {
    auto c = tl::arange(0, 16) > 3;
    line = __LINE__; tl::if_(c, [] {});
    tl::store(out, 1.0f);
  }, {"condition must be a scalar", "tl::where"});
}

TEST_CASE("integer literal too large for the tile's dtype") {
  auto k = tile::kernel("literal_range", [](tl::ptr<std::int8_t> out) {
    auto v = tl::zeros<std::int8_t>({16});
    line = __LINE__; auto w = v + 1000;
    tl::store(out + tl::arange(0, 16), w);
  });
  auto buf = errtest::interp().alloc<std::int8_t>(16);
  expect_error([&] { k[{1}](buf); }, {{"1000 does not fit in i8"}, line, "literal_range"});
}

TEST_CASE("atomics on an unsupported dtype") {
  auto k = tile::kernel("atomic_i8", [](tl::ptr<std::int8_t> out) {
    line = __LINE__; tl::atomic_add(out + tl::arange(0, 16), 1);
  });
  auto buf = errtest::interp().alloc<std::int8_t>(16);
  expect_error([&] { k[{1}](buf); }, {{"atomic_add is not supported on ptr<i8>"}, line, "atomic_i8"});
}

TEST_CASE("tl:: ops outside a kernel") {
  int l = __LINE__; CHECK_THROWS_AS(tl::arange(0, 16), tile::error);
  try {
    tl::program_id(0);
  } catch (const tile::error& e) {
    CHECK(std::string(e.what()).find("only inside a kernel") != std::string::npos);
    CHECK(e.where().line == static_cast<std::uint32_t>(l + 2));
  }
}

// test/ir/test_hash.cpp — the structural hash: equal for clones and for kernels that differ only
// in source locations; different for any change the printer (without locations) would show.
#include <set>

#include "ir_test.hpp"

using namespace irt;

namespace {

/// A small kernel; `loc_shift` moves every location, the other knobs change one detail.
struct Variant {
  std::uint32_t loc_shift = 0;
  const char* file = "/home/user/kernels/kern.cpp";
  std::int64_t constant = 16;
  dtype elem = dtype::f32;
  std::int64_t pred = 2;  // lt
  bool swap_operands = false;
  std::int64_t div = 16;
  std::string name = "h";
  double fconst = 0.0;
  std::string assert_msg = "kern.cpp:9: x >= 0";
};

std::unique_ptr<Function> build(const Variant& v) {
  K k(v.name, {P(v.elem), T(dtype::i32)}, {v.div, 1});
  auto at = [&](std::uint32_t line) { return L(line + v.loc_shift, v.file); };
  Value* pid = k.v(OpKind::program_id, {}, T(dtype::i32), A({0}), at(3));
  Value* c = k.ci(T(dtype::i32), v.constant, at(3));
  Value* a = v.swap_operands ? k.v(OpKind::sub, {c, pid}, T(dtype::i32), {}, at(4))
                             : k.v(OpKind::sub, {pid, c}, T(dtype::i32), {}, at(4));
  Value* lt = k.v(OpKind::cmp, {a, k.arg(1)}, T(dtype::i1), A({v.pred}), at(5));
  Value* x = k.cf(T(v.elem), v.fconst, at(6));
  Op* br = k.op(OpKind::if_, {lt}, {T(v.elem)}, {}, at(7), 2);
  Builder(br->region(0)).create(OpKind::yield, {x}, {}, {}, at(7));
  Value* n = Builder(br->region(1)).create(OpKind::neg, {x}, {T(v.elem)}, {}, at(8))->result();
  Builder(br->region(1)).create(OpKind::yield, {n}, {}, {}, at(8));
  k.op(OpKind::assert_, {lt}, {}, A({}, v.assert_msg), at(9));
  k.op(OpKind::store, {k.arg(0), br->result()}, {}, A({0, 0, 0}), at(10));
  k.ret(at(11));
  verify(k.f());
  return std::move(k.fn);
}

std::uint64_t H(const Variant& v) { return structural_hash(*build(v)); }

}  // namespace

TEST_CASE("hash: deterministic, equal for clones") {
  auto f = build({});
  CHECK(structural_hash(*f) == structural_hash(*f));
  CHECK(structural_hash(*clone(*f)) == structural_hash(*f));
  auto m = misc_kernel();
  CHECK(structural_hash(*clone(*m)) == structural_hash(*m));
  CHECK(structural_hash(*m) != structural_hash(*f));
}

TEST_CASE("hash: locations do not count (same kernel traced from two call sites)") {
  Variant moved;
  moved.loc_shift = 100;
  moved.file = "/elsewhere/other.cpp";
  CHECK(H(moved) == H({}));
  auto f = build({});
  f->loc = L(77, "/launch/site.cpp");
  CHECK(structural_hash(*f) == H({}));
}

TEST_CASE("hash: the failure locations are the assert's and loops' file, line and column, and nothing else") {
  const auto F = [](const Variant& v) { return failure_location_hash(*build(v)); };
  Variant moved;
  moved.loc_shift = 1;  // every op moves, the assert (line 9) among them
  CHECK(F(moved) != F({}));
  Variant elsewhere;
  elsewhere.file = "/elsewhere/other.cpp";
  CHECK(F(elsewhere) != F({}));
  auto f = build({});
  CHECK(failure_location_hash(*clone(*f)) == F({}));
  (*std::next(f->body.ops.begin(), 2))->loc = L(40, "/home/user/kernels/kern.cpp");  // the sub: reports nothing
  CHECK(failure_location_hash(*f) == F({}));
  CHECK(structural_hash(*f) == H({}));
}

TEST_CASE("hash: any structural change changes it") {
  std::uint64_t base = H({});
  Variant c;
  c.constant = 17;
  Variant t;
  t.elem = dtype::f64;
  Variant p;
  p.pred = 3;
  Variant s;
  s.swap_operands = true;
  Variant d;
  d.div = 1;
  Variant n;
  n.name = "h2";
  Variant fz;
  fz.fconst = -0.0;  // -0.0 and 0.0 are different constants
  Variant am;
  am.assert_msg = "kern.cpp:10: x >= 0";  // an assert's message counts (it carries file:line)
  std::set<std::uint64_t> all{base};
  for (const Variant* v : {&c, &t, &p, &s, &d, &n, &fz, &am}) {
    std::uint64_t h = H(*v);
    CHECK(h != base);
    all.insert(h);
  }
  CHECK(all.size() == 9);  // pairwise distinct, too
}

TEST_CASE("hash: shapes, pointer flags, argument names and region structure count") {
  auto shaped = [](std::vector<std::int64_t> shape, bool ptr) {
    K k;
    Value* c = k.v(OpKind::constant, {}, Type{dtype::i64, ptr, {}}, A({0}));
    k.sink({k.v(OpKind::splat, {c}, Type{dtype::i64, ptr, shape})});
    k.ret();
    verify(k.f());
    return structural_hash(k.f());
  };
  CHECK(shaped({16}, true) != shaped({32}, true));
  CHECK(shaped({4, 8}, true) != shaped({8, 4}, true));
  CHECK(shaped({16}, true) != shaped({16}, false));  // ptr<i64> vs i64
  CHECK(shaped({16}, false) == shaped({16}, false));

  auto f = build({});
  auto g = clone(*f);
  g->arg_info[1].name = "n";
  CHECK(structural_hash(*g) != structural_hash(*f));

  // moving an op into a region is a different function even with the same op sequence
  auto region_variant = [](bool inside) {
    K k;
    Value* c = k.ci(T(dtype::i1), 1);
    Op* br = k.op(OpKind::if_, {c}, {}, {}, {}, 2);
    if (inside) Builder(br->region(0)).create(OpKind::assert_, {c}, {}, A({}, "m"));
    Builder(br->region(0)).create(OpKind::yield, {}, {});
    Builder(br->region(1)).create(OpKind::yield, {}, {});
    if (!inside) k.op(OpKind::assert_, {c}, {}, A({}, "m"));
    k.ret();
    return structural_hash(k.f());
  };
  CHECK(region_variant(true) != region_variant(false));
}

TEST_CASE("hash: spreads over all 64 bits") {
  // constants 0..63 give 64 distinct hashes whose bits are each set in some and clear in others
  std::uint64_t any = 0, all = ~std::uint64_t{0};
  std::set<std::uint64_t> seen;
  for (std::int64_t i = 0; i < 64; ++i) {
    Variant v;
    v.constant = i;
    std::uint64_t h = H(v);
    seen.insert(h);
    any |= h;
    all &= h;
  }
  CHECK(seen.size() == 64);
  CHECK(any == ~std::uint64_t{0});
  CHECK(all == 0);
}

// test/lang/test_control_lifetime.cpp — tensor objects that a tl::for_range, tl::while_ or tl::if_
// body destroys (a std::vector of tiles that grows there, an optional reset there, a vector moved
// into a body-local one): they are not carried or assigned, and nothing reads them after they
// die (the ASan build runs this file too); a new object at a destroyed one's address is the
// body's own, and an object a loop body made holds no value after it; moves; and the
// loop-carried rules (a type change is reported at the assignment) around such bodies, and
// after a failed trace.
#include <optional>
#include <utility>

#include "lang_test2.hpp"

namespace {
using lt2::ix;

/// Appends `t` to `v` in a new buffer, as a std::vector that grows does: each element moves
/// into a new object and the old objects are destroyed.
void grow(std::vector<tl::tensor>& v, const tl::tensor& t) {
  tl::tensor copy = t;  // `t` may be an element of `v`
  v.reserve(v.capacity() + 1);
  v.push_back(copy);
}

/// Small whole numbers: every sum below is exact in f32.
std::vector<float> input() {
  std::vector<float> h(16);
  for (int j = 0; j < 16; ++j) h[ix(j)] = static_cast<float>(j - 5);
  return h;
}
}  // namespace

TEST_CASE("a for_range body that grows a std::vector of tiles declared outside it") {
  auto k = tile::kernel("grow_for", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles;  // capacity 1
    tiles.push_back(tl::load(x + offs));
    CHECK(tiles.capacity() == 1);
    tl::tensor acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      tiles.push_back(acc + 1.0f);  // reallocates: the old element objects are destroyed
      acc = tiles.back() + tiles.front();
    });
    CHECK(tiles.size() == 2);  // the body's own objects: they hold nothing after it
    CHECK_FALSE(tiles.front().defined());
    CHECK_FALSE(tiles.back().defined());
    tl::store(out + offs, acc);
  });
  auto d = lt2::dev();
  const auto h = input();
  auto x = d.upload(h);
  for (int n : {0, 1, 3}) {
    CAPTURE(n);
    auto out = d.alloc<float>(16);
    k[{1}](x, out, n);
    auto r = out.to_host();
    for (int j = 0; j < 16; ++j) CHECK(r[ix(j)] == static_cast<float>(n) * (1.0f + h[ix(j)]));
  }
}

TEST_CASE("a while_ whose condition and body destroy tensor objects declared outside them") {
  auto k = tile::kernel("grow_while", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    std::vector<tl::tensor> seen{tl::full<float>({16}, 1.0f)};
    std::optional<tl::tensor> c = tl::full<float>({16}, 2.0f);
    auto acc = tl::zeros<float>({16});
    auto total = tl::zeros<float>({16});
    auto i = tl::constant<std::int32_t>(0);
    tl::while_([&] {
      grow(seen, acc);  // the condition destroys an outer object (and assigns none)
      return i < n;
    }, [&] {
      CHECK_FALSE(seen.front().defined());  // made in the condition: its own
      grow(tiles, acc + 1.0f);
      acc = tiles.back() + tiles.front();
      *c = *c * 3.0f;  // reassigned, then destroyed: not carried, every iteration reads 2
      total = total + *c;
      c.reset();
      i = i + 1;
    });
    CHECK_FALSE(c.has_value());
    CHECK_FALSE(tiles.front().defined());
    tl::store(out + offs, acc);
    tl::store(out + 16 + offs, total);
    tl::store(out + 32, tl::cast<float>(i));
  });
  auto d = lt2::dev();
  const auto h = input();
  auto x = d.upload(h);
  for (int n : {0, 1, 4}) {
    CAPTURE(n);
    auto out = d.alloc<float>(33);
    k[{1}](x, out, n);
    auto r = out.to_host();
    const auto fn = static_cast<float>(n);
    for (int j = 0; j < 16; ++j) {
      CHECK(r[ix(j)] == fn * (1.0f + h[ix(j)]));
      CHECK(r[ix(16 + j)] == 6.0f * fn);
    }
    CHECK(r[32] == fn);
  }
}

TEST_CASE("if_ branches that destroy tensor objects declared outside them, with and without else") {
  auto k = tile::kernel("grow_if", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 flag) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    auto a = tl::zeros<float>({16});
    auto b = tl::full<float>({16}, 10.0f);
    tl::if_(flag > 0, [&] {
      grow(tiles, a + 1.0f);
      a = tiles.back() + tiles.front();  // 1 + x
    }, [&] { a = a - 1.0f; });
    std::vector<tl::tensor> more{tl::full<float>({16}, 3.0f)};
    tl::if_(flag > 1, [&] {  // no else
      grow(more, b);
      b = b + more.front();  // 13
    });
    std::optional<tl::tensor> tmp = tl::full<float>({16}, 5.0f);
    tl::if_(flag > 2, [&] {
      *tmp = *tmp * 2.0f;  // assigned, then destroyed in the branch: the if_ assigns only b
      b = b + *tmp;
      tmp.reset();
    });
    CHECK_FALSE(tmp.has_value());
    auto r = tl::if_(flag > 3, [&] {  // branches that return a tile
      std::vector<tl::tensor> v{a};
      grow(v, b);
      return v.front() + v.back();
    }, [&] { return a; });
    tl::store(out + offs, a);
    tl::store(out + 16 + offs, b);
    tl::store(out + 32 + offs, r);
  });
  auto d = lt2::dev();
  const auto h = input();
  auto x = d.upload(h);
  for (int flag : {0, 1, 2, 3, 4}) {
    CAPTURE(flag);
    auto out = d.alloc<float>(48);
    k[{1}](x, out, flag);
    auto r = out.to_host();
    for (int j = 0; j < 16; ++j) {
      const float a = flag > 0 ? 1.0f + h[ix(j)] : -1.0f;
      const float b = flag > 2 ? 23.0f : flag > 1 ? 13.0f : 10.0f;
      CHECK(r[ix(j)] == a);
      CHECK(r[ix(16 + j)] == b);
      CHECK(r[ix(32 + j)] == (flag > 3 ? a + b : a));
    }
  }
}

TEST_CASE("objects destroyed in the innermost of nested bodies: for_range inside if_ inside while_") {
  auto k = tile::kernel("grow_nested", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};        // outer to all three
    std::optional<tl::tensor> g = tl::full<float>({16}, 2.0f);  // destroyed in the if_'s branch
    auto acc = tl::zeros<float>({16});
    auto i = tl::constant<std::int32_t>(0);
    tl::while_([&] { return i < n; }, [&] {
      std::vector<tl::tensor> mid{acc};  // made in the while_ body, outer to the if_ and the for_range
      tl::if_(i % 2 == 0, [&] {
        acc = acc + *g;
        g.reset();
        tl::for_range(0, 2, [&](tl::tensor) {
          grow(tiles, acc + 1.0f);
          grow(mid, acc);
          acc = tiles.back() + tiles.front() + mid.front();
        });
      }, [&] { acc = acc - 1.0f; });
      i = i + 1;
    });
    tl::store(out + offs, acc);
  });
  auto d = lt2::dev();
  const auto h = input();
  auto x = d.upload(h);
  for (int n : {0, 1, 2, 5}) {
    CAPTURE(n);
    auto out = d.alloc<float>(16);
    k[{1}](x, out, n);
    auto r = out.to_host();
    for (int j = 0; j < 16; ++j) {
      float a = 0.0f;
      for (int it = 0; it < n; ++it) {
        if (it % 2 == 0) {
          const float start = a;  // mid.front(): acc when the while_ iteration began
          a = a + 2.0f;
          for (int s = 0; s < 2; ++s) a = a + 1.0f + h[ix(j)] + start;
        } else {
          a = a - 1.0f;
        }
      }
      CHECK(r[ix(j)] == a);
    }
  }
}

TEST_CASE("a carried tile destroyed in the body, and a new object at its address") {
  auto k = tile::kernel("destroyed_carried", [](tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::optional<tl::tensor> c = tl::full<float>({16}, 2.0f);
    std::optional<tl::tensor> t = tl::full<float>({16}, 3.0f);
    const tl::tensor* t_at = &*t;
    auto total = tl::zeros<float>({16});
    auto acc = tl::full<float>({16}, 1.0f);
    tl::for_range(0, n, [&](tl::tensor) {
      *c = *c * 3.0f;  // reassigned, which would carry it,
      total = total + *c;
      c.reset();  // but destroyed: each iteration starts from its value before the loop
      acc = acc + *t;
      t.reset();
      t.emplace(acc * 2.0f);  // a new object where the old one was: the body's own, not carried
      CHECK(&*t == t_at);
    });
    CHECK_FALSE(c.has_value());
    tl::store(out + offs, total);
    tl::store(out + 16 + offs, acc);
  });
  auto d = lt2::dev();
  for (int n : {0, 1, 3}) {
    CAPTURE(n);
    auto out = d.alloc<float>(32);
    k[{1}](out, n);
    auto r = out.to_host();
    for (int j = 0; j < 16; ++j) {
      CHECK(r[ix(j)] == 6.0f * static_cast<float>(n));
      CHECK(r[ix(16 + j)] == 1.0f + 3.0f * static_cast<float>(n));
    }
  }
}

TEST_CASE("moves in a body: a moved-to object is new, an outer object moved into a body-local vector dies there") {
  auto k = tile::kernel("moves", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    auto a = tl::full<float>({16}, 1.0f);
    auto b = tl::full<float>({16}, 2.0f);
    std::vector<tl::tensor> tiles{tl::load(x + offs), tl::full<float>({16}, 4.0f)};
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      tl::tensor m = std::move(a);  // a new object, local to the body; `a` keeps its value
      m = m + 1.0f;
      tl::tensor c = b + 1.0f;
      b = std::move(c);  // assigning to an outer object, by move too, reassigns it: carried
      auto local = std::move(tiles);  // the element objects now belong to `local`, and die with it
      local[0] = local[0] + 10.0f;    // reassigned, then destroyed: not carried
      acc = acc + local[0] + local[1] + m;
    });
    CHECK(tiles.empty());
    tl::store(out + offs, a);
    tl::store(out + 16 + offs, b);
    tl::store(out + 32 + offs, acc);
  });
  auto d = lt2::dev();
  const auto h = input();
  auto x = d.upload(h);
  for (int n : {0, 2, 3}) {
    CAPTURE(n);
    auto out = d.alloc<float>(48);
    k[{1}](x, out, n);
    auto r = out.to_host();
    const auto fn = static_cast<float>(n);
    for (int j = 0; j < 16; ++j) {
      CHECK(r[ix(j)] == 1.0f);
      CHECK(r[ix(16 + j)] == 2.0f + fn);
      CHECK(r[ix(32 + j)] == fn * (h[ix(j)] + 10.0f + 4.0f + 2.0f));
    }
  }
}

namespace {
/// Launching `k` (x, out, 3) fails with "use of a tensor that was never assigned" at line `used`.
template <class K>
void check_unassigned_use(K& k, const int& used) {
  auto d = lt2::dev();
  auto x = d.upload(input());
  auto out = d.alloc<float>(16);
  bool thrown = false;
  try {
    k[{1}](x, out, 3);
  } catch (const tile::error& e) {
    thrown = true;
    INFO("what(): " << e.what());
    CHECK(lt2::contains(e.message(), "use of a tensor that was never assigned"));
    CHECK(e.where().line == static_cast<std::uint32_t>(used));
  }
  CHECK(thrown);
}
}  // namespace

TEST_CASE("a tile a loop body made, used after the loop, is reported at the use") {
  int used = 0;
  auto k = tile::kernel("grow_use_after", [&used](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      grow(tiles, acc);
      acc = acc + tiles.front();
    });
    used = __LINE__; tl::store(out + offs, tiles.front());
  });
  check_unassigned_use(k, used);
}

TEST_CASE("a tile an if_ branch made, used after the if_, is reported at the use") {
  // the branch's value is defined inside the branch: after the if_ the object holds nothing
  int used = 0;
  auto k = tile::kernel("branch_use_after", [&used](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    tl::if_(n > 0, [&] { grow(tiles, tiles.front()); });
    used = __LINE__; tl::store(out + offs, tiles.back());
  });
  check_unassigned_use(k, used);
}

TEST_CASE("a carried tile that changes type is reported at its assignment in bodies that destroy objects") {
  int for_line = 0, for_assigned = 0;
  auto in_for = tile::kernel("grow_type_for", [&](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    auto acc = tl::zeros<float>({16});
    for_line = __LINE__; tl::for_range(0, n, [&](tl::tensor) {
      grow(tiles, acc);
      for_assigned = __LINE__; acc = tl::cast<std::int32_t>(tiles.front());
    });
    tl::store(out + offs, acc);
  });
  int nested_line = 0, nested_assigned = 0;
  auto nested = tile::kernel("grow_type_nested", [&](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    auto acc = tl::zeros<float>({16});
    auto i = tl::constant<std::int32_t>(0);
    tl::while_([&] { return i < n; }, [&] {
      std::vector<tl::tensor> mid{acc};
      tl::if_(i > 0, [&] {
        nested_line = __LINE__; tl::for_range(0, n, [&](tl::tensor) {
          grow(tiles, acc);
          grow(mid, acc);
          nested_assigned = __LINE__; acc = tl::zeros<float>({32});
        });
      });
      i = i + 1;
    });
    tl::store(out + offs, acc);
  });
  auto d = lt2::dev();
  const auto h = input();
  auto xbuf = d.upload(h);
  auto obuf = d.alloc<float>(16);
  auto expect = [&](auto& k, const char* words, const int& line, const int& assigned) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // a failed trace is not cached: the same error again
      CAPTURE(attempt);
      bool thrown = false;
      try {
        k[{1}](xbuf, obuf, 3);
      } catch (const tile::error& e) {
        thrown = true;
        INFO("what(): " << e.what());
        CHECK(lt2::contains(e.message(), words));
        CHECK(lt2::contains(e.message(), "tl::for_range at test_control_lifetime.cpp:" + std::to_string(line)));
        CHECK(lt2::contains(e.message(), "created on this line"));
        CHECK(e.where().line == static_cast<std::uint32_t>(assigned));
        CHECK(e.kernel() == k.name());
      }
      CHECK(thrown);
    }
  };
  expect(in_for, "changes type from f32[16] to i32[16]", for_line, for_assigned);
  expect(nested, "changes type from f32[16] to f32[32]", nested_line, nested_assigned);

  // After the errors, kernels that destroy objects in their bodies still trace and run.
  auto ok = tile::kernel("grow_after_errors", [](tl::ptr<float> x, tl::ptr<float> out, tl::i32 n) {
    auto offs = tl::arange(0, 16);
    std::vector<tl::tensor> tiles{tl::load(x + offs)};
    auto acc = tl::zeros<float>({16});
    tl::for_range(0, n, [&](tl::tensor) {
      grow(tiles, acc + 1.0f);
      acc = tiles.back() + tiles.front();
    });
    tl::store(out + offs, acc);
  });
  ok[{1}](xbuf, obuf, 2);
  auto r = obuf.to_host();
  for (int j = 0; j < 16; ++j) CHECK(r[ix(j)] == 2.0f * (1.0f + h[ix(j)]));
}

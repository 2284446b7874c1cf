// test/layout/test_layout.cpp — the layout algebra on its own (src/layout/linear_layout.hpp):
// which thread and register own element (i, j), slicing, broadcasting, reshaping, register maps.
#include <doctest/doctest.h>

#include <array>
#include <map>
#include <set>

#include "support/linear_layout.hpp"
#include "targets/nvptx/nvptx_mma_layouts.hpp"

using namespace tile::layout;
using tile::targets::nvptx::mma_v2;
using tile::targets::nvptx::mma_v2_operand;
using tile::targets::nvptx::mma_warps;

namespace {

/// Every element of `l` held by exactly one writer thread (one whose replicated bits are 0), and
/// every (register, lane, warp) holding an element of the tile.
void check_cover(const LinearLayout& l) {
  std::map<Coords, int> writers;
  for (std::int64_t w = 0; w < l.num_warps(); ++w)
    for (std::int64_t ln = 0; ln < l.num_lanes(); ++ln)
      for (std::int64_t r = 0; r < l.num_regs(); ++r) {
        const Coords c = l.coords(r, ln, w);
        for (std::size_t d = 0; d < c.size(); ++d) REQUIRE(c[d] < l.shape[d]);
        if ((ln & l.lane_dup_mask()) == 0 && (w & l.warp_dup_mask()) == 0) ++writers[c];
      }
  CHECK(static_cast<std::int64_t>(writers.size()) == l.numel());
  for (auto& [c, n] : writers) CHECK(n == 1);
}

}  // namespace

TEST_CASE("blocked layout: element (i, j) lives where Triton's BlockedEncoding puts it") {
  // 64 x 64, 4 elements per thread along j, 16 x 2 lanes, 4 x 1 warps, order [1, 0]
  LinearLayout l = blocked({64, 64}, {1, 4}, {2, 16}, {4, 1}, {1, 0});
  CHECK(l.num_regs() == 32);  // 4 elements along j x 8 repetitions of the 8-row CTA tile
  // thread t = warp * 32 + lane; lane = i_l * 16 + j_l; element (i, j):
  //   j = j_l * 4 + r % 4, i = warp * 2 + i_l + 8 * (r / 4)
  for (std::int64_t w = 0; w < 4; ++w)
    for (std::int64_t ln = 0; ln < 32; ++ln)
      for (std::int64_t r = 0; r < l.num_regs(); ++r) {
        const Coords c = l.coords(r, ln, w);
        CHECK(c[1] == (ln % 16) * 4 + r % 4);
        CHECK(c[0] == w * 2 + ln / 16 + 8 * (r / 4));
      }
  check_cover(l);
  CHECK(l.is_injective());
  // owners of one element: exactly one (register, lane, warp)
  auto o = l.owners({9, 5});
  REQUIRE(o.size() == 1);
  CHECK(o[0] == std::array<std::int64_t, 3>{1 + 4 * 1, 16 + 1, 0});
}

TEST_CASE("default_blocked: 16-byte vectors, then lanes, then warps; small tiles replicate") {
  LinearLayout v = default_blocked({1024}, 4, 4);
  CHECK(v.reg == std::vector<Coords>{{1}, {2}, {512}});
  CHECK(v.lane == std::vector<Coords>{{4}, {8}, {16}, {32}, {64}});
  CHECK(v.warp == std::vector<Coords>{{128}, {256}});
  check_cover(v);
  // 256 elements on 128 threads: 2 per thread so every thread holds distinct elements
  LinearLayout s = default_blocked({256}, 4, 8);
  CHECK(s.reg == std::vector<Coords>{{1}});
  CHECK(s.lane_dup_mask() == 0);
  CHECK(s.warp_dup_mask() == 0);
  // 16 elements on 128 threads: lanes 4.. and every warp hold copies
  LinearLayout t = default_blocked({16}, 4, 4);
  CHECK(t.num_regs() == 1);
  CHECK(t.lane_dup_mask() == 0b10000u);  // 16 lanes cover the tile (1 each), the upper 16 copy them
  CHECK(t.warp_dup_mask() == 0b11u);
  check_cover(t);
  // 2-D: rows spread over warps
  LinearLayout m = default_blocked({64, 32}, 4, 4);
  check_cover(m);
  CHECK(m.coords(0, 1, 0) == Coords{0, 4});
  CHECK(m.coords(0, 8, 0) == Coords{1, 0});
}

TEST_CASE("slice, expand_dims, broadcast: a reduce's result broadcasts back without moving data") {
  LinearLayout p = default_blocked({32, 128}, 4, 4);
  LinearLayout row = slice(p, 1);  // max over j: one value per row
  CHECK(row.shape == std::vector<std::int64_t>{32});
  // lanes that held other columns of a row now hold copies of that row's value
  CHECK(row.lane_dup_mask() != 0);
  LinearLayout e = expand_dims(row, 1);
  CHECK(e.shape == std::vector<std::int64_t>{32, 1});
  // the layout broadcast wants for its operand is exactly that
  CHECK(broadcast_source(p, {32, 1}) == e);
  // and every register of p finds its row's value in its own thread
  for (int r = 0; r < p.num_regs(); ++r) {
    Coords c = p.coords(r, 0, 0);
    c[1] = 0;
    CHECK(register_of(e, c).has_value());
  }
}

TEST_CASE("register_map: same threads -> register permutation; other threads -> none") {
  LinearLayout a = blocked({8, 8}, {2, 2}, {4, 8}, {1, 1}, {1, 0});
  LinearLayout b = a;
  std::swap(b.reg[0], b.reg[1]);  // same elements per thread, registers renumbered
  auto m = register_map(a, b);
  REQUIRE(m);
  for (int r = 0; r < b.num_regs(); ++r) CHECK(a.coords((*m)[static_cast<std::size_t>(r)], 0, 0) == b.coords(r, 0, 0));
  LinearLayout c = blocked({8, 8}, {2, 2}, {8, 4}, {1, 1}, {0, 1});  // lanes along i first
  CHECK_FALSE(register_map(a, c).has_value());
  CHECK(register_map(a, a).has_value());
}

TEST_CASE("reshape, permute, join and split keep each element in its thread") {
  LinearLayout l = default_blocked({16, 64}, 4, 4);
  LinearLayout flat = reshape(l, {1024});
  for (int r = 0; r < l.num_regs(); ++r)
    for (std::int64_t ln : {0, 5, 31})
      CHECK(flat.coords(r, ln, 1)[0] == l.flat(l.coords(r, ln, 1)));
  LinearLayout t = permute(l, {1, 0});
  CHECK(t.shape == std::vector<std::int64_t>{64, 16});
  CHECK(t.coords(3, 7, 2) == Coords{l.coords(3, 7, 2)[1], l.coords(3, 7, 2)[0]});
  LinearLayout j = join(l);
  CHECK(j.shape == std::vector<std::int64_t>{16, 64, 2});
  CHECK(j.coords(1, 0, 0) == Coords{0, 0, 1});
  auto s = split(j);
  REQUIRE(s);
  CHECK(*s == l);
  CHECK_FALSE(split(default_blocked({16, 2}, 4, 1)).has_value());  // lanes along the last axis
  check_cover(j);
}

TEST_CASE("layouts print for dumps") {
  CHECK(default_blocked({8}, 1, 4).str() == "#linear<8 reg=[] lane=[(1) (2) (4) (0) (0)] warp=[]>");
  CHECK(scalar_layout(2).str() == "#linear<scalar reg=[] lane=[() () () () ()] warp=[()]>");
}

TEST_CASE("mma.sync: the accumulator and operand layouts hold PTX's fragments (m16n8k16, m16n8k8 tf32, m16n8k32 8-bit)") {
  // PTX ISA, "Matrix Fragments for mma.m16n8k{8,16,32}": with g = lane / 4, t = lane % 4 and
  // kw elements per 32-bit register (2: f16/bf16 k16; 1: tf32 k8; 4: 8-bit k32), kh = 4 kw:
  //   C/D c0..c3:         (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1)
  //   A word j = 0..3:    row g + 8 (j & 1), k = kw t + kh (j >> 1) + e, e < kw
  //   B word j = 0..1:    k = kw t + kh j + e, column g
  // for the fragment at (r0, c0) of warp w, whose own offsets come from the warp bases.
  for (int kw : {2, 1, 4})
    for (auto [M, N, K, W] : {std::array<int, 4>{16, 8, 32, 1}, {64, 64, 32, 4}, {128, 128, 64, 8}, {16, 16, 32, 4},
                              {128, 32, 32, 4}, {32, 256, 32, 8}}) {
      INFO("kw=" << kw << " M=" << M << " N=" << N << " K=" << K << " warps=" << W);
      const auto w = mma_warps(M, N, W);
      CHECK(w[0] * w[1] <= W);
      CHECK(16 * w[0] <= M);
      CHECK(8 * w[1] <= N);
      const LinearLayout c = mma_v2(M, N, w, W), a = mma_v2_operand(0, M, K, w, W, kw),
                         b = mma_v2_operand(1, K, N, w, W, kw);
      CHECK(c.is_injective());
      CHECK(a.is_injective());
      CHECK(b.is_injective());
      CHECK(c.num_warps() == W);
      CHECK(c.numel() == std::int64_t{M} * N);
      const std::int64_t kh = 4 * kw;
      for (std::int64_t warp = 0; warp < W; ++warp) {
        // the warp's offset: where its register 0 of lane 0 sits
        const Coords wc = c.coords(0, 0, warp), wa = a.coords(0, 0, warp), wb = b.coords(0, 0, warp);
        CHECK(wa[0] == wc[0]);  // A's rows follow the accumulator's warp along M
        CHECK(wb[1] == wc[1]);  // B's columns follow it along N
        for (std::int64_t lane = 0; lane < 32; ++lane) {
          const std::int64_t g = lane / 4, t = lane % 4;
          for (std::int64_t r0 = 0; r0 < M; r0 += 16 * w[0])
            for (std::int64_t c0 = 0; c0 < N; c0 += 8 * w[1]) {
              const std::int64_t want_c[4][2] = {{g, 2 * t}, {g, 2 * t + 1}, {g + 8, 2 * t}, {g + 8, 2 * t + 1}};
              for (int j = 0; j < 4; ++j) {
                auto reg = register_of(c, {r0 + want_c[j][0] - g, c0 + want_c[j][1] - 2 * t});
                REQUIRE(reg);
                CHECK(c.coords(*reg, lane, warp) == Coords{wc[0] + r0 + want_c[j][0], wc[1] + c0 + want_c[j][1]});
              }
              for (std::int64_t k0 = 0; k0 < K; k0 += 8 * kw)
                for (std::int64_t e = 0; e < kw; ++e) {
                  for (int j = 0; j < 4; ++j) {
                    const std::int64_t row = g + 8 * (j & 1), k = kw * t + kh * (j >> 1) + e;
                    auto reg = register_of(a, {r0 + row - g, k0 + k - kw * t});
                    REQUIRE(reg);
                    CHECK(a.coords(*reg, lane, warp) == Coords{wa[0] + r0 + row, k0 + k});
                  }
                  for (int j = 0; j < 2; ++j) {
                    const std::int64_t k = kw * t + kh * j + e;
                    auto reg = register_of(b, {k0 + k - kw * t, c0});
                    REQUIRE(reg);
                    CHECK(b.coords(*reg, lane, warp) == Coords{k0 + k, wb[1] + c0 + g});
                  }
                }
            }
        }
      }
    }
}

// src/support/linear_layout.hpp — layer: support. How a tile is spread over the threads of a CTA.
//
// A layout is a linear map over GF(2) (bits combine with XOR) from a hardware index — a
// register number r, a lane l (0..31) and a warp w — to the coordinates of the element that
// register holds (Triton's linear layouts; blocked, sliced and broadcast layouts are special
// cases). It is given by one basis vector per bit of r, l and w:
//     coords(r, l, w) = XOR of reg[i] for the set bits i of r, lane[j] for l's, warp[k] for w's.
// Tile extents are powers of two, so coordinates are bit fields and every op that moves elements
// without changing them (expand_dims, broadcast, reshape, permute, join, split, reduce's result)
// is a change of basis:
//   - a zero lane or warp basis means those threads hold the same elements (replication): only
//     the thread whose such bits are 0 writes memory;
//   - two layouts with equal lane and warp bases differ only in register numbering, so converting
//     between them moves no data between threads (register_map); otherwise the conversion goes
//     through shared memory.
// Layouts are plain values with an algebra testable on its own (test/layout). It depends on
// nothing else, so the IR's GPU level (ir::Type::layout) carries layouts and its verifier checks
// them with this algebra; the layout layer (src/layout) decides them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile::layout {

using Coords = std::vector<std::int64_t>;

struct LinearLayout {
  std::vector<std::int64_t> shape;  // the tile's extents (powers of two); empty: a scalar
  std::vector<Coords> reg, lane, warp;

  int rank() const { return static_cast<int>(shape.size()); }
  int num_regs() const { return 1 << reg.size(); }
  int num_lanes() const { return 1 << lane.size(); }
  int num_warps() const { return 1 << warp.size(); }
  std::int64_t numel() const;

  /// The element register r of lane l of warp w holds.
  Coords coords(std::int64_t r, std::int64_t l, std::int64_t w) const;
  /// The row-major flat index of coords (c).
  std::int64_t flat(const Coords& c) const;
  /// Lane bits / warp bits whose basis is zero (threads holding copies of the same elements).
  std::uint32_t lane_dup_mask() const;
  std::uint32_t warp_dup_mask() const;
  /// Does every element have exactly one (register, lane, warp) owner among threads whose
  /// dup bits are zero? (True for every layout this module builds.)
  bool is_injective() const;
  /// Which (r, l, w) hold element c: every owner, replicated copies included.
  std::vector<std::array<std::int64_t, 3>> owners(const Coords& c) const;

  bool operator==(const LinearLayout&) const = default;
  /// "#blocked<shape=[64,64] reg=[0,1],[0,2],[32,0] lane=… warp=…>" for dumps and messages.
  std::string str() const;
};

/// A blocked layout (Triton's BlockedEncoding): each thread holds size_per_thread consecutive
/// elements per axis, threads_per_warp and warps_per_cta threads tile the CTA's block, and the
/// block repeats over the tile (more registers) or wraps (replication) to fit `shape`.
/// `order` lists axes fastest first. Extents of the vectors are powers of two; threads_per_warp
/// multiplies to 32.
LinearLayout blocked(const std::vector<std::int64_t>& shape, const std::vector<int>& size_per_thread,
                     const std::vector<int>& threads_per_warp, const std::vector<int>& warps_per_cta,
                     const std::vector<int>& order);

/// The blocked layout tile uses for a tile of `shape` held by `num_warps` warps: `vec`
/// consecutive elements per thread along order[0] (16 bytes / element size, so accesses can be
/// 128 bits wide), then lanes and warps spread fastest-axis first.
/// `lanes`: threads a warp (the target's; 32 on NVIDIA, 64 for a CDNA wavefront).
LinearLayout default_blocked(const std::vector<std::int64_t>& shape, int num_warps, int vec,
                             const std::vector<int>& order = {}, int lanes = 32);

/// The layout of a rank-0 value (every thread holds it).
LinearLayout scalar_layout(int num_warps, int lanes = 32);

/// Remove `axis` (reduce's result): elements that differed only along it become one; duplicate
/// registers are dropped, lanes and warps that held different positions along it now hold copies.
LinearLayout slice(const LinearLayout& l, int axis);
/// Insert an extent-1 axis at `axis` (expand_dims).
LinearLayout expand_dims(const LinearLayout& l, int axis);
/// The layout a broadcast's operand (extent 1 on the stretched axes, `src_shape`) must have
/// for broadcasting to `result` to stay in registers.
LinearLayout broadcast_source(const LinearLayout& result, const std::vector<std::int64_t>& src_shape);
/// Axes reordered: result axis i = input axis perm[i].
LinearLayout permute(const LinearLayout& l, const std::vector<std::int64_t>& perm);
/// The same elements in row-major order under another shape of equal numel (reshape).
LinearLayout reshape(const LinearLayout& l, const std::vector<std::int64_t>& shape);
/// join(a, b)'s result from the operands' layout `l`: a new last axis of extent 2 held in a new
/// register bit 0 (registers alternate a, b: row-major order).
LinearLayout join(const LinearLayout& l);
/// split's results from an operand layout whose last axis (extent 2) is one register basis;
/// nullopt when the last axis is spread over lanes or warps.
std::optional<LinearLayout> split(const LinearLayout& l);

/// When `from` and `to` (same shape) put every element `to` holds in the same thread as `from`
/// does: for each register of `to`, the register of `from` holding that element. Else nullopt
/// (the conversion moves data between threads: shared memory).
std::optional<std::vector<int>> register_map(const LinearLayout& from, const LinearLayout& to);
/// The register of `l` whose register-basis part is the element `c` (lane 0, warp 0), if any.
std::optional<int> register_of(const LinearLayout& l, const Coords& c);
/// How many leading registers of `l` are consecutive elements along one axis, and that axis
/// ({1, 0} when none are): the width of a thread's vector accesses before axis info limits it.
std::pair<int, int> register_run(const LinearLayout& l);

}  // namespace tile::layout

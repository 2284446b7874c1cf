// tile/tl/descriptor.hpp — layer: language (public). Tensor descriptors (Triton's
// tl.make_tensor_descriptor): a tensor in global memory named by its base pointer, shape and
// strides, read and written a block at a time by block coordinates. What is outside the shape
// reads as zero and is not written, so edge blocks need no masks. On sm_90a the NVIDIA backend
// turns the loads of a pipelined K loop into Tensor Memory Accelerator copies
// (cp.async.bulk.tensor, one per block, completing on an mbarrier); every other backend, and
// every other load, runs the equivalent masked load.
//
//   auto a_desc = tl::make_tensor_descriptor(a, {M, K}, {stride_am, 1}, {BM, BK});
//   auto av = a_desc.load({pid_m * BM, k * BK});  // [BM, BK], zeros past M and K
//
// TMA needs the base and every extent and stride to be kernel arguments or literals, the last
// stride 1, f16/bf16 elements and 16-byte aligned rows (the launch's specialization says so).
#pragma once

#include <initializer_list>
#include <vector>

#include "tile/tl/types.hpp"

namespace tl {

class tensor_descriptor {
 public:
  /// The block at element coordinates `offsets` (one per axis): block_shape() elements,
  /// element (i, j, …) = base[Σ (offsets[d] + i_d) · strides[d]], zero outside the shape.
  tensor load(std::initializer_list<operand> offsets, std::source_location l = std::source_location::current()) const {
    const std::vector<tile::detail::operand_data> o = data(offsets);
    return tensor(tile::detail::desc_load(base_, shape_, strides_, o, block_, l));
  }
  /// Stores `value` (block_shape(), the pointee's dtype) at `offsets`; elements outside the
  /// shape are not written.
  void store(std::initializer_list<operand> offsets, const operand& value,
             std::source_location l = std::source_location::current()) const {
    const std::vector<tile::detail::operand_data> o = data(offsets);
    tile::detail::desc_store(base_, shape_, strides_, o, block_, value.d, l);
  }
  const shape_t& block_shape() const { return block_; }
  int rank() const { return static_cast<int>(block_.size()); }

 private:
  friend tensor_descriptor make_tensor_descriptor(const operand&, std::initializer_list<operand>, std::initializer_list<operand>,
                                                  shape_t, std::source_location);
  static std::vector<tile::detail::operand_data> data(std::initializer_list<operand> xs) {
    std::vector<tile::detail::operand_data> out;
    for (const auto& x : xs) out.push_back(x.d);
    return out;
  }
  tile::detail::operand_data base_;
  std::vector<tile::detail::operand_data> shape_, strides_;
  shape_t block_;
};

/// A descriptor of the tensor at `base` with `shape` and `strides` (elements, one per axis),
/// read in blocks of `block_shape`. Ranks 1 to 5; checked when it is first loaded or stored.
inline tensor_descriptor make_tensor_descriptor(const operand& base, std::initializer_list<operand> shape,
                                                std::initializer_list<operand> strides, shape_t block_shape,
                                                std::source_location l = std::source_location::current()) {
  tensor_descriptor d;
  d.base_ = base.d;
  d.shape_ = tensor_descriptor::data(shape);
  d.strides_ = tensor_descriptor::data(strides);
  d.block_ = std::move(block_shape);
  tile::detail::desc_check(d.base_, d.shape_, d.strides_, d.block_, l);
  return d;
}

}  // namespace tl

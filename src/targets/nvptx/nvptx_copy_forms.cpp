// src/targets/nvptx/nvptx_copy_forms.cpp — layer: targets (nvptx). See nvptx_copy_forms.hpp.
#include "targets/nvptx/nvptx_copy_forms.hpp"

#include <algorithm>

namespace tile::targets::nvptx {

bool NvptxCopyForms::tensor_copy_box(std::int64_t rows, std::int64_t row_bytes) const {
  if (!tma_ || rows > 256 || rows % 8 != 0) return false;
  return row_bytes == 32 || row_bytes == 64 || (row_bytes % 128 == 0 && row_bytes / 128 <= 8);
}

std::int64_t NvptxCopyForms::box_cols(std::int64_t cols, std::int64_t elem_bytes) const {
  return std::min<std::int64_t>(128, cols * elem_bytes) / elem_bytes;  // one swizzle span
}

const NvptxCopyForms* copy_forms(int sm, bool accel) {
  static const NvptxCopyForms cp_async("nvptx-sm_80", false), tma("nvptx-sm_90a", true);
  if (sm < 80) return nullptr;
  return sm >= 90 && accel ? &tma : &cp_async;
}

}  // namespace tile::targets::nvptx

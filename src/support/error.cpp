// src/support/error.cpp — layer: support. tile::error's message format.
#include "tile/core/error.hpp"

#include <string>

namespace tile {
namespace {
std::string format(const std::string& message, const src_loc& where, const std::string& kernel) {
  std::string s;
  if (where.known()) s += std::string(where.file) + ":" + std::to_string(where.line) + ": ";
  s += "error: ";
  if (!kernel.empty()) s += "kernel '" + kernel + "': ";
  s += message;
  return s;
}
}  // namespace

error::error(std::string message, src_loc where, std::string kernel)
    : std::runtime_error(format(message, where, kernel)),
      message_(std::move(message)),
      kernel_(std::move(kernel)),
      where_(where) {}

}  // namespace tile

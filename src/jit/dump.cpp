// src/jit/dump.cpp — layer: jit. See dump.hpp.
#include "jit/dump.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "support/env.hpp"

namespace tile::jit {

std::string dump_dir() { return env::get("TILE_DUMP_DIR"); }

void dump_artifact(const std::string& kernel, const std::string& digest, std::string_view ext, std::string_view text) {
  const std::string dir = dump_dir();
  if (dir.empty()) return;
  std::string stem;
  for (char c : kernel) stem += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  const std::string path = dir + "/" + stem + "-" + digest.substr(0, 16) + "." + std::string(ext);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream f(path, std::ios::binary);
  if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!f) std::cerr << "tile: warning: cannot write " << path << "\n";
}

}  // namespace tile::jit

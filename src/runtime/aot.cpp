// src/runtime/aot.cpp — layer: runtime. The public side of the catalog of prebuilt kernels
// (<tile/runtime/aot.hpp>; the catalog itself: src/aot/catalog.hpp).
#include <fstream>
#include <sstream>

#include "aot/catalog.hpp"
#include "tile/runtime/aot.hpp"

namespace tile::aot {

void load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw tile::error("tile::aot::load: cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw tile::error("tile::aot::load: cannot read " + path);
  auto parsed = parse(ss.str());
  if (auto* why = std::get_if<std::string>(&parsed))
    throw tile::error("tile::aot::load: " + path + " is refused: " + *why);
  auto& a = std::get<archive>(parsed);
  for (const entry& e : a.entries)
    if (e.code.kind == "cpu")
      throw tile::error("tile::aot::load: " + path + " is refused: it lists CPU kernels, whose code must be linked");
  a.origin = path;
  add(std::move(a));
}

std::string catalog() { return describe(); }

}  // namespace tile::aot

// test/ir/ir_roundtrip.cpp — reads each .tir file named on the command line (TILE_DUMP_DIR's
// printed IR, with locations), parses it (ir::parse), verifies it and prints it again: the text
// must come back byte for byte. Prints one line a file that does not, with the first line that
// differs, and a count; exit status 1 if any did not (2: no file given).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "ir/ir.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ir_roundtrip FILE.tir...\n");
    return 2;
  }
  int bad = 0, good = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    try {
      auto f = tile::ir::parse(text, argv[i]);
      tile::ir::verify(*f, "parse");
      const std::string again = tile::ir::print(*f, true);
      if (again == text) {
        ++good;
        continue;
      }
      std::istringstream a(text), b(again);
      std::string la, lb;
      int line = 0;
      while (true) {
        ++line;
        const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
        if (!ga && !gb) break;
        if (la != lb || ga != gb) break;
      }
      std::printf("%s:%d: printed again differs:\n  file:  %s\n  again: %s\n", argv[i], line, la.c_str(), lb.c_str());
      ++bad;
    } catch (const std::exception& e) {
      std::printf("%s: %s\n", argv[i], e.what());
      ++bad;
    }
  }
  std::printf("ir_roundtrip: %d of %d files read back and printed identically\n", good, good + bad);
  return bad ? 1 : 0;
}

// src/support/build_id.cpp — layer: support. See build_id.hpp.
#include "support/build_id.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#ifndef TILE_VERSION
#define TILE_VERSION "dev"
#endif

namespace tile::support {

const std::string& build_id() {
  static const std::string id = [] {
    std::string s = TILE_VERSION;
    Dl_info info{};
    struct stat st {};
    if (dladdr(reinterpret_cast<void*>(&build_id), &info) != 0 && info.dli_fname && stat(info.dli_fname, &st) == 0)
      s += "+" + std::to_string(static_cast<long long>(st.st_size)) + "." +
           std::to_string(static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec);
    return s;
  }();
  return id;
}

}  // namespace tile::support

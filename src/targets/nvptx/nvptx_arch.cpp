// src/targets/nvptx/nvptx_arch.cpp — layer: targets (nvptx). See nvptx_arch.hpp.
#include "targets/nvptx/nvptx_arch.hpp"

#include <cctype>

#include "tile/core/error.hpp"

namespace tile::targets::nvptx {

namespace {
constexpr int kSupported[] = {80, 86, 89, 90};
constexpr const char* kList = "sm_80, sm_86, sm_89, sm_90, sm_90a";
}  // namespace

std::string arch::name() const { return "sm_" + std::to_string(sm) + (accel ? "a" : ""); }

int arch::ptx_version() const { return accel ? 80 : 78; }

arch parse_arch(std::string_view s) {
  std::string t(s);
  if (t.rfind("sm_", 0) == 0) t = t.substr(3);
  else if (t.rfind("sm", 0) == 0) t = t.substr(2);
  arch a;
  a.accel = !t.empty() && (t.back() == 'a' || t.back() == 'A');
  if (a.accel) t.pop_back();
  bool digits = !t.empty() && t.size() <= 3;
  for (char c : t) digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
  if (digits) a.sm = std::stoi(t);
  bool ok = false;
  for (int k : kSupported) ok |= digits && a.sm == k;
  if (a.accel && a.sm != 90) ok = false;
  if (!ok) throw tile::error("unknown NVIDIA target '" + std::string(s) + "': supported are " + kList);
  return a;
}

arch arch_for_device(int cc_major, int cc_minor) {
  arch a;
  const int cc = cc_major * 10 + cc_minor;
  a.sm = cc >= 90 ? 90 : cc >= 89 ? 89 : cc >= 86 ? 86 : 80;
  a.accel = cc == 90;
  return a;
}

}  // namespace tile::targets::nvptx

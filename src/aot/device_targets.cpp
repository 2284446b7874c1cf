// src/aot/device_targets.cpp — layer: aot. See device_targets.hpp.
#include "aot/device_targets.hpp"

namespace tile::aot {

namespace {
const char* const kNvidia[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
}

std::vector<std::string> cuda_targets(int major, int minor) {
  const int cc = major * 10 + minor;
  std::vector<std::string> out;
  if (cc == 90) out.push_back("sm_90a");
  out.push_back("sm_" + std::to_string(cc));
  for (int m = minor - 1; m >= 0; --m) out.push_back("sm_" + std::to_string(major * 10 + m));
  // PTX: the newest arch not newer than the device first (sm_90a's only on 9.0 itself)
  for (int i = static_cast<int>(std::size(kNvidia)) - 1; i >= 0; --i) {
    const std::string a = kNvidia[i];
    const int sm = std::stoi(a.substr(3, 2));
    if (sm > cc || (a == "sm_90a" && cc != 90)) continue;
    out.push_back("ptx:" + a);
  }
  return out;
}

std::vector<std::string> cpu_targets() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) out.push_back("cpu-x86-64-v4");
  if (__builtin_cpu_supports("x86-64-v3")) out.push_back("cpu-x86-64-v3");
  if (__builtin_cpu_supports("x86-64-v2")) out.push_back("cpu-x86-64-v2");
  out.push_back("cpu-x86-64");
#endif
  return out;
}

std::string host_cpu_target() {
  const auto t = cpu_targets();
  return t.empty() ? "" : t.front();
}

bool known_target(const std::string& t) {
  for (const char* a : kNvidia)
    if (t == a) return true;
  return t == "cpu" || t == "cpu-x86-64" || t == "cpu-x86-64-v2" || t == "cpu-x86-64-v3" || t == "cpu-x86-64-v4";
}

std::string llvm_cpu_of(const std::string& t) {
  if (t.rfind("cpu-", 0) != 0) return "";
  return t.substr(4);
}

}  // namespace tile::aot

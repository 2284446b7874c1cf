// src/jit/artifact.cpp — layer: jit. See artifact.hpp.
#include "jit/artifact.hpp"

#include <charconv>
#include <cstdio>
#include <map>

namespace tile::jit {
namespace {

bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_.:<>,/+-").find(c) != std::string_view::npos;
}

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (plain(c)) {
      out += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out;
}

std::optional<std::string> unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return std::nullopt;
    const auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || end != s.data() + i + 3) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

template <class T>
bool number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t p = 0;
  for (;;) {
    const std::size_t q = s.find(sep, p);
    out.push_back(s.substr(p, q == std::string_view::npos ? std::string_view::npos : q - p));
    if (q == std::string_view::npos) return out;
    p = q + 1;
  }
}

/// "c<value>", "a<arg>", or a product "a<arg>*a<arg>…*c<scale>/<bits>" (the factors after the
/// first and the scale and width where they are not 1 and 64)
std::string source_text(const drivers::tensor_map_spec::source& s) {
  if (s.arg < 0) return "c" + std::to_string(s.value);
  std::string t = "a" + std::to_string(s.arg);
  for (int k : s.times) t += "*a" + std::to_string(k);
  if (s.scale != 1) t += "*c" + std::to_string(s.scale);
  if (s.bits != 64) t += "/" + std::to_string(s.bits);
  return t;
}

bool parse_source(std::string_view x, drivers::tensor_map_spec::source& s) {
  if (x.size() < 2 || (x[0] != 'a' && x[0] != 'c')) return false;
  if (x[0] == 'c') return number(x.substr(1), s.value);
  if (const std::size_t slash = x.find('/'); slash != std::string_view::npos) {
    if (!number(x.substr(slash + 1), s.bits) || (s.bits != 32 && s.bits != 64)) return false;
    x = x.substr(0, slash);
  }
  const auto f = split(x, '*');
  if (!number(f[0].substr(1), s.arg) || s.arg < 0) return false;
  for (std::size_t i = 1; i < f.size(); ++i) {
    if (f[i].size() < 2) return false;
    if (f[i][0] == 'a') {
      int k = -1;
      if (!number(f[i].substr(1), k) || k < 0) return false;
      s.times.push_back(k);
    } else if (f[i][0] == 'c' && i + 1 == f.size()) {
      if (!number(f[i].substr(1), s.scale)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool parse_map(std::string_view text, drivers::tensor_map_spec& t) {
  const auto f = split(text, ':');
  if (f.size() != 8) return false;
  int elem = 0;
  long long br = 0, bc = 0, sw = 0;
  if (!number(f[0], elem) || !parse_source(f[1], t.base) || !parse_source(f[2], t.rows) || !parse_source(f[3], t.cols) ||
      !parse_source(f[4], t.row_stride) || !number(f[5], br) || !number(f[6], bc) || !number(f[7], sw))
    return false;
  t.elem = static_cast<dtype>(elem);
  // only what the compiler writes (a damaged or foreign entry is compiled again)
  const bool ok = (t.elem == dtype::f16 || t.elem == dtype::bf16) && t.base.arg >= 0 && br >= 1 && br <= 256 && bc >= 1 &&
                  bc <= 256 && (sw == 32 || sw == 64 || sw == 128) && bc * 2 == sw;
  t.box_rows = static_cast<std::uint32_t>(br);
  t.box_cols = static_cast<std::uint32_t>(bc);
  t.swizzle_bytes = static_cast<std::uint32_t>(sw);
  return ok;
}

}  // namespace

std::string serialize(const artifact& a) {
  std::string h = "tile-artifact " + std::to_string(kArtifactVersion) + " kind=" + escape(a.kind) + " kernel=" + escape(a.kernel) +
                  " entry=" + escape(a.entry) + " arch=" + escape(a.arch) + " warps=" + std::to_string(a.num_warps) +
                  " shared=" + std::to_string(a.shared_bytes) + " params=";
  for (std::size_t i = 0; i < a.params.size(); ++i) h += (i ? "," : "") + escape(a.params[i]);
  h += " key=" + escape(a.key) + " expbatch=" + std::to_string(a.exp_batch) + " widest=" + std::to_string(a.widest_exp_batch);
  for (std::size_t i = 0; i < a.tensor_maps.size(); ++i) {
    const auto& t = a.tensor_maps[i];
    h += (i == 0 ? " tmaps=" : ";") + std::to_string(static_cast<int>(t.elem)) + ":" + source_text(t.base) + ":" +
         source_text(t.rows) + ":" + source_text(t.cols) + ":" + source_text(t.row_stride) + ":" + std::to_string(t.box_rows) +
         ":" + std::to_string(t.box_cols) + ":" + std::to_string(t.swizzle_bytes);
  }
  if (a.warp_specialize) h += " ws=" + std::to_string(a.warp_specialize);
  return h + "\n" + a.code;
}

std::optional<artifact> parse_artifact(std::string_view bytes) {
  const std::size_t nl = bytes.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  const auto words = split(bytes.substr(0, nl), ' ');
  if (words.size() < 2 || words[0] != "tile-artifact" || words[1] != std::to_string(kArtifactVersion)) return std::nullopt;
  std::map<std::string_view, std::string_view> f;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    if (eq == std::string_view::npos || !f.emplace(words[i].substr(0, eq), words[i].substr(eq + 1)).second) return std::nullopt;
  }
  for (const char* need : {"kind", "kernel", "entry", "arch", "warps", "shared", "params", "key", "expbatch", "widest"})
    if (!f.count(need)) return std::nullopt;
  artifact a;
  auto text = [&](const char* name, std::string& out) {
    auto v = unescape(f[name]);
    if (v) out = std::move(*v);
    return v.has_value();
  };
  if (!text("kind", a.kind) || !text("kernel", a.kernel) || !text("entry", a.entry) || !text("arch", a.arch) || !text("key", a.key))
    return std::nullopt;
  if (!number(f["warps"], a.num_warps) || !number(f["shared"], a.shared_bytes) || !number(f["expbatch"], a.exp_batch) ||
      !number(f["widest"], a.widest_exp_batch) || a.num_warps < 0 || a.exp_batch < 1 || a.widest_exp_batch < 0)
    return std::nullopt;
  if (!f["params"].empty())
    for (std::string_view p : split(f["params"], ',')) {
      auto v = unescape(p);
      if (!v) return std::nullopt;
      a.params.push_back(std::move(*v));
    }
  if (auto t = f.find("tmaps"); t != f.end())
    for (std::string_view m : split(t->second, ';')) {
      drivers::tensor_map_spec spec;
      if (!parse_map(m, spec)) return std::nullopt;
      a.tensor_maps.push_back(spec);
    }
  if (auto w = f.find("ws"); w != f.end())
    if (!number(w->second, a.warp_specialize) || a.warp_specialize < 1 || a.warp_specialize > 2) return std::nullopt;
  if (f.size() != 10 + (f.count("tmaps") ? 1u : 0u) + (f.count("ws") ? 1u : 0u)) return std::nullopt;  // no field it does not know
  a.code = std::string(bytes.substr(nl + 1));
  return a;
}

}  // namespace tile::jit

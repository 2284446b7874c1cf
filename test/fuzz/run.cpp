// test/fuzz/run.cpp — the random programs' inputs, their runs on each backend and the
// comparison of the results by docs/LANGUAGE.md's rules (fuzz.hpp).
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "fuzz.hpp"

namespace fuzz {
namespace {

using tile::dtype;
using namespace tile::literals;

std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <class T>
void put(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

/// Element i of an input array of dtype d: a special value one time in five, else an ordinary
/// one (small integers, or floats over a wide range of exponents).
void input_element(std::vector<std::uint8_t>& b, std::size_t at, dtype d, std::size_t i) {
  const std::uint64_t h = mix(i * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(d) * 7919 + 1);
  const bool special = h % 5 == 0;
  const std::uint64_t w = h >> 8;
  if (tile::is_float(d)) {
    double v;
    if (special) {
      static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 1e-40, -1e-45, 3e-39, 6e-8,
                                  1e-310, 65504.0, 3.4e38, -3.4e38, 1.7e308, 0.5};
      v = sp[w % (sizeof sp / sizeof sp[0])];
    } else if (w % 3 == 0) {
      v = static_cast<double>(static_cast<std::int64_t>(w % 33) - 16);
    } else {
      v = std::ldexp(static_cast<double>(w % 2048) / 1024.0 - 1.0, static_cast<int>((w >> 12) % 41) - 20);
    }
    switch (d) {
      case dtype::f16: put(b, at, std::bit_cast<std::uint16_t>(tile::half(static_cast<float>(v)))); break;
      case dtype::bf16: put(b, at, std::bit_cast<std::uint16_t>(tile::bfloat16(static_cast<float>(v)))); break;
      case dtype::f32:
        if (special && w % 23 == 0) {  // a NaN with a payload
          put(b, at, std::uint32_t{0x7FA00001u});
        } else {
          put(b, at, static_cast<float>(v));
        }
        break;
      default: put(b, at, v); break;
    }
    return;
  }
  const int bits = tile::bits(d);
  std::uint64_t v;
  if (d == dtype::i1) {
    v = w & 1;
  } else if (special) {
    const std::uint64_t top = std::uint64_t{1} << (bits - 1);
    const std::uint64_t sp[] = {0, 1, ~std::uint64_t{0}, top, top - 1, static_cast<std::uint64_t>(bits), static_cast<std::uint64_t>(bits - 1),
                                static_cast<std::uint64_t>(bits + 1), top | 1, ~std::uint64_t{0} << 1};
    v = sp[w % 10];
  } else if (w % 2 == 0) {
    v = static_cast<std::uint64_t>(static_cast<std::int64_t>(w % 65) - 32);
  } else {
    v = mix(w);
  }
  std::memcpy(b.data() + at, &v, static_cast<std::size_t>(tile::size_of(d)));  // little endian: the low bytes
}

constexpr dtype all[] = {dtype::i1, dtype::i8, dtype::i16, dtype::i32, dtype::i64, dtype::u8, dtype::u16,
                         dtype::u32, dtype::u64, dtype::f16, dtype::bf16, dtype::f32, dtype::f64};

double to_double(const std::uint8_t* p, dtype d) {
  switch (d) {
    case dtype::f16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(std::bit_cast<tile::half>(h));
    }
    case dtype::bf16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return static_cast<float>(std::bit_cast<tile::bfloat16>(h));
    }
    case dtype::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    default: {
      double f;
      std::memcpy(&f, p, 8);
      return f;
    }
  }
}

std::string hex(const std::uint8_t* p, int bytes) {
  std::string s = "0x";
  char b[4];
  for (int i = bytes - 1; i >= 0; --i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

}  // namespace

std::vector<std::uint8_t> input_bytes() {
  std::vector<std::uint8_t> b(13 * array_stride);
  for (dtype d : all)
    for (std::size_t i = 0; i < array_len; ++i)
      input_element(b, static_cast<std::size_t>(d) * array_stride + i * static_cast<std::size_t>(tile::size_of(d)), d, i);
  return b;
}

std::vector<float> tame_floats() {
  std::vector<float> v(array_len);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(mix(i + 11) % 65) - 32) / 8.0f;
  return v;
}

std::vector<std::int32_t> tame_ints() {
  std::vector<std::int32_t> v(array_len);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(mix(i + 13) % 8);
  return v;
}

std::vector<std::uint8_t> io_bytes() {
  // the windows start as a copy of the input arrays' bytes (special values of several dtypes)
  const std::vector<std::uint8_t> in = input_bytes();
  std::vector<std::uint8_t> b(max_programs * io_window);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = in[(i / 512) % 13 * array_stride + i % 512 + (i / 512) / 13 * 512];
  return b;
}

std::vector<std::uint8_t> out_fill() { return std::vector<std::uint8_t>(out_bytes, 0xA5); }

std::vector<result> run(const std::vector<tile::device>& devs, const config& cfg, program& prog) {
  auto k = tile::kernel("fuzz", [&cfg, &prog](tl::ptr<std::uint8_t> in, tl::ptr<float> fin, tl::ptr<std::int32_t> iin,
                                              tl::ptr<std::uint8_t> io, tl::ptr<std::uint8_t> out, tl::i32 n, tl::i32 kk) {
    build(cfg, prog, in, fin, iin, io, out, n, kk);
  });
  static const std::vector<std::uint8_t> in_host = input_bytes();
  static const std::vector<float> fin_host = tame_floats();
  static const std::vector<std::int32_t> iin_host = tame_ints();
  static const std::vector<std::uint8_t> io_host = io_bytes();
  static const std::vector<std::uint8_t> out_host = out_fill();
  std::vector<result> res;
  std::string first_cpp;
  for (const tile::device& dev : devs) {
    result r;
    try {
      auto in = dev.upload(in_host);
      auto fin = dev.upload(fin_host);
      auto iin = dev.upload(iin_host);
      auto io = dev.upload(io_host);
      auto out = dev.upload(out_host);
      k[{cfg.programs}](in, fin, iin, io, out, cfg.n, cfg.k, "num_warps"_c = cfg.num_warps,
                        "enable_fp_fusion"_c = cfg.fp_fusion);
      dev.synchronize();
      r.io = io.to_host();
      r.out = out.to_host();
    } catch (const tile::error& e) {
      r.rejected = true;
      r.error = e.what();
    }
    if (first_cpp.empty()) first_cpp = prog.cpp;
    if (prog.cpp != first_cpp) {  // each trace must build the same program
      r.rejected = true;
      r.error = "the generator is not deterministic: the program traced for " + dev.name() + " differs";
    }
    res.push_back(std::move(r));
  }
  return res;
}

std::vector<std::string> compare(const program& prog, const config& cfg, bool gpu, const result& want, const result& got,
                                 std::size_t limit) {
  std::vector<std::string> diffs;
  if (want.rejected || got.rejected) {
    if (want.rejected != got.rejected)
      diffs.push_back(want.rejected ? "rejected by the interpreter only: " + want.error : "rejected here only: " + got.error);
    else if (want.error != got.error)
      diffs.push_back("rejected with another message:\n  interpreter: " + want.error + "\n  here:        " + got.error);
    return diffs;
  }
  // bytes no slot covers must be untouched (the fill or the initial io) on both
  std::vector<bool> covered_out(out_bytes), covered_io(max_programs * io_window);
  for (const slot& s : prog.slots) {
    const int size = tile::size_of(s.dt);
    const int parts = s.program_stride ? cfg.programs : 1;
    const bool exact = gpu ? s.exact.gpu : s.exact.cpu;
    const std::vector<std::uint8_t>& w = s.in_io ? want.io : want.out;
    const std::vector<std::uint8_t>& g = s.in_io ? got.io : got.out;
    auto& covered = s.in_io ? covered_io : covered_out;
    for (int p = 0; p < parts; ++p) {
      const std::size_t base = s.offset + static_cast<std::size_t>(p) * s.program_stride;
      // the part's largest finite magnitude: tolerances are relative to it where err allows
      for (std::size_t i = 0; i < s.count; ++i) {
        const std::size_t at = base + i * static_cast<std::size_t>(size);
        if (at + static_cast<std::size_t>(size) > w.size()) break;
        for (int b = 0; b < size; ++b) covered[at + static_cast<std::size_t>(b)] = true;
        const std::uint8_t* pw = w.data() + at;
        const std::uint8_t* pg = g.data() + at;
        if (std::memcmp(pw, pg, static_cast<std::size_t>(size)) == 0) continue;
        bool ok = false;
        if (tile::is_float(s.dt)) {
          const double a = to_double(pw, s.dt), b = to_double(pg, s.dt);
          if (std::isnan(a) && std::isnan(b)) {
            ok = true;  // a NaN is some NaN
          } else if (!exact) {
            if (!(s.err < INFINITY)) {
              ok = true;  // not compared: no bound on the difference
            } else if (std::isinf(a) || std::isinf(b)) {
              // one side rounded to infinity: the other must be within the bound of the range's end
              const double fin = std::isinf(a) ? b : a, top = std::isinf(a) ? a : b;
              ok = !std::isnan(fin) && std::signbit(fin) == std::signbit(top) &&
                   std::fabs(fin) + 2 * s.err >= (s.dt == dtype::f16 ? 65504.0 : s.dt == dtype::f32 || s.dt == dtype::bf16 ? 3.3e38 : 1.7e308);
            } else if (!std::isnan(a) && !std::isnan(b)) {
              const double u = s.dt == dtype::f16 ? 0x1p-11 : s.dt == dtype::bf16 ? 0x1p-8 : s.dt == dtype::f32 ? 0x1p-24 : 0x1p-53;
              const double tiny = s.dt == dtype::f16 ? 0x1p-14 : s.dt == dtype::f64 ? 0x1p-1022 : 0x1p-126;
              ok = std::fabs(a - b) <= 2 * s.err + 4 * u * std::max(std::fabs(a), std::fabs(b)) + tiny;
            }
          }
          if (!ok && diffs.size() < limit) {
            char m[256];
            std::snprintf(m, sizeof m, "%s, program %d, element %zu: interpreter %.17g (%s), here %.17g (%s)%s", s.what.c_str(), p, i, a,
                          hex(pw, size).c_str(), b, hex(pg, size).c_str(),
                          exact ? " (bit for bit)" : (" (bound " + std::to_string(s.err) + ")").c_str());
            diffs.push_back(m);
          }
        } else if (diffs.size() < limit) {
          diffs.push_back(s.what + ", program " + std::to_string(p) + ", element " + std::to_string(i) + ": interpreter " +
                          hex(pw, size) + ", here " + hex(pg, size));
        }
        if (!ok && diffs.size() >= limit) return diffs;
      }
    }
  }
  auto untouched = [&](const std::vector<std::uint8_t>& w, const std::vector<std::uint8_t>& g, const std::vector<bool>& covered,
                       const char* name) {
    for (std::size_t i = 0; i < w.size() && diffs.size() < limit; ++i)
      if (!covered[i] && w[i] != g[i]) {
        diffs.push_back(std::string(name) + " byte " + std::to_string(i) + ", which no store of the program covers: interpreter " +
                        std::to_string(w[i]) + ", here " + std::to_string(g[i]));
        break;
      }
  };
  untouched(want.out, got.out, covered_out, "out");
  untouched(want.io, got.io, covered_io, "io");
  return diffs;
}

}  // namespace fuzz

// Sample 05 — layer norm forward (Triton's fifth tutorial): one row per program; the row is
// walked in blocks three times (mean, variance, normalize) with runtime loops, so rows of any
// length fit; statistics in f32, data in f16.
#include <cmath>

#include "common.hpp"

using namespace tile::literals;

auto layer_norm = tile::kernel("layer_norm", [](tl::ptr<tile::half> X, tl::ptr<tile::half> Y, tl::ptr<tile::half> W,
                                                tl::ptr<tile::half> B, tl::ptr<float> Mean, tl::ptr<float> Rstd,
                                                tl::i32 stride, tl::i32 N, tl::f32 eps,
                                                tl::constexpr_<"BLOCK"> BLOCK) {
  auto row = tl::program_id(0);
  auto x_row = X + row * stride;
  auto y_row = Y + row * stride;

  auto sum = tl::zeros<float>({BLOCK});
  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    sum += tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f));
  });
  auto mean = tl::sum(sum, 0) / N;

  auto sq = tl::zeros<float>({BLOCK});
  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    auto x = tl::cast<float>(tl::load(x_row + cols, cols < N, 0.0f));
    auto d = tl::where(cols < N, x - mean, 0.0f);
    sq += d * d;
  });
  auto rstd = 1.0f / tl::sqrt(tl::sum(sq, 0) / N + eps);
  tl::store(Mean + row, mean);
  tl::store(Rstd + row, rstd);

  tl::for_range(0, N, BLOCK, [&](tl::tensor off) {
    auto cols = off + tl::arange(0, BLOCK);
    auto mask = cols < N;
    auto w = tl::cast<float>(tl::load(W + cols, mask));
    auto b = tl::cast<float>(tl::load(B + cols, mask));
    auto x = tl::cast<float>(tl::load(x_row + cols, mask, 0.0f));
    auto y = (x - mean) * rstd * w + b;
    tl::store(y_row + cols, tl::cast<tl::f16>(y), mask);
  });
});

int main() {
  const int rows = 64, N = 1000;
  const float eps = 1e-5f;
  auto dev = tile::device::best();
  auto f = [](std::vector<float> v) { return std::vector<tile::half>(v.begin(), v.end()); };
  auto hx = f(sample::random_floats(static_cast<std::size_t>(rows) * N, 11, -2.f, 2.f));
  auto hw = f(sample::random_floats(N, 12)), hb = f(sample::random_floats(N, 13));
  auto x = dev.upload(hx), w = dev.upload(hw), b = dev.upload(hb);
  auto y = dev.alloc<tile::half>(hx.size());
  auto mean = dev.alloc<float>(rows), rstd = dev.alloc<float>(rows);

  layer_norm[{rows}](x, y, w, b, mean, rstd, N, N, eps, "BLOCK"_c = 256);

  std::vector<float> want(hx.size());
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < N; ++c) m += float(hx[static_cast<std::size_t>(r) * N + c]);
    m /= N;
    for (int c = 0; c < N; ++c) {
      double d = float(hx[static_cast<std::size_t>(r) * N + c]) - m;
      v += d * d;
    }
    double rs = 1.0 / std::sqrt(v / N + eps);
    for (int c = 0; c < N; ++c)
      want[static_cast<std::size_t>(r) * N + c] =
          static_cast<float>((float(hx[static_cast<std::size_t>(r) * N + c]) - m) * rs * float(hw[c]) + float(hb[c]));
  }
  // f16 output of values up to ~8: half an ulp is 2^-8.
  return sample::report("05_layer_norm", dev, sample::max_abs_error(y.to_host(), want), 1.0 / 128);
}

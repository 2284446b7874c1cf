// src/runtime/plot_svg.hpp — layer: runtime. A small hand-written SVG line plotter for
// tile::testing's sweeps (src/runtime/testing.cpp): linear or log axes with "nice" ticks, one
// polyline with markers per series, a legend. Also the number formatting the tables, CSV files
// and plots share (locale-independent, through std::to_chars).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tile::testing::detail {

struct plot_series {
  std::string name;
  std::vector<double> x, y;  // same length; points with a non-finite coordinate (or one <= 0
                             // on a log axis) are left out
};

struct plot_spec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool x_log = false;
  bool y_log = false;
  std::vector<plot_series> series;
};

/// A standalone SVG 1.1 document (starts with "<svg xmlns=…", ends with "</svg>\n").
std::string render_svg(const plot_spec& p);

/// Ticks of one axis: the axis' range [lo, hi] (widened to tick values) and the tick values.
struct axis_ticks {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
};
/// 1-2-5 steps, about `target` ticks, covering [lo, hi] (lo <= hi, both finite).
axis_ticks linear_ticks(double lo, double hi, int target = 6);
/// Powers of ten covering [lo, hi] (0 < lo <= hi), with 2 and 5 between them when the range
/// spans at most two decades.
axis_ticks log_ticks(double lo, double hi);

/// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(std::string_view s);
/// Shortest decimal text that reads back as v ("4096", "0.1", "1e+300"); "nan", "inf", "-inf".
std::string format_shortest(double v);
/// v with `decimals` digits after the point ("3.140").
std::string format_fixed(double v, int decimals);
/// A short tick label: six significant digits, no exponent padding ("0.25", "4096", "1e6").
std::string format_compact(double v);
/// v in shortest scientific notation, exponent unpadded ("1e3", "2.5e-4").
std::string format_scientific(double v);

}  // namespace tile::testing::detail

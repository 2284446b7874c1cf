// src/runtime/plot_svg.cpp — layer: runtime. The SVG line plotter behind
// tile::testing::report::to_svg, and the number formatting the tables and CSV files share.
// Hand-written, no dependencies: a frame with grid lines, ticks and labels, a title, one
// polyline with circle markers per series (matplotlib's tab10 colours, dashed after ten), and a
// legend to the right of the plot.
#include "runtime/plot_svg.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <system_error>

namespace tile::testing::detail {

namespace {

std::string non_finite(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

std::string chars(double v, std::chars_format f, int precision) {
  std::array<char, 512> buf{};  // a fixed double has at most 309 integer digits
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, f, precision);
  if (r.ec != std::errc{}) return non_finite(std::numeric_limits<double>::quiet_NaN());
  return std::string(buf.data(), r.ptr);
}

/// 10^k, exact where a double can hold it, correctly rounded otherwise.
double pow10i(int k) {
  double p = 1;
  for (int i = 0; i < std::abs(k); ++i) p *= 10;
  return k >= 0 ? p : 1 / p;
}

/// tab10, the colours matplotlib (and so triton's plots) gives lines one after another.
constexpr std::array<const char*, 10> palette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr std::array<const char*, 3> dashes = {"", "6 3", "2 2"};

// Geometry (user units = px). The legend sits right of the plot; its width follows the names.
constexpr double plot_left = 84, plot_top = 56, plot_w = 600, plot_h = 400;
constexpr double plot_right = plot_left + plot_w, plot_bottom = plot_top + plot_h;
constexpr double char_w = 7.2;  // average advance of a 12px sans-serif character

/// "1.5e+06" -> "1.5e6", "2e-05" -> "2e-5".
std::string tidy_exponent(std::string s) {
  auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mant = s.substr(0, e), exp = s.substr(e + 1);
  std::string sign;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    if (exp[0] == '-') sign = "-";
    exp.erase(0, 1);
  }
  exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
  return mant + "e" + sign + exp;
}

std::string num(double v) { return chars(v, std::chars_format::fixed, 2); }

/// Code points in a UTF-8 string (for the legend's width).
std::size_t text_width_chars(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

struct axis {
  bool log = false;
  axis_ticks t;
  double f(double v) const { return log ? std::log10(v) : v; }
  /// Position of v in [0, 1] along the axis.
  double frac(double v) const {
    double a = f(t.lo), b = f(t.hi);
    return b > a ? (f(v) - a) / (b - a) : 0.5;
  }
  bool shows(double v) const { return std::isfinite(v) && (!log || v > 0); }
  /// A log axis reaching beyond [0.001, 10000] labels every tick "1e3"-style, so its decades
  /// read alike (not "1000, 10000, 100000, 1e6").
  std::string label(double v) const {
    bool sci = log && (t.lo < 1e-3 || t.hi > 1e4);
    return sci ? format_scientific(v) : format_compact(v);
  }
};

axis make_axis(bool log, const std::vector<double>& vals) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : vals)
    if (std::isfinite(v) && (!log || v > 0)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  axis a;
  a.log = log;
  if (!(lo <= hi)) {  // nothing to show
    lo = log ? 1 : 0;
    hi = log ? 10 : 1;
  }
  a.t = log ? log_ticks(lo, hi) : linear_ticks(lo, hi);
  return a;
}

}  // namespace

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string format_shortest(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  std::array<char, 64> buf{};  // the shortest round-trip text, fixed or scientific, is <= 24 chars
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), r.ptr);
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return non_finite(v);
  return chars(v, std::chars_format::fixed, std::clamp(decimals, 0, 17));
}

std::string format_compact(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == 0) return "0";
  return tidy_exponent(chars(v, std::chars_format::general, 6));
}

std::string format_scientific(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == 0) return "0";
  std::array<char, 64> buf{};
  auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific);
  return tidy_exponent(std::string(buf.data(), r.ptr));
}


axis_ticks linear_ticks(double lo, double hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= 0 || !std::isfinite(hi - lo)) {
    double pad = lo == 0 ? 1 : std::abs(lo) * 0.5;
    lo -= pad;
    hi += pad;
  }
  double raw = (hi - lo) / std::max(target, 1);
  int e = static_cast<int>(std::floor(std::log10(raw)));
  double norm = raw / pow10i(e);
  double mult = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10;
  double step = mult * pow10i(e);
  double k0 = std::floor(lo / step + 1e-9), k1 = std::ceil(hi / step - 1e-9);
  axis_ticks t;
  for (double k = k0; k <= k1; ++k) {
    // k * mult is an integer: scaling it by an exact power of ten (or dividing by one) rounds
    // once, so 0.3 prints as 0.3, not 0.30000000000000004.
    double v = e >= 0 ? k * mult * pow10i(e) : k * mult / pow10i(-e);
    t.ticks.push_back(v == 0 ? 0.0 : v);  // no "-0"
  }
  t.lo = t.ticks.front();
  t.hi = t.ticks.back();
  return t;
}

axis_ticks log_ticks(double lo, double hi) {
  if (hi < lo) std::swap(lo, hi);
  int e0 = static_cast<int>(std::floor(std::log10(lo) + 1e-12));
  int e1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-12));
  if (e1 <= e0) e1 = e0 + 1;
  int decades = e1 - e0;
  int step = std::max(1, (decades + 7) / 8);
  e1 = e0 + step * ((decades + step - 1) / step);
  axis_ticks t;
  for (int k = e0; k <= e1; k += step) t.ticks.push_back(pow10i(k));
  if (decades <= 2)
    for (int k = e0; k < e1; ++k)
      for (double m : {2.0, 5.0}) t.ticks.push_back(m * pow10i(k));
  std::sort(t.ticks.begin(), t.ticks.end());
  t.lo = pow10i(e0);
  t.hi = pow10i(e1);
  return t;
}

std::string render_svg(const plot_spec& p) {
  std::vector<double> xs, ys;
  for (const auto& s : p.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      bool x_ok = std::isfinite(s.x[i]) && (!p.x_log || s.x[i] > 0);
      bool y_ok = std::isfinite(s.y[i]) && (!p.y_log || s.y[i] > 0);
      if (x_ok && y_ok) {
        xs.push_back(s.x[i]);
        ys.push_back(s.y[i]);
      }
    }
  }
  axis ax = make_axis(p.x_log, xs), ay = make_axis(p.y_log, ys);
  auto px = [&](double v) { return plot_left + ax.frac(v) * plot_w; };
  auto py = [&](double v) { return plot_bottom - ay.frac(v) * plot_h; };

  std::size_t name_chars = 0;
  for (const auto& s : p.series) name_chars = std::max(name_chars, text_width_chars(s.name));
  const double legend_x = plot_right + 24;
  const double legend_w = 52 + char_w * static_cast<double>(name_chars);
  const double legend_h = 12 + 20 * static_cast<double>(p.series.size());
  const double width = std::ceil(legend_x + legend_w + 16);
  const double height = std::max(plot_bottom + 64, plot_top + legend_h + 16);

  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(width) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
       "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  o += "<title>" + xml_escape(p.title) + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" fill=\"white\"/>\n";
  o += "<text x=\"" + num(plot_left + plot_w / 2) + "\" y=\"32\" text-anchor=\"middle\" font-size=\"16\">" +
       xml_escape(p.title) + "</text>\n";

  // Grid lines, ticks and tick labels.
  o += "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double v : ax.t.ticks)
    o += "<line x1=\"" + num(px(v)) + "\" y1=\"" + num(plot_top) + "\" x2=\"" + num(px(v)) + "\" y2=\"" +
         num(plot_bottom) + "\"/>\n";
  for (double v : ay.t.ticks)
    o += "<line x1=\"" + num(plot_left) + "\" y1=\"" + num(py(v)) + "\" x2=\"" + num(plot_right) + "\" y2=\"" +
         num(py(v)) + "\"/>\n";
  o += "</g>\n";
  o += "<g class=\"ticks\" stroke=\"black\" stroke-width=\"1\">\n";
  for (double v : ax.t.ticks)
    o += "<line x1=\"" + num(px(v)) + "\" y1=\"" + num(plot_bottom) + "\" x2=\"" + num(px(v)) + "\" y2=\"" +
         num(plot_bottom + 5) + "\"/>\n";
  for (double v : ay.t.ticks)
    o += "<line x1=\"" + num(plot_left - 5) + "\" y1=\"" + num(py(v)) + "\" x2=\"" + num(plot_left) + "\" y2=\"" +
         num(py(v)) + "\"/>\n";
  o += "</g>\n";
  o += "<g class=\"tick-labels\">\n";
  for (double v : ax.t.ticks)
    o += "<text x=\"" + num(px(v)) + "\" y=\"" + num(plot_bottom + 19) + "\" text-anchor=\"middle\">" +
         xml_escape(ax.label(v)) + "</text>\n";
  for (double v : ay.t.ticks)
    o += "<text x=\"" + num(plot_left - 8) + "\" y=\"" + num(py(v) + 4) + "\" text-anchor=\"end\">" +
         xml_escape(ay.label(v)) + "</text>\n";
  o += "</g>\n";
  o += "<rect class=\"frame\" x=\"" + num(plot_left) + "\" y=\"" + num(plot_top) + "\" width=\"" + num(plot_w) +
       "\" height=\"" + num(plot_h) + "\" fill=\"none\" stroke=\"black\" stroke-width=\"1\"/>\n";

  // Axis labels.
  o += "<text class=\"x-label\" x=\"" + num(plot_left + plot_w / 2) + "\" y=\"" + num(plot_bottom + 46) +
       "\" text-anchor=\"middle\" font-size=\"14\">" + xml_escape(p.x_label) + "</text>\n";
  o += "<text class=\"y-label\" x=\"0\" y=\"0\" transform=\"translate(22 " + num(plot_top + plot_h / 2) +
       ") rotate(-90)\" text-anchor=\"middle\" font-size=\"14\">" + xml_escape(p.y_label) + "</text>\n";

  // The series.
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    const auto& s = p.series[i];
    std::string colour = palette[i % palette.size()];
    std::string dash = dashes[(i / palette.size()) % dashes.size()];
    std::string pts, marks;
    for (std::size_t j = 0; j < std::min(s.x.size(), s.y.size()); ++j) {
      if (!ax.shows(s.x[j]) || !ay.shows(s.y[j])) continue;
      std::string cx = num(px(s.x[j])), cy = num(py(s.y[j]));
      if (!pts.empty()) pts += ' ';
      pts += cx + "," + cy;
      marks += "<circle cx=\"" + cx + "\" cy=\"" + cy + "\" r=\"3.5\"/>\n";
    }
    o += "<g class=\"series\" fill=\"" + colour + "\" stroke=\"" + colour + "\">\n";
    o += "<title>" + xml_escape(s.name) + "</title>\n";
    o += "<polyline points=\"" + pts + "\" fill=\"none\" stroke-width=\"2\"" +
         (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") + "/>\n";
    o += marks;
    o += "</g>\n";
  }

  // The legend.
  o += "<g class=\"legend\">\n";
  o += "<rect x=\"" + num(legend_x) + "\" y=\"" + num(plot_top) + "\" width=\"" + num(legend_w) + "\" height=\"" +
       num(legend_h) + "\" fill=\"white\" stroke=\"#bbbbbb\"/>\n";
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    std::string colour = palette[i % palette.size()];
    std::string dash = dashes[(i / palette.size()) % dashes.size()];
    double y = plot_top + 16 + 20 * static_cast<double>(i);
    o += "<line x1=\"" + num(legend_x + 10) + "\" y1=\"" + num(y) + "\" x2=\"" + num(legend_x + 38) + "\" y2=\"" +
         num(y) + "\" stroke=\"" + colour + "\" stroke-width=\"2\"" +
         (dash.empty() ? std::string() : " stroke-dasharray=\"" + dash + "\"") + "/>\n";
    o += "<circle cx=\"" + num(legend_x + 24) + "\" cy=\"" + num(y) + "\" r=\"3.5\" fill=\"" + colour + "\"/>\n";
    o += "<text x=\"" + num(legend_x + 46) + "\" y=\"" + num(y + 4) + "\">" + xml_escape(p.series[i].name) +
         "</text>\n";
  }
  o += "</g>\n";
  o += "</svg>\n";
  return o;
}

}  // namespace tile::testing::detail

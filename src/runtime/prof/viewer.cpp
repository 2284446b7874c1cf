// src/runtime/prof/viewer.cpp — layer: runtime. The tile-prof views of viewer.hpp: inclusive
// metric sums over the frame tree, metric names resolved to functions of a frame (raw metrics by
// name with or without their unit, times in a unit, averages, shares, flop and byte rates), the
// tree drawing, and the top-kernels table.
#include "runtime/prof/viewer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace tile::prof::detail {

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

/// A frame with the inclusive sums of its metrics (its own plus its subtree's).
struct inclusive_frame {
  const frame_node* frame = nullptr;
  std::size_t index = 0;  // among its parent's children, in recording order
  std::map<std::string, double> sums;
  std::vector<inclusive_frame> children;
};

/// Children in name order, as the hatchet file keeps them, so a profile renders the same before
/// it is written and after it is read back.
inclusive_frame summarize(const frame_node& f, std::size_t index) {
  inclusive_frame out;
  out.frame = &f;
  out.index = index;
  out.sums = f.metrics;
  for (std::size_t i = 0; i < f.children.size(); ++i) {
    out.children.push_back(summarize(*f.children[i], i));
    for (const auto& [name, v] : out.children.back().sums) out.sums[name] += v;
  }
  std::sort(out.children.begin(), out.children.end(),
            [](const inclusive_frame& a, const inclusive_frame& b) {
              return a.frame->name != b.frame->name ? a.frame->name < b.frame->name
                                                    : a.index < b.index;
            });
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// "time (ns)" -> "time"; a name without a unit is itself.
std::string without_unit(const std::string& raw) {
  std::string base = raw.substr(0, raw.find('('));
  while (!base.empty() && base.back() == ' ') base.pop_back();
  return lower(base);
}

/// "time (ns)" -> "ns"; "" without a unit.
std::string unit_of(const std::string& raw) {
  auto open = raw.find('('), close = raw.find(')');
  return open == std::string::npos || close == std::string::npos || close < open
             ? std::string()
             : raw.substr(open + 1, close - open - 1);
}

std::optional<double> seconds_per(std::string_view unit) {
  if (unit == "s") return 1.0;
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  return std::nullopt;
}

/// "time/us" -> {"time", "us"}, "avg_time/ns" -> {"avg_time", "ns"}; nullopt for other names
/// (`m` in lower case).
std::optional<std::pair<std::string, std::string>> time_metric(const std::string& m) {
  const auto slash = m.find('/');
  if (slash == std::string::npos) return std::nullopt;
  std::string head = m.substr(0, slash), unit = m.substr(slash + 1);
  if ((head != "time" && head != "avg_time") || !seconds_per(unit)) return std::nullopt;
  return std::pair{head, unit};
}

std::set<std::string> raw_metric_names(const frame_node& f) {
  std::set<std::string> names;
  std::function<void(const frame_node&)> walk = [&](const frame_node& n) {
    for (const auto& [name, v] : n.metrics) names.insert(name);
    for (const auto& c : n.children) walk(*c);
  };
  walk(f);
  return names;
}

/// The raw metric a user's name means: equal to it, or to it without its unit, ignoring case.
std::optional<std::string> match_raw(const std::set<std::string>& raw, std::string_view wanted) {
  const std::string w = lower(wanted);
  for (const std::string& name : raw)
    if (lower(name) == w || without_unit(name) == w) return name;
  return std::nullopt;
}

using metric_fn = std::function<double(const inclusive_frame&)>;

struct metric_context {
  std::set<std::string> raw;
  const inclusive_frame* root = nullptr;

  std::string need(std::string_view source, const std::string& for_metric) const {
    if (auto name = match_raw(raw, source)) return *name;
    throw std::invalid_argument("metric '" + for_metric + "' needs '" + std::string(source) +
                                "', which this profile does not have");
  }

  /// A frame's inclusive time in seconds, from the profile's time metric ("time (ns)").
  metric_fn time_seconds(const std::string& for_metric) const {
    std::string name = need("time", for_metric);
    auto per = seconds_per(unit_of(name));
    if (!per)
      throw std::invalid_argument("metric '" + for_metric + "': the profile's time metric '" + name +
                                  "' has no known unit");
    return [name, s = *per](const inclusive_frame& f) {
      auto it = f.sums.find(name);
      return it == f.sums.end() ? 0.0 : it->second * s;
    };
  }
};

double sum_of(const inclusive_frame& f, const std::string& name) {
  auto it = f.sums.find(name);
  return it == f.sums.end() ? 0.0 : it->second;
}

/// "flop/s", "gflop16/s", "tbyte/s": the source metric ("flops", "flops16", "bytes") and the
/// scale; nullopt for other names.
std::optional<std::pair<std::string, double>> rate_metric(const std::string& m) {
  if (m.size() < 2 || m.substr(m.size() - 2) != "/s") return std::nullopt;
  std::string base = m.substr(0, m.size() - 2);
  double scale = 1;
  if (!base.empty() && (base[0] == 'g' || base[0] == 't')) {
    scale = base[0] == 'g' ? 1e9 : 1e12;
    base.erase(0, 1);
  }
  if (base == "byte") return std::pair{std::string("bytes"), scale};
  if (base.rfind("flop", 0) == 0) {
    std::string width = base.substr(4);
    if (!std::all_of(width.begin(), width.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::pair{"flops" + width, scale};
  }
  return std::nullopt;
}

metric_fn resolve(const std::string& metric, const metric_context& ctx) {
  const std::string m = lower(metric);
  if (auto tm = time_metric(m)) {
    metric_fn secs = ctx.time_seconds(metric);
    const double per = *seconds_per(tm->second);
    if (tm->first == "time") return [secs, per](const inclusive_frame& f) { return secs(f) / per; };
    std::string count = ctx.need("count", metric);
    // As proton-viewer: an average per launch only where launches are counted, on kernels.
    return [secs, per, count](const inclusive_frame& f) {
      return f.frame->kernel ? secs(f) / sum_of(f, count) / per : nan_v;
    };
  }
  if (m == "pct") {
    metric_fn secs = ctx.time_seconds(metric);
    const double total = secs(*ctx.root);
    return [secs, total](const inclusive_frame& f) { return secs(f) / total * 100.0; };
  }
  if (auto rate = rate_metric(m)) {
    std::string source = ctx.need(rate->first, metric);
    metric_fn secs = ctx.time_seconds(metric);
    const double scale = rate->second;
    return [secs, source, scale](const inclusive_frame& f) {
      return sum_of(f, source) / secs(f) / scale;
    };
  }
  if (auto raw = match_raw(ctx.raw, m))
    return [name = *raw](const inclusive_frame& f) { return sum_of(f, name); };
  throw std::invalid_argument("unknown metric '" + metric + "' (tile-prof -l lists the metrics)");
}

/// v with `decimals` digits after the point (hatchet's tree uses 3); "nan", "inf", "-inf".
std::string fixed(double v, int decimals = 3) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[400];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, res.ptr);
}

struct tree_printer {
  const std::vector<metric_fn>& metrics;
  const view_options& options;
  std::string out;

  bool shown(const inclusive_frame& f) const {
    if (!options.threshold) return true;
    if (metrics[0](f) >= *options.threshold) return true;
    return std::any_of(f.children.begin(), f.children.end(),
                       [&](const inclusive_frame& c) { return shown(c); });
  }

  void line(const inclusive_frame& f, const std::string& prefix) {
    out += prefix;
    for (const metric_fn& m : metrics) out += fixed(m(f)) + " ";
    out += f.frame->name + "\n";
  }

  /// `lead`: the drawing above this frame's children ("│  " for each ancestor with later siblings).
  void children(const inclusive_frame& f, const std::string& lead, int level) {
    if (level >= options.depth) return;
    std::vector<const inclusive_frame*> kids;
    for (const auto& c : f.children)
      if (shown(c)) kids.push_back(&c);
    for (std::size_t i = 0; i < kids.size(); ++i) {
      const bool last = i + 1 == kids.size();
      line(*kids[i], lead + (last ? "└─ " : "├─ "));
      children(*kids[i], lead + (last ? "   " : "│  "), level + 1);
    }
  }
};

struct kernel_total {
  std::string name;
  double count = 0, time = 0;  // in the profile's time unit
};

void collect_kernels(const frame_node& f, const std::string& time_name, const std::string& count_name,
                     std::map<std::string, kernel_total>& by_name) {
  if (f.kernel) {
    kernel_total& k = by_name[f.name];
    k.name = f.name;
    auto get = [&](const std::string& n) {
      auto it = f.metrics.find(n);
      return it == f.metrics.end() ? 0.0 : it->second;
    };
    k.count += get(count_name);
    k.time += get(time_name);
  }
  for (const auto& c : f.children) collect_kernels(*c, time_name, count_name, by_name);
}

/// Columns right-aligned to their widest cell, except the last (the name), left-aligned.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    out += "  ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i + 1 == r.size()) {
        out += r[i];
      } else {
        out += std::string(width[i] - r[i].size(), ' ') + r[i] + "  ";
      }
    }
    out += "\n";
  }
  return out;
}

std::string top_kernels(const profile& p, const view_options& options, const metric_context& ctx) {
  const std::string time_name = ctx.need("time", "--top"), count_name = ctx.need("count", "--top");
  // The unit of the first time metric asked for, else the profile's own.
  std::string unit = unit_of(time_name);
  for (const std::string& m : options.metrics) {
    if (auto tm = time_metric(lower(m))) {
      unit = tm->second;
      break;
    }
  }
  const double scale = *seconds_per(unit_of(time_name)) / *seconds_per(unit);

  std::map<std::string, kernel_total> by_name;
  collect_kernels(p.root, time_name, count_name, by_name);
  std::vector<kernel_total> kernels;
  double all = 0;
  for (auto& [name, k] : by_name) {
    all += k.time;
    kernels.push_back(k);
  }
  // Most time first; equal times by name (the names are distinct).
  std::sort(kernels.begin(), kernels.end(), [](const kernel_total& a, const kernel_total& b) {
    return a.time != b.time ? a.time > b.time : a.name < b.name;
  });
  const std::size_t n = std::min(kernels.size(), static_cast<std::size_t>(options.top));

  std::vector<std::vector<std::string>> rows{
      {"total (" + unit + ")", "count", "avg (" + unit + ")", "share", "kernel"}};
  for (std::size_t i = 0; i < n; ++i) {
    const kernel_total& k = kernels[i];
    rows.push_back({fixed(k.time * scale), fixed(k.count, 0), fixed(k.time * scale / k.count),
                    fixed(k.time / all * 100.0, 2) + "%", k.name});
  }
  return "top " + std::to_string(n) + " kernels by total time:\n" + table(rows);
}

}  // namespace

std::vector<std::string> split_metric_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = list.find(',', start);
    std::string_view item =
        list.substr(start, comma == std::string_view::npos ? comma : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty())
      throw std::invalid_argument("empty metric name in '" + std::string(list) + "'");
    out.emplace_back(item);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string render(const profile& p, const view_options& options) {
  if (options.depth < 1) throw std::invalid_argument("depth must be at least 1");
  if (options.metrics.empty()) throw std::invalid_argument("no metric to show");
  const inclusive_frame root = summarize(p.root, 0);
  metric_context ctx{raw_metric_names(p.root), &root};
  std::vector<metric_fn> metrics;
  for (const std::string& m : options.metrics) metrics.push_back(resolve(m, ctx));

  tree_printer printer{metrics, options, {}};
  printer.line(root, "");
  printer.children(root, "", 1);
  if (options.top > 0) printer.out += top_kernels(p, options, ctx);
  return printer.out;
}

std::string metric_legend(const profile& p) {
  std::string out =
      "Metrics (-m, comma-separated, case-insensitive). Values are inclusive: a frame's own plus\n"
      "those of every frame below it.\n"
      "  time/s, time/ms, time/us, time/ns          kernel time\n"
      "  avg_time/s, avg_time/ms, avg_time/us, ...  time / count, on kernels (nan on scopes)\n"
      "  pct                                        share of all kernel time, in %\n"
      "  flop/s, gflop/s, tflop/s                   flops / time (flop16/s ...: flops16 / time)\n"
      "  byte/s, gbyte/s, tbyte/s                   bytes / time\n"
      "  NAME                                       a metric of the file, with or without its unit\n"
      "Available metrics:\n";
  for (const std::string& name : raw_metric_names(p.root)) out += "- " + without_unit(name) + "\n";
  return out;
}

}  // namespace tile::prof::detail

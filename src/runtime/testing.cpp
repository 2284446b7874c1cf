// src/runtime/testing.cpp — layer: runtime. tile::testing: statistics, timers, do_bench (the
// algorithm of triton.testing.do_bench) and perf_report-style sweeps with their table, CSV file
// and SVG plot (drawn by plot_svg.cpp). Uses the public API of tile::device, and the CUDA driver
// (no compiler) for the cuda backend's event timer.
#include "tile/runtime/testing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <numeric>
#include <string_view>
#include <utility>

#include "drivers/cuda/cuda_driver.hpp"
#include "runtime/device_impl.hpp"
#include "runtime/plot_svg.hpp"
#include "support/env.hpp"
#include "tile/core/error.hpp"
#include "tile/runtime/device.hpp"

namespace tile::testing {

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

void check_q(double q) {
  if (!(q >= 0 && q <= 1))
    throw tile::error("quantile " + detail::format_shortest(q) + " is outside [0, 1]");
}

/// numpy's linear method on sorted data: h = (n - 1) q, v[floor h] + (h - floor h) (v[ceil h] -
/// v[floor h]), with numpy's lerp (from the upper end when the fraction is >= 1/2, so q = 1 gives
/// the maximum exactly).
double quantile_sorted(const std::vector<double>& v, double q) {
  check_q(q);
  double h = static_cast<double>(v.size() - 1) * q;
  auto lo = static_cast<std::size_t>(std::floor(h));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double t = h - static_cast<double>(lo), a = v[lo], b = v[hi];
  double d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

void check_samples(const std::vector<double>& v, std::string_view what) {
  if (v.empty()) throw tile::error(std::string(what) + " of no samples");
  for (double x : v)
    if (std::isnan(x)) throw tile::error(std::string(what) + " of samples holding a NaN");
}

std::string default_out_dir() {
  const std::string d = env::get("TILE_BENCH_DIR");
  return d.empty() ? std::string("bench-results") : d;
}

/// A benchmark's name as a file stem: letters, digits and . _ - + kept, anything else '_'.
std::string file_stem(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                c == '_' || c == '-' || c == '+';
    s += keep ? c : '_';
  }
  if (s.empty()) return "benchmark";
  if (s[0] == '.') s[0] = '_';  // no hidden files, no ".."
  return s;
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  if (f) f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) throw tile::error("cannot write " + p.string());
}

/// Display width of a UTF-8 string in code points.
std::size_t width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// Decimals for a column of numbers: none when every value is an integer, else enough that the
/// smallest non-zero magnitude shows three significant digits (at most 6).
int column_decimals(const std::vector<double>& col) {
  double smallest = std::numeric_limits<double>::infinity();
  bool all_integers = true;
  for (double v : col) {
    if (!std::isfinite(v)) continue;
    if (v != std::floor(v) || std::abs(v) >= 1e15) all_integers = false;
    if (v != 0) smallest = std::min(smallest, std::abs(v));
  }
  if (all_integers || !std::isfinite(smallest)) return 0;
  int mag = static_cast<int>(std::floor(std::log10(smallest)));
  return std::clamp(2 - mag, 0, 6);
}

std::string table_cell(double v, int decimals) {
  if (std::isnan(v)) return "NaN";
  return detail::format_fixed(v, decimals);
}

std::string csv_field(const std::string& s) {
  bool quote = s.find_first_of(",\"\r\n") != std::string::npos ||
               (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

std::string csv_number(double v) { return std::isnan(v) ? std::string() : detail::format_shortest(v); }

/// The column index of `provider` (a line value or a line name), or npos.
std::size_t provider_index(const benchmark& b, const std::string& provider) {
  for (std::size_t j = 0; j < b.line_vals.size(); ++j)
    if (b.line_vals[j] == provider) return j;
  for (std::size_t j = 0; j < b.line_names.size(); ++j)
    if (b.line_names[j] == provider) return j;
  return std::string::npos;
}

const std::string& line_name(const benchmark& b, std::size_t j) {
  return b.line_names.empty() ? b.line_vals[j] : b.line_names[j];
}

/// The benchmark with its defaults filled in and its consistency checked.
benchmark checked(benchmark b) {
  if (b.line_vals.empty()) throw tile::error("benchmark '" + b.name + "': no line_vals (providers)");
  if (b.line_names.empty()) b.line_names = b.line_vals;
  if (b.line_names.size() != b.line_vals.size())
    throw tile::error("benchmark '" + b.name + "': " + std::to_string(b.line_names.size()) + " line_names for " +
                      std::to_string(b.line_vals.size()) + " line_vals");
  if (b.ratio_of.size() == 1)
    throw tile::error("benchmark '" + b.name + "': ratio_of needs at least two providers, not just '" +
                      b.ratio_of[0] + "'");
  for (const auto& r : b.ratio_of)
    if (provider_index(b, r) == std::string::npos)
      throw tile::error("benchmark '" + b.name + "': ratio_of names '" + r + "', which is no provider");
  return b;
}

}  // namespace

// ----------------------------------------------------------------------------------------------
// Statistics

double quantile(std::vector<double> v, double q) {
  check_q(q);
  check_samples(v, "quantile");
  std::sort(v.begin(), v.end());
  return quantile_sorted(v, q);
}

bench_result summarize(std::vector<double> samples_ms, const std::vector<double>& quantiles) {
  check_samples(samples_ms, "statistics");
  for (double q : quantiles) check_q(q);
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  bench_result r;
  r.reps = sorted.size();
  r.min_ms = sorted.front();
  r.max_ms = sorted.back();
  r.median_ms = quantile_sorted(sorted, 0.5);
  r.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  for (double q : quantiles) r.quantiles.push_back(quantile_sorted(sorted, q));
  r.samples_ms = std::move(samples_ms);
  return r;
}

// ----------------------------------------------------------------------------------------------
// Timers

cpu_timer::cpu_timer(std::size_t flush_bytes, std::function<void()> sync)
    : sync_(std::move(sync)), flush_(flush_bytes) {}

void cpu_timer::start() {
  synchronize();  // work queued before the region is not the region's
  t0_ = std::chrono::steady_clock::now();
}

double cpu_timer::stop_ms() {
  synchronize();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0_).count();
}

void cpu_timer::clear_cache() {
  if (flush_.empty()) return;
  // A different value each time, read back through a volatile, so the writes cannot be elided.
  std::fill(flush_.begin(), flush_.end(), ++flush_value_);
  volatile unsigned char sink = flush_[flush_.size() / 2];
  (void)sink;
}

void cpu_timer::synchronize() {
  if (sync_) sync_();
}

namespace {

/// The cuda backend's timer, as triton.testing times a GPU: CUDA events recorded on the driver's
/// current stream around each region (start()/stop() queue them without waiting; collect_ms()
/// reads them all after synchronize()), and an L2 flush that writes a 256 MB device buffer
/// (cuMemsetD8Async, like Triton's cache.zero_()) before each timed repetition. Events are
/// pooled and reused after every collect_ms().
class cuda_timer final : public timer {
 public:
  static constexpr std::size_t flush_bytes = std::size_t{256} << 20;

  cuda_timer(tile::device dev, drivers::cuda_driver& drv) : dev_(std::move(dev)), drv_(drv) {}

  void start() override {
    start_ = take();
    events_[start_]->record();
  }
  double stop_ms() override {
    const std::size_t end = take();
    events_[end]->record();
    const double ms = drivers::cuda_event::elapsed_ms(*events_[start_], *events_[end]);
    if (pairs_.empty()) next_ = 0;  // nothing pending: the pool is free again
    return ms;
  }
  void stop() override {
    const std::size_t end = take();
    events_[end]->record();
    pairs_.emplace_back(start_, end);
  }
  void clear_cache() override {
    if (flush_.size() == 0) flush_ = dev_.alloc<unsigned char>(flush_bytes);
    flush_.fill_zero();  // on the driver's current stream, before the region's start event
  }
  void synchronize() override { dev_.synchronize(); }
  std::vector<double> collect_ms() override {
    std::vector<double> out;
    out.reserve(pairs_.size());
    for (auto [a, b] : pairs_) out.push_back(drivers::cuda_event::elapsed_ms(*events_[a], *events_[b]));
    pairs_.clear();
    next_ = 0;
    return out;
  }

 private:
  std::size_t take() {
    if (next_ == events_.size()) events_.push_back(std::make_unique<drivers::cuda_event>(drv_));
    return next_++;
  }
  tile::device dev_;
  drivers::cuda_driver& drv_;  // dev_'s driver (kept alive by dev_)
  tile::buffer<unsigned char> flush_;
  std::vector<std::unique_ptr<drivers::cuda_event>> events_;
  std::size_t next_ = 0, start_ = 0;
  std::vector<std::pair<std::size_t, std::size_t>> pairs_;  // (start, stop) event of each stop()
};

}  // namespace

std::unique_ptr<timer> make_timer(const tile::device& dev) {
  // The cuda backend: device events and a 256 MB L2 flush (cuda_timer). The backends that run
  // on the host: the host clock, after synchronizing the device, without a cache flush.
  if (auto* cuda = dynamic_cast<drivers::cuda_driver*>(&dev.impl()->driver()))
    return std::make_unique<cuda_timer>(dev, *cuda);
  tile::device d = dev;
  return std::make_unique<cpu_timer>(0, [d] { d.synchronize(); });
}

// ----------------------------------------------------------------------------------------------
// do_bench

bench_result do_bench(const std::function<void()>& fn, double warmup_ms, double rep_ms,
                      std::vector<double> quantiles, timer* t) {
  if (!fn) throw tile::error("do_bench: no function to time");
  if (!(warmup_ms >= 0) || !(rep_ms >= 0) || !std::isfinite(warmup_ms) || !std::isfinite(rep_ms))
    throw tile::error("do_bench: warmup_ms and rep_ms must be finite and >= 0, not " +
                      detail::format_shortest(warmup_ms) + " and " + detail::format_shortest(rep_ms));
  for (double q : quantiles) check_q(q);
  cpu_timer host;
  if (!t) t = &host;

  fn();
  t->synchronize();

  // Estimate fn's time from 5 runs (each after a cache flush, like the timed runs).
  t->start();
  for (int i = 0; i < 5; ++i) {
    t->clear_cache();
    fn();
  }
  double estimate_ms = t->stop_ms() / 5;
  if (!(estimate_ms > 0)) estimate_ms = 1e-9;  // a clock too coarse to see 5 runs

  constexpr double max_runs = 1e6;
  auto runs = [&](double budget_ms) {
    return static_cast<std::size_t>(std::clamp(std::floor(budget_ms / estimate_ms), 1.0, max_runs));
  };
  const std::size_t n_warmup = runs(warmup_ms), n_repeat = runs(rep_ms);

  for (std::size_t i = 0; i < n_warmup; ++i) fn();

  (void)t->collect_ms();  // nothing a caller left behind counts
  for (std::size_t i = 0; i < n_repeat; ++i) {
    t->clear_cache();
    t->start();
    fn();
    t->stop();
  }
  t->synchronize();
  std::vector<double> times = t->collect_ms();
  if (times.size() != n_repeat)
    throw tile::error("do_bench: the timer returned " + std::to_string(times.size()) + " times for " +
                      std::to_string(n_repeat) + " runs");
  return summarize(std::move(times), quantiles);
}

// ----------------------------------------------------------------------------------------------
// Sweeps

std::vector<std::string> report::columns() const {
  std::vector<std::string> c{bench.x_name};
  for (std::size_t j = 0; j < bench.line_vals.size(); ++j) c.push_back(line_name(bench, j));
  c.insert(c.end(), ratio_names.begin(), ratio_names.end());
  return c;
}

double report::at(std::size_t row, const std::string& provider) const {
  std::size_t j = provider_index(bench, provider);
  if (row >= values.size() || j == std::string::npos || j >= values[row].size())
    throw tile::error("report '" + bench.name + "': no value for '" + provider + "' in row " + std::to_string(row));
  return values[row][j];
}

std::string report::to_table() const {
  // Columns of numbers: x, then every provider, then every ratio; each formatted alike.
  std::vector<std::vector<double>> cols(1 + bench.line_vals.size() + ratio_names.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    cols[0].push_back(i < bench.x_vals.size() ? bench.x_vals[i] : nan_v);
    for (std::size_t j = 0; j < bench.line_vals.size(); ++j)
      cols[1 + j].push_back(j < values[i].size() ? values[i][j] : nan_v);
    for (std::size_t k = 0; k < ratio_names.size(); ++k)
      cols[1 + bench.line_vals.size() + k].push_back(i < ratios.size() && k < ratios[i].size() ? ratios[i][k]
                                                                                               : nan_v);
  }
  std::vector<int> decimals;
  for (const auto& c : cols) decimals.push_back(column_decimals(c));
  std::vector<std::vector<std::string>> rows(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    for (std::size_t c = 0; c < cols.size(); ++c) rows[i].push_back(table_cell(cols[c][i], decimals[c]));
  return bench.name + ":\n" + format_table(columns(), rows);
}

std::string report::to_csv() const {
  std::string o;
  auto header = columns();
  for (std::size_t c = 0; c < header.size(); ++c) o += (c ? "," : "") + csv_field(header[c]);
  o += "\n";
  for (std::size_t i = 0; i < values.size(); ++i) {
    o += csv_number(i < bench.x_vals.size() ? bench.x_vals[i] : nan_v);
    for (std::size_t j = 0; j < bench.line_vals.size(); ++j)
      o += "," + csv_number(j < values[i].size() ? values[i][j] : nan_v);
    for (std::size_t k = 0; k < ratio_names.size(); ++k)
      o += "," + csv_number(i < ratios.size() && k < ratios[i].size() ? ratios[i][k] : nan_v);
    o += "\n";
  }
  return o;
}

std::string report::to_svg() const {
  detail::plot_spec p;
  p.title = bench.name;
  p.x_label = bench.x_name;
  p.y_label = bench.ylabel;
  p.x_log = bench.x_log;
  p.y_log = bench.y_log;
  for (std::size_t j = 0; j < bench.line_vals.size(); ++j) {
    detail::plot_series s;
    s.name = line_name(bench, j);
    for (std::size_t i = 0; i < values.size() && i < bench.x_vals.size(); ++i) {
      s.x.push_back(bench.x_vals[i]);
      s.y.push_back(j < values[i].size() ? values[i][j] : nan_v);
    }
    p.series.push_back(std::move(s));
  }
  return detail::render_svg(p);
}

report run(const benchmark& b, const std::function<double(double, const std::string&)>& fn,
           const report_options& opt) {
  if (!fn) throw tile::error("benchmark '" + b.name + "': no function to run");
  report r;
  r.bench = checked(b);
  const auto& bb = r.bench;

  for (double x : bb.x_vals) {
    std::vector<double> row;
    for (const auto& provider : bb.line_vals) row.push_back(fn(x, provider));
    r.values.push_back(std::move(row));
  }

  // Ratio columns: the first name over each of the others.
  std::vector<std::pair<std::size_t, std::size_t>> ratio_cols;
  for (std::size_t k = 1; k < bb.ratio_of.size(); ++k) {
    std::size_t a = provider_index(bb, bb.ratio_of[0]), c = provider_index(bb, bb.ratio_of[k]);
    ratio_cols.emplace_back(a, c);
    r.ratio_names.push_back(line_name(bb, a) + "/" + line_name(bb, c));
  }
  for (const auto& row : r.values) {
    std::vector<double> rr;
    for (auto [a, c] : ratio_cols) {
      double num = row[a], den = row[c];
      rr.push_back(std::isfinite(num) && std::isfinite(den) && den != 0 ? num / den : nan_v);
    }
    r.ratios.push_back(std::move(rr));
  }

  if (opt.print_table) {
    std::ostream& os = opt.out ? *opt.out : std::cout;
    os << r.to_table() << '\n';
    os.flush();
  }
  if (opt.write_csv || opt.write_plot) {
    std::filesystem::path dir = opt.out_dir.empty() ? default_out_dir() : opt.out_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw tile::error("cannot create the directory " + dir.string() + ": " + ec.message());
    std::string stem = file_stem(bb.name);
    if (opt.write_csv) {
      auto path = dir / (stem + ".csv");
      write_file(path, r.to_csv());
      r.csv_path = path.string();
    }
    if (opt.write_plot) {
      auto path = dir / (stem + ".svg");
      write_file(path, r.to_svg());
      r.svg_path = path.string();
    }
  }
  return r;
}

std::vector<report> run(const std::vector<benchmark>& bs,
                        const std::function<double(double, const std::string&)>& fn,
                        const report_options& opt) {
  std::vector<report> out;
  for (const auto& b : bs) out.push_back(run(b, fn, opt));
  return out;
}

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::size_t ncols = header.size();
  for (const auto& r : rows) ncols = std::max(ncols, r.size());
  std::vector<std::size_t> w(ncols, 0);
  auto cell = [](const std::vector<std::string>& r, std::size_t c) -> std::string_view {
    return c < r.size() ? std::string_view(r[c]) : std::string_view();
  };
  for (std::size_t c = 0; c < ncols; ++c) {
    w[c] = width(cell(header, c));
    for (const auto& r : rows) w[c] = std::max(w[c], width(cell(r, c)));
  }
  std::string o;
  auto line = [&](const std::vector<std::string>& r) {
    std::string l;
    for (std::size_t c = 0; c < ncols; ++c) {
      if (c) l += "  ";
      auto s = cell(r, c);
      l.append(w[c] - width(s), ' ');
      l += s;
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    o += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return o;
}

}  // namespace tile::testing

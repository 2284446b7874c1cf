// tile/runtime/testing.hpp — layer: runtime (public). Benchmarking, the C++ counterpart of
// triton.testing: do_bench (warm-up, then every repetition timed on its own after a cache flush;
// median, mean, extremes and quantiles), the timers it measures with (a device supplies its own:
// make_timer), and perf_report-style sweeps that print an aligned table and write a CSV file and
// an SVG plot.
//
//   auto r = tile::testing::do_bench([&] { add[{grid}](x, y, out, n, "BLOCK"_c = 1024); },
//                                    25, 100, {0.2, 0.8}, tile::testing::make_timer(dev).get());
//   double gbps = 3 * n * sizeof(float) / (r.median_ms * 1e-3) / 1e9;
//
//   tile::testing::benchmark b{.name = "vector-add", .x_name = "N", .x_vals = {1 << 12, 1 << 20},
//                              .line_vals = {"tile", "c++ -O3"}, .x_log = true,
//                              .ratio_of = {"tile", "c++ -O3"}};
//   tile::testing::run(b, [&](double n, const std::string& provider) { ...; return gbps; });
//   // prints the table; writes bench-results/vector-add.csv and bench-results/vector-add.svg
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tile {
class device;
}

namespace tile::testing {

// ----------------------------------------------------------------------------------------------
// Statistics

/// What do_bench measured. Every time is in milliseconds; `quantiles` holds the values at the
/// quantiles that were asked for, in the order they were asked for.
struct bench_result {
  double median_ms = 0;
  double mean_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  std::vector<double> quantiles{};
  std::size_t reps = 0;
  std::vector<double> samples_ms{};  // one per timed repetition, in the order they ran
};

/// The q-quantile (0 <= q <= 1) of `v` with linear interpolation between the two nearest ranks:
/// numpy.quantile's (and torch.quantile's) default. quantile({1, 2, 3, 4}, 0.5) == 2.5.
/// Throws tile::error for an empty `v`, a NaN in it, or q outside [0, 1].
double quantile(std::vector<double> v, double q);

/// median, mean, min, max and the requested quantiles of `samples_ms` (kept, unsorted, in
/// samples_ms). Throws tile::error for no samples, a NaN sample or a quantile outside [0, 1].
bench_result summarize(std::vector<double> samples_ms, const std::vector<double>& quantiles = {});

// ----------------------------------------------------------------------------------------------
// Timers

/// Measures regions of work on one device. do_bench drives it as
///   start(); fn(); stop_ms()                    — once, to estimate fn's time;
///   clear_cache(); start(); fn(); stop()        — for each timed repetition, then
///   synchronize(); collect_ms()                 — to read every repetition's time at the end.
/// A GPU timer records device events in start()/stop() and reads them in collect_ms(), so the
/// timed repetitions queue up without a host round trip between them (as triton.testing does);
/// the defaults of stop()/collect_ms() suit a timer that can read its clock at once.
class timer {
 public:
  virtual ~timer() = default;
  /// Marks the start of a timed region.
  virtual void start() = 0;
  /// Ends the region begun by the last start(), waiting for its work; its duration in ms.
  virtual double stop_ms() = 0;
  /// Evicts the caches fn's data would otherwise stay warm in (Triton writes 256 MB on a GPU).
  virtual void clear_cache() {}
  /// Waits for all work queued on the device.
  virtual void synchronize() {}
  /// Ends the region begun by the last start() without necessarily waiting for it.
  virtual void stop() { pending_ms_.push_back(stop_ms()); }
  /// The durations of the regions ended by stop() since the last call, in order; call after
  /// synchronize().
  virtual std::vector<double> collect_ms() {
    std::vector<double> out;
    out.swap(pending_ms_);
    return out;
  }

 protected:
  std::vector<double> pending_ms_;
};

/// Host wall-clock time (std::chrono::steady_clock). `sync`, when set, is called before reading
/// the clock (a device's synchronize, so asynchronous work is counted). clear_cache() writes
/// `flush_bytes` bytes of memory (0, the default, does nothing: on a CPU the flush costs more
/// than it tells; default_flush_bytes is a size that evicts a typical last-level cache).
class cpu_timer final : public timer {
 public:
  static constexpr std::size_t default_flush_bytes = std::size_t{64} << 20;

  explicit cpu_timer(std::size_t flush_bytes = 0, std::function<void()> sync = {});
  void start() override;
  double stop_ms() override;
  void clear_cache() override;
  void synchronize() override;

 private:
  std::function<void()> sync_;
  std::vector<unsigned char> flush_;
  unsigned char flush_value_ = 0;
  std::chrono::steady_clock::time_point t0_{};
};

/// The timer that measures work on `dev` best. The cuda backend gets one timing with CUDA events
/// on the driver's current stream (read in collect_ms(), so repetitions queue up without a host
/// round trip) whose clear_cache() writes a 256 MB device buffer, as triton.testing does; the
/// backends running on the host get a cpu_timer that synchronizes `dev` before it reads the
/// clock and does not flush.
std::unique_ptr<timer> make_timer(const tile::device& dev);

// ----------------------------------------------------------------------------------------------
// do_bench

/// Times `fn` as triton.testing.do_bench does: runs it once, estimates its time from 5 runs
/// (each after clear_cache()), runs it n_warmup = max(1, warmup_ms / estimate) times, then times
/// n_repeat = max(1, rep_ms / estimate) runs one by one, each after clear_cache(). Returns their
/// statistics (and `quantiles`, e.g. {0.5, 0.2, 0.8}). `t` defaults to a cpu_timer without cache
/// flush; pass make_timer(dev).get() to time device work. Both counts are capped at 10^6 (an
/// empty fn on a nanosecond clock would otherwise ask for 10^8 repetitions).
bench_result do_bench(const std::function<void()>& fn, double warmup_ms = 25, double rep_ms = 100,
                      std::vector<double> quantiles = {}, timer* t = nullptr);

// ----------------------------------------------------------------------------------------------
// perf_report-style sweeps

/// One sweep: a metric of fn(x, provider) for every x in x_vals and every provider in line_vals.
struct benchmark {
  std::string name{};                     // table and plot title, and the files' stem
  std::string x_name{};                   // "N"
  std::vector<double> x_vals{};
  std::string line_arg = "provider";      // what a line is (documentation; fn gets its value)
  std::vector<std::string> line_vals{};   // providers, e.g. {"tile", "c++ -O3"}
  std::vector<std::string> line_names{};  // legend and column names (default: line_vals)
  std::string ylabel = "GB/s";
  bool x_log = false;
  bool y_log = false;
  /// Optional ratio columns: {"tile", "c++ -O3"} adds the column "tile/c++ -O3"; {a, b, c} adds
  /// a/b and a/c. Names are line_vals or line_names. Ratios are tabled and written to the CSV,
  /// not plotted.
  std::vector<std::string> ratio_of{};
};

struct report_options {
  std::string out_dir{};        // where files go; empty: $TILE_BENCH_DIR, else "bench-results"
  bool print_table = true;      // print to_table() to `out`
  bool write_csv = true;        // <out_dir>/<name>.csv
  bool write_plot = true;       // <out_dir>/<name>.svg
  std::ostream* out = nullptr;  // where the table is printed; nullptr: std::cout
};

/// The result of a sweep: values[i][j] is fn(x_vals[i], line_vals[j]) (NaN: not applicable).
struct report {
  benchmark bench;
  std::vector<std::vector<double>> values;
  std::vector<std::string> ratio_names;     // "tile/c++ -O3"
  std::vector<std::vector<double>> ratios;  // ratios[i][k]: row i, ratio_names[k]
  std::string csv_path;  // the files run() wrote ("" when not written)
  std::string svg_path;

  /// Column names: x_name, the line names, the ratio names.
  std::vector<std::string> columns() const;
  /// The value of `provider` (a line value or name) at x_vals[row]; throws tile::error if none.
  double at(std::size_t row, const std::string& provider) const;
  /// "name:" and an aligned table, one row per x (like triton's print_data).
  std::string to_table() const;
  /// A header line and one line per x; NaN is an empty field; fields are quoted as RFC 4180 says.
  std::string to_csv() const;
  /// A standalone SVG 1.1 line plot: one line with markers per provider, axes, ticks, legend.
  std::string to_svg() const;
};

/// Sweeps `b` (for every x, every provider in order), then prints and writes what `opt` asks for.
/// Throws tile::error for an inconsistent benchmark (no line_vals, line_names of another length,
/// a ratio_of name that is no line) or a file it cannot write.
report run(const benchmark& b, const std::function<double(double, const std::string&)>& fn,
           const report_options& opt = {});
std::vector<report> run(const std::vector<benchmark>& bs,
                        const std::function<double(double, const std::string&)>& fn,
                        const report_options& opt = {});

/// An aligned text table: columns right-aligned, separated by two spaces; short rows are padded.
std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

}  // namespace tile::testing

// test/runtime/test_testing.cpp — tile::testing: quantiles and statistics against numpy's values,
// do_bench's algorithm (warm-up and repetition counts from the estimate) with a timer that returns
// planted times, do_bench on real 1 ms work, perf_report-style sweeps (the table, the CSV file
// read back, the SVG plot checked for well-formedness with a small parser, ratio columns, files),
// the cuda backend's event timer where there is a cuda device.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tile/core/error.hpp>
#include <tile/runtime/device.hpp>
#include <tile/runtime/testing.hpp>
#include <vector>

#include "../requires.hpp"

#include <unistd.h>

namespace tt = tile::testing;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::size_t occurrences(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

/// Sets an environment variable for the scope, restoring the old value (or its absence) after.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~scoped_env() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A fresh, empty directory under the system's temporary directory, removed at the end.
class scratch_dir {
 public:
  explicit scratch_dir(const std::string& tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("tile-testing-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Checks that `s` is one well-formed XML element (with optional leading/trailing whitespace):
/// tags balanced and properly nested, attribute values quoted, no raw '<' in text or values,
/// every '&' an entity. Returns "" or what is wrong.
std::string xml_problem(const std::string& s) {
  std::vector<std::string> open;
  bool root_seen = false;
  std::size_t i = 0;
  auto is_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  auto check_text = [&](std::size_t from, std::size_t to) -> std::string {
    for (std::size_t k = from; k < to; ++k) {
      if (s[k] == '<') return "raw '<' at " + std::to_string(k);
      if (s[k] == '&') {
        auto semi = s.find(';', k);
        if (semi == std::string::npos || semi > to) return "unterminated entity at " + std::to_string(k);
        std::string ent = s.substr(k + 1, semi - k - 1);
        if (ent != "amp" && ent != "lt" && ent != "gt" && ent != "quot" && ent != "apos" && ent.rfind('#', 0) != 0)
          return "unknown entity &" + ent + ";";
      }
    }
    return "";
  };
  while (i < s.size()) {
    auto lt = s.find('<', i);
    std::size_t text_end = lt == std::string::npos ? s.size() : lt;
    if (open.empty()) {
      for (std::size_t k = i; k < text_end; ++k)
        if (!std::isspace(static_cast<unsigned char>(s[k]))) return "text outside the root element";
    } else if (auto p = check_text(i, text_end); !p.empty()) {
      return p;
    }
    if (lt == std::string::npos) break;
    if (s.compare(lt, 4, "<!--") == 0) {
      auto end = s.find("-->", lt);
      if (end == std::string::npos) return "unterminated comment";
      i = end + 3;
      continue;
    }
    if (s.compare(lt, 2, "<?") == 0) {
      auto end = s.find("?>", lt);
      if (end == std::string::npos) return "unterminated processing instruction";
      i = end + 2;
      continue;
    }
    if (s.compare(lt, 2, "</") == 0) {
      auto gt = s.find('>', lt);
      if (gt == std::string::npos) return "unterminated end tag";
      std::string name = s.substr(lt + 2, gt - lt - 2);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
      open.pop_back();
      i = gt + 1;
      continue;
    }
    // A start tag: a name, then attributes name="value", then > or />.
    std::size_t k = lt + 1;
    std::size_t name_start = k;
    while (k < s.size() && is_name(s[k])) ++k;
    if (k == name_start) return "a '<' that starts no tag at " + std::to_string(lt);
    std::string name = s.substr(name_start, k - name_start);
    if (open.empty()) {
      if (root_seen) return "a second root element <" + name + ">";
      root_seen = true;
    }
    bool self_closing = false;
    for (;;) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size()) return "unterminated tag <" + name;
      if (s[k] == '>') {
        ++k;
        break;
      }
      if (s.compare(k, 2, "/>") == 0) {
        self_closing = true;
        k += 2;
        break;
      }
      std::size_t a = k;
      while (k < s.size() && is_name(s[k])) ++k;
      if (k == a) return "bad attribute in <" + name + "> at " + std::to_string(k);
      if (k >= s.size() || s[k] != '=') return "attribute without value in <" + name + ">";
      ++k;
      if (k >= s.size() || s[k] != '"') return "unquoted attribute in <" + name + ">";
      auto close = s.find('"', k + 1);
      if (close == std::string::npos) return "unterminated attribute value in <" + name + ">";
      if (auto p = check_text(k + 1, close); !p.empty()) return p;
      k = close + 1;
    }
    if (!self_closing) open.push_back(name);
    i = k;
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no element";
  return "";
}

/// Splits CSV text into records of fields (RFC 4180 quoting).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any) {
    row.push_back(field);
    rows.push_back(row);
  }
  return rows;
}

double csv_value(const std::string& f) { return f.empty() ? nan_v : std::stod(f); }

/// stop_ms() returns the planted durations one after another; counts what do_bench calls.
struct planted_timer : tt::timer {
  std::vector<double> planted;
  std::size_t next = 0;
  int starts = 0, stops = 0, clears = 0, syncs = 0;
  void start() override { ++starts; }
  double stop_ms() override {
    ++stops;
    return planted.at(next++);
  }
  void clear_cache() override { ++clears; }
  void synchronize() override { ++syncs; }
};

/// Like a GPU timer: stop() only records; the times are read in collect_ms().
struct deferred_timer : tt::timer {
  std::vector<double> planted;
  int stop_ms_calls = 0, stop_calls = 0, collects = 0;
  void start() override {}
  double stop_ms() override {
    ++stop_ms_calls;
    return 5.0;  // the estimate: 1 ms a run
  }
  void stop() override { ++stop_calls; }
  std::vector<double> collect_ms() override {
    ++collects;
    std::vector<double> out(planted.begin(), planted.begin() + stop_calls);
    stop_calls = 0;
    return out;
  }
};

void spin_for(std::chrono::microseconds d) {
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < d) {
  }
}

/// The sweep most tests use: "tile" gives 2x, "ref" x, "none" NaN except at x = 4.
tt::benchmark sample_bench() {
  tt::benchmark b;
  b.name = "vector-add";
  b.x_name = "N";
  b.x_vals = {1, 4, 16};
  b.line_vals = {"tile", "ref", "none"};
  b.line_names = {"Tile", "C++ -O3", "Absent"};
  b.ylabel = "GB/s";
  b.ratio_of = {"tile", "ref"};
  return b;
}

double sample_fn(double x, const std::string& provider) {
  if (provider == "tile") return 2 * x + 0.5;
  if (provider == "ref") return x;
  return x == 4 ? 3.25 : nan_v;
}

tt::report_options quiet() {
  tt::report_options o;
  o.print_table = false;
  o.write_csv = false;
  o.write_plot = false;
  return o;
}

}  // namespace

TEST_CASE("testing: quantile interpolates linearly, as numpy.quantile does") {
  CHECK(tt::quantile({1, 2, 3, 4}, 0.5) == doctest::Approx(2.5));
  CHECK(tt::quantile({1, 2, 3, 4}, 0.2) == doctest::Approx(1.6));
  CHECK(tt::quantile({4, 3, 2, 1}, 0.2) == doctest::Approx(1.6));  // order does not matter
  CHECK(tt::quantile({1, 2, 3, 4}, 0.0) == 1);
  CHECK(tt::quantile({1, 2, 3, 4}, 1.0) == 4);
  CHECK(tt::quantile({7}, 0.3) == 7);
  // np.quantile([3, 1, 4, 1, 5, 9, 2, 6], [0.1, 0.25, 0.5, 0.75, 0.9]) = [1, 1.75, 3.5, 5.25, 6.9]
  std::vector<double> v{3, 1, 4, 1, 5, 9, 2, 6};
  CHECK(tt::quantile(v, 0.1) == doctest::Approx(1.0));
  CHECK(tt::quantile(v, 0.25) == doctest::Approx(1.75));
  CHECK(tt::quantile(v, 0.5) == doctest::Approx(3.5));
  CHECK(tt::quantile(v, 0.75) == doctest::Approx(5.25));
  CHECK(tt::quantile(v, 0.9) == doctest::Approx(6.9));
  // np.quantile([0.1, 0.2, 0.7], 0.8) = 0.5 (h = 1.6: 0.2 + 0.6 * 0.5)
  CHECK(tt::quantile({0.7, 0.1, 0.2}, 0.8) == doctest::Approx(0.5));

  CHECK_THROWS_AS(tt::quantile({}, 0.5), tile::error);
  CHECK_THROWS_AS(tt::quantile({1, 2}, -0.1), tile::error);
  CHECK_THROWS_AS(tt::quantile({1, 2}, 1.5), tile::error);
  CHECK_THROWS_AS(tt::quantile({1, 2}, nan_v), tile::error);
  CHECK_THROWS_AS(tt::quantile({1, nan_v}, 0.5), tile::error);
}

TEST_CASE("testing: summarize gives median, mean, extremes and the quantiles asked for") {
  auto r = tt::summarize({3, 1, 4, 1, 5, 9, 2, 6}, {0.9, 0.1, 0.5});
  CHECK(r.reps == 8);
  CHECK(r.median_ms == doctest::Approx(3.5));
  CHECK(r.mean_ms == doctest::Approx(31.0 / 8));
  CHECK(r.min_ms == 1);
  CHECK(r.max_ms == 9);
  REQUIRE(r.quantiles.size() == 3);  // in the order asked for
  CHECK(r.quantiles[0] == doctest::Approx(6.9));
  CHECK(r.quantiles[1] == doctest::Approx(1.0));
  CHECK(r.quantiles[2] == doctest::Approx(3.5));
  CHECK((r.samples_ms == std::vector<double>{3, 1, 4, 1, 5, 9, 2, 6}));  // kept in run order

  auto odd = tt::summarize({2, 8, 5});
  CHECK(odd.median_ms == 5);
  CHECK(odd.quantiles.empty());
  CHECK_THROWS_AS(tt::summarize({}), tile::error);
  CHECK_THROWS_AS(tt::summarize({1}, {2.0}), tile::error);
}

TEST_CASE("testing: do_bench derives warm-up and repetitions from the estimate") {
  planted_timer t;
  t.planted.push_back(10.0);  // 5 estimate runs in 10 ms: 2 ms a run
  for (int i = 0; i < 50; ++i) t.planted.push_back(i % 10 + 1);  // 1..10, five times each
  int calls = 0;
  auto r = tt::do_bench([&] { ++calls; }, 25, 100, {0.2, 0.8}, &t);
  // n_warmup = 25 / 2 = 12 (truncated), n_repeat = 100 / 2 = 50.
  CHECK(calls == 1 + 5 + 12 + 50);
  CHECK(t.clears == 5 + 50);  // before each estimate run and each timed run
  CHECK(t.starts == 1 + 50);
  CHECK(t.stops == 1 + 50);
  CHECK(t.syncs >= 2);
  CHECK(r.reps == 50);
  CHECK(r.samples_ms.size() == 50);
  CHECK(r.median_ms == doctest::Approx(5.5));
  CHECK(r.mean_ms == doctest::Approx(5.5));
  CHECK(r.min_ms == 1);
  CHECK(r.max_ms == 10);
  REQUIRE(r.quantiles.size() == 2);
  CHECK(r.quantiles[0] == doctest::Approx(2.8));  // h = 49 * 0.2 = 9.8: 2 + 0.8 * (3 - 2)
  CHECK(r.quantiles[1] == doctest::Approx(8.2));  // h = 39.2: 8 + 0.2 * (9 - 8)
}

TEST_CASE("testing: do_bench runs at least once when fn is slower than the budgets") {
  planted_timer t;
  t.planted = {1000.0, 123.0};  // 200 ms a run: 25 / 200 and 100 / 200 round down to 0
  int calls = 0;
  auto r = tt::do_bench([&] { ++calls; }, 25, 100, {}, &t);
  CHECK(calls == 1 + 5 + 1 + 1);
  CHECK(r.reps == 1);
  CHECK(r.median_ms == 123.0);
  CHECK(r.min_ms == 123.0);
  CHECK(r.max_ms == 123.0);
}

TEST_CASE("testing: do_bench reads a deferred timer's times once, after the runs") {
  deferred_timer t;
  for (int i = 0; i < 20; ++i) t.planted.push_back(i < 10 ? 1.0 : 3.0);
  auto r = tt::do_bench([] {}, 0, 20, {}, &t);  // 1 ms a run: 20 repetitions
  CHECK(t.stop_ms_calls == 1);  // the estimate only
  CHECK(r.reps == 20);
  CHECK(r.median_ms == doctest::Approx(2.0));
  CHECK(r.mean_ms == doctest::Approx(2.0));
}

TEST_CASE("testing: do_bench rejects bad arguments") {
  CHECK_THROWS_AS(tt::do_bench({}), tile::error);
  CHECK_THROWS_AS(tt::do_bench([] {}, -1, 10), tile::error);
  CHECK_THROWS_AS(tt::do_bench([] {}, 1, std::numeric_limits<double>::infinity()), tile::error);
  CHECK_THROWS_AS(tt::do_bench([] {}, 1, 1, {1.5}), tile::error);
}

TEST_CASE("testing: do_bench on 1 ms of real work") {
  using namespace std::chrono_literals;
  SUBCASE("the default host timer") {
    auto r = tt::do_bench([] { spin_for(1000us); }, 25, 100, {0.2, 0.8});
    INFO("median " << r.median_ms << " ms over " << r.reps << " runs");
    CHECK(r.median_ms > 0.5);
    CHECK(r.median_ms < 20);
    CHECK(r.min_ms >= 0.99);  // each timed region holds a whole millisecond of spinning
    CHECK(r.reps >= 1);
    CHECK(r.reps <= 100);  // the estimate is at least 1 ms
    CHECK(r.quantiles[0] <= r.median_ms);
    CHECK(r.median_ms <= r.quantiles[1]);
  }
  SUBCASE("a host timer that flushes 1 MiB before each run") {
    tt::cpu_timer t(std::size_t{1} << 20);
    auto r = tt::do_bench([] { spin_for(1000us); }, 5, 20, {}, &t);
    CHECK(r.median_ms > 0.5);
    CHECK(r.median_ms < 20);
  }
  SUBCASE("the timer a device supplies") {
    auto dev = tile::device::get("interpreter");
    auto t = tt::make_timer(dev);
    REQUIRE(t != nullptr);
    auto r = tt::do_bench([] { spin_for(1000us); }, 5, 20, {0.5}, t.get());
    CHECK(r.median_ms > 0.5);
    CHECK(r.median_ms < 20);
    CHECK(r.quantiles[0] == doctest::Approx(r.median_ms));
  }
}

TEST_CASE("testing: on a cuda device, make_timer times device work with CUDA events" * tiletest::needs_cuda) {
  std::optional<tile::device> dev = tile::device::get("cuda");
  auto t = tt::make_timer(*dev);
  REQUIRE(t != nullptr);
  // Asynchronous memsets on the device: the events see their duration, which grows with the size
  // (the host would see only the enqueue); every repetition's time is read back.
  auto small = dev->alloc<unsigned char>(std::size_t{1} << 20), big = dev->alloc<unsigned char>(std::size_t{1} << 30);
  auto rs = tt::do_bench([&] { small.fill_zero(); }, 5, 20, {}, t.get());
  auto rb = tt::do_bench([&] { big.fill_zero(); }, 5, 20, {}, t.get());
  INFO("1 MiB: " << rs.median_ms << " ms, 1 GiB: " << rb.median_ms << " ms");
  CHECK(rs.median_ms > 0);
  CHECK(rs.samples_ms.size() == rs.reps);
  CHECK(rb.samples_ms.size() == rb.reps);
  CHECK(rb.median_ms > 4 * rs.median_ms);
  CHECK(rb.median_ms < 100);  // 1 GiB at more than 10 GB/s
  // start()/stop_ms() waits for the region and returns it at once.
  t->start();
  big.fill_zero();
  CHECK(t->stop_ms() > 0);
}

TEST_CASE("testing: a sweep calls fn for every x and provider; the table shows it") {
  std::vector<std::pair<double, std::string>> calls;
  auto rep = tt::run(sample_bench(), [&](double x, const std::string& p) {
    calls.emplace_back(x, p);
    return sample_fn(x, p);
  }, quiet());
  REQUIRE(calls.size() == 9);
  CHECK((calls[0] == std::pair<double, std::string>{1, "tile"}));
  CHECK((calls[1] == std::pair<double, std::string>{1, "ref"}));
  CHECK((calls[3] == std::pair<double, std::string>{4, "tile"}));
  CHECK(rep.csv_path.empty());
  CHECK(rep.svg_path.empty());

  REQUIRE(rep.values.size() == 3);
  CHECK(rep.at(1, "tile") == 8.5);
  CHECK(rep.at(1, "C++ -O3") == 4);  // a legend name works too
  CHECK(std::isnan(rep.at(0, "none")));
  CHECK_THROWS_AS(rep.at(0, "nobody"), tile::error);
  CHECK_THROWS_AS(rep.at(3, "tile"), tile::error);

  CHECK((rep.columns() == std::vector<std::string>{"N", "Tile", "C++ -O3", "Absent", "Tile/C++ -O3"}));
  REQUIRE((rep.ratio_names == std::vector<std::string>{"Tile/C++ -O3"}));
  CHECK(rep.ratios[0][0] == doctest::Approx(2.5));
  CHECK(rep.ratios[1][0] == doctest::Approx(8.5 / 4));
  CHECK(rep.ratios[2][0] == doctest::Approx(32.5 / 16));

  std::string table = rep.to_table();
  INFO(table);
  CHECK(table.rfind("vector-add:\n", 0) == 0);
  for (const char* h : {"N", "Tile", "C++ -O3", "Absent", "Tile/C++ -O3"}) CHECK(contains(table, h));
  CHECK(contains(table, "32.50"));  // "tile" column: smallest 2.5, three significant digits
  CHECK(contains(table, "2.03"));    // the ratio 32.5 / 16 = 2.03125
  CHECK(contains(table, "NaN"));
  CHECK(contains(table, "3.25"));
  // Aligned: every line of the table (after the title) has the same length.
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // the title
  std::size_t width = 0;
  int n = 0;
  while (std::getline(lines, line)) {
    if (n++ == 0) width = line.size();
    CHECK(line.size() == width);
  }
  CHECK(n == 4);  // header + 3 rows
}

TEST_CASE("testing: the CSV reads back as the table") {
  auto b = sample_bench();
  b.line_names[1] = "C++, \"O3\"";  // needs quoting
  auto rep = tt::run(b, sample_fn, quiet());
  auto rows = parse_csv(rep.to_csv());
  REQUIRE(rows.size() == 4);  // header + one row per x
  CHECK((rows[0] == std::vector<std::string>{"N", "Tile", "C++, \"O3\"", "Absent", "Tile/C++, \"O3\""}));
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(rows[i + 1].size() == 5);
    CHECK(csv_value(rows[i + 1][0]) == b.x_vals[i]);
    CHECK(csv_value(rows[i + 1][1]) == sample_fn(b.x_vals[i], "tile"));
    CHECK(csv_value(rows[i + 1][2]) == sample_fn(b.x_vals[i], "ref"));
    CHECK(csv_value(rows[i + 1][4]) == rep.ratios[i][0]);  // shortest text reads back exactly
  }
  CHECK(rows[1][3].empty());  // NaN is an empty field
  CHECK(csv_value(rows[2][3]) == 3.25);
}

TEST_CASE("testing: the SVG plot is well-formed and shows every provider") {
  auto rep = tt::run(sample_bench(), sample_fn, quiet());
  std::string svg = rep.to_svg();
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(contains(svg, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(contains(svg, "version=\"1.1\""));
  CHECK(xml_problem(svg) == "");
  CHECK(occurrences(svg, "<polyline") == 3);
  CHECK(contains(svg, ">N</text>"));     // x label
  CHECK(contains(svg, ">GB/s</text>"));  // y label
  CHECK(contains(svg, ">vector-add</text>"));
  CHECK(contains(svg, ">Tile</text>"));
  CHECK(contains(svg, ">C++ -O3</text>"));
  CHECK(contains(svg, ">Absent</text>"));
  CHECK(contains(svg, "#1f77b4"));  // distinct colours
  CHECK(contains(svg, "#ff7f0e"));
  CHECK(contains(svg, "#2ca02c"));
  CHECK(!contains(svg, "nan"));
  CHECK(!contains(svg, "inf"));
  // Markers: 3 + 3 + 1 points, plus one in each legend entry.
  CHECK(occurrences(svg, "<circle") == 7 + 3);

  SUBCASE("names that need escaping") {
    auto b = sample_bench();
    b.name = "a<b & \"c\"";
    b.line_names[0] = "x<y>";
    auto svg2 = tt::run(b, sample_fn, quiet()).to_svg();
    CHECK(xml_problem(svg2) == "");
    CHECK(contains(svg2, "x&lt;y&gt;"));
    CHECK(contains(svg2, "a&lt;b &amp; &quot;c&quot;"));
  }
  SUBCASE("log axes: decades as ticks, non-positive values left out") {
    tt::benchmark b;
    b.name = "log";
    b.x_name = "size";
    b.x_vals = {0, 1000, 10000, 100000, 1000000};
    b.line_vals = {"a", "b"};
    b.ylabel = "ms";
    b.x_log = b.y_log = true;
    auto r = tt::run(b, [](double x, const std::string& p) { return p == "a" ? x / 1000 : -1.0; }, quiet());
    auto s = r.to_svg();
    CHECK(xml_problem(s) == "");
    CHECK(occurrences(s, "<polyline") == 2);
    CHECK(contains(s, ">1e3</text>"));  // x: 1e3..1e6, every decade labelled alike
    CHECK(contains(s, ">1e6</text>"));
    CHECK(contains(s, ">100</text>"));  // y: 1..1000, plain numbers
    CHECK(!contains(s, ">100000</text>"));
    CHECK(!contains(s, "nan"));
    CHECK(!contains(s, "inf"));
    CHECK(occurrences(s, "<circle") == 4 + 2);  // x = 0 and every "b" value are not shown
  }
  SUBCASE("no data at all still draws the axes") {
    tt::benchmark b;
    b.name = "empty";
    b.x_name = "x";
    b.line_vals = {"only"};
    auto s = tt::run(b, [](double, const std::string&) { return nan_v; }, quiet()).to_svg();
    CHECK(xml_problem(s) == "");
    CHECK(occurrences(s, "<polyline") == 1);
  }
}

TEST_CASE("testing: ratio_of with three names gives a ratio against each of the others") {
  auto b = sample_bench();
  b.line_names.clear();  // names default to line_vals
  b.ratio_of = {"tile", "ref", "none"};
  auto rep = tt::run(b, sample_fn, quiet());
  REQUIRE((rep.ratio_names == std::vector<std::string>{"tile/ref", "tile/none"}));
  CHECK(rep.ratios[1][0] == doctest::Approx(8.5 / 4));
  CHECK(rep.ratios[1][1] == doctest::Approx(8.5 / 3.25));
  CHECK(std::isnan(rep.ratios[0][1]));  // NaN denominators give NaN
  CHECK(rep.columns().back() == "tile/none");
}

TEST_CASE("testing: inconsistent benchmarks are errors") {
  auto b = sample_bench();
  b.line_vals.clear();
  b.line_names.clear();
  CHECK_THROWS_AS(tt::run(b, sample_fn, quiet()), tile::error);
  b = sample_bench();
  b.line_names.pop_back();
  CHECK_THROWS_AS(tt::run(b, sample_fn, quiet()), tile::error);
  b = sample_bench();
  b.ratio_of = {"tile", "torch"};
  CHECK_THROWS_WITH_AS(tt::run(b, sample_fn, quiet()), doctest::Contains("'torch'"), tile::error);
  b.ratio_of = {"tile"};
  CHECK_THROWS_AS(tt::run(b, sample_fn, quiet()), tile::error);
}

TEST_CASE("testing: run prints the table and writes <out_dir>/<name>.csv and .svg") {
  scratch_dir dir("run");
  std::ostringstream printed;
  tt::report_options opt;
  opt.out_dir = (dir.path() / "nested").string();
  opt.out = &printed;
  auto rep = tt::run(sample_bench(), sample_fn, opt);
  CHECK(printed.str() == rep.to_table() + "\n");
  CHECK(rep.csv_path == (dir.path() / "nested" / "vector-add.csv").string());
  CHECK(rep.svg_path == (dir.path() / "nested" / "vector-add.svg").string());
  CHECK(read_file(rep.csv_path) == rep.to_csv());
  CHECK(read_file(rep.svg_path) == rep.to_svg());

  SUBCASE("TILE_BENCH_DIR is the default directory; odd names make safe file names") {
    scoped_env env("TILE_BENCH_DIR", dir.path().string().c_str());
    auto b = sample_bench();
    b.name = "../matmul fp16/bf16";
    tt::report_options o;
    o.print_table = false;
    auto r = tt::run(b, sample_fn, o);
    CHECK(r.csv_path == (dir.path() / "_._matmul_fp16_bf16.csv").string());
    CHECK(std::filesystem::exists(r.svg_path));
  }
  SUBCASE("several benchmarks, one report each") {
    auto b2 = sample_bench();
    b2.name = "second";
    opt.print_table = false;
    auto rs = tt::run(std::vector<tt::benchmark>{sample_bench(), b2}, sample_fn, opt);
    REQUIRE(rs.size() == 2);
    CHECK(std::filesystem::exists(dir.path() / "nested" / "second.svg"));
  }
  SUBCASE("a directory that cannot be made is an error") {
    std::ofstream(dir.path() / "file") << "x";
    opt.out_dir = (dir.path() / "file" / "sub").string();
    opt.print_table = false;
    CHECK_THROWS_AS(tt::run(sample_bench(), sample_fn, opt), tile::error);
  }
}

TEST_CASE("testing: format_table aligns columns to the right") {
  std::string t = tt::format_table({"name", "ms"}, {{"add", "1.25"}, {"matmul", "12.5"}, {"short"}});
  CHECK(t ==
        "  name    ms\n"
        "   add  1.25\n"
        "matmul  12.5\n"
        " short\n");
  CHECK(tt::format_table({"µs", "x"}, {{"1", "2"}}) == "µs  x\n 1  2\n");  // widths in code points
  CHECK(tt::format_table({}, {}) == "\n");
}

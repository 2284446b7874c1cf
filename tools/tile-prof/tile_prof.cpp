// tools/tile-prof/tile_prof.cpp — tile-prof, the C++ counterpart of Proton's proton-viewer: prints
// a hatchet profile (tile's, or Proton's own) as a call-path tree with the chosen metrics, the
// kernels that took the most time, or the list of metrics. Built from the profiler's output
// sources alone (src/runtime/prof: json, profile_data, hatchet, viewer), without libtile or LLVM.
//
//   tile-prof [-m METRICS] [-d DEPTH] [-t THRESHOLD] [--top N] [-l] FILE.hatchet
//
// Exit status: 0 done; 1 the file cannot be read or is not a hatchet profile; 2 bad arguments
// (an unknown metric included).
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "runtime/prof/profile_data.hpp"
#include "runtime/prof/viewer.hpp"

namespace prof = tile::prof::detail;

namespace {

constexpr const char* usage_text =
    "usage: tile-prof [-m METRICS] [-d DEPTH] [-t THRESHOLD] [--top N] [-l] FILE.hatchet\n"
    "  -m, --metrics METRICS  comma-separated metrics to show (default time/ns; -l lists them)\n"
    "  -d, --depth DEPTH      levels of the tree to show, ROOT included (default 100)\n"
    "  -t, --threshold T      hide frames whose first metric is below T\n"
    "      --top N            also list the N kernels with the most total time\n"
    "  -l, --list             explain the metrics and list those of FILE\n"
    "  -h, --help             this text\n";

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T>
T number_arg(std::string_view option, std::string_view text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw usage_error(std::string(option) + " expects a number, not '" + std::string(text) + "'");
  return v;
}

struct arguments {
  prof::view_options view;
  bool list = false;
  bool help = false;
  std::string file;
};

arguments parse_arguments(int argc, char** argv) {
  arguments args;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    // "--opt=value" and "--opt value" (and "-m value") alike.
    std::string_view inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      if (auto eq = a.find('='); eq != std::string_view::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
    }
    auto value = [&]() -> std::string_view {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) throw usage_error(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      args.help = true;
    } else if (a == "-l" || a == "--list") {
      args.list = true;
    } else if (a == "-m" || a == "--metrics") {
      try {
        args.view.metrics = prof::split_metric_list(value());
      } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
      }
    } else if (a == "-d" || a == "--depth") {
      args.view.depth = number_arg<int>(a, value());
      if (args.view.depth < 1) throw usage_error("the depth must be at least 1");
    } else if (a == "-t" || a == "--threshold") {
      args.view.threshold = number_arg<double>(a, value());
    } else if (a == "--top") {
      args.view.top = number_arg<int>(a, value());
      if (args.view.top < 1) throw usage_error("--top needs a count of at least 1");
    } else if (a.size() > 1 && a[0] == '-') {
      throw usage_error("unknown option " + std::string(argv[i]));
    } else if (!args.file.empty()) {
      throw usage_error("one profile file at a time ('" + args.file + "', then '" +
                        std::string(a) + "')");
    } else {
      args.file = std::string(a);
    }
  }
  if (!args.help && args.file.empty()) throw usage_error("no profile file given");
  return args;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("cannot read it");
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  arguments args;
  try {
    args = parse_arguments(argc, argv);
  } catch (const usage_error& e) {
    std::cerr << "tile-prof: " << e.what() << "\n" << usage_text;
    return 2;
  }
  if (args.help) {
    std::cout << usage_text;
    return 0;
  }

  prof::profile p;
  try {
    p = prof::from_hatchet(read_file(args.file));
  } catch (const std::exception& e) {
    std::cerr << "tile-prof: " << args.file << ": " << e.what() << "\n";
    return 1;
  }

  try {
    std::cout << (args.list ? prof::metric_legend(p) : prof::render(p, args.view));
  } catch (const std::invalid_argument& e) {
    std::cerr << "tile-prof: " << e.what() << "\n" << usage_text;
    return 2;
  }
  return 0;
}

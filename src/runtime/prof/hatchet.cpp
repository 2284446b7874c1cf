// src/runtime/prof/hatchet.cpp — layer: runtime. The hatchet JSON file proton-viewer reads, as
// Triton 3.6's Proton writes it (test/runtime/data/proton/proton-sample.hatchet is a real one):
//
//   [ {"children": [...], "frame": {"name": "ROOT", "type": "function"}, "metrics": {...}},
//     {"CUDA": {"0": {"arch": "90", "bus_width": 5120, "clock_rate": ..., ...}}} ]
//
// Kernel frames carry count and "time (ns)" as integers and device_id / device_type as strings;
// scope metrics (flops, bytes, any user counter) are floats; the root lists every metric name of
// the tree as an integer 0 (hatchet then computes the inclusive values). Keys are sorted, and so
// are a frame's children, by name (Proton 3.6's sample lists eval before train, which ran first),
// so a file written, read back and written again is byte for byte the same. Also the reader,
// from_hatchet.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "runtime/prof/json.hpp"
#include "runtime/prof/profile_data.hpp"

namespace tile::prof::detail {

namespace {

// The kernel metrics Proton writes as integers, and the two it writes as strings.
constexpr const char* count_key = "count";
constexpr const char* time_key = "time (ns)";
constexpr const char* device_id_key = "device_id";
constexpr const char* device_type_key = "device_type";

bool is_integer_kernel_metric(const std::string& name) {
  return name == count_key || name == time_key;
}

std::int64_t rounded(double v) { return static_cast<std::int64_t>(std::llround(v)); }

void collect_metric_names(const frame_node& f, std::set<std::string>& names) {
  for (const auto& [name, v] : f.metrics) names.insert(name);
  if (f.kernel) {
    names.insert(count_key);
    names.insert(time_key);
  }
  for (const auto& c : f.children) collect_metric_names(*c, names);
}

json::value frame_json(const frame_node& f, json::value metrics) {
  json::value frame = json::value::object();
  frame["name"] = json::value::string(f.name);
  frame["type"] = json::value::string("function");

  // By name, equal names (a scope and a kernel) in recording order. (std::sort with that order
  // rather than std::stable_sort, which libstdc++ 12 builds on a function clang flags deprecated.)
  std::vector<std::size_t> order(f.children.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::string &na = f.children[a]->name, &nb = f.children[b]->name;
    return na != nb ? na < nb : a < b;
  });

  json::value children = json::value::array();
  for (std::size_t i : order) {
    const frame_node* c = f.children[i].get();
    json::value m = json::value::object();
    if (c->kernel) {
      m[count_key] = json::value::integer(0);
      m[time_key] = json::value::integer(0);
    }
    for (const auto& [name, v] : c->metrics)
      m[name] = c->kernel && is_integer_kernel_metric(name) ? json::value::integer(rounded(v))
                                                            : json::value::real(v);
    if (c->kernel) {
      m[device_id_key] = json::value::string(std::to_string(c->device_id));
      m[device_type_key] = json::value::string(c->device_type);
    }
    children.push_back(frame_json(*c, std::move(m)));
  }

  json::value node = json::value::object();
  node["children"] = std::move(children);
  node["frame"] = std::move(frame);
  node["metrics"] = std::move(metrics);
  return node;
}

json::value devices_json(const std::vector<device_info>& devices) {
  json::value out = json::value::object();
  for (const device_info& d : devices) {
    json::value info = json::value::object();
    // CUDA devices get every field proton-viewer's util metric reads; others what is known.
    const bool all = d.type == "CUDA";
    if (all || !d.arch.empty()) info["arch"] = json::value::string(d.arch);
    auto put = [&](const char* key, std::int64_t v) {
      if (all || v != 0) info[key] = json::value::integer(v);
    };
    put("bus_width", d.bus_width);
    put("clock_rate", d.clock_rate);
    put("memory_clock_rate", d.memory_clock_rate);
    put("num_sms", d.num_sms);
    json::value& of_type = out[d.type];
    if (of_type.is_null()) of_type = json::value::object();
    of_type[std::to_string(d.id)] = std::move(info);
  }
  return out;
}

}  // namespace

std::string to_hatchet(const profile& p) {
  std::set<std::string> names;
  collect_metric_names(p.root, names);
  json::value root_metrics = json::value::object();
  for (const std::string& name : names) {
    auto own = p.root.metrics.find(name);  // the recorder may book metrics outside any scope
    root_metrics[name] = own != p.root.metrics.end() && own->second != 0
                             ? json::value::real(own->second)
                             : json::value::integer(0);
  }
  json::value doc = json::value::array();
  doc.push_back(frame_json(p.root, std::move(root_metrics)));
  doc.push_back(devices_json(p.devices));
  // Proton's writer puts a newline before the document and one after it.
  return "\n" + json::dump(doc, 4) + "\n";
}

// ---- reading ----------------------------------------------------------------------------------

namespace {

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("hatchet: " + what);
}

int parse_device_id(const std::string& text, const std::string& where) {
  int id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    malformed(where + ": device id \"" + text + "\" is not an integer");
  return id;
}

/// `path`: the names above this frame ("/ROOT/train"), empty for the root.
void read_frame(const json::value& j, frame_node& f, bool is_root, const std::string& path) {
  const std::string at = is_root ? "the root frame" : "a frame under " + path;
  if (!j.is_object()) malformed(at + " is not an object");
  const json::value* frame = j.find("frame");
  if (!frame || !frame->is_object()) malformed(at + " has no \"frame\" object");
  const json::value* frame_name = frame->find("name");
  if (!frame_name || !frame_name->is_string())
    malformed(at + " has no \"name\" string in its \"frame\"");
  f.name = frame_name->as_string();
  const std::string where = "frame " + path + "/" + f.name;

  if (const json::value* metrics = j.find("metrics")) {
    if (!metrics->is_object()) malformed(where + ": \"metrics\" is not an object");
    for (const auto& [name, v] : metrics->members()) {
      if (name == device_id_key || name == device_type_key || name == count_key || name == time_key)
        f.kernel = !is_root;
      if (name == device_type_key) {
        if (!v.is_string()) malformed(where + ": device_type is not a string");
        f.device_type = v.as_string();
      } else if (name == device_id_key) {
        if (v.is_string()) f.device_id = parse_device_id(v.as_string(), where);
        else if (v.is_number() && v.as_number() >= 0 && v.as_number() <= 1e9)
          f.device_id = static_cast<int>(v.as_number());
        else malformed(where + ": device_id is not a device number");
      } else if (v.is_number()) {
        // The root's zeros are hatchet's placeholders, not measurements.
        if (!(is_root && v.as_number() == 0)) f.metrics[name] = v.as_number();
      }
      // Other kinds (Proton's vector-valued user metrics) have no place in the model: skipped.
    }
  }

  if (const json::value* children = j.find("children")) {
    if (!children->is_array()) malformed(where + ": \"children\" is not an array");
    for (const json::value& c : children->items()) {
      auto node = std::make_unique<frame_node>();
      read_frame(c, *node, false, path + "/" + f.name);
      f.children.push_back(std::move(node));
    }
  }
}

std::int64_t int_field(const json::value& info, const char* key, const std::string& where) {
  const json::value* v = info.find(key);
  if (!v) return 0;
  if (!v->is_number() || !(std::fabs(v->as_number()) < 9e18))
    malformed(where + ": \"" + key + "\" is not a number");
  return rounded(v->as_number());
}

void read_devices(const json::value& j, std::vector<device_info>& out) {
  if (!j.is_object()) malformed("the device map (second element) is not an object");
  for (const auto& [type, ids] : j.members()) {
    if (!ids.is_object()) malformed("device type \"" + type + "\" does not map ids to devices");
    for (const auto& [id, info] : ids.members()) {
      const std::string where = "device " + type + "/" + id;
      if (!info.is_object()) malformed(where + " is not an object");
      device_info d;
      d.type = type;
      d.id = parse_device_id(id, where);
      if (const json::value* arch = info.find("arch")) {
        // Proton writes "90"; be lenient with a number.
        d.arch = arch->is_string()   ? arch->as_string()
                 : arch->is_number() ? std::to_string(rounded(arch->as_number()))
                                     : "";
      }
      d.bus_width = int_field(info, "bus_width", where);
      d.clock_rate = int_field(info, "clock_rate", where);
      d.memory_clock_rate = int_field(info, "memory_clock_rate", where);
      d.num_sms = int_field(info, "num_sms", where);
      out.push_back(std::move(d));
    }
  }
}

}  // namespace

profile from_hatchet(std::string_view text) {
  json::value doc = json::parse(text);
  if (!doc.is_array() || doc.size() < 1 || doc.size() > 2)
    malformed("expected an array of the frame tree and the device map");
  profile p;
  read_frame(doc.items()[0], p.root, true, "");
  if (doc.size() == 2) read_devices(doc.items()[1], p.devices);
  return p;
}

}  // namespace tile::prof::detail

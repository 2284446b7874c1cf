// src/ir/printer.cpp — layer: ir. The textual form of tile IR: deterministic, MLIR-like, the
// format of TILE_DUMP_IR and of every golden test.
//
//   kernel @add(%arg0: ptr<f32> {div=16}, %arg1: i32) {
//     %0 = program_id {axis = 0} : i32  loc("add.cpp":12)
//     %1 = for %2 = %a to %b step %c iter_args(%3 = %init) -> (f32[16]) {
//       ...
//       yield %5 : f32[16]
//     }
//     return
//   }
//
// Values are numbered %0, %1, … in order of appearance in the text (an op's results before the
// arguments and ops of its regions); kernel arguments keep their names (%arg0, …). Attributes are
// printed by meaning (predicate names, cache modifiers, …); whatever an op's attrs hold beyond
// what its row in ops.def gives meaning to is printed generically, so two functions that print
// equally have equal attrs. The printer never throws on malformed IR: it is also used to dump IR
// that failed verification.
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "ir/ir.hpp"

namespace tile::ir {

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Shortest text that reads back as the same double; always looks like a float ("1.0", "inf").
std::string float_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

std::string int_list(const std::vector<std::int64_t>& v, std::size_t from = 0) {
  std::string s = "[";
  for (std::size_t i = from; i < v.size(); ++i) s += (i > from ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string_view enum_name(std::int64_t v, std::initializer_list<std::string_view> names) {
  if (v < 0 || static_cast<std::size_t>(v) >= names.size()) return {};
  return names.begin()[v];
}

/// The attribute text of one op: `{...}` parts and keyword operands, by op kind.
struct AttrText {
  std::string keyword;             // printed right after the op name (cmp predicate, rmw kind)
  std::vector<std::string> named;  // printed as {a = 1, b}
  std::string trailing;            // printed after the operands (assert message)
};

class Printer {
 public:
  explicit Printer(bool with_locations, std::function<std::string(const Op&)> note = {})
      : locs_(with_locations), note_(std::move(note)) {}

  std::string run(const Function& f) {
    out_ = "kernel @" + f.name + "(";
    for (std::size_t i = 0; i < f.body.args.size(); ++i) {
      const Value* a = f.body.args[i].get();
      std::string nm = i < f.arg_info.size() && !f.arg_info[i].name.empty() ? f.arg_info[i].name
                                                                            : "arg" + std::to_string(i);
      names_[a] = "%" + nm;
      out_ += (i ? ", " : "") + names_[a] + ": " + type_text(a->type);
      if (i < f.arg_info.size() && f.arg_info[i].divisibility > 1)
        out_ += " {div=" + std::to_string(f.arg_info[i].divisibility) + "}";
      if (i < f.arg_info.size() && (f.arg_info[i].nonneg || f.arg_info[i].positive))
        out_ += f.arg_info[i].positive ? " {positive}" : " {nonneg}";
      if (i < f.arg_info.size() && f.arg_info[i].noalias) out_ += " {noalias}";
    }
    out_ += ")";
    // the launch options: always at the GPU level (its layouts are for num_warps warps), in tile
    // IR where they are not the defaults
    const Function dflt;
    if (f.gpu || f.num_warps != dflt.num_warps || f.num_stages != dflt.num_stages || f.fp_fusion != dflt.fp_fusion ||
        f.warp_specialize != dflt.warp_specialize) {
      out_ += std::string(" attributes {") + (f.gpu ? "gpu, " : "") + "num_warps = " + std::to_string(f.num_warps) +
              ", num_stages = " + std::to_string(f.num_stages);
      if (!f.fp_fusion) out_ += ", fp_fusion = 0";
      if (f.warp_specialize >= 0) out_ += ", warp_specialize = " + std::to_string(f.warp_specialize);
      out_ += "}";
    }
    out_ += " {";
    if (locs_ && f.loc.known()) out_ += loc_text(f.loc);
    out_ += "\n";
    block(f.body, 1);
    out_ += "}\n";
    if (aliases_.empty()) return std::move(out_);
    // the layouts the types name, one line each, before the kernel
    std::string head;
    for (std::size_t i = 0; i < aliases_.size(); ++i) head += "#L" + std::to_string(i) + " = " + layout_text(aliases_[i]) + "\n";
    return head + out_;
  }

  /// `linear<[64, 64] reg = [[0, 1], [0, 2]], lane = [[1, 0], …], warp = […]>`: what the
  /// parser reads back (the bases of each register, lane and warp bit, in bit order).
  static std::string layout_text(const layout::LinearLayout& l) {
    auto bases = [](const std::vector<layout::Coords>& v) {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + int_list(v[i]);
      return s + "]";
    };
    return "linear<" + int_list(l.shape) + " reg = " + bases(l.reg) + ", lane = " + bases(l.lane) + ", warp = " + bases(l.warp) + ">";
  }

 private:
  bool locs_;
  std::function<std::string(const Op&)> note_;  // a comment after an op's line (layouts)
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  unsigned next_ = 0;
  std::vector<layout::LinearLayout> aliases_;  // #L0, #L1, … in order of first use

  /// A type as Type::str() writes it, a layout as its alias (`f32[64] #L0`).
  std::string type_text(const Type& t) {
    std::string s = t.without_layout().str();
    if (!t.layout) return s;
    std::size_t i = 0;
    while (i < aliases_.size() && !(aliases_[i] == *t.layout)) ++i;
    if (i == aliases_.size()) aliases_.push_back(*t.layout);
    return s + " #L" + std::to_string(i);
  }

  std::string define(const Value* v) {
    std::string n(1, '%');  // (not "%" + …: GCC 12's -O3 -Wrestrict false positive)
    n += std::to_string(next_++);
    names_[v] = n;
    return n;
  }
  std::string use(const Value* v) const {
    if (!v) return "<null>";
    auto it = names_.find(v);
    return it == names_.end() ? "<undefined>" : it->second;
  }
  std::string uses(const std::vector<Value*>& vs, std::size_t from = 0, std::size_t to = SIZE_MAX) const {
    std::string s;
    for (std::size_t i = from; i < vs.size() && i < to; ++i) s += (i > from ? ", " : "") + use(vs[i]);
    return s;
  }
  std::string types(const std::vector<const Type*>& ts) {
    std::string s;
    for (std::size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + type_text(*ts[i]);
    return s;
  }
  std::string result_types(const Op& op) {
    std::vector<const Type*> ts;
    for (auto& r : op.results) ts.push_back(&r->type);
    return types(ts);
  }
  std::string operand_types(const Op& op) {
    std::vector<const Type*> ts;
    for (auto* o : op.operands)
      if (o) ts.push_back(&o->type);
    return types(ts);
  }
  std::string loc_text(const src_loc& l) const {
    return "  loc(" + quote(base_name(l.file)) + ":" + std::to_string(l.line) + ")";
  }
  /// "(%5: i32, %6: f32)": defines the block's arguments.
  std::string arg_defs(const Block& b) {
    std::string s = "(";
    for (std::size_t i = 0; i < b.args.size(); ++i) s += (i ? ", " : "") + define(b.args[i].get()) + ": " + type_text(b.args[i]->type);
    return s + ")";
  }
  /// "%5 = %1, %6 = %2": defines block arguments bound to initial values (lists of equal length).
  std::string bindings(const Block& b, std::size_t first_arg, const std::vector<Value*>& init, std::size_t first_init) {
    std::string s;
    for (std::size_t i = first_arg, j = first_init; i < b.args.size(); ++i, ++j)
      s += (i > first_arg ? ", " : "") + define(b.args[i].get()) + " = " + (j < init.size() ? use(init[j]) : "<missing>");
    return s;
  }

  void indent(int depth) { out_.append(static_cast<std::size_t>(depth) * 2, ' '); }

  void block(const Block& b, int depth) {
    for (auto& op : b.ops) this->op(*op, depth);
  }

  void op(const Op& op, int depth) {
    indent(depth);
    if (!op.results.empty()) {
      for (std::size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + define(op.results[i].get());
      out_ += " = ";
    }
    out_ += op_name(op.kind);
    if (!op.regions.empty()) return region_op(op, depth);
    AttrText a = attrs(op);
    if (!a.keyword.empty()) out_ += " " + a.keyword;
    if (!op.operands.empty()) out_ += " " + uses(op.operands);
    if (!a.trailing.empty()) out_ += ", " + a.trailing;
    named(a.named);
    type_suffix(op);
    if (locs_ && op.loc.known()) out_ += loc_text(op.loc);
    if (note_) {
      std::string n = note_(op);
      if (!n.empty()) out_ += "  // " + n;
    }
    out_ += "\n";
  }

  void named(const std::vector<std::string>& parts) {
    if (parts.empty()) return;
    out_ += " {";
    for (std::size_t i = 0; i < parts.size(); ++i) out_ += (i ? ", " : "") + parts[i];
    out_ += "}";
  }

  void type_suffix(const Op& op) {
    bool conversion = op.kind == OpKind::cast || op.kind == OpKind::bitcast || op.kind == OpKind::split ||
                      op.kind == OpKind::reshape || op.kind == OpKind::broadcast ||
                      op.kind == OpKind::splat || op.kind == OpKind::expand_dims ||
                      op.kind == OpKind::permute || op.kind == OpKind::join || op.kind == OpKind::convert_layout ||
                      op.kind == OpKind::local_alloc;
    if (conversion && !op.operands.empty()) {
      out_ += " : " + operand_types(op) + " -> " + result_types(op);
    } else if (!op.results.empty()) {
      out_ += " : " + result_types(op);
    } else if (!op.operands.empty()) {
      out_ += " : " + operand_types(op);
    }
  }

  void open_region(const Op& op, bool first) {
    out_ += " {";
    if (first && locs_ && op.loc.known()) out_ += loc_text(op.loc);
    if (first && note_) {
      std::string n = note_(op);
      if (!n.empty()) out_ += "  // " + n;
    }
    out_ += "\n";
  }

  void region_op(const Op& op, int depth) {
    AttrText a = attrs(op);
    std::string res = op.results.empty() ? "" : " -> (" + result_types(op) + ")";
    const Block& r0 = *op.regions[0];
    std::size_t next_region = 0;
    if (op.kind == OpKind::for_ && op.regions.size() == 1 && op.operands.size() >= 3 &&
        r0.args.size() == op.operands.size() - 2) {
      out_ += " " + define(r0.args[0].get()) + " = " + use(op.operands[0]) + " to " + use(op.operands[1]) +
              " step " + use(op.operands[2]);
      if (r0.args.size() > 1) out_ += " iter_args(" + bindings(r0, 1, op.operands, 3) + ")";
      out_ += res;
    } else if (op.kind == OpKind::while_ && op.regions.size() == 2 && r0.args.size() == op.operands.size()) {
      out_ += " (" + bindings(r0, 0, op.operands, 0) + ")" + res;
    } else if (op.kind == OpKind::if_ && op.regions.size() == 2 && r0.args.empty() &&
               op.region(1)->args.empty()) {
      out_ += " " + uses(op.operands) + res;
    } else if ((op.kind == OpKind::reduce || op.kind == OpKind::scan) && op.regions.size() == 1) {
      out_ += " " + uses(op.operands);
      named(a.named);
      out_ += res + " combine" + arg_defs(r0);
      a.named.clear();
    } else {  // generic: every region shows its arguments
      if (!op.operands.empty()) out_ += " " + uses(op.operands);
      named(a.named);
      out_ += res;
      a.named.clear();
      for (auto& r : op.regions) {
        if (next_region) {
          indent(depth);
          out_ += "}";
        }
        out_ += " region" + arg_defs(*r);
        open_region(op, next_region == 0);
        block(*r, depth + 1);
        ++next_region;
      }
      indent(depth);
      out_ += "}\n";
      return;
    }
    named(a.named);
    open_region(op, true);
    block(r0, depth + 1);
    if (op.regions.size() > 1) {
      indent(depth);
      const Block& r1 = *op.regions[1];
      if (op.kind == OpKind::while_)
        out_ += "} do " + arg_defs(r1);
      else
        out_ += "} else";
      open_region(op, false);
      block(r1, depth + 1);
    }
    indent(depth);
    out_ += "}\n";
  }

  /// The meaning of attrs per ops.def; anything else is printed generically after it.
  AttrText attrs(const Op& op) const {
    AttrText t;
    const Attrs& a = op.attrs;
    std::size_t used_ints = 0;
    bool used_f = false, used_str = false;
    auto take = [&](std::size_t n) {
      if (a.ints.size() < n) return false;
      used_ints = n;
      return true;
    };
    auto flag = [&](std::size_t i, const char* name) {
      if (a.ints[i] == 1) t.named.push_back(name);
      else if (a.ints[i] != 0) t.named.push_back(std::string(name) + " = " + std::to_string(a.ints[i]));
    };
    auto choice = [&](std::size_t i, const char* name, std::initializer_list<std::string_view> names,
                      std::int64_t dflt) {
      if (a.ints[i] == dflt) return;
      std::string_view n = enum_name(a.ints[i], names);
      t.named.push_back(std::string(name) + " = " + (n.empty() ? std::to_string(a.ints[i]) : std::string(n)));
    };
    const Type* rt = op.results.empty() ? nullptr : &op.results[0]->type;
    switch (op.kind) {
      case OpKind::constant:
        if (rt && !rt->ptr && is_float(rt->elem)) {
          t.keyword = float_text(a.f);
          used_f = true;
        } else if (take(1)) {
          t.keyword = std::to_string(a.ints[0]);
        }
        break;
      case OpKind::program_id:
      case OpKind::num_programs:
      case OpKind::expand_dims:
      case OpKind::reduce:
        if (take(1)) t.named.push_back("axis = " + std::to_string(a.ints[0]));
        break;
      case OpKind::scan:
        if (take(2)) {
          t.named.push_back("axis = " + std::to_string(a.ints[0]));
          flag(1, "reverse");
        }
        break;
      case OpKind::div:
      case OpKind::sqrt:
      case OpKind::exp:
        if (take(1)) flag(0, "approx");
        break;
      case OpKind::arange:
        if (take(2)) t.named.push_back("start = " + std::to_string(a.ints[0]) + ", end = " + std::to_string(a.ints[1]));
        break;
      case OpKind::permute:
        used_ints = a.ints.size();
        t.named.push_back("order = " + int_list(a.ints));
        break;
      case OpKind::cmp:
        if (take(1)) {
          std::string_view n = enum_name(a.ints[0], {"eq", "ne", "lt", "le", "gt", "ge"});
          t.keyword = n.empty() ? "pred(" + std::to_string(a.ints[0]) + ")" : std::string(pred_name(CmpPred{a.ints[0]}));
        }
        break;
      case OpKind::load:
        if (take(5)) {
          choice(2, "cache", {"none", "ca", "cg", "cv"}, 0);
          choice(3, "evict", {"normal", "first", "last"}, 0);
          flag(4, "volatile");
        } else {
          used_ints = 0;
        }
        break;
      case OpKind::desc_load:
        used_ints = a.ints.size();
        t.named.push_back("block = " + int_list(a.ints));
        break;
      case OpKind::store:
        if (take(3)) {
          choice(1, "cache", {"none", "ca", "cg", "cv"}, 0);
          choice(2, "evict", {"normal", "first", "last"}, 0);
        }
        break;
      case OpKind::atomic_rmw:
        if (take(2)) {
          std::string_view n = enum_name(a.ints[0], {"add", "max", "min", "xchg", "and", "or", "xor"});
          t.keyword = n.empty() ? "kind(" + std::to_string(a.ints[0]) + ")" : std::string(n);
        }
        break;
      case OpKind::dot:
        if (take(1)) choice(0, "precision", {"tf32", "tf32x3", "ieee"}, -1);
        if (a.ints.size() >= 4 && a.ints[1] >= 0 && a.ints[1] <= 2) {  // the GPU level's engine
          used_ints = 4;
          t.named.push_back("mma = " + std::string(enum_name(a.ints[1], {"none", "warp", "warpgroup"})));
          // (no engine: warps printed only where they are not 0 or generic ints follow)
          if (a.ints[1] || a.ints[2] || a.ints[3] || a.ints.size() > 4) t.named.push_back("warps = " + int_list({a.ints[2], a.ints[3]}));
          if (a.ints.size() >= 5 && a.ints[4] >= 0 && a.ints[4] <= 2) {
            used_ints = 5;
            flag(4, "in_flight");
          }
        }
        break;
      // the pipelined loop's ops (schedule/pipeline_loops.cpp)
      case OpKind::iter_ahead:
        if (take(1)) t.named.push_back("ahead = " + std::to_string(a.ints[0]));
        break;
      case OpKind::async_copy:
        if (take(2) && a.ints[1] == (op.operands.size() >= 4 ? 1 : 0)) t.named.push_back("run = " + std::to_string(a.ints[0]));
        else used_ints = 0;  // (has_mask disagrees with the operands: all generic)
        break;
      case OpKind::async_wait:
      case OpKind::mma_wait:
        if (take(1)) t.named.push_back("pending = " + std::to_string(a.ints[0]));
        break;
      case OpKind::tensor_copy:
        if (take(2)) t.named.push_back("tensor_map = " + std::to_string(a.ints[0]) + ", box_cols = " + std::to_string(a.ints[1]));
        break;
      case OpKind::copy_barrier_init:
        if (take(1)) t.named.push_back("arrivals = " + std::to_string(a.ints[0]));
        break;
      case OpKind::copy_barrier_expect:
        if (take(1)) t.named.push_back("bytes = " + std::to_string(a.ints[0]));
        break;
      case OpKind::warp_specialize:
        if (take(3))
          t.named.push_back("producer_warps = " + std::to_string(a.ints[0]) + ", consumer_regs = " + std::to_string(a.ints[1]) +
                            ", producer_regs = " + std::to_string(a.ints[2]));
        break;
      case OpKind::turn_wait:
      case OpKind::turn_pass:
        if (take(2)) {
          t.named.push_back("groups = " + std::to_string(a.ints[0]));
          if (a.ints[1] != -1) t.named.push_back("group = " + std::to_string(a.ints[1]));
        }
        break;
      case OpKind::barrier:
        if (take(2)) {
          t.named.push_back("id = " + std::to_string(a.ints[0]));
          if (a.ints[1] != -1) t.named.push_back("threads = " + std::to_string(a.ints[1]));
        }
        break;
      case OpKind::shared_fence:
        if (take(1) && !enum_name(a.ints[0], {"none", "warp", "warpgroup"}).empty())
          t.named.push_back("mma = " + std::string(enum_name(a.ints[0], {"none", "warp", "warpgroup"})));
        else used_ints = 0;
        break;
      case OpKind::local_alloc:
        if (take(2)) {
          // (-1: not placed yet, printed only where generic ints follow, to keep them apart)
          if (a.ints[0] != -1 || a.ints.size() > 2) t.named.push_back("offset = " + std::to_string(a.ints[0]));
          flag(1, "tf32");
        }
        break;
      case OpKind::print:
        t.keyword = quote(a.str);
        used_str = true;
        if (take(1)) flag(0, "hex");
        break;
      case OpKind::assert_:
        t.trailing = quote(a.str);
        used_str = true;
        break;
      case OpKind::hint:
        if (take(2)) {
          std::string_view n = enum_name(a.ints[0], {"multiple_of", "max_contiguous"});
          std::string key = n.empty() ? "hint(" + std::to_string(a.ints[0]) + ")" : std::string(n);
          used_ints = a.ints.size();
          t.named.push_back(key + " = " + (a.ints.size() == 2 ? std::to_string(a.ints[1]) : int_list(a.ints, 1)));
        }
        break;
      default:
        break;
    }
    // load's has_mask/has_other and store's/atomic_rmw's has_mask are implied by the operand
    // count, which is printed; they are still shown when inconsistent (generic ints).
    bool implied_ok = true;
    std::size_t n = op.operands.size();
    if (op.kind == OpKind::load && used_ints == 5)
      implied_ok = a.ints[0] == (n >= 2) && a.ints[1] == (n >= 3);
    if (op.kind == OpKind::store && used_ints == 3) implied_ok = a.ints[0] == (n >= 3);
    if (op.kind == OpKind::atomic_rmw && used_ints == 2) implied_ok = a.ints[1] == (n >= 3);
    if (!implied_ok) used_ints = 0;
    if (used_ints < a.ints.size()) t.named.push_back("ints = " + int_list(a.ints, used_ints));
    if (!used_f && (a.f != 0.0 || std::signbit(a.f))) t.named.push_back("f = " + float_text(a.f));
    if (!used_str && !a.str.empty()) t.named.push_back("str = " + quote(a.str));
    return t;
  }
};

}  // namespace

std::string print(const Function& f, bool with_locations) { return Printer(with_locations).run(f); }
std::string print(const Function& f, bool with_locations, std::function<std::string(const Op&)> note) {
  return Printer(with_locations, std::move(note)).run(f);
}

std::string base_name(const char* file) {
  std::string_view f = file ? file : "";
  auto s = f.find_last_of("/\\");
  return std::string(s == std::string_view::npos ? f : f.substr(s + 1));
}

}  // namespace tile::ir

// src/ir/parser.cpp — layer: ir. Reads the textual form printer.cpp writes back into a Function,
// so that a pass can be tested as text in -> pass -> text out (test/ir/golden). The inverse of
// the printer, op form by op form: attributes printed by meaning are read back into attrs.ints
// as the front end builds them (a flag that is off and a choice left at its default are not
// printed, and come back as 0 or the default), generic `ints = [...]`, `f = ...` and `str = ...`
// after them. The GPU level's layouts come back from the `#L0 = linear<…>` lines before the
// kernel, and num_warps, num_stages and fp_fusion from its `attributes {gpu, …}` (printed for
// tile IR too where they are not the defaults; else the defaults); columns are never printed. A location's file is kept in a process-wide table of names (a
// src_loc holds a pointer to storage of static duration).
//
// Errors: tile::error "<name>:<line>:<column>: <what was expected>, found '<token>'", the name
// being what the caller passed (a file, or "<ir>").
#include <charconv>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <unordered_map>

#include "ir/ir.hpp"

namespace tile::ir {

namespace {

/// File names of parsed locations, alive until exit.
const char* intern(const std::string& s) {
  static std::mutex mu;
  static std::set<std::string> names;
  std::lock_guard l(mu);
  return names.insert(s).first->c_str();
}

enum class tok : std::uint8_t { end, ident, value, symbol, alias, integer, floating, string, punct };

struct token {
  tok kind = tok::end;
  std::string text;  // ident / value (without %) / symbol (without @) / alias (without #) / string (unquoted) / punct / number
  int line = 1, col = 1;
  std::size_t start = 0, stop = 0;  // its bytes in the text
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string name) : s_(text), name_(std::move(name)) {}

  token next() {
    skip();
    token t;
    t.line = line_;
    t.col = col_;
    t.start = i_;
    token r = lex(t);
    r.stop = i_;
    return r;
  }

  token lex(token t) {
    if (i_ >= s_.size()) return t;
    const char c = s_[i_];
    auto ident_char = [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_' || x == '.'; };
    if (c == '%' || c == '@' || c == '#') {
      get();
      t.kind = c == '%' ? tok::value : c == '@' ? tok::symbol : tok::alias;
      while (i_ < s_.size() && ident_char(s_[i_])) t.text += get();
      if (t.text.empty()) fail(t, "a name after '" + std::string(1, c) + "'");
      return t;
    }
    if (c == '"') {
      get();
      t.kind = tok::string;
      for (;;) {
        if (i_ >= s_.size() || s_[i_] == '\n') fail(t, "a closing '\"'");
        char x = get();
        if (x == '"') break;
        if (x != '\\') {
          t.text += x;
          continue;
        }
        if (i_ >= s_.size()) fail(t, "an escape");
        char e = get();
        if (e == 'n') t.text += '\n';
        else if (e == 't') t.text += '\t';
        else if (e == '"' || e == '\\') t.text += e;
        else if (e == 'x' && i_ + 1 < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_])) &&
                 std::isxdigit(static_cast<unsigned char>(s_[i_ + 1]))) {
          unsigned v = 0;
          std::from_chars(s_.data() + i_, s_.data() + i_ + 2, v, 16);
          get(), get();
          t.text += static_cast<char>(v);
        } else {
          fail(t, "an escape \\n, \\t, \\\", \\\\ or \\xHH");
        }
      }
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && i_ + 1 < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_ + 1])) || s_.substr(i_ + 1, 3) == "inf" || s_.substr(i_ + 1, 3) == "nan"))) {
      t.kind = tok::integer;
      t.text += get();
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                ((s_[i_] == '-' || s_[i_] == '+') && (t.text.back() == 'e' || t.text.back() == 'E')))) {
        t.text += get();
      }
      if (t.text.find_first_of(".eEni") != std::string::npos) t.kind = tok::floating;
      return t;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = tok::ident;
      while (i_ < s_.size() && ident_char(s_[i_])) t.text += get();
      return t;
    }
    if (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
      get(), get();
      t.kind = tok::punct;
      t.text = "->";
      return t;
    }
    if (std::string_view("(){}[]<>,:=").find(c) != std::string_view::npos) {
      t.kind = tok::punct;
      t.text = std::string(1, get());
      return t;
    }
    t.stop = i_ + 1;
    fail(t, "a token");
  }

  [[noreturn]] void fail(const token& at, const std::string& what) const {
    std::string found = "the end of the text";
    if (at.start < s_.size()) {
      const std::size_t stop = std::max(at.stop, at.start + 1);
      found = "'" + std::string(s_.substr(at.start, std::min<std::size_t>(stop - at.start, 40))) + "'";
    }
    throw tile::error(name_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": expected " + what + ", found " + found);
  }

 private:
  std::string_view s_;
  std::string name_;
  std::size_t i_ = 0;
  int line_ = 1, col_ = 1;

  char get() {
    char c = s_[i_++];
    if (c == '\n') ++line_, col_ = 1;
    else ++col_;
    return c;
  }
  void skip() {
    while (i_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        get();
      } else if (s_.substr(i_, 2) == "//") {  // a comment (the printer's notes, golden tests' CHECK lines)
        while (i_ < s_.size() && s_[i_] != '\n') get();
      } else {
        break;
      }
    }
  }
};

std::optional<dtype> dtype_named(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(dtype::f64); ++i)
    if (name(static_cast<dtype>(i)) == s) return static_cast<dtype>(i);
  return std::nullopt;
}

std::optional<OpKind> kind_named(std::string_view s) {
  static const std::unordered_map<std::string_view, OpKind> kinds = [] {
    std::unordered_map<std::string_view, OpKind> m;
#define TILE_OP(e, text, flags) m.emplace(text, OpKind::e);
#include "ir/ops.def"
#undef TILE_OP
    return m;
  }();
  auto it = kinds.find(s);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

/// A named attribute's value: an integer, a float, a word, a string or an integer list.
struct attr_value {
  token key_at, at;  // the name's token, the value's (the name's where there is no value)
  std::string word;  // ident / number text / string
  bool is_string = false, is_list = false, present = false;
  std::vector<std::int64_t> list;
};

class Parser {
 public:
  Parser(std::string_view text, std::string name) : lex_(text, std::move(name)) { advance(); }

  std::unique_ptr<Function> run() {
    auto f = std::make_unique<Function>();
    while (t_.kind == tok::alias) alias_def();
    expect_ident("kernel");
    if (t_.kind != tok::symbol) fail("the kernel's name '@name'");
    f->name = t_.text;
    advance();
    expect("(");
    while (!is(")")) {
      if (!f->body.args.empty()) expect(",");
      if (t_.kind != tok::value) fail("an argument '%name'");
      const token name = t_;
      advance();
      expect(":");
      Value* a = f->body.add_arg(type());
      ArgInfo info;
      info.name = name.text;
      while (is("{")) {
        advance();
        const token key = t_;
        const std::string w = ident("an argument property (div, positive, nonneg, noalias)");
        if (w == "div") {
          expect("=");
          info.divisibility = integer("a divisibility");
        } else if (w == "positive") {
          info.positive = info.nonneg = true;
        } else if (w == "nonneg") {
          info.nonneg = true;
        } else if (w == "noalias") {
          info.noalias = true;
        } else {
          fail_at(key, "an argument property (div, positive, nonneg, noalias)");
        }
        expect("}");
      }
      define(name, a);
      f->arg_info.push_back(info);
    }
    advance();
    if (is_ident("attributes")) kernel_attributes(*f);
    expect("{");
    f->loc = location();
    block(f->body);
    expect("}");
    if (t_.kind != tok::end) fail("the end of the text after the kernel");
    return f;
  }

 private:
  Lexer lex_;
  token t_;
  std::unordered_map<std::string, Value*> values_;
  std::unordered_map<std::string, std::shared_ptr<const layout::LinearLayout>> aliases_;

  /// `#L0 = linear<[64, 64] reg = [[0, 1]], lane = […], warp = […]>` (printer.cpp's layout_text)
  void alias_def() {
    const token name = t_;
    advance();
    expect("=");
    expect_ident("linear");
    expect("<");
    layout::LinearLayout l;
    l.shape = int_list("the tile's extents '[64, 64]'");
    auto bases = [&](const char* key) {
      expect_ident(key);
      expect("=");
      expect("[");
      std::vector<layout::Coords> v;
      while (!is("]")) {
        if (!v.empty()) expect(",");
        const token at = t_;
        v.push_back(int_list("a basis '[…]'"));
        if (v.back().size() != l.shape.size())
          fail_at(at, "a basis of " + std::to_string(l.shape.size()) + " coordinate(s) (the tile's rank)");
        for (std::size_t d = 0; d < l.shape.size(); ++d)
          if (v.back()[d] < 0 || v.back()[d] >= l.shape[d]) fail_at(at, "a basis inside the tile's extents");
      }
      advance();
      return v;
    };
    l.reg = bases("reg");
    expect(",");
    l.lane = bases("lane");
    expect(",");
    l.warp = bases("warp");
    expect(">");
    for (auto e : l.shape)
      if (e < 1 || (e & (e - 1))) fail_at(name, "extents that are powers of two");
    if (!aliases_.emplace(name.text, std::make_shared<const layout::LinearLayout>(std::move(l))).second)
      fail_at(name, "a layout name not defined before ('#" + name.text + "' is)");
  }
  std::vector<std::int64_t> int_list(const std::string& what) {
    if (!is("[")) fail(what);
    advance();
    std::vector<std::int64_t> v;
    while (!is("]")) {
      if (!v.empty()) expect(",");
      v.push_back(integer("an integer"));
    }
    advance();
    return v;
  }
  /// `attributes {gpu, num_warps = 4, num_stages = 3, fp_fusion = 0, warp_specialize = 1}`
  void kernel_attributes(Function& f) {
    advance();
    expect("{");
    for (bool first = true; !is("}"); first = false) {
      if (!first) expect(",");
      const token key = t_;
      const std::string w = ident("a kernel attribute (gpu, num_warps, num_stages, fp_fusion, warp_specialize)");
      if (w == "gpu") {
        f.gpu = true;
        continue;
      }
      expect("=");
      const token at = t_;
      const std::int64_t v = integer("an integer");
      if (w == "num_warps") {
        if (v < 1 || v > 32 || (v & (v - 1))) fail_at(at, "a power of two from 1 to 32 warps");
        f.num_warps = static_cast<int>(v);
      } else if (w == "num_stages") {
        if (v < 1 || v > 16) fail_at(at, "1 to 16 stages");
        f.num_stages = static_cast<int>(v);
      } else if (w == "fp_fusion") {
        f.fp_fusion = v != 0;
      } else if (w == "warp_specialize") {
        if (v != 0 && v != 1) fail_at(at, "0 or 1");
        f.warp_specialize = static_cast<int>(v);
      } else {
        fail_at(key, "a kernel attribute (gpu, num_warps, num_stages, fp_fusion, warp_specialize)");
      }
    }
    advance();
  }

  void advance() { t_ = lex_.next(); }
  /// The token after the current one (the lexer copied: it holds only positions).
  token peek() const {
    Lexer copy = lex_;
    return copy.next();
  }
  /// A `{` that opens attributes, not a region's body: the printer puts a body's first op on
  /// the next line, and a region's location (`loc(...)`) on the same one.
  bool at_attrs() const {
    if (!is("{")) return false;
    const token n = peek();
    return n.line == t_.line && n.kind == tok::ident && n.text != "loc";
  }
  bool is(std::string_view p) const { return t_.kind == tok::punct && t_.text == p; }
  bool is_ident(std::string_view w) const { return t_.kind == tok::ident && t_.text == w; }
  [[noreturn]] void fail(const std::string& what) const { lex_.fail(t_, what); }
  [[noreturn]] void fail_at(const token& at, const std::string& what) const { lex_.fail(at, what); }
  void expect(std::string_view p) {
    if (!is(p)) fail("'" + std::string(p) + "'");
    advance();
  }
  void expect_ident(std::string_view w) {
    if (!is_ident(w)) fail("'" + std::string(w) + "'");
    advance();
  }
  std::string ident(const std::string& what) {
    if (t_.kind != tok::ident) fail(what);
    std::string s = t_.text;
    advance();
    return s;
  }
  std::int64_t integer(const std::string& what) {
    if (t_.kind != tok::integer) fail(what);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t_.text.data(), t_.text.data() + t_.text.size(), v);
    if (ec != std::errc() || end != t_.text.data() + t_.text.size()) fail(what + " (a 64-bit integer)");
    advance();
    return v;
  }
  static std::optional<double> float_of(const std::string& s) {
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "-nan") return -std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  }
  double number(const std::string& what) {
    if (t_.kind == tok::ident && (t_.text == "inf" || t_.text == "nan")) {
      const double v = *float_of(t_.text);
      advance();
      return v;
    }
    if (t_.kind != tok::integer && t_.kind != tok::floating) fail(what);
    auto v = float_of(t_.text);
    if (!v) fail(what);
    advance();
    return *v;
  }

  Type type() {
    Type ty;
    const token at = t_;
    const std::string w = ident("a type (f32, i32[4,16], ptr<f16>, …)");
    if (w == "token") {  // the GPU level: asynchronous copies' token
      ty.token = true;
      return ty;
    }
    if (w == "ptr") {
      expect("<");
      const token e = t_;
      auto d = dtype_named(ident("an element type"));
      if (!d) fail_at(e, "an element type");
      ty.elem = *d;
      ty.ptr = true;
      expect(">");
    } else {
      auto d = dtype_named(w);
      if (!d) fail_at(at, "a type (f32, i32[4,16], ptr<f16>, …)");
      ty.elem = *d;
    }
    if (is("[")) {
      advance();
      while (!is("]")) {
        if (!ty.shape.empty()) expect(",");
        ty.shape.push_back(integer("a dimension"));
      }
      advance();
    }
    if (t_.kind == tok::alias && t_.text == "smem") {  // the GPU level: a shared-memory buffer
      advance();
      expect("<");
      const token arr = t_;
      const std::string name = ident("a buffer arrangement (swizzled, swizzled_transposed, padded, padded_transposed, barriers)");
      for (auto m : {smem::swizzled, smem::padded, smem::padded_transposed, smem::barriers, smem::swizzled_transposed})
        if (smem_name(m) == name) ty.mem = m;
      if (ty.mem == smem::none) fail_at(arr, "a buffer arrangement (swizzled, swizzled_transposed, padded, padded_transposed, barriers)");
      expect(">");
      return ty;
    }
    if (t_.kind == tok::alias) {  // the GPU level: the tile's layout
      auto it = aliases_.find(t_.text);
      if (it == aliases_.end()) fail("a layout defined before the kernel ('#" + t_.text + " = linear<…>')");
      if (it->second->shape != ty.shape) fail("a layout of the tile's extents");
      ty.layout = it->second;
      advance();
    }
    return ty;
  }
  std::vector<Type> type_list() {
    std::vector<Type> ts{type()};
    while (is(",")) advance(), ts.push_back(type());
    return ts;
  }

  void define(const token& at, Value* v) {
    if (!values_.emplace(at.text, v).second) fail_at(at, "a value not defined before ('%" + at.text + "' is)");
  }
  Value* use() {
    if (t_.kind != tok::value) fail("a value '%name'");
    auto it = values_.find(t_.text);
    if (it == values_.end()) fail("a value defined before its use");
    advance();
    return it->second;
  }
  std::vector<Value*> uses() {
    std::vector<Value*> vs;
    if (t_.kind != tok::value) return vs;
    vs.push_back(use());
    while (is(",") ) {
      advance();
      if (t_.kind != tok::value) break;  // (a trailing string follows: assert)
      vs.push_back(use());
    }
    return vs;
  }

  src_loc location() {
    src_loc l;
    if (!is_ident("loc")) return l;
    advance();
    expect("(");
    if (t_.kind != tok::string) fail("a file name string");
    l.file = intern(t_.text);
    advance();
    expect(":");
    l.line = static_cast<std::uint32_t>(integer("a line number"));
    expect(")");
    return l;
  }

  /// `{a = 1, b, order = [1, 0], str = "x"}` (any number of groups)
  std::vector<std::pair<std::string, attr_value>> named() {
    std::vector<std::pair<std::string, attr_value>> out;
    while (at_attrs()) {
      advance();
      while (!is("}")) {
        if (!out.empty() && is(",")) advance();
        const token at = t_;
        std::string key = ident("an attribute name");
        attr_value v;
        v.key_at = v.at = at;
        if (is("=")) {
          advance();
          v.present = true;
          v.at = t_;
          if (is("[")) {
            v.is_list = true;
            advance();
            while (!is("]")) {
              if (!v.list.empty()) expect(",");
              v.list.push_back(integer("an integer"));
            }
            advance();
          } else if (t_.kind == tok::string) {
            v.is_string = true;
            v.word = t_.text;
            advance();
          } else if (t_.kind == tok::ident || t_.kind == tok::integer || t_.kind == tok::floating) {
            v.word = t_.text;
            advance();
          } else {
            fail("an attribute value");
          }
        }
        out.emplace_back(std::move(key), std::move(v));
      }
      advance();
    }
    return out;
  }

  std::int64_t int_of(const attr_value& v) {
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(v.word.data(), v.word.data() + v.word.size(), x);
    if (v.is_list || v.is_string || ec != std::errc() || end != v.word.data() + v.word.size()) fail_at(v.at, "an integer");
    return x;
  }
  std::int64_t choice_of(const attr_value& v, std::initializer_list<std::string_view> names) {
    std::int64_t i = 0;
    for (auto n : names) {
      if (n == v.word) return i;
      ++i;
    }
    return int_of(v);  // the printer's fallback for an unnamed value
  }

  /// attrs from what the printer printed for `kind` (see printer.cpp's attrs()).
  Attrs attrs_of(OpKind kind, const std::string& keyword, bool has_keyword, const std::vector<std::pair<std::string, attr_value>>& n,
                 std::size_t operands, const Type* result) {
    Attrs a;
    std::unordered_map<std::string, const attr_value*> m;
    for (auto& [k, v] : n) {
      if (!m.emplace(k, &v).second) fail_at(v.key_at, "each attribute once ('" + k + "' is twice)");
    }
    auto take = [&](const char* k) -> const attr_value* {
      auto it = m.find(k);
      if (it == m.end()) return nullptr;
      const attr_value* v = it->second;
      m.erase(it);
      return v;
    };
    auto flag = [&](const char* k) -> std::int64_t {
      const attr_value* v = take(k);
      return !v ? 0 : v->present ? int_of(*v) : 1;
    };
    const attr_value* generic = take("ints");
    bool meaning = true;  // the printer printed the op's ints by meaning (else all are generic)
    switch (kind) {
      case OpKind::constant:
        if (result && !result->ptr && is_float(result->elem)) {
          auto v = float_of(keyword);
          if (!v) fail("a float constant");
          a.f = *v;
        } else {
          std::int64_t x = 0;
          const auto [end, ec] = std::from_chars(keyword.data(), keyword.data() + keyword.size(), x);
          if (ec != std::errc() || end != keyword.data() + keyword.size()) fail("an integer constant");
          a.ints = {x};
        }
        break;
      case OpKind::program_id:
      case OpKind::num_programs:
      case OpKind::expand_dims:
      case OpKind::reduce:
        if (const attr_value* v = take("axis")) a.ints = {int_of(*v)};
        else meaning = false;
        break;
      case OpKind::scan:
        if (const attr_value* v = take("axis")) a.ints = {int_of(*v), flag("reverse")};
        else meaning = false;
        break;
      case OpKind::div:
      case OpKind::sqrt:
      case OpKind::exp:
        if (flag("approx")) a.ints = {1};
        break;
      case OpKind::arange: {
        const attr_value* s = take("start");
        const attr_value* e = take("end");
        if (s && e) a.ints = {int_of(*s), int_of(*e)};
        else meaning = false;
        break;
      }
      case OpKind::permute:
        if (const attr_value* v = take("order")) a.ints = v->list;
        break;
      case OpKind::cmp: {
        static const std::vector<std::string> preds = {"eq", "ne", "lt", "le", "gt", "ge"};
        std::int64_t p = -1;
        for (std::size_t i = 0; i < preds.size(); ++i)
          if (keyword == preds[i]) p = static_cast<std::int64_t>(i);
        if (p < 0) fail("a predicate (eq, ne, lt, le, gt, ge)");
        a.ints = {p};
        break;
      }
      case OpKind::load: {
        const attr_value* c = take("cache");
        const attr_value* e = take("evict");
        a.ints = {operands >= 2, operands >= 3, c ? choice_of(*c, {"none", "ca", "cg", "cv"}) : 0,
                  e ? choice_of(*e, {"normal", "first", "last"}) : 0, flag("volatile")};
        break;
      }
      case OpKind::desc_load:
        if (const attr_value* v = take("block")) a.ints = v->list;
        break;
      case OpKind::store: {
        const attr_value* c = take("cache");
        const attr_value* e = take("evict");
        a.ints = {operands >= 3, c ? choice_of(*c, {"none", "ca", "cg", "cv"}) : 0, e ? choice_of(*e, {"normal", "first", "last"}) : 0};
        break;
      }
      case OpKind::atomic_rmw: {
        static const std::vector<std::string> kinds = {"add", "max", "min", "xchg", "and", "or", "xor"};
        std::int64_t k = -1;
        for (std::size_t i = 0; i < kinds.size(); ++i)
          if (keyword == kinds[i]) k = static_cast<std::int64_t>(i);
        if (k < 0) fail("an atomic kind (add, max, min, xchg, and, or, xor)");
        a.ints = {k, operands >= 3};
        break;
      }
      case OpKind::dot: {
        const attr_value* p = take("precision");
        a.ints = {p ? choice_of(*p, {"tf32", "tf32x3", "ieee"}) : -1};
        if (const attr_value* e = take("mma")) {  // the GPU level's engine and warps
          a.ints.push_back(choice_of(*e, {"none", "warp", "warpgroup"}));
          const attr_value* w = take("warps");
          if (w && (!w->is_list || w->list.size() != 2)) fail_at(w->at, "two warp counts '[m, n]'");
          if (w) a.ints.insert(a.ints.end(), w->list.begin(), w->list.end());
          else a.ints.insert(a.ints.end(), {0, 0});
          if (const std::int64_t f = flag("in_flight")) a.ints.push_back(f);
        }
        break;
      }
      case OpKind::iter_ahead:
        if (const attr_value* v = take("ahead")) a.ints = {int_of(*v)};
        else meaning = false;
        break;
      case OpKind::async_copy:
        if (const attr_value* v = take("run")) a.ints = {int_of(*v), operands >= 4};
        else meaning = false;
        break;
      case OpKind::async_wait:
      case OpKind::mma_wait:
        if (const attr_value* v = take("pending")) a.ints = {int_of(*v)};
        else meaning = false;
        break;
      case OpKind::tensor_copy: {
        const attr_value* map = take("tensor_map");
        const attr_value* c = take("box_cols");
        if (map && c) a.ints = {int_of(*map), int_of(*c)};
        else meaning = false;
        break;
      }
      case OpKind::copy_barrier_init:
        if (const attr_value* v = take("arrivals")) a.ints = {int_of(*v)};
        else meaning = false;
        break;
      case OpKind::copy_barrier_expect:
        if (const attr_value* v = take("bytes")) a.ints = {int_of(*v)};
        else meaning = false;
        break;
      case OpKind::warp_specialize:
        if (const attr_value* v = take("producer_warps")) {
          const attr_value* c = take("consumer_regs");
          const attr_value* p = take("producer_regs");
          a.ints = {int_of(*v), c ? int_of(*c) : 0, p ? int_of(*p) : 0};
        } else {
          meaning = false;
        }
        break;
      case OpKind::turn_wait:
      case OpKind::turn_pass:
        if (const attr_value* v = take("groups")) {
          const attr_value* g = take("group");
          a.ints = {int_of(*v), g ? int_of(*g) : -1};
        } else {
          meaning = false;
        }
        break;
      case OpKind::barrier:
        if (const attr_value* v = take("id")) {
          const attr_value* th = take("threads");
          a.ints = {int_of(*v), th ? int_of(*th) : -1};
        } else {
          meaning = false;
        }
        break;
      case OpKind::shared_fence:
        if (const attr_value* e = take("mma")) a.ints = {choice_of(*e, {"none", "warp", "warpgroup"})};
        else meaning = false;
        break;
      case OpKind::print:
        a.str = keyword;
        a.ints = {flag("hex")};
        break;
      case OpKind::local_alloc: {
        const attr_value* o = take("offset");
        const std::int64_t tf32 = flag("tf32");
        if (!o && !tf32 && generic) meaning = false;  // (all generic: fewer than two ints)
        a.ints = {o ? int_of(*o) : -1, tf32};
        break;
      }
      case OpKind::hint: {
        const attr_value* v = take("multiple_of");
        std::int64_t which = 0;
        if (!v) v = take("max_contiguous"), which = 1;
        if (v) {
          a.ints = {which};
          if (v->is_list) a.ints.insert(a.ints.end(), v->list.begin(), v->list.end());
          else a.ints.push_back(int_of(*v));
        } else {
          meaning = false;
        }
        break;
      }
      default:
        meaning = false;
        break;
    }
    if (generic) {
      if (!meaning && kind != OpKind::div && kind != OpKind::sqrt && kind != OpKind::exp) a.ints.clear();
      if (kind == OpKind::load || kind == OpKind::store || kind == OpKind::atomic_rmw || kind == OpKind::print) {
        // printed generically when the implied flags disagree with the operands: all of them
        if (generic->list.size() >= a.ints.size()) a.ints.clear();
      }
      a.ints.insert(a.ints.end(), generic->list.begin(), generic->list.end());
    }
    if (const attr_value* f = take("f")) {
      auto v = float_of(f->word);
      if (!v) fail_at(f->at, "a float");
      a.f = *v;
    }
    if (const attr_value* s = take("str")) a.str = s->word;
    if (has_keyword && kind != OpKind::constant && kind != OpKind::cmp && kind != OpKind::atomic_rmw && kind != OpKind::print)
      fail("no keyword for '" + std::string(op_name(kind)) + "'");
    if (!m.empty()) fail_at(m.begin()->second->key_at, "an attribute of '" + std::string(op_name(kind)) + "' ('" + m.begin()->first + "' is not one)");
    return a;
  }

  /// "(%a: t, %b: t)": a block's arguments
  void arg_defs(Block& b) {
    expect("(");
    while (!is(")")) {
      if (!b.args.empty()) expect(",");
      if (t_.kind != tok::value) fail("a block argument '%name'");
      const token name = t_;
      advance();
      expect(":");
      define(name, b.add_arg(type()));
    }
    advance();
  }
  /// "%a = %x, %b = %y": block arguments bound to initial values; their types are the values'.
  void bindings(Block& b, std::vector<Value*>& init) {
    while (t_.kind == tok::value) {
      const token name = t_;
      advance();
      expect("=");
      Value* v = use();
      init.push_back(v);
      define(name, b.add_arg(v->type));
      if (!is(",")) break;
      advance();
    }
  }
  std::vector<Type> arrow_results() {
    if (!is("->")) return {};
    advance();
    expect("(");
    std::vector<Type> ts = type_list();
    expect(")");
    return ts;
  }

  void block(Block& b) {
    while (!is("}")) {
      if (t_.kind == tok::end) fail("'}'");
      op(b);
    }
  }

  void op(Block& b) {
    std::vector<token> results;
    if (t_.kind == tok::value) {
      results.push_back(t_);
      advance();
      while (is(",")) {
        advance();
        if (t_.kind != tok::value) fail("a result '%name'");
        results.push_back(t_);
        advance();
      }
      expect("=");
    }
    const token name_at = t_;
    const std::string name = ident("an op name");
    auto kind = kind_named(name);
    if (!kind) fail_at(name_at, "an op name ('" + name + "' is not one)");
    if (op_flags(*kind) & opflag::R) return region_op(b, *kind, results, name_at);  // for, while, if, reduce, scan
    std::string keyword;
    bool has_keyword = false;
    if (*kind == OpKind::constant || *kind == OpKind::cmp || *kind == OpKind::atomic_rmw || *kind == OpKind::print) {
      const bool ok = *kind == OpKind::constant ? t_.kind == tok::integer || t_.kind == tok::floating ||
                                                       (t_.kind == tok::ident && (t_.text == "inf" || t_.text == "nan"))
                      : *kind == OpKind::print ? t_.kind == tok::string
                                               : t_.kind == tok::ident;
      if (!ok) fail(*kind == OpKind::constant ? "the constant's value" : *kind == OpKind::print ? "the print's prefix string"
                    : *kind == OpKind::cmp ? "a predicate (eq, ne, lt, le, gt, ge)" : "an atomic kind (add, max, …)");
      keyword = t_.text;
      has_keyword = true;
      advance();
    }
    // (an op of no operands, attributes or results, copy_fence, ends its line)
    std::vector<Value*> operands = t_.line == name_at.line ? uses() : std::vector<Value*>{};
    std::string trailing;
    if (*kind == OpKind::assert_) {
      if (t_.kind != tok::string) fail("the assert's message string");
      trailing = t_.text;
      advance();
    }
    auto n = named();
    std::vector<Type> result_types;
    if (is(":")) {
      advance();
      std::vector<Type> first = type_list();
      if (is("->")) {
        advance();
        result_types = type_list();
      } else if (!results.empty()) {
        result_types = std::move(first);
      }
    }
    if (result_types.size() != results.size())
      fail_at(name_at, std::to_string(results.size()) + " result type(s) after ':' for '" + name + "'");
    Attrs a = attrs_of(*kind, keyword, has_keyword, n, operands.size(), result_types.empty() ? nullptr : &result_types[0]);
    if (*kind == OpKind::assert_) a.str = trailing;
    const src_loc loc = location();
    Op* o = Builder(&b).create(*kind, operands, result_types, a, loc);
    for (std::size_t i = 0; i < results.size(); ++i) define(results[i], o->result(static_cast<unsigned>(i)));
  }

  void region_op(Block& b, OpKind kind, const std::vector<token>& results, const token& name_at) {
    std::vector<Value*> operands;
    std::vector<Type> result_types;
    std::vector<std::unique_ptr<Block>> regions;
    std::vector<std::pair<std::string, attr_value>> n;
    src_loc loc;
    auto body = [&](Block& r) {
      expect("{");
      const src_loc l = location();
      if (regions.size() == 1) loc = l;
      block(r);
      expect("}");
    };
    auto new_region = [&] {
      regions.push_back(std::make_unique<Block>());
      return regions.back().get();
    };
    if (kind == OpKind::for_ && t_.kind == tok::value) {
      Block* r = new_region();
      const token iv = t_;
      advance();
      expect("=");
      Value* lo = use();
      expect_ident("to");
      Value* hi = use();
      expect_ident("step");
      Value* step = use();
      operands = {lo, hi, step};
      define(iv, r->add_arg(lo->type));
      if (is_ident("iter_args")) {
        advance();
        expect("(");
        bindings(*r, operands);
        expect(")");
      }
      result_types = arrow_results();
      n = named();
      body(*r);
    } else if (kind == OpKind::while_ && is("(")) {
      Block* r0 = new_region();
      advance();
      bindings(*r0, operands);
      expect(")");
      result_types = arrow_results();
      n = named();
      body(*r0);
      expect_ident("do");
      Block* r1 = new_region();
      arg_defs(*r1);
      body(*r1);
    } else if (kind == OpKind::if_ && t_.kind == tok::value) {
      operands = uses();
      n = named();
      result_types = arrow_results();
      for (auto& x : named()) n.push_back(std::move(x));
      if (is_ident("region")) {
        while (is_ident("region")) {
          advance();
          Block* r = new_region();
          arg_defs(*r);
          body(*r);
        }
      } else {
        body(*new_region());
        Block* r1 = new_region();
        if (is_ident("else")) {
          advance();
          body(*r1);
        }
      }
    } else if ((kind == OpKind::reduce || kind == OpKind::scan) && t_.kind == tok::value) {
      operands = uses();
      n = named();
      result_types = arrow_results();
      expect_ident("combine");
      Block* r = new_region();
      arg_defs(*r);
      body(*r);
    } else {  // generic: every region with its arguments
      operands = uses();
      n = named();
      result_types = arrow_results();
      while (is_ident("region")) {
        advance();
        Block* r = new_region();
        arg_defs(*r);
        body(*r);
      }
    }
    if (result_types.size() != results.size())
      fail_at(name_at, std::to_string(results.size()) + " result type(s) after '->' for '" + std::string(op_name(kind)) + "'");
    Attrs a = attrs_of(kind, "", false, n, operands.size(), nullptr);
    Op* o = Builder(&b).create(kind, operands, result_types, a, loc, 0);
    for (auto& r : regions) {
      r->parent = o;
      o->regions.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < results.size(); ++i) define(results[i], o->result(static_cast<unsigned>(i)));
  }
};

}  // namespace

std::unique_ptr<Function> parse(std::string_view text, const std::string& name) { return Parser(text, name).run(); }

}  // namespace tile::ir

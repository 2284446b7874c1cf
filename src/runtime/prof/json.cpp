// src/runtime/prof/json.cpp — layer: runtime. The JSON value, strict parser and writer of
// json.hpp. The float spelling follows nlohmann::json (Proton's writer) so the hatchet and trace
// files tile writes are byte for byte what Proton writes for the same data.
#include "runtime/prof/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

namespace tile::prof::detail::json {

// ---- value ------------------------------------------------------------------------------------

value value::boolean(bool b) {
  value v;
  v.kind_ = kind::boolean;
  v.bool_ = b;
  return v;
}

value value::integer(std::int64_t i) { return number(static_cast<double>(i), false); }

value value::real(double d) { return number(d, true); }

value value::number(double d, bool is_float) {
  value v;
  v.kind_ = kind::number;
  v.number_ = d;
  v.float_ = is_float;
  return v;
}

value value::string(std::string s) {
  value v;
  v.kind_ = kind::string;
  v.string_ = std::move(s);
  return v;
}

value value::array() {
  value v;
  v.kind_ = kind::array;
  return v;
}

value value::object() {
  value v;
  v.kind_ = kind::object;
  return v;
}

const char* kind_name(kind k) {
  switch (k) {
    case kind::null: return "null";
    case kind::boolean: return "a boolean";
    case kind::number: return "a number";
    case kind::string: return "a string";
    case kind::array: return "an array";
    case kind::object: return "an object";
  }
  return "?";
}

void value::expect(kind k) const {
  if (kind_ != k)
    throw std::runtime_error(std::string("json: expected ") + kind_name(k) + ", found " +
                             kind_name(kind_));
}

bool value::as_bool() const {
  expect(kind::boolean);
  return bool_;
}

double value::as_number() const {
  expect(kind::number);
  return number_;
}

bool value::is_float() const {
  expect(kind::number);
  return float_;
}

const std::string& value::as_string() const {
  expect(kind::string);
  return string_;
}

const std::vector<value>& value::items() const {
  expect(kind::array);
  return items_;
}

std::vector<value>& value::items() {
  expect(kind::array);
  return items_;
}

const std::vector<member>& value::members() const {
  expect(kind::object);
  return members_;
}

namespace {
bool key_less(const member& m, std::string_view key) { return m.first < key; }
}  // namespace

value& value::operator[](std::string_view key) {
  expect(kind::object);
  auto it = std::lower_bound(members_.begin(), members_.end(), key, key_less);
  if (it == members_.end() || it->first != key) it = members_.emplace(it, std::string(key), value());
  return it->second;
}

const value* value::find(std::string_view key) const {
  expect(kind::object);
  auto it = std::lower_bound(members_.begin(), members_.end(), key, key_less);
  return it != members_.end() && it->first == key ? &it->second : nullptr;
}

const value& value::at(std::string_view key) const {
  if (const value* v = find(key)) return *v;
  throw std::runtime_error("json: no member \"" + std::string(key) + "\"");
}

void value::push_back(value v) {
  expect(kind::array);
  items_.push_back(std::move(v));
}

std::size_t value::size() const {
  return kind_ == kind::array ? items_.size() : kind_ == kind::object ? members_.size() : 0;
}

bool operator==(const value& a, const value& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case kind::null: return true;
    case kind::boolean: return a.bool_ == b.bool_;
    case kind::number: return a.number_ == b.number_ && a.float_ == b.float_;
    case kind::string: return a.string_ == b.string_;
    case kind::array: return a.items_ == b.items_;
    case kind::object: return a.members_ == b.members_;
  }
  return false;
}

// ---- parser -----------------------------------------------------------------------------------

parse_error::parse_error(const std::string& what, std::size_t line, std::size_t column)
    : std::runtime_error("json: line " + std::to_string(line) + ", column " +
                         std::to_string(column) + ": " + what),
      line_(line),
      column_(column) {}

namespace {

constexpr int max_depth = 512;  // deeper input is refused rather than overflowing the stack

class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  value parse_document() {
    skip_space();
    value v = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  [[noreturn]] void fail_at(std::size_t at, const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw parse_error(what, line, column);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  void expect_char(char c, const char* context) {
    if (peek() != c) fail(std::string("expected '") + c + "' " + context);
    ++pos_;
  }

  value parse_value(int depth) {
    if (at_end()) fail("unexpected end of input, expected a value");
    switch (peek()) {
      case '{': return parse_object(depth + 1);
      case '[': return parse_array(depth + 1);
      case '"': return value::string(parse_string());
      case 't': parse_word("true"); return value::boolean(true);
      case 'f': parse_word("false"); return value::boolean(false);
      case 'n': parse_word("null"); return value();
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return parse_number();
        fail(std::string("unexpected character '") + peek() + "', expected a value");
    }
  }

  void parse_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      fail("invalid literal, expected " + std::string(word));
    pos_ += word.size();
  }

  void check_depth(int depth) const {
    if (depth > max_depth) fail("nesting deeper than " + std::to_string(max_depth) + " levels");
  }

  value parse_object(int depth) {
    check_depth(depth);
    ++pos_;  // '{'
    value obj = value::object();
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return obj;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail("expected a string key in an object");
      std::size_t key_pos = pos_;
      std::string key = parse_string();
      if (obj.find(key)) fail_at(key_pos, "duplicate key \"" + key + "\"");
      skip_space();
      expect_char(':', "after an object key");
      skip_space();
      obj[key] = parse_value(depth);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return obj;
      }
      fail(at_end() ? "unexpected end of input in an object" : "expected ',' or '}' in an object");
    }
  }

  value parse_array(int depth) {
    check_depth(depth);
    ++pos_;  // '['
    value arr = value::array();
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return arr;
    }
    for (;;) {
      skip_space();
      arr.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return arr;
      }
      fail(at_end() ? "unexpected end of input in an array" : "expected ',' or ']' in an array");
    }
  }

  value parse_number() {
    std::size_t start = pos_;
    bool is_float = false;
    if (peek() == '-') ++pos_;
    auto digits = [&] {
      std::size_t from = pos_;
      while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - from;
    };
    if (peek() == '0') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9') fail("leading zero in a number");
    } else if (digits() == 0) {
      fail("expected a digit in a number");
    }
    if (peek() == '.') {
      ++pos_;
      is_float = true;
      if (digits() == 0) fail("expected a digit after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      is_float = true;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) fail("expected a digit in the exponent");
    }
    double d = 0;
    auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, d);
    if (ec == std::errc::result_out_of_range) fail_at(start, "number out of range");
    if (ec != std::errc() || end != text_.data() + pos_) fail_at(start, "invalid number");
    return value::number(d, is_float);
  }

  unsigned parse_hex4() {
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      char c = peek();
      unsigned digit;
      if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') digit = static_cast<unsigned>(c - 'A' + 10);
      else fail("expected four hex digits after \\u");
      u = u * 16 + digit;
      ++pos_;
    }
    return u;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    auto byte = [&](unsigned b) { out.push_back(static_cast<char>(b)); };
    if (cp < 0x80) {
      byte(cp);
    } else if (cp < 0x800) {
      byte(0xC0 | (cp >> 6));
      byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      byte(0xE0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    } else {
      byte(0xF0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3F));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    }
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string (escape it)");
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': append_utf8(out, parse_code_point()); break;
        default: --pos_; fail("invalid escape in a string");
      }
    }
  }

  /// After "\u": one code point, from a surrogate pair where the first half asks for one.
  unsigned parse_code_point() {
    std::size_t start = pos_ - 2;
    unsigned u = parse_hex4();
    if (u >= 0xDC00 && u <= 0xDFFF) fail_at(start, "lone low surrogate in a \\u escape");
    if (u < 0xD800 || u > 0xDBFF) return u;
    if (text_.substr(pos_, 2) != "\\u") fail_at(start, "high surrogate without its low half");
    pos_ += 2;
    unsigned low = parse_hex4();
    if (low < 0xDC00 || low > 0xDFFF) fail_at(start, "high surrogate without its low half");
    return 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

value parse(std::string_view text) { return parser(text).parse_document(); }

// ---- writer -----------------------------------------------------------------------------------

std::string format_float(double d) {
  if (!std::isfinite(d)) return "null";
  std::string out;
  if (std::signbit(d)) {
    out.push_back('-');
    d = -d;
  }
  if (d == 0) return out + "0.0";
  // Shortest round-trip digits, as "D.DDDDe±X": split into digits and the decimal exponent.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  std::size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_at))
    if (c != '.') digits.push_back(c);
  int exp10 = 0;
  std::string_view exp_text = sci.substr(e_at + 1);
  if (!exp_text.empty() && exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
  // value = 0.DIGITS * 10^point: `point` is where the decimal point goes in DIGITS.
  const int k = static_cast<int>(digits.size());
  const int point = exp10 + 1;
  constexpr int min_point = -4, max_point = 15;  // nlohmann's plain-decimal window
  if (k <= point && point <= max_point)
    return out + digits + std::string(static_cast<std::size_t>(point - k), '0') + ".0";
  if (0 < point && point <= max_point)
    return out + digits.substr(0, static_cast<std::size_t>(point)) + "." +
           digits.substr(static_cast<std::size_t>(point));
  if (min_point < point && point <= 0)
    return out + "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  out += digits.substr(0, 1);
  if (k > 1) out += "." + digits.substr(1);
  int e = point - 1;
  out += e < 0 ? "e-" : "e+";
  e = std::abs(e);
  if (e < 10) out.push_back('0');
  out += std::to_string(e);
  return out;
}

namespace {

std::string format_integer(double d) {
  if (!std::isfinite(d)) return "null";
  if (std::fabs(d) < 9.2e18) return std::to_string(static_cast<std::int64_t>(d));
  char buf[400];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed, 0);
  return std::string(buf, res.ptr);
}

void write_string(std::string& out, const std::string& s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(hex[static_cast<unsigned char>(c) >> 4]);
          out.push_back(hex[static_cast<unsigned char>(c) & 0xF]);
        } else {
          out.push_back(c);  // UTF-8 passes through, as nlohmann writes it (ensure_ascii off)
        }
    }
  }
  out.push_back('"');
}

void write_value(std::string& out, const value& v, int indent, int level) {
  const bool pretty = indent >= 0;
  auto newline = [&](int lvl) {
    if (!pretty) return;
    out.push_back('\n');
    out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(lvl), ' ');
  };
  switch (v.type()) {
    case kind::null: out += "null"; return;
    case kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case kind::number:
      out += v.is_float() ? format_float(v.as_number()) : format_integer(v.as_number());
      return;
    case kind::string: write_string(out, v.as_string()); return;
    case kind::array: {
      const auto& items = v.items();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out.push_back('[');
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out.push_back(',');
        newline(level + 1);
        write_value(out, items[i], indent, level + 1);
      }
      newline(level);
      out.push_back(']');
      return;
    }
    case kind::object: {
      const auto& members = v.members();
      if (members.empty()) {
        out += "{}";
        return;
      }
      out.push_back('{');
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i) out.push_back(',');
        newline(level + 1);
        write_string(out, members[i].first);
        out += pretty ? ": " : ":";
        write_value(out, members[i].second, indent, level + 1);
      }
      newline(level);
      out.push_back('}');
      return;
    }
  }
}

}  // namespace

std::string dump(const value& v, int indent) {
  std::string out;
  write_value(out, v, indent, 0);
  return out;
}

}  // namespace tile::prof::detail::json

// src/runtime/prof/json.hpp — layer: runtime. The small JSON library of the profiler's files
// (hatchet.cpp, chrome_trace.cpp, the tile-prof viewer): a value type, a strict RFC 8259 parser
// that says where the input went wrong, and a writer whose output is byte for byte what Proton's
// C++ side writes (nlohmann::json's dump): object keys sorted, 4-space indentation or compact,
// integers without a fraction and floating-point numbers always with one ("1000000.0").
//
// A number keeps which of the two it is (is_float): the parser sets it from the literal
// ("3" integer, "3.0" / "3e0" float), so a file read and written back keeps its spelling, and the
// writers choose per metric (Proton writes counts and nanoseconds as integers, user metrics such
// as flops as floats). Numbers are doubles: integers are exact up to 2^53.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tile::prof::detail::json {

enum class kind { null, boolean, number, string, array, object };

class value;
using member = std::pair<std::string, value>;

class value {
 public:
  value() = default;  // null
  static value boolean(bool b);
  static value integer(std::int64_t i);
  static value real(double d);
  static value number(double d, bool is_float);
  static value string(std::string s);
  static value array();
  static value object();

  kind type() const { return kind_; }
  bool is_null() const { return kind_ == kind::null; }
  bool is_number() const { return kind_ == kind::number; }
  bool is_string() const { return kind_ == kind::string; }
  bool is_array() const { return kind_ == kind::array; }
  bool is_object() const { return kind_ == kind::object; }

  // Accessors; each throws std::runtime_error naming both kinds when the value is another kind.
  bool as_bool() const;
  double as_number() const;
  bool is_float() const;  // numbers: written with a fraction or exponent
  const std::string& as_string() const;
  const std::vector<value>& items() const;  // arrays
  std::vector<value>& items();
  const std::vector<member>& members() const;  // objects, sorted by key

  /// Objects: the member of that key, inserted (as null, in key order) if absent.
  value& operator[](std::string_view key);
  /// Objects: the member of that key, or nullptr.
  const value* find(std::string_view key) const;
  /// Objects: the member of that key; throws std::runtime_error naming the key if absent.
  const value& at(std::string_view key) const;
  /// Arrays: appends.
  void push_back(value v);
  /// Arrays and objects: the number of elements; 0 for other kinds.
  std::size_t size() const;

  /// Same kind and contents; numbers compare by value and by is_float.
  friend bool operator==(const value& a, const value& b);

 private:
  void expect(kind k) const;

  kind kind_ = kind::null;
  bool bool_ = false;
  bool float_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<value> items_;
  std::vector<member> members_;
};

const char* kind_name(kind k);

/// Malformed JSON: what was expected, and where (1-based line and column, in bytes).
class parse_error : public std::runtime_error {
 public:
  parse_error(const std::string& what, std::size_t line, std::size_t column);
  std::size_t line() const { return line_; }
  std::size_t column() const { return column_; }

 private:
  std::size_t line_, column_;
};

/// Parses exactly one JSON value (surrounding whitespace allowed, nothing else): no comments,
/// no trailing commas, no duplicate keys, no control characters in strings, no leading zeros,
/// nesting at most 512 deep. \u escapes (surrogate pairs included) become UTF-8.
value parse(std::string_view text);

/// The value as text: indent < 0 compact ({"a":1,"b":[2,3]}); otherwise one element a line,
/// indented by `indent` spaces a level, ": " after keys, empty arrays and objects as [] and {}.
/// Non-finite numbers are written as null (JSON has no spelling for them).
std::string dump(const value& v, int indent = -1);

/// A double as Proton's writer spells a float: the shortest text that reads back exactly,
/// plain decimal from 1e-4 up to below 1e15 with at least one fractional digit ("2.176", "0.0",
/// "1000000.0", "0.0001"), otherwise scientific with a signed, at least two-digit exponent
/// ("1e+15", "1.5e-05").
std::string format_float(double d);

}  // namespace tile::prof::detail::json

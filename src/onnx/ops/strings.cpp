// String tensors: Cast to and from strings, and StringNormalizer (ONNX 1.12's Operators.md).
// Strings live on the host (StringTensor); numbers cross over as realized host vectors.
#include "strings.h"

#include <onnx/onnx_pb.h>

#include <charconv>
#include <set>
#include <string_view>
#include <type_traits>

#include "../tensor_proto.h"
#include "common.h"
#include "ember/support/kernel_scalar.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {

namespace {

using ::onnx::TensorProto;

// The shortest digits that read back as v (std::to_chars's round-trip guarantee), laid out as
// numpy's str() does (ONNX's test generator prints with it): positional for 1e-4 <= |v| < 1e16
// with at least one fractional digit ("0.1", "100.0"), scientific otherwise ("1e-05", "1.5e+16");
// NaN of either sign is "nan".
template <typename T>
std::string shortest(T v) {
  if (v != v) return "nan";
  char b[400];
  const T a = v < 0 ? -v : v;
  if (a - a != 0 || a == 0 || (a >= T(1e-4) && a < T(1e16))) {
    auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed);
    std::string text(b, r.ptr);
    if (a - a == 0 && text.find('.') == std::string::npos) text += ".0";
    return text;
  }
  auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::scientific);
  return std::string(b, r.ptr);
}

// float16 and bfloat16: the fewest significant digits whose value rounds to the same 16-bit
// word, printed as the float it reads as.
std::string shortest_16(float v, bool bfloat) {
  auto word = [bfloat](float f) { return bfloat ? ember_f2bf(f) : ember_f2h(f); };
  if (v != v || v - v != 0) return shortest(v);  // NaN and infinities
  for (int p = 1; p < 9; p++) {
    char b[64];
    auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::general, p);
    float back = 0;
    std::from_chars(b, r.ptr, back);
    if (word(back) == word(v)) return shortest(back);
  }
  return shortest(v);
}

template <typename T>
std::vector<std::string> print_all(const std::vector<T>& v) {
  std::vector<std::string> r;
  r.reserve(v.size());
  for (const T& x : v) {
    if constexpr (std::is_integral_v<T>)
      r.push_back(std::to_string(x));
    else
      r.push_back(shortest(x));
  }
  return r;
}

std::vector<std::string> to_text(const Tensor& x) {
  switch (x.dtype()) {
    case kFloat32:
      return print_all(x.to_vector<float>());
    case kFloat64:
      return print_all(x.to_vector<double>());
    case kFloat16:
    case kBFloat16: {
      std::vector<std::string> r;
      for (float v : x.to_vector<float>()) r.push_back(shortest_16(v, x.dtype() == kBFloat16));
      return r;
    }
    case kUInt8:
    case kUInt16:
    case kUInt32:
    case kUInt64:
      return print_all(x.to_vector<uint64_t>());
    case kBool:
      throw UnsupportedError(
          "Cast from bool to string is not supported (ONNX does not define "
          "the spelling)");
    default:
      return print_all(x.to_vector<int64_t>());
  }
}

// s without leading and trailing ASCII spaces and one leading '+' (from_chars takes neither).
std::string_view number_text(const std::string& s) {
  std::string_view v(s);
  const char* space = " \t\n\r\f\v";
  const size_t a = v.find_first_not_of(space);
  if (a == std::string_view::npos) return {};
  v = v.substr(a, v.find_last_not_of(space) - a + 1);
  if (v.size() > 1 && v[0] == '+' && v[1] != '-') v.remove_prefix(1);
  return v;
}

// The whole of `v` read as a T; false when it is not one (from_chars reads "inf", "infinity" and
// "nan" in any case, and decimal or scientific notation).
template <typename T>
bool read_all(std::string_view v, T& out) {
  if (v.empty()) return false;
  auto r = std::from_chars(v.data(), v.data() + v.size(), out);
  return r.ec == std::errc() && r.ptr == v.data() + v.size();
}

[[noreturn]] void not_a_number(const StringTensor& s, size_t i, ScalarType t) {
  throw ValueError("Cast: the string \"" + s.data[i] + "\" at flat index " + std::to_string(i) +
                   " is not a number within double's range (casting to " + dtype_name(t) + ")");
}

// Each string read as a T: exactly, else through double. A float beyond float's range ("1e50")
// goes to inf or 0; for an integer type, a decimal integer is read exactly and anything else is a
// float truncated by Tensor::to's rule.
template <typename T>
Tensor parse_all(const StringTensor& s, ScalarType t) {
  std::vector<T> v(s.data.size());
  for (size_t i = 0; i < v.size(); i++) {
    const std::string_view text = number_text(s.data[i]);
    if (read_all(text, v[i])) continue;
    double d = 0;
    if (!read_all(text, d)) not_a_number(s, i, t);
    if constexpr (std::is_floating_point_v<T>)
      v[i] = static_cast<T>(d);
    else
      v[i] = from_vector<double>({d}).to(dtype_of<T>()).template item<T>();
  }
  return from_blob(v.data(), s.shape, dtype_of<T>());
}

Tensor from_text(const StringTensor& s, ScalarType t) {
  switch (t) {
    case kFloat32:
    case kFloat16:
    case kBFloat16:
      return parse_all<float>(s, t).to(t);
    case kFloat64:
      return parse_all<double>(s, t);
    case kBool:
      throw UnsupportedError(
          "Cast from string to bool is not supported (ONNX does not define "
          "the spelling)");
    case kUInt64:
    case kUInt32:
    case kUInt16:
    case kUInt8:
      return parse_all<uint64_t>(s, t).to(t);
    default:
      return parse_all<int64_t>(s, t).to(t);
  }
}

// ---- StringNormalizer ------------------------------------------------------------------------

// ASCII case mapping; other bytes (UTF-8 sequences) are left alone, so text with them is
// rejected where a mapping would apply.
std::string ascii_case(std::string s, bool upper) {
  for (char& ch : s) {
    if (upper && ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
    if (!upper && ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return s;
}

bool is_ascii(const std::string& s) {
  for (unsigned char ch : s)
    if (ch >= 0x80) return false;
  return true;
}

}  // namespace

// StringNormalizer-10: drops the stopwords (compared case-insensitively unless
// is_case_sensitive), then changes case (LOWER, UPPER or NONE). X is [C] or [1, C]; the output
// is [C'] or [1, C'], and [1] or [1, 1] holding "" when every string was dropped.
std::vector<Value> string_normalizer(OpContext& c) {
  const Value& xv = c.value(0);
  if (!xv.is_strings())
    c.invalid("input 0 is a " +
              (xv.is_tensor() ? std::string(dtype_name(xv.tensor().dtype())) + " tensor"
                              : xv.kind_name()) +
              ", expected tensor(string)");
  const StringTensor& x = xv.strings();
  const std::string action = c.attr_string("case_change_action", "NONE");
  const bool sensitive = c.attr_int("is_case_sensitive", 0) != 0;
  const std::vector<std::string> stopwords =
      c.attr_strings("stopwords", std::vector<std::string>{});
  const std::string locale = c.attr_string("locale", "");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    c.invalid("case_change_action is '" + action + "'; expected LOWER, UPPER or NONE");
  if (locale.rfind("tr", 0) == 0 || locale.rfind("az", 0) == 0)
    c.unsupported("locale '" + locale +
                  "': ember maps case as ASCII does, which this locale "
                  "does not (dotted and dotless i)");
  const bool two_d = x.shape.size() == 2;
  if (!(x.shape.size() == 1 || (two_d && x.shape[0] == 1)))
    throw ShapeError("StringNormalizer's input must be [C] or [1, C], got " +
                     support::shape_str(x.shape));
  const bool maps = action != "NONE" || !sensitive;
  auto check_ascii = [&](const std::string& s) {
    if (maps && !is_ascii(s))
      c.unsupported("the string \"" + s +
                    "\" is not ASCII: ember maps the case of ASCII "
                    "letters only");
  };
  std::set<std::string> stop;
  for (const auto& w : stopwords) {
    check_ascii(w);
    stop.insert(sensitive ? w : ascii_case(w, false));
  }
  StringTensor out;
  for (const auto& s : x.data) {
    check_ascii(s);
    if (stop.count(sensitive ? s : ascii_case(s, false))) continue;
    out.data.push_back(action == "NONE" ? s : ascii_case(s, action == "UPPER"));
  }
  if (out.data.empty()) out.data.emplace_back();
  const auto n = static_cast<int64_t>(out.data.size());
  out.shape = two_d ? Shape{1, n} : Shape{n};
  return {Value::strings(std::move(out))};
}

Value cast_strings(const Value& x, int32_t to) {
  if (x.is_strings()) {
    if (to == TensorProto::STRING) return x;
    return from_text(x.strings(), require_dtype(to, "Cast's 'to'"));
  }
  const Tensor& t = x.tensor();
  return Value::strings(StringTensor{t.shape(), to_text(t)});
}

}  // namespace ember::onnx::ops

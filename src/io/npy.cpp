// NumPy .npy files (include/ember/io/npy.h documents the format and the errors). The header is
// parsed by a small strict parser of the one dict literal NumPy writes, not by a Python evaluator.
#include "ember/io/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "ember/support/atomic_file.h"
#include "ember/support/shape_str.h"

namespace ember {

static_assert(std::endian::native == std::endian::little,
              "npy: ember assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Descr {
  const char* code;  // without the byte-order character
  ScalarType dtype;
};
constexpr Descr kDescrs[] = {{"f4", kFloat32}, {"f8", kFloat64}, {"f2", kFloat16}, {"i1", kInt8},
                             {"i2", kInt16},   {"i4", kInt32},   {"i8", kInt64},   {"u1", kUInt8},
                             {"u2", kUInt16},  {"u4", kUInt32},  {"u8", kUInt64},  {"b1", kBool}};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& name) : s_(text), name_(name) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (peek() != '}') {
      const std::string key = string_literal();
      skip_ws();
      expect(':');
      skip_ws();
      auto once = [&](bool& seen) {
        if (seen) fail("key '" + key + "' appears twice");
        seen = true;
      };
      if (key == "descr") {
        once(seen_descr);
        descr = string_literal();
      } else if (key == "fortran_order") {
        once(seen_fortran);
        fortran = boolean();
      } else if (key == "shape") {
        once(seen_shape);
        shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') {
        pos_++;
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}' at header offset " + std::to_string(pos_));
      }
    }
    pos_++;
    if (!seen_descr || !seen_fortran || !seen_shape)
      fail(std::string("missing key '") +
           (!seen_descr     ? "descr"
            : !seen_fortran ? "fortran_order"
                            : "shape") +
           "'");
    while (pos_ < s_.size() && s_[pos_] == ' ') pos_++;
    if (pos_ + 1 != s_.size() || s_[pos_] != '\n')
      fail("the header does not end with spaces and one '\\n' after the dict");
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw IOError("npy file " + name_ + ": malformed header: " + why);
  }
  char peek() const {
    if (pos_ >= s_.size()) fail("it ends inside the dict");
    return s_[pos_];
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "' at header offset " + std::to_string(pos_));
    pos_++;
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) pos_++;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"')
      fail("expected a quoted string at header offset " + std::to_string(pos_));
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("an unterminated string");
    std::string r = s_.substr(pos_ + 1, end - pos_ - 1);
    if (r.find('\\') != std::string::npos) fail("escapes in strings are not supported");
    pos_ = end + 1;
    return r;
  }
  bool boolean() {
    if (s_.compare(pos_, 4, "True") == 0) return pos_ += 4, true;
    if (s_.compare(pos_, 5, "False") == 0) return pos_ += 5, false;
    fail("fortran_order must be True or False");
  }
  Shape tuple() {
    Shape r;
    expect('(');
    skip_ws();
    while (peek() != ')') {
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail("shape must be a tuple of non-negative integers");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (int64_t{1} << 55)) fail("a shape dimension is too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      r.push_back(v);
      skip_ws();
      if (peek() == ',') {
        pos_++;
        skip_ws();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the shape");
      }
    }
    pos_++;
    return r;
  }

  const std::string& s_;
  const std::string& name_;
  size_t pos_ = 0;
};

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw IOError("npy file " + name + ": " + why);
}

uint32_t little(const std::string& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

}  // namespace

Tensor parse_npy(const std::string& b, const std::string& name) {
  if (b.size() < kMagicLen + 2 || b.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    fail(name, "not an .npy file (no \\x93NUMPY magic string)");
  const int major = static_cast<uint8_t>(b[6]), minor = static_cast<uint8_t>(b[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(name, "unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (b.size() < 8 + len_bytes) fail(name, "truncated before the header length");
  const size_t header_len = little(b, 8, len_bytes), start = 8 + len_bytes;
  if (header_len > b.size() - start)
    fail(name, "truncated: the header needs " + std::to_string(header_len) + " bytes, " +
                   std::to_string(b.size() - start) + " follow");
  std::string descr;
  bool fortran = false;
  Shape shape;
  HeaderParser(b.substr(start, header_len), name).parse(descr, fortran, shape);

  std::optional<ScalarType> dtype;
  const char order = descr.empty() ? '?' : descr[0];
  for (const auto& d : kDescrs)
    if (descr.size() == 3 && descr.substr(1) == d.code) dtype = d.dtype;
  const bool one_byte = dtype && element_size(*dtype) == 1;
  if (!dtype || !(order == '<' || order == '>' || order == '=' || order == '|') ||
      (order == '|' && !one_byte))
    fail(name, "dtype '" + descr +
                   "' is not supported (ember reads <f2, <f4, <f8, |i1, <i2, <i4, <i8, |u1, <u2, "
                   "<u4, <u8, |b1)");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (int64_t{1} << 48) / d) fail(name, "the shape's element count overflows");
    n *= d;
  }
  const size_t es = element_size(*dtype);
  const size_t data_at = start + header_len, want = static_cast<size_t>(n) * es;
  if (b.size() - data_at != want)
    fail(name, "the data holds " + std::to_string(b.size() - data_at) + " bytes, shape " +
                   support::shape_str(shape) + " of " + descr + " needs " + std::to_string(want));
  std::vector<char> data(b.begin() + static_cast<std::ptrdiff_t>(data_at), b.end());
  if (order == '>' && es > 1)
    for (size_t i = 0; i < data.size(); i += es) std::reverse(&data[i], &data[i] + es);
  if (*dtype == kBool)
    for (char& c : data) c = c != 0;
  if (!fortran) return from_blob(data.data(), shape, *dtype);
  // Fortran order is C order of the reversed shape, transposed.
  Shape rev(shape.rbegin(), shape.rend());
  std::vector<int64_t> perm(shape.size());
  for (size_t i = 0; i < perm.size(); i++) perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
  Tensor t = from_blob(data.data(), rev, *dtype).permute(perm).contiguous();
  t.realize();
  return t;
}

Tensor load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("'" + path + "'", "cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail("'" + path + "'", "read error");
  return parse_npy(s.str(), "'" + path + "'");
}

std::string format_npy(const Tensor& t) {
  const char* descr = nullptr;
  for (const auto& d : kDescrs)
    if (d.dtype == t.dtype()) descr = d.code;
  if (!descr)  // bfloat16: NumPy has no such type
    throw IOError(std::string("npy: dtype ") + dtype_name(t.dtype()) +
                  " has no .npy type code (NumPy has no bfloat16); convert it first, e.g. "
                  ".to(kFloat32)");
  const std::string order = element_size(t.dtype()) == 1 ? "|" : "<";
  std::string shape = "(";
  for (int64_t i = 0; i < t.dim(); i++)
    shape += std::to_string(t.sizes()[i]) + (t.dim() == 1 ? "," : i + 1 < t.dim() ? ", " : "");
  shape += ")";
  std::string header =
      "{'descr': '" + order + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces and a final '\n' so that the data starts at a multiple of 64 bytes.
  const bool v2 = header.size() + 1 + 10 > 65535;
  const size_t prefix = v2 ? 12 : 10;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); i++)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  Tensor c = t.is_realized() ? t : t.contiguous();
  c.realize();
  const size_t nbytes = static_cast<size_t>(c.numel()) * element_size(c.dtype());
  if (nbytes) out.append(static_cast<const char*>(c.data_ptr()), nbytes);
  return out;
}

void save_npy(const Tensor& t, const std::string& path) {
  const std::string bytes = format_npy(t);
  support::write_file_atomic(path, bytes, "npy file '" + path + "': ");
}

}  // namespace ember

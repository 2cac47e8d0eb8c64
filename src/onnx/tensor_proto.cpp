// TensorProto -> ember tensor. The ONNX IR spec (onnx/onnx.proto, TensorProto) defines the
// fields: raw_data holds the elements little-endian in row-major order; otherwise the typed field
// of the element type does (float_data, int32_data for int32/int16/int8/uint16/uint8/bool/float16,
// int64_data, double_data, uint64_data for uint32/uint64); data_location EXTERNAL puts raw bytes
// in a file named by external_data's "location", at "offset" for "length" bytes. STRING tensors
// keep one byte string per element in string_data.
#include "tensor_proto.h"

#include "ember/support/shape_str.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>
#include <vector>

namespace ember::onnx {

static_assert(std::endian::native == std::endian::little,
              "ONNX raw data is little-endian; ember reads it in place of native order");

namespace {

using ::onnx::TensorProto;

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw IOError(what + ": " + why);
}

// Bytes = numel * element size with overflow checks (a corrupt dim must not wrap around).
int64_t checked_numel(const TensorProto& p, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : p.dims()) {
    if (d < 0) bad(what, "negative dimension " + std::to_string(d));
    if (d != 0 && n > (int64_t{1} << 48) / d)
      bad(what, "shape has more than 2^48 elements (a corrupt dimension?)");
    n *= d;
  }
  return n;
}

// Reads [offset, offset + length) of an external data file that must lie under base_dir.
std::string read_external(const TensorProto& p, const std::string& base_dir,
                          const std::string& what, int64_t want) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    auto number = [&](const std::string& v) {
      try {
        size_t used = 0;
        long long x = std::stoll(v, &used);
        if (used != v.size() || x < 0) throw std::invalid_argument(v);
        return static_cast<int64_t>(x);
      } catch (const std::exception&) {
        bad(what, "external_data '" + kv.key() + "' is not a non-negative integer: '" + v + "'");
      }
    };
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = number(kv.value());
    else if (kv.key() == "length")
      length = number(kv.value());
    // "checksum" (SHA-1, optional) is not verified.
  }
  if (location.empty()) bad(what, "external data without a 'location'");
  namespace fs = std::filesystem;
  fs::path rel(location);
  if (rel.is_absolute()) bad(what, "external data location '" + location + "' is absolute");
  for (const auto& part : rel)
    if (part == "..")
      bad(what, "external data location '" + location + "' leaves the model's directory");
  const fs::path file = fs::path(base_dir) / rel;
  std::ifstream in(file, std::ios::binary);
  if (!in) bad(what, "cannot open external data file '" + file.string() + "'");
  in.seekg(0, std::ios::end);
  const int64_t size = static_cast<int64_t>(in.tellg());
  if (length < 0) length = size - offset;
  if (offset > size || length > size - offset)
    bad(what, "external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                  ") runs past the end of '" + file.string() + "' (" + std::to_string(size) +
                  " bytes)");
  if (length != want)
    bad(what, "external data holds " + std::to_string(length) + " bytes, the shape needs " +
                  std::to_string(want));
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  if (!in.read(bytes.data(), length))
    bad(what, "cannot read external data file '" + file.string() + "'");
  return bytes;
}

// The typed field's values as a tensor of dtype t: the low element_size(t) bytes of each, which
// (little-endian) are the whole value in the field of t's own type (float_data for float32, ...),
// the value modulo 2^bits for a narrower integer, and float16's or bfloat16's 16-bit word.
template <typename Field>
Tensor from_field(const Field& field, int64_t n, const Shape& shape, ScalarType t,
                  const std::string& what, const char* field_name) {
  if (field.size() != n)
    bad(what, std::string(field_name) + " holds " + std::to_string(field.size()) +
                  " values, the shape needs " + std::to_string(n));
  const size_t es = element_size(t);
  std::vector<char> bytes(static_cast<size_t>(n) * es);
  for (int64_t i = 0; i < n; i++) {
    const auto v = field.Get(static_cast<int>(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * es, &v, std::min(es, sizeof v));
  }
  return from_blob(bytes.data(), shape, t);
}

// ONNX's element type of each ember dtype (onnx.proto, TensorProto::DataType).
constexpr std::pair<ScalarType, int32_t> kElemTypes[] = {
    {kFloat32, TensorProto::FLOAT},    {kFloat64, TensorProto::DOUBLE},
    {kInt32, TensorProto::INT32},      {kInt64, TensorProto::INT64},
    {kUInt8, TensorProto::UINT8},      {kBool, TensorProto::BOOL},
    {kInt8, TensorProto::INT8},        {kInt16, TensorProto::INT16},
    {kUInt16, TensorProto::UINT16},    {kUInt32, TensorProto::UINT32},
    {kUInt64, TensorProto::UINT64},    {kFloat16, TensorProto::FLOAT16},
    {kBFloat16, TensorProto::BFLOAT16}};

// Bytes per element of every ONNX element type with a fixed size (0: string or unknown).
int64_t onnx_element_size(int32_t e) {
  if (auto t = to_dtype(e)) return static_cast<int64_t>(element_size(*t));
  if (e == TensorProto::COMPLEX64) return 8;
  return e == TensorProto::COMPLEX128 ? 16 : 0;
}

// The values of the typed field that holds dtype t's elements. ONNX keeps the 8- and 16-bit types
// and bool in int32_data (float16 and bfloat16 as their 16-bit words, in the low half) and uint32
// and uint64 in uint64_data (onnx.proto, TensorProto).
Tensor from_typed_field(const TensorProto& p, int64_t n, const Shape& shape, ScalarType t,
                        const std::string& what) {
  switch (t) {
    case kFloat32:
      return from_field(p.float_data(), n, shape, t, what, "float_data");
    case kFloat64:
      return from_field(p.double_data(), n, shape, t, what, "double_data");
    case kInt64:
      return from_field(p.int64_data(), n, shape, t, what, "int64_data");
    case kUInt32:
    case kUInt64:
      return from_field(p.uint64_data(), n, shape, t, what, "uint64_data");
    default:
      return from_field(p.int32_data(), n, shape, t, what, "int32_data");
  }
}

}  // namespace

void inline_external_data(TensorProto& p, const std::string& base_dir, const std::string& model) {
  const std::string what = model + ": initializer '" + p.name() + "'";
  const int64_t es = onnx_element_size(p.data_type());
  if (es == 0)
    bad(what, "external data of element type " + elem_type_name(p.data_type()) +
                  " (only fixed-size types can be external)");
  const int64_t n = checked_numel(p, what);
  std::string bytes = read_external(p, base_dir, what, n * es);
  p.clear_external_data();
  p.set_data_location(TensorProto::DEFAULT);
  p.set_raw_data(std::move(bytes));
}

std::optional<ScalarType> to_dtype(int32_t e) {
  for (const auto& [t, elem_type] : kElemTypes)
    if (elem_type == e) return t;
  return std::nullopt;
}

ScalarType require_dtype(int32_t e, const std::string& what) {
  if (auto t = to_dtype(e)) return *t;
  throw UnsupportedError(
      what + ": element type " + elem_type_name(e) +
      " is not supported (ember has bool, the integers of 8 to 64 bits, float16, "
      "bfloat16, float and double)");
}

int32_t to_elem_type(ScalarType t) {
  for (const auto& [dtype, elem_type] : kElemTypes)
    if (dtype == t) return elem_type;
  return TensorProto::UNDEFINED;
}

std::string elem_type_name(int32_t e) {
  static const char* names[] = {"undefined",  "float",   "uint8",  "int8",   "uint16",
                                "int16",      "int32",   "int64",  "string", "bool",
                                "float16",    "double",  "uint32", "uint64", "complex64",
                                "complex128", "bfloat16"};
  if (e >= 0 && e < static_cast<int32_t>(std::size(names))) return names[e];
  return "element type " + std::to_string(e);
}

std::string type_text(const ::onnx::TypeProto& t) {
  switch (t.value_case()) {
    case ::onnx::TypeProto::kTensorType:
      return "tensor(" + elem_type_name(t.tensor_type().elem_type()) + ")";
    case ::onnx::TypeProto::kSequenceType:
      return "seq(" + type_text(t.sequence_type().elem_type()) + ")";
    case ::onnx::TypeProto::kOptionalType:
      return "optional(" + type_text(t.optional_type().elem_type()) + ")";
    case ::onnx::TypeProto::kMapType:
      return "map(" + elem_type_name(t.map_type().key_type()) + ", " +
             type_text(t.map_type().value_type()) + ")";
    case ::onnx::TypeProto::kSparseTensorType:
      return "sparse_tensor(" + elem_type_name(t.sparse_tensor_type().elem_type()) + ")";
    default:
      return "unknown";
  }
}

Tensor to_tensor(const TensorProto& p, const std::string& base_dir, const std::string& what) {
  if (p.has_segment()) throw UnsupportedError(what + ": segmented tensors are not supported");
  const ScalarType t = require_dtype(p.data_type(), what);
  const int64_t n = checked_numel(p, what);
  const Shape shape(p.dims().begin(), p.dims().end());
  const int64_t bytes = n * static_cast<int64_t>(element_size(t));
  const bool external = p.data_location() == TensorProto::EXTERNAL;
  if (external || p.has_raw_data()) {
    std::string ext;
    const std::string& raw =
        external ? (ext = read_external(p, base_dir, what, bytes)) : p.raw_data();
    if (static_cast<int64_t>(raw.size()) != bytes)
      bad(what, "raw_data holds " + std::to_string(raw.size()) + " bytes, shape " +
                    support::shape_str(shape) + " of " + dtype_name(t) + " needs " +
                    std::to_string(bytes));
    if (t != kBool) return from_blob(raw.data(), shape, t);
    std::vector<uint8_t> b(raw.begin(), raw.end());
    for (auto& x : b) x = x != 0;
    return from_blob(b.data(), shape, t);
  }
  if (t == kBool) {  // int32_data's values, any nonzero one true
    Tensor b = from_field(p.int32_data(), n, shape, kInt32, what, "int32_data");
    return b.ne(0).contiguous().realize();
  }
  return from_typed_field(p, n, shape, t, what);
}

}  // namespace ember::onnx

namespace ember::onnx {

StringTensor to_strings(const TensorProto& p, const std::string& what) {
  if (p.has_segment()) throw UnsupportedError(what + ": segmented tensors are not supported");
  if (p.data_location() == TensorProto::EXTERNAL)
    throw UnsupportedError(what + ": string tensors cannot have external data");
  const int64_t n = checked_numel(p, what);
  if (p.string_data_size() != n)
    bad(what, "string_data holds " + std::to_string(p.string_data_size()) +
                  " strings, the shape needs " + std::to_string(n));
  return StringTensor{Shape(p.dims().begin(), p.dims().end()),
                      std::vector<std::string>(p.string_data().begin(), p.string_data().end())};
}

Value to_value(const TensorProto& p, const std::string& base_dir, const std::string& what) {
  if (p.data_type() == TensorProto::STRING) return Value::strings(to_strings(p, what));
  return to_tensor(p, base_dir, what);
}

Value take_value(TensorProto& p, const std::string& base_dir, const std::string& what) {
  // Small tensors are copied: their bytes may sit inside the string object (short-string
  // storage), and a copy of them costs nothing worth saving.
  constexpr size_t kTakeFrom = 4096;
  const auto t = to_dtype(p.data_type());
  const bool take = t && *t != kBool && !p.has_segment() &&
                    p.data_location() != TensorProto::EXTERNAL && p.has_raw_data() &&
                    p.raw_data().size() >= kTakeFrom;
  struct Release {  // p's raw_data goes, whatever happens below
    TensorProto& p;
    ~Release() {
      std::string().swap(*p.mutable_raw_data());  // clear_raw_data() alone keeps the memory
      p.clear_raw_data();
    }
  } release{p};
  if (!take || static_cast<int64_t>(p.raw_data().size()) !=
                   checked_numel(p, what) * static_cast<int64_t>(element_size(*t)))
    return to_value(p, base_dir, what);  // a copy, or to_tensor's error
  // The string moves (its heap block, not its bytes) into the holder the tensor frees.
  auto* bytes = new std::string(std::move(*p.mutable_raw_data()));
  return from_blob(bytes->data(), Shape(p.dims().begin(), p.dims().end()), *t,
                   [bytes](void*) { delete bytes; });
}

}  // namespace ember::onnx

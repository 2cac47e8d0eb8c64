#include "ember/dtype.h"

#include <ostream>
#include <string>

#include "ember/error.h"

namespace ember {

size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Int8:
      return 1;
    case ScalarType::Int16:
    case ScalarType::UInt16:
    case ScalarType::Float16:
    case ScalarType::BFloat16:
      return 2;
    case ScalarType::Int32:
    case ScalarType::UInt32:
    case ScalarType::Float32:
      return 4;
    case ScalarType::Int64:
    case ScalarType::UInt64:
    case ScalarType::Float64:
      return 8;
  }
  return 0;
}

const char* dtype_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "uint8";
    case ScalarType::Int8:
      return "int8";
    case ScalarType::Int16:
      return "int16";
    case ScalarType::UInt16:
      return "uint16";
    case ScalarType::Int32:
      return "int32";
    case ScalarType::UInt32:
      return "uint32";
    case ScalarType::Int64:
      return "int64";
    case ScalarType::UInt64:
      return "uint64";
    case ScalarType::Float16:
      return "float16";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::Float32:
      return "float32";
    case ScalarType::Float64:
      return "float64";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << dtype_name(t); }

bool is_floating_point(ScalarType t) {
  return t == kFloat32 || t == kFloat64 || is_reduced_floating_point(t);
}

bool is_reduced_floating_point(ScalarType t) { return t == kFloat16 || t == kBFloat16; }

bool is_integral(ScalarType t, bool include_bool) {
  if (t == kBool) return include_bool;
  return !is_floating_point(t);
}

bool is_unsigned(ScalarType t) {
  return t == kBool || t == kUInt8 || t == kUInt16 || t == kUInt32 || t == kUInt64;
}

int dtype_category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  return is_floating_point(t) ? 2 : 1;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  // libtorch 2.x's "barebones" unsigned types promote only to a floating type.
  auto barebones = [](ScalarType t) { return t == kUInt16 || t == kUInt32 || t == kUInt64; };
  if (barebones(a) || barebones(b)) {
    if (is_floating_point(a)) return a;
    if (is_floating_point(b)) return b;
    throw DTypeError(std::string("promotion of ") + dtype_name(a) + " and " + dtype_name(b) +
                     " is not supported (as in libtorch: uint16, uint32 and uint64 promote only "
                     "with themselves and floating types); cast one first");
  }
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb) return ca > cb ? a : b;
  // float16 and bfloat16 hold different ranges and precisions: float32 holds both.
  if (is_reduced_floating_point(a) && is_reduced_floating_point(b)) return kFloat32;
  // uint8 with a signed type: the signed type, at least 16 bits (int8 cannot hold 255).
  if (a == kUInt8 || b == kUInt8) {
    ScalarType s = a == kUInt8 ? b : a;
    return s == kInt8 ? kInt16 : s;
  }
  return element_size(a) >= element_size(b) ? a : b;
}

}  // namespace ember

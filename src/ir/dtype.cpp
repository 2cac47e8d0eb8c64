#include "ember/dtype.h"

#include <ostream>

namespace ember {

size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8:
      return 1;
    case ScalarType::Int32:
    case ScalarType::Float32:
      return 4;
    case ScalarType::Int64:
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
    case ScalarType::Int32:
      return "int32";
    case ScalarType::Int64:
      return "int64";
    case ScalarType::Float32:
      return "float32";
    case ScalarType::Float64:
      return "float64";
  }
  return "?";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << dtype_name(t); }

bool is_floating_point(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64;
}

bool is_integral(ScalarType t, bool include_bool) {
  return t == ScalarType::UInt8 || t == ScalarType::Int32 || t == ScalarType::Int64 ||
         (include_bool && t == ScalarType::Bool);
}

int dtype_category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  return is_floating_point(t) ? 2 : 1;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  int ca = dtype_category(a), cb = dtype_category(b);
  if (ca != cb) return ca > cb ? a : b;
  // Same category: the wider type (uint8 with int32/int64 -> the signed type).
  return element_size(a) >= element_size(b) ? (a == ScalarType::UInt8 ? b : a) : b;
}

}  // namespace ember

#include "ember/dtype.h"

#include <iterator>
#include <ostream>
#include <string>

#include "element_type.h"
#include "ember/error.h"
#include "ember/support/kernel_scalar.h"

namespace ember {

namespace {

struct DtypeRow {
  ScalarType type;
  size_t size;
  const char* name;
};

// dtypes.def's rows, indexed by the enum's value.
constexpr DtypeRow kDtypes[] = {
#define EMBER_DTYPE(name, ctype, text) {ScalarType::name, sizeof(ctype), text},
#include "dtypes.def"
#undef EMBER_DTYPE
};

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kDtypes); i++)
    if (static_cast<size_t>(kDtypes[i].type) != i) return false;
  return std::size(kDtypes) == static_cast<size_t>(ScalarType::BFloat16) + 1;
}
static_assert(rows_in_enum_order(), "dtypes.def lists every ScalarType, in the enum's order");

const DtypeRow* row(ScalarType t) {
  const auto i = static_cast<size_t>(t);
  return i < std::size(kDtypes) ? &kDtypes[i] : nullptr;
}

}  // namespace

size_t element_size(ScalarType t) {
  const DtypeRow* r = row(t);
  return r ? r->size : 0;
}

const char* dtype_name(ScalarType t) {
  const DtypeRow* r = row(t);
  return r ? r->name : "?";
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

namespace ir {

int64_t wrap_int(int64_t v, ScalarType t) {
  if (t == kBool) return v != 0;
  return visit_element_type(
      t, [v]<class T>(std::type_identity<T>) { return static_cast<int64_t>(static_cast<T>(v)); });
}

int64_t float_to_int(double v, ScalarType t) {
  switch (t) {
    case kBool:
      return v != 0;
    case kInt32:  // saturates to int32's range
      return ember_f2i32(v);
    case kUInt64:
      return static_cast<int64_t>(ember_f2u64(v));
    default:  // int64 saturates; the narrower types take its result modulo 2^bits
      return wrap_int(ember_f2i64(v), t);
  }
}

}  // namespace ir
}  // namespace ember

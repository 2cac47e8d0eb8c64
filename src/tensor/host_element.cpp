#include "tensor/host_element.h"

#include "ember/support/kernel_scalar.h"
#include "ir/element_type.h"

namespace ember::detail {

namespace {
template <typename T>
T at(const void* p, int64_t i) {
  return static_cast<const T*>(p)[i];
}
template <typename T>
void put(void* p, int64_t i, T v) {
  static_cast<T*>(p)[i] = v;
}
}  // namespace

double load_double(const void* p, ScalarType t, int64_t i) {
  if (t == kFloat16) return ember_h2f(at<uint16_t>(p, i));
  if (t == kBFloat16) return ember_bf2f(at<uint16_t>(p, i));
  return ir::visit_element_type(
      t, [&]<class T>(std::type_identity<T>) { return static_cast<double>(at<T>(p, i)); });
}

int64_t load_int(const void* p, ScalarType t, int64_t i) {
  if (is_floating_point(t)) return ember_f2i64(load_double(p, t, i));  // the float-to-integer rule
  return ir::visit_element_type(
      t, [&]<class T>(std::type_identity<T>) { return static_cast<int64_t>(at<T>(p, i)); });
}

void store_double(void* p, ScalarType t, int64_t i, double v) {
  switch (t) {
    case kFloat32:
      return put(p, i, static_cast<float>(v));
    case kFloat64:
      return put(p, i, v);
    case kFloat16:
      return put(p, i, ember_f2h(static_cast<float>(v)));
    case kBFloat16:
      return put(p, i, ember_f2bf(static_cast<float>(v)));
    default:
      return store_int(p, t, i, ir::float_to_int(v, t));
  }
}

void store_int(void* p, ScalarType t, int64_t i, int64_t v) {
  // A float: int64 rounds once to the float's precision (float32 first for 16 bits).
  if (is_floating_point(t))
    return store_double(p, t, i, t == kFloat64 ? static_cast<double>(v) : static_cast<float>(v));
  if (t == kBool) v = v != 0;  // the integers: modulo 2^bits, as C's conversion
  ir::visit_element_type(t, [&]<class T>(std::type_identity<T>) { put(p, i, static_cast<T>(v)); });
}

}  // namespace ember::detail

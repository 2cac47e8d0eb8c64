#include "tensor/host_element.h"

#include "ember/support/kernel_scalar.h"

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
  switch (t) {
    case kFloat32:
      return at<float>(p, i);
    case kFloat64:
      return at<double>(p, i);
    case kFloat16:
      return ember_h2f(at<uint16_t>(p, i));
    case kBFloat16:
      return ember_bf2f(at<uint16_t>(p, i));
    case kUInt64:
      return static_cast<double>(at<uint64_t>(p, i));
    default:
      return static_cast<double>(load_int(p, t, i));
  }
}

int64_t load_int(const void* p, ScalarType t, int64_t i) {
  switch (t) {
    case kBool:
    case kUInt8:
      return at<uint8_t>(p, i);
    case kInt8:
      return at<int8_t>(p, i);
    case kInt16:
      return at<int16_t>(p, i);
    case kUInt16:
      return at<uint16_t>(p, i);
    case kInt32:
      return at<int32_t>(p, i);
    case kUInt32:
      return at<uint32_t>(p, i);
    case kInt64:
    case kUInt64:
      return at<int64_t>(p, i);
    default:  // a float: the float-to-integer rule
      return ember_f2i64(load_double(p, t, i));
  }
}

void store_double(void* p, ScalarType t, int64_t i, double v) {
  switch (t) {
    case kBool:
      return put<uint8_t>(p, i, v != 0);
    case kUInt8:
      return put(p, i, ember_f2u8(v));
    case kInt8:
      return put(p, i, ember_f2i8(v));
    case kInt16:
      return put(p, i, ember_f2i16(v));
    case kUInt16:
      return put(p, i, ember_f2u16(v));
    case kInt32:
      return put(p, i, ember_f2i32(v));
    case kUInt32:
      return put(p, i, ember_f2u32(v));
    case kInt64:
      return put(p, i, ember_f2i64(v));
    case kUInt64:
      return put(p, i, ember_f2u64(v));
    case kFloat32:
      return put(p, i, static_cast<float>(v));
    case kFloat64:
      return put(p, i, v);
    case kFloat16:
      return put(p, i, ember_f2h(static_cast<float>(v)));
    case kBFloat16:
      return put(p, i, ember_f2bf(static_cast<float>(v)));
  }
}

void store_int(void* p, ScalarType t, int64_t i, int64_t v) {
  switch (t) {
    case kBool:
      return put<uint8_t>(p, i, v != 0);
    case kUInt8:
      return put(p, i, static_cast<uint8_t>(v));
    case kInt8:
      return put(p, i, static_cast<int8_t>(v));
    case kInt16:
      return put(p, i, static_cast<int16_t>(v));
    case kUInt16:
      return put(p, i, static_cast<uint16_t>(v));
    case kInt32:
      return put(p, i, static_cast<int32_t>(v));
    case kUInt32:
      return put(p, i, static_cast<uint32_t>(v));
    case kInt64:
    case kUInt64:
      return put(p, i, v);
    default:  // a float: int64 rounds once to the float's precision (float32 first for 16 bits)
      return store_double(p, t, i, t == kFloat64 ? static_cast<double>(v) : static_cast<float>(v));
  }
}

}  // namespace ember::detail

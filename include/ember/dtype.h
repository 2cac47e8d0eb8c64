// ember/dtype.h — element types and PyTorch's type-promotion rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace ember {

/// Element type of a tensor. Names follow libtorch (`torch::kFloat32`, ...).
enum class ScalarType : uint8_t { Bool, UInt8, Int32, Int64, Float32, Float64 };

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kUInt8 = ScalarType::UInt8;
inline constexpr ScalarType kByte = ScalarType::UInt8;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kInt = ScalarType::Int32;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kLong = ScalarType::Int64;
inline constexpr ScalarType kFloat32 = ScalarType::Float32;
inline constexpr ScalarType kFloat = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64;
inline constexpr ScalarType kDouble = ScalarType::Float64;

/// Bytes per element.
size_t element_size(ScalarType t);
/// "float32", "int64", ... (the safetensors / numpy spelling is in nn/serialize).
const char* dtype_name(ScalarType t);
/// Prints dtype_name(t).
std::ostream& operator<<(std::ostream& os, ScalarType t);
bool is_floating_point(ScalarType t);
bool is_integral(ScalarType t, bool include_bool);

/// Category used by promotion: bool < integer < floating.
int dtype_category(ScalarType t);

/// PyTorch's promote_types for two tensors of equal priority: the smallest type that holds both.
ScalarType promote_types(ScalarType a, ScalarType b);

/// Default dtype for a floating Python-like scalar (float32, as in PyTorch).
inline constexpr ScalarType kDefaultFloat = ScalarType::Float32;

/// Maps a C++ element type to its ScalarType (for `item<T>()`, `from_vector`, ...).
template <typename T>
constexpr ScalarType dtype_of();
template <>
constexpr ScalarType dtype_of<bool>() {
  return kBool;
}
template <>
constexpr ScalarType dtype_of<uint8_t>() {
  return kUInt8;
}
template <>
constexpr ScalarType dtype_of<int32_t>() {
  return kInt32;
}
template <>
constexpr ScalarType dtype_of<int64_t>() {
  return kInt64;
}
template <>
constexpr ScalarType dtype_of<float>() {
  return kFloat32;
}
template <>
constexpr ScalarType dtype_of<double>() {
  return kFloat64;
}

}  // namespace ember

// ember/dtype.h — element types and PyTorch's type-promotion rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace ember {

/// Element type of a tensor. Names follow libtorch (`torch::kFloat32`, ...); new types go at the
/// end, so the older ones keep their numbers. float16 (IEEE 754 binary16) and bfloat16 (float32's
/// top 16 bits) are storage types: every op computes them in float32 and rounds its result to
/// nearest even, as libtorch's CPU kernels do (ir::make_node inserts the conversions).
enum class ScalarType : uint8_t {
  Bool,
  UInt8,
  Int32,
  Int64,
  Float32,
  Float64,
  Int8,
  Int16,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16
};

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kUInt8 = ScalarType::UInt8;
inline constexpr ScalarType kByte = ScalarType::UInt8;
inline constexpr ScalarType kInt8 = ScalarType::Int8;
inline constexpr ScalarType kChar = ScalarType::Int8;
inline constexpr ScalarType kInt16 = ScalarType::Int16;
inline constexpr ScalarType kShort = ScalarType::Int16;
inline constexpr ScalarType kUInt16 = ScalarType::UInt16;
inline constexpr ScalarType kUInt32 = ScalarType::UInt32;
inline constexpr ScalarType kUInt64 = ScalarType::UInt64;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kInt = ScalarType::Int32;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kLong = ScalarType::Int64;
inline constexpr ScalarType kFloat32 = ScalarType::Float32;
inline constexpr ScalarType kFloat = ScalarType::Float32;
inline constexpr ScalarType kFloat64 = ScalarType::Float64;
inline constexpr ScalarType kDouble = ScalarType::Float64;
inline constexpr ScalarType kFloat16 = ScalarType::Float16;
inline constexpr ScalarType kHalf = ScalarType::Float16;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;

/// Bytes per element.
size_t element_size(ScalarType t);
/// "float32", "int64", ... (the safetensors / numpy spelling is in nn/serialize).
const char* dtype_name(ScalarType t);
/// Prints dtype_name(t).
std::ostream& operator<<(std::ostream& os, ScalarType t);
bool is_floating_point(ScalarType t);
/// float16 and bfloat16: stored in 16 bits, computed in float32 (libtorch's isReducedFloatingType).
bool is_reduced_floating_point(ScalarType t);
bool is_integral(ScalarType t, bool include_bool);
/// uint8, uint16, uint32, uint64 (and bool, which holds 0 and 1).
bool is_unsigned(ScalarType t);

/// Category used by promotion: bool < integer < floating.
int dtype_category(ScalarType t);

/// PyTorch's promote_types for two tensors of equal priority: the smallest type that holds both
/// (c10's promoteTypes: int8 with uint8 -> int16, float16 with bfloat16 -> float32, an integer
/// with float16 -> float16). uint16, uint32 and uint64 promote as libtorch 2.x's do: with
/// themselves, and with a floating type to that type; any other pair throws DTypeError (libtorch
/// does too: uint64 has no signed type that holds it).
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
constexpr ScalarType dtype_of<int8_t>() {
  return kInt8;
}
template <>
constexpr ScalarType dtype_of<int16_t>() {
  return kInt16;
}
template <>
constexpr ScalarType dtype_of<uint16_t>() {
  return kUInt16;
}
template <>
constexpr ScalarType dtype_of<uint32_t>() {
  return kUInt32;
}
template <>
constexpr ScalarType dtype_of<uint64_t>() {
  return kUInt64;
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

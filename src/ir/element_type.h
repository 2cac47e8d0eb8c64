// The C type an element of each dtype is held in (dtypes.def), a visitor over it, and the casts to
// an integer dtype that constant folding and the host's element writes share (Tensor::to's rules,
// ember/tensor.h; the float-to-integer rule is ember/support/kernel_scalar.h's).
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember::ir {

/// Calls f(std::type_identity<T>{}) with T the C type an element of dtype t is held in (a byte for
/// bool, the 16-bit word for float16 and bfloat16) and returns what f returns. Throws DTypeError
/// for a value outside ScalarType's enumerators.
template <class F>
decltype(auto) visit_element_type(ScalarType t, F&& f) {
  switch (t) {
#define EMBER_DTYPE(name, ctype, text) \
  case ScalarType::name:               \
    return f(std::type_identity<ctype>{});
#include "dtypes.def"
#undef EMBER_DTYPE
  }
  throw DTypeError("invalid ScalarType " + std::to_string(static_cast<int>(t)));
}

/// v cast from int64 to t, an integer or bool dtype, as an int64: modulo 2^bits (uint64 keeps its
/// bits), v != 0 for bool.
int64_t wrap_int(int64_t v, ScalarType t);

/// v cast from float64 to t, an integer or bool dtype, by the float-to-integer rule (truncation,
/// NaN to 0, saturation; uint8, int8, int16, uint16 and uint32 through int64 modulo 2^bits), as an
/// int64 (uint64: its bits).
int64_t float_to_int(double v, ScalarType t);

}  // namespace ember::ir

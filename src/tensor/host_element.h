// One element of a host buffer of any dtype, read or written with Tensor::to's conversions
// (ember/support/kernel_scalar.h's rules): what realize's reads and creation's host fills share.
#pragma once
#include <cstdint>

#include "ember/dtype.h"

namespace ember::detail {

/// Element i of p (dtype t) as a double: integers converted (uint64 as unsigned), float16 and
/// bfloat16 exactly.
double load_double(const void* p, ScalarType t, int64_t i);
/// Element i of p (an integer or bool dtype t) exactly: uint64 as its bits.
int64_t load_int(const void* p, ScalarType t, int64_t i);
/// Writes v to element i of p as a cast from float64 to t: the float-to-integer rule for
/// integers, v != 0 for bool, rounding to nearest even for floats.
void store_double(void* p, ScalarType t, int64_t i, double v);
/// Writes the integer v to element i of p as a cast from int64 to t: modulo 2^bits for integers,
/// v != 0 for bool, rounding to nearest even for floats.
void store_int(void* p, ScalarType t, int64_t i, int64_t v);

}  // namespace ember::detail

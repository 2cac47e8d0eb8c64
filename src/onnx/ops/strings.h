// ONNX's string tensors in the ops that convert them: Cast and CastLike to and from
// tensor(string) (elementwise.cpp dispatches here when either side is a string).
#pragma once
#include <cstdint>

#include "../op_context.h"

namespace ember::onnx::ops {

/// `x` cast to ONNX element type `to`, where x is a string tensor or `to` is STRING (Cast-13's
/// rules, onnx/docs/Operators.md). Floats print as numpy's str() does (ONNX's test data): the
/// fewest digits that read back as the same value of their type, positional for
/// 1e-4 <= |x| < 1e16 ("0.9767611", "100.0"), scientific otherwise ("1e-05"), and "nan", "inf",
/// "-inf"; integers print in decimal. Strings parse as plain or scientific numbers, and "INF",
/// "+INF", "-INF" and "NaN" in any case, leading and trailing spaces ignored; to an integer type a
/// string that is not an integer reads as a float and truncates. ValueError naming the element
/// for a string that is not a number; UnsupportedError for bool (ONNX does not define its
/// spelling).
Value cast_strings(const Value& x, int32_t to);

}  // namespace ember::onnx::ops

// Sliding windows over spatial dims, shared by convolution and pooling (src/tensor/windows.cpp).
#pragma once
#include "ember/tensor.h"

namespace ember::detail {

/// `v` as one value per dim: a single value repeated n times, or n values; each >= min_value.
/// ValueError naming `what` otherwise.
IntList per_dim(const IntList& v, size_t n, const char* what, int64_t min_value);

/// The windows over the last kernel.size() dims of x: [..., S_1..S_n] -> [..., O_1..O_n, k_1..k_n]
/// with O_i = (S_i - dilation_i (k_i - 1) - 1) / stride_i + 1 and element
/// [..., o, j] = x[..., o * stride + j * dilation]. ShapeError when a window does not fit.
Tensor spatial_windows(const Tensor& x, const IntList& kernel, const IntList& stride,
                       const IntList& dilation);

}  // namespace ember::detail

// ember/pooling.h — max, average and adaptive average pooling (libtorch's torch::max_pool1d/2d/3d,
// max_pool2d_with_indices, torch::avg_pool1d/2d/3d, torch::adaptive_avg_pool1d/2d: names,
// argument orders and semantics).
//
// Compositions: the windows of the padded input (ember/convolution.h's unfold: views and one copy
// per pooled dim) reduced by amax or sum. Max pooling pads with -inf (the lowest value for integer
// dtypes), so padding never wins; average pooling pads with zeros and divides by the window size
// (count_include_pad) or by the number of input elements in the window (not counting padding).
//
// Shapes: input [N, C, *spatial] or [C, *spatial]; kernel_size, stride (default: kernel_size),
// padding and dilation take one value or one per pooled dim. Output size per dim:
// (S + 2 padding - dilation (k - 1) - 1) / stride + 1, rounded down, or up with ceil_mode, where a
// last window that would start in the right padding is dropped (PyTorch's rule).
// Errors: ShapeError for a wrong rank or a window that does not fit; ValueError for non-positive
// kernel, stride or dilation, or padding > kernel_size / 2 (as libtorch).
#pragma once
#include <tuple>

#include "ember/tensor.h"

namespace ember {

Tensor max_pool1d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, IntList dilation = {1}, bool ceil_mode = false);
/// (values, indices): each index is the flat position of the maximum in its input plane
/// (h * W + w), the first one on ties, as libtorch.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntList kernel_size,
                                                   IntList stride = {}, IntList padding = {0},
                                                   IntList dilation = {1}, bool ceil_mode = false);

Tensor avg_pool1d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool3d(const Tensor& input, IntList kernel_size, IntList stride = {},
                  IntList padding = {0}, bool ceil_mode = false, bool count_include_pad = true);

/// Adaptive average pooling: output_size (one value or one per pooled dim, each >= 1) is the
/// output's spatial shape, and output i of a dim of size S averages input elements
/// [floor(i S / O), ceil((i + 1) S / O)) (PyTorch's windows, which overlap when S is not a
/// multiple of O). Computed per dim as masked sums over the windows' mask [S, O] (S * O terms
/// per row) divided by the window sizes. Input [N, C, *spatial] or [C, *spatial], floating
/// (DTypeError otherwise); ShapeError for a wrong rank or an empty spatial dim, ValueError for an
/// output size below 1.
Tensor adaptive_avg_pool1d(const Tensor& input, IntList output_size);
Tensor adaptive_avg_pool2d(const Tensor& input, IntList output_size);

}  // namespace ember

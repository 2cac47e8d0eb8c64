// ember/convolution.h — sliding windows and convolutions (libtorch's names and argument orders:
// Tensor::unfold, torch::convolution, torch::conv1d/2d/3d, torch::conv_transpose1d/2d/3d).
//
// Compositions, no new primitive: unfold makes the windows from views and at most one copy per
// unfolded dim (about size * S / step elements: src/tensor/windows.cpp; windows that do not
// overlap are a view alone). A convolution is computed in its output's layout as the weight
// viewed as a [groups, C_out / groups, C_in / groups * prod(kernel)] matrix times the windows of
// the zero-padded input arranged as [N, groups, C_in / groups * prod(kernel), L], L the number of
// output positions: ember's register-tiled matrix product, whose result is [N, C_out, *out] as it
// stands (the bias is added in the product's epilogue). Each kernel tap's windows are a view of
// the input; the arrangement is one copy of them, or none for a 1x1 kernel with stride 1 and no
// padding (the input read in place). A depthwise convolution (C_in / groups = 1) without
// gradients sums tap times weight over the taps instead (one elementwise kernel). Any other
// convolution with a kernel of more than one tap, without gradients, takes im2col's orientation
// (the tiled product runs it about twice as fast): the windows of the padded input (unfold's
// copies) arranged as [N, groups, L, C_in / groups * prod(kernel)], times the weight matrix
// transposed, the result then read as [N, C_out, *out]. A transposed
// convolution is the convolution of the input with stride - 1 zeros inserted between its
// elements, padded by dilation * (kernel - 1) - padding (output_padding more at the end), with the
// kernel flipped and its channel dims swapped (the adjoint of the strided convolution; Dumoulin &
// Visin, "A guide to convolution arithmetic for deep learning", 2016, section 4). Gradients follow
// by composition.
//
// Shapes: input [N, C_in, *spatial] (or [C_in, *spatial] without the batch dim), weight
// [C_out, C_in / groups, *kernel] (transposed: [C_in, C_out / groups, *kernel]), bias [C_out] or
// undefined. Output spatial size per dim: (S + 2 padding - dilation (k - 1) - 1) / stride + 1
// (floor); transposed: (S - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1.
// stride, padding, dilation and output_padding take one value for every dim or one per dim.
// Errors: ShapeError for ranks, channel counts not divisible by groups, a weight whose channels do
// not match, or an output size below 1; ValueError for a non-positive stride, dilation or groups,
// a negative padding, or output_padding >= stride and >= dilation.
#pragma once
#include "ember/tensor.h"

namespace ember {

/// All windows of `size` elements, `step` apart, along `dim` (Tensor.unfold): dim becomes the
/// window count (S - size) / step + 1 and a new last dim of `size` holds each window's elements.
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step);
/// The same with the window's elements `dilation` apart (ember's extension; F.unfold's dilation):
/// element j of window o is t[o * step + j * dilation] along dim, and the window count is
/// (S - dilation (size - 1) - 1) / step + 1.
Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step, int64_t dilation);

/// The general convolution (torch::convolution); the number of spatial dims is weight.dim() - 2.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups);

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = {1}, IntList padding = {0}, IntList dilation = {1},
              int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = {1}, IntList padding = {0}, IntList dilation = {1},
              int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              IntList stride = {1}, IntList padding = {0}, IntList dilation = {1},
              int64_t groups = 1);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        int64_t groups = 1, IntList dilation = {1});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        int64_t groups = 1, IntList dilation = {1});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        IntList stride = {1}, IntList padding = {0}, IntList output_padding = {0},
                        int64_t groups = 1, IntList dilation = {1});

}  // namespace ember

// Parity: unfold, convolutions (1-3 spatial dims, stride, padding, dilation, groups, no batch
// dim, transposed with output_padding), max/avg pooling (padding, dilation, ceil_mode,
// count_include_pad, indices) and the normalisations, forward and backward, against libtorch.
#include <cmath>
#include <limits>

#include "parity_grad.h"
#include "parity_ops.h"

#define TR .tol = parity::kTranscendental
#define NOGRAD .grad = false
using parity::Shape;
namespace ops = parity::ops;

// ---- unfold ---------------------------------------------------------------------------------
PARITY_CASE(Unfold, overlapping_and_disjoint) {
  auto x = b.randn({2, 7, 3});
  return std::vector{ops::unfold(b, x, 1, 3, 1), ops::unfold(b, x, 1, 3, 2),
                     ops::unfold(b, x, 1, 2, 3), ops::unfold(b, x, -1, 2, 1),
                     ops::unfold(b, x, 0, 1, 1), ops::unfold(b, x, 1, 7, 1)};
}
BACKWARD_CASE(GradUnfold, overlapping) { return ops::unfold(b, b.randn({3, 6}), 1, 4, 1) * 2; }
// Overlapping windows with a step (src/tensor/windows.cpp: the step's phases), long rows.
BACKWARD_CASE(GradUnfold, overlapping_with_step) {
  auto x = b.randn({2, 23});
  return std::vector{ops::unfold(b, x, 1, 5, 3), ops::unfold(b, x, 1, 7, 2),
                     ops::unfold(b, x, 1, 9, 4), ops::unfold(b, x, 0, 2, 1)};
}

// ---- convolution ----------------------------------------------------------------------------
BACKWARD_CASE(GradConv, conv2d_basic) {
  auto x = b.dyadic({2, 3, 6, 5}), w = b.dyadic({4, 3, 3, 3}), bias = b.randn({4});
  return ops::conv2d(b, x, w, bias, Shape{1}, Shape{0}, Shape{1}, int64_t{1});
}
BACKWARD_CASE(GradConv, conv2d_stride_padding_dilation) {
  auto x = b.dyadic({1, 2, 9, 8}), w = b.dyadic({3, 2, 3, 2});
  return ops::conv2d(b, x, w, typename B::T{}, Shape{2, 3}, Shape{1, 2}, Shape{2, 1}, int64_t{1});
}
BACKWARD_CASE(GradConv, conv2d_groups_depthwise) {
  auto x = b.dyadic({2, 4, 5, 5}), w = b.dyadic({8, 2, 3, 3}), dw = b.dyadic({4, 1, 3, 3});
  return std::vector{
      ops::conv2d(b, x, w, typename B::T{}, Shape{1}, Shape{1}, Shape{1}, int64_t{2}),
      ops::conv2d(b, x, dw, typename B::T{}, Shape{2}, Shape{1}, Shape{1}, int64_t{4})};
}
// The digits CNN's training path at odd sizes: the stacked taps copied channel-major (one input
// channel: the taps are the copy's axis 0, rendered as a switch; two channels per group: the tap
// axis unrolled), batch norm's per-channel sums over an input in either layout, padding larger
// than the kernel, groups, and batch 1 (the output's layout).
BACKWARD_CASE(GradConv, conv_batch_norm_training_chain, TR) {
  auto none = typename B::T{};
  auto x = b.randn({3, 1, 7, 5}), w1 = b.dyadic({4, 1, 3, 3}), c1 = b.randn({4});
  auto y = ops::batch_norm(b, ops::conv2d(b, x, w1, c1, Shape{1}, Shape{1}, Shape{1}, int64_t{1}),
                           b.randn({4}), b.randn({4}), none, none, true, 0.1, 1e-5);
  auto z =
      ops::conv2d(b, y, b.dyadic({6, 2, 2, 2}), none, Shape{1}, Shape{3}, Shape{1}, int64_t{2});
  auto u = ops::conv2d(b, b.randn({1, 1, 5, 4}), w1, c1, Shape{1}, Shape{2}, Shape{1}, int64_t{1});
  return std::vector{ops::batch_norm(b, z, b.randn({6}), b.randn({6}), none, none, true, 0.1, 1e-5),
                     u};
}
// Every reduction of stride and dilation: gcd > 1, dilation alone, stride with dilation coprime.
BACKWARD_CASE(GradConv, conv1d_strides_and_dilations) {
  auto x = b.dyadic({1, 2, 29}), w = b.dyadic({3, 2, 4});
  auto none = typename B::T{};
  return std::vector{ops::conv1d(b, x, w, none, Shape{2}, Shape{0}, Shape{2}, int64_t{1}),
                     ops::conv1d(b, x, w, none, Shape{1}, Shape{1}, Shape{3}, int64_t{1}),
                     ops::conv1d(b, x, w, none, Shape{2}, Shape{0}, Shape{3}, int64_t{1}),
                     ops::conv1d(b, x, w, none, Shape{4}, Shape{2}, Shape{6}, int64_t{1}),
                     ops::conv1d(b, x, w, none, Shape{3}, Shape{0}, Shape{1}, int64_t{1})};
}
BACKWARD_CASE(GradConv, conv1d_and_unbatched) {
  auto x = b.dyadic({2, 3, 10}), w = b.dyadic({5, 3, 4}), bias = b.randn({5});
  auto xu = b.dyadic({3, 10});
  return std::vector{ops::conv1d(b, x, w, bias, Shape{3}, Shape{2}, Shape{1}, int64_t{1}),
                     ops::conv1d(b, xu, w, bias, Shape{1}, Shape{0}, Shape{2}, int64_t{1})};
}
BACKWARD_CASE(GradConv, conv3d) {
  auto x = b.dyadic({1, 2, 4, 5, 4}), w = b.dyadic({3, 2, 2, 3, 2});
  return ops::conv3d(b, x, w, b.randn({3}), Shape{1, 2, 1}, Shape{1, 0, 1}, Shape{1}, int64_t{1});
}
PARITY_CASE(Conv, conv2d_kernel_1x1_and_whole_input) {
  auto x = b.dyadic({2, 3, 4, 4});
  return std::vector{ops::conv2d(b, x, b.dyadic({5, 3, 1, 1}), typename B::T{}, Shape{1}, Shape{0},
                                 Shape{1}, int64_t{1}),
                     ops::conv2d(b, x, b.dyadic({2, 3, 4, 4}), typename B::T{}, Shape{1}, Shape{0},
                                 Shape{1}, int64_t{1})};
}
PARITY_CASE(Conv, conv2d_f64) {
  auto x = b.randn({1, 2, 5, 5}, b.f64), w = b.randn({2, 2, 3, 3}, b.f64);
  return ops::conv2d(b, x, w, typename B::T{}, Shape{1}, Shape{1}, Shape{1}, int64_t{1});
}
BACKWARD_CASE(GradConv, conv_transpose2d) {
  auto x = b.dyadic({2, 4, 3, 4}), w = b.dyadic({4, 3, 3, 2});
  return std::vector{ops::conv_transpose2d(b, x, w, b.randn({3}), Shape{1}, Shape{0}, Shape{0},
                                           int64_t{1}, Shape{1}),
                     ops::conv_transpose2d(b, x, w, typename B::T{}, Shape{2, 3}, Shape{1, 0},
                                           Shape{1, 2}, int64_t{1}, Shape{1}),
                     ops::conv_transpose2d(b, x, w, typename B::T{}, Shape{2}, Shape{2, 1},
                                           Shape{0}, int64_t{1}, Shape{2, 1})};
}
BACKWARD_CASE(GradConv, conv_transpose_groups_1d_3d) {
  auto x = b.dyadic({1, 4, 5}), w = b.dyadic({4, 3, 3});
  auto x3 = b.dyadic({1, 2, 2, 3, 2}), w3 = b.dyadic({2, 2, 2, 2, 2});
  return std::vector{ops::conv_transpose1d(b, x, w, typename B::T{}, Shape{2}, Shape{1}, Shape{1},
                                           int64_t{2}, Shape{1}),
                     ops::conv_transpose3d(b, x3, w3, typename B::T{}, Shape{2}, Shape{0}, Shape{0},
                                           int64_t{1}, Shape{1})};
}

// The lowering's paths (src/tensor/convolution.cpp), each forward (no gradient recorded) and
// backward: a 1x1 kernel read in place, a larger kernel as the padded input's windows times the
// weight (forward only; with gradients: stacked taps times the weight), and the depthwise tap sum
// (forward only; with gradients it takes the stacked taps), at strides whose padded size is no
// multiple of the stride, padding larger than the kernel, batch 1 and float64.
PARITY_AND_BACKWARD_CASE(ConvPath, pointwise, GradConvPath, pointwise) {
  auto x = b.dyadic({2, 6, 5, 7}), none = typename B::T{};
  auto x1 = b.randn({1, 4, 3, 5}, b.f64), w1 = b.randn({6, 2, 1, 1}, b.f64);
  return std::vector{
      ops::conv2d(b, x, b.dyadic({5, 6, 1, 1}), b.randn({5}), Shape{1}, Shape{0}, Shape{1},
                  int64_t{1}),
      ops::conv2d(b, x, b.dyadic({9, 2, 1, 1}), none, Shape{1}, Shape{0}, Shape{1}, int64_t{3}),
      ops::conv2d(b, x, b.dyadic({4, 6, 1, 1}), none, Shape{2, 3}, Shape{0}, Shape{1}, int64_t{1}),
      ops::conv2d(b, x, b.dyadic({4, 6, 1, 1}), none, Shape{1}, Shape{2, 1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, x1, w1, b.randn({6}, b.f64), Shape{1}, Shape{0}, Shape{1}, int64_t{2})};
}
PARITY_AND_BACKWARD_CASE(ConvPath, stacked_taps, GradConvPath, stacked_taps) {
  auto x = b.dyadic({2, 4, 9, 8}), none = typename B::T{};
  auto w = b.dyadic({6, 4, 3, 3}), wg = b.dyadic({6, 2, 2, 3});
  auto x1 = b.randn({1, 3, 7, 6}, b.f64), w1 = b.randn({2, 3, 3, 2}, b.f64);
  return std::vector{
      ops::conv2d(b, x, w, b.randn({6}), Shape{2}, Shape{1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, x, w, none, Shape{3, 2}, Shape{4, 5}, Shape{1}, int64_t{1}),
      ops::conv2d(b, x, w, none, Shape{2, 3}, Shape{2, 1}, Shape{3, 2}, int64_t{1}),
      ops::conv2d(b, x, wg, b.randn({6}), Shape{2, 1}, Shape{1, 2}, Shape{1}, int64_t{2}),
      ops::conv2d(b, x1, w1, b.randn({2}, b.f64), Shape{2}, Shape{3}, Shape{1, 2}, int64_t{1})};
}
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise, GradConvPath, depthwise) {
  auto x = b.dyadic({2, 4, 9, 8}), none = typename B::T{};
  auto w = b.dyadic({4, 1, 3, 3}), wm = b.dyadic({8, 1, 3, 2});
  auto x1 = b.randn({1, 3, 7, 6}, b.f64), w1 = b.randn({3, 1, 3, 3}, b.f64);
  return std::vector{
      ops::conv2d(b, x, w, b.randn({4}), Shape{1}, Shape{1}, Shape{1}, int64_t{4}),
      ops::conv2d(b, x, w, none, Shape{2}, Shape{1}, Shape{1}, int64_t{4}),
      ops::conv2d(b, x, w, none, Shape{3, 2}, Shape{4}, Shape{2, 1}, int64_t{4}),
      ops::conv2d(b, x, wm, b.randn({8}), Shape{2, 1}, Shape{0, 2}, Shape{1, 3}, int64_t{4}),
      ops::conv2d(b, x1, w1, b.randn({3}, b.f64), Shape{2}, Shape{1}, Shape{1}, int64_t{3})};
}
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise_1d_3d_long_kernel, GradConvPath,
                         depthwise_1d_3d_long_kernel) {
  auto none = typename B::T{};
  return std::vector{ops::conv1d(b, b.dyadic({2, 3, 11}), b.dyadic({6, 1, 4}), b.randn({6}),
                                 Shape{3}, Shape{2}, Shape{2}, int64_t{3}),
                     // 70 taps: more than the tap sum takes (stacked taps instead).
                     ops::conv1d(b, b.dyadic({1, 2, 80}), b.dyadic({2, 1, 70}), none, Shape{1},
                                 Shape{3}, Shape{1}, int64_t{2}),
                     ops::conv3d(b, b.dyadic({1, 2, 5, 4, 6}), b.dyadic({2, 1, 2, 3, 2}), none,
                                 Shape{2, 1, 3}, Shape{1}, Shape{1}, int64_t{2})};
}
// The depthwise tap sum (no gradients; with them the stacked taps), over views of a buffer or a
// copy of the padded rows: stride 2 with dilation 2 at odd sizes, a channel multiplier, an input
// computed in the copy (tanh of a transposed view), padding unequal at the two ends (a depthwise
// transposed convolution: output_padding pads one end more), 1-d with stride 2 and dilation 2,
// a padded dim split by a stride of 3, and computed inputs read at a stride. The innermost loops'
// unmasked middles (render_c.cpp's split_last_loop) are bounded by the padding.
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise_phases, GradConvPath, depthwise_phases) {
  auto x = b.dyadic({2, 3, 13, 11}), none = typename B::T{};
  auto w = b.dyadic({3, 1, 3, 3}), wm = b.dyadic({6, 1, 3, 2});
  auto xt = b.dyadic({1, 4, 9, 12});
  return std::vector{ops::conv2d(b, x, w, b.randn({3}), Shape{2}, Shape{2}, Shape{2}, int64_t{3}),
                     ops::conv2d(b, x, wm, none, Shape{2, 1}, Shape{1, 3}, Shape{1, 2}, int64_t{3}),
                     ops::conv2d(b, xt.transpose(2, 3).tanh(), b.dyadic({4, 1, 3, 3}), b.randn({4}),
                                 Shape{1}, Shape{1}, Shape{1}, int64_t{4}),
                     ops::conv_transpose2d(b, x, b.dyadic({3, 1, 3, 3}), none, Shape{2}, Shape{1},
                                           Shape{1}, int64_t{3}, Shape{1}),
                     ops::conv1d(b, b.dyadic({2, 4, 19}), b.dyadic({8, 1, 3}), b.randn({8}),
                                 Shape{2}, Shape{3}, Shape{2}, int64_t{4}),
                     ops::conv2d(b, b.dyadic({1, 2, 24, 30}), b.dyadic({2, 1, 5, 5}), none,
                                 Shape{3}, Shape{2}, Shape{1}, int64_t{2}),
                     // Computed inputs read at a stride: the taps read a copy of the padded rows.
                     ops::conv2d(b, xt.tanh(), b.dyadic({4, 1, 3, 3}), b.randn({4}), Shape{2},
                                 Shape{1}, Shape{1}, int64_t{4}),
                     ops::conv1d(b, b.dyadic({2, 4, 19}).tanh(), b.dyadic({4, 1, 4}), none,
                                 Shape{3}, Shape{2}, Shape{1}, int64_t{4})};
}
// Computed inputs on both sides of the channels-last tap sum's bound (depthwise_convolution.cpp's
// kMaxChannelsLastMap, 56x56 positions): a map of 60x60 channel-major (stride 1: the output too
// large; stride 2: the input), and stored channels-last ([N, H, W, C] transposed, as a product's
// [N L, C]) at stride 2 (channels-last however large the input); the copy's padded rows and columns
// are tested once around its innermost loop (render_c.cpp's outer_unmasked_ranges).
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise_channels_last, GradConvPath, depthwise_channels_last) {
  auto x = b.dyadic({1, 3, 60, 60}).tanh(), none = typename B::T{};
  auto xl = b.dyadic({2, 60, 58, 5}).transpose(1, 3).transpose(2, 3).tanh();
  return std::vector{
      ops::conv2d(b, x, b.dyadic({3, 1, 3, 3}), b.randn({3}), Shape{1}, Shape{1}, Shape{1},
                  int64_t{3}),
      ops::conv2d(b, x, b.dyadic({3, 1, 5, 5}), none, Shape{2}, Shape{2}, Shape{1}, int64_t{3}),
      ops::conv2d(b, xl, b.dyadic({5, 1, 3, 3}), b.randn({5}), Shape{2}, Shape{1}, Shape{1},
                  int64_t{5}),
      ops::conv2d(b, xl.narrow(2, 0, 20), b.dyadic({5, 1, 5, 3}), b.randn({5}), Shape{1, 2},
                  Shape{2, 1}, Shape{1}, int64_t{5})};
}
// Computed inputs copied as whole padded rows (depthwise_convolution.cpp's copied_rows) and read at
// a stride through split_input's rows: odd sizes padded to whole rows of the stride, stride with
// dilation, unequal strides, more rows of padding than one, channel-major (3x3 and smaller, or over
// 56x56 positions) and channels-last (over 9 taps), 1-d and 3-d.
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise_computed_rows, GradConvPath, depthwise_computed_rows) {
  auto x = b.dyadic({1, 3, 61, 59}).tanh(), xs = b.dyadic({2, 4, 13, 11}).tanh();
  auto none = typename B::T{};
  return std::vector{
      ops::conv2d(b, x, b.dyadic({3, 1, 3, 3}), b.randn({3}), Shape{2}, Shape{1}, Shape{1},
                  int64_t{3}),
      ops::conv2d(b, x, b.dyadic({3, 1, 3, 2}), none, Shape{3, 2}, Shape{3, 1}, Shape{2, 3},
                  int64_t{3}),
      ops::conv2d(b, xs, b.dyadic({4, 1, 5, 3}), b.randn({4}), Shape{2, 3}, Shape{2, 1},
                  Shape{2, 1}, int64_t{4}),
      ops::conv2d(b, xs, b.dyadic({4, 1, 3, 3}), none, Shape{2}, Shape{1}, Shape{1}, int64_t{4}),
      ops::conv1d(b, b.dyadic({2, 3, 17}).tanh(), b.dyadic({3, 1, 3}), none, Shape{2}, Shape{3},
                  Shape{1}, int64_t{3}),
      ops::conv3d(b, b.dyadic({1, 2, 5, 7, 6}).tanh(), b.dyadic({2, 1, 3, 2, 3}), b.randn({2}),
                  Shape{2, 1, 2}, Shape{1}, Shape{1}, int64_t{2})};
}
// Computed inputs of a multiple of 8 channels under a kernel of over 9 taps: the tap sum in blocks
// of 8 channels (depthwise_convolution.cpp's blocked_sum): odd maps, stride 1 and 2, unequal
// strides and padding, with and without bias, 1-d and 3-d; and a channel multiplier of 2 beside
// it (channel-major).
PARITY_AND_BACKWARD_CASE(ConvPath, depthwise_blocked, GradConvPath, depthwise_blocked) {
  auto x = b.dyadic({2, 16, 13, 11}).tanh(), none = typename B::T{};
  return std::vector{ops::conv2d(b, x, b.dyadic({16, 1, 5, 5}), b.randn({16}), Shape{1}, Shape{2},
                                 Shape{1}, int64_t{16}),
                     ops::conv2d(b, x, b.dyadic({16, 1, 5, 3}), none, Shape{2, 1}, Shape{2, 1},
                                 Shape{1}, int64_t{16}),
                     ops::conv2d(b, b.dyadic({1, 24, 15, 14}).tanh(), b.dyadic({24, 1, 5, 5}),
                                 b.randn({24}), Shape{2}, Shape{2}, Shape{1}, int64_t{24}),
                     ops::conv2d(b, x, b.dyadic({32, 1, 5, 5}), b.randn({32}), Shape{1}, Shape{2},
                                 Shape{1}, int64_t{16}),
                     ops::conv1d(b, b.dyadic({2, 8, 19}).tanh(), b.dyadic({8, 1, 11}), b.randn({8}),
                                 Shape{2}, Shape{5}, Shape{1}, int64_t{8}),
                     ops::conv3d(b, b.dyadic({1, 8, 5, 6, 7}).tanh(), b.dyadic({8, 1, 3, 3, 2}),
                                 none, Shape{1, 2, 1}, Shape{1}, Shape{1}, int64_t{8})};
}
// Without gradients, the stacked taps' columns (one copy, then the product) in 1-D and 3-D,
// strided, dilated and grouped at once; padded asymmetrically (a transposed convolution's
// output_padding pads after only); a 7x7 stride-2 stem (49 taps, rows not a multiple of the
// stride); and 81 taps, more than the renderer unrolls: the windows' copies instead.
PARITY_CASE(ConvPath, tap_columns_1d_3d_asymmetric_long) {
  auto none = typename B::T{};
  return std::vector{
      ops::conv1d(b, b.dyadic({2, 4, 13}), b.dyadic({6, 2, 3}), b.randn({6}), Shape{2}, Shape{1},
                  Shape{2}, int64_t{2}),
      ops::conv3d(b, b.dyadic({2, 4, 5, 6, 7}), b.dyadic({3, 4, 2, 3, 2}), b.randn({3}),
                  Shape{1, 2, 1}, Shape{1, 0, 2}, Shape{2, 1, 1}, int64_t{1}),
      ops::conv_transpose2d(b, b.dyadic({2, 4, 4, 5}), b.dyadic({4, 3, 3, 2}), none, Shape{2},
                            Shape{1}, Shape{1, 0}, int64_t{1}, Shape{1}),
      ops::conv2d(b, b.dyadic({1, 3, 15, 14}), b.dyadic({4, 3, 7, 7}), b.randn({4}), Shape{2},
                  Shape{3}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.dyadic({1, 2, 12, 11}), b.dyadic({3, 2, 9, 9}), none, Shape{1}, Shape{2},
                  Shape{1}, int64_t{1})};
}
// Without gradients, an ungrouped kernel into at most 64 output channels (src/tensor/
// convolution.cpp's pixel_major_product: the input padded channels-last, pixel-major columns):
// stride 2 over a padded size that is no multiple of it (11x10), dilation with unequal padding
// and exactly 64 output channels, 1-D and 3-D, a computed input (fused into the padding copy),
// float64; 65 output channels take windows_product's channel-major columns.
PARITY_CASE(ConvPath, pixel_major_columns) {
  auto none = typename B::T{};
  return std::vector{
      ops::conv2d(b, b.dyadic({2, 6, 9, 8}), b.dyadic({5, 6, 3, 3}), b.randn({5}), Shape{2},
                  Shape{1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.dyadic({1, 8, 7, 10}), b.dyadic({64, 8, 3, 2}), b.randn({64}), Shape{1},
                  Shape{2, 1}, Shape{2}, int64_t{1}),
      ops::conv1d(b, b.dyadic({2, 5, 13}), b.dyadic({3, 5, 4}), none, Shape{3}, Shape{2}, Shape{1},
                  int64_t{1}),
      ops::conv3d(b, b.dyadic({1, 6, 4, 5, 6}).tanh(), b.dyadic({4, 6, 2, 3, 2}), b.randn({4}),
                  Shape{1, 2, 1}, Shape{1, 0, 1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.randn({1, 7, 6, 5}, b.f64), b.randn({2, 7, 3, 3}, b.f64),
                  b.randn({2}, b.f64), Shape{1}, Shape{1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.dyadic({1, 6, 6, 5}), b.dyadic({65, 6, 3, 3}), none, Shape{1}, Shape{1},
                  Shape{1}, int64_t{1})};
}
// Without gradients, few input channels (a network's stem: the weight times the stacked taps,
// src/tensor/convolution.cpp's few_channels_product): images whose pixel count is no multiple of
// 16 (31x8 and, at batch 3, 15x4: one spare row each, cut off again; 17x15: too many spare rows,
// windows_product instead), padding on every side (and an input padded unequally on three,
// computed), a 7x7 stride-2 kernel at batch 2 (phase-major rows), dilation with 2 channels, no
// bias, and float64 at batch 2 (a spare row).
PARITY_CASE(ConvPath, few_channels) {
  auto none = typename B::T{};
  auto w = b.dyadic({5, 3, 3, 3});
  return std::vector{
      ops::conv2d(b, b.dyadic({1, 3, 33, 29}), w, b.randn({5}), Shape{2}, Shape{1}, Shape{1},
                  int64_t{1}),
      ops::conv2d(b, b.dyadic({1, 3, 62, 16}), w, b.randn({5}), Shape{2}, Shape{1}, Shape{1},
                  int64_t{1}),
      ops::conv2d(b, b.dyadic({3, 3, 30, 8}), w, none, Shape{2}, Shape{1}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.pad(b.dyadic({2, 3, 19, 21}), Shape{3, 1, 0, 2}), b.dyadic({6, 3, 7, 7}),
                  b.randn({6}), Shape{2}, Shape{0}, Shape{1}, int64_t{1}),
      ops::conv2d(b, b.dyadic({2, 2, 20, 30}), b.dyadic({4, 2, 3, 2}), b.randn({4}), Shape{1, 2},
                  Shape{2, 1}, Shape{2, 1}, int64_t{1}),
      ops::conv2d(b, b.randn({2, 3, 31, 16}, b.f64), b.randn({7, 3, 3, 3}, b.f64),
                  b.randn({7}, b.f64), Shape{2}, Shape{2, 1}, Shape{1}, int64_t{1})};
}
// A transposed convolution whose padding exceeds dilation * (kernel - 1): the convolution's
// padding before is negative (a crop).
PARITY_AND_BACKWARD_CASE(ConvPath, conv_transpose_cropped, GradConvPath, conv_transpose_cropped) {
  return ops::conv_transpose1d(b, b.dyadic({2, 2, 9}), b.dyadic({2, 3, 3}), b.randn({3}), Shape{1},
                               Shape{3}, Shape{0}, int64_t{1}, Shape{1});
}

// ---- pooling ----------------------------------------------------------------------------------
BACKWARD_CASE(GradPool, max_pool2d) {
  auto x = b.randn({2, 3, 7, 6});
  return std::vector{ops::max_pool2d(b, x, Shape{2}, Shape{}, Shape{0}, Shape{1}, false),
                     ops::max_pool2d(b, x, Shape{3, 2}, Shape{2, 1}, Shape{1}, Shape{1}, false),
                     ops::max_pool2d(b, x, Shape{3}, Shape{2}, Shape{1}, Shape{2, 1}, true),
                     ops::max_pool2d(b, x, Shape{2}, Shape{3}, Shape{0}, Shape{1}, true)};
}
// Large dilated kernels with a large stride (pytorch-converted's MaxPool*_stride_padding_dilation
// shape of problem, smaller).
PARITY_CASE(Pool, max_pool2d_large_dilated_kernel) {
  return ops::max_pool2d(b, b.randn({1, 1, 120, 100}), Shape{6, 8}, Shape{10}, Shape{3, 4},
                         Shape{10}, false);
}
PARITY_CASE(Pool, max_pool_1d_3d) {
  return std::vector{
      ops::max_pool1d(b, b.randn({2, 9}), Shape{3}, Shape{2}, Shape{1}, Shape{1}, true),
      ops::max_pool3d(b, b.randn({1, 2, 4, 5, 3}), Shape{2}, Shape{1, 2, 1}, Shape{0}, Shape{1},
                      false)};
}
// NaN and infinities without a gradient (max pooling's strided-view path): a window holding a NaN
// gives NaN, as libtorch's pooling does; -inf inputs beside the padding's lowest value.
PARITY_CASE(Pool, max_pool2d_nan_and_infinities, NOGRAD) {
  const double inf = std::numeric_limits<double>::infinity();
  auto x = b.values(
      {NAN, 1, 2, -inf, 3, -inf, -inf, -inf, 0, 5, 4, inf, -1, NAN, 2, -inf, -inf, 7, 1, 0},
      {1, 1, 4, 5});
  return std::vector{ops::max_pool2d(b, x, Shape{3}, Shape{2}, Shape{1}, Shape{1}, true),
                     ops::max_pool2d(b, x, Shape{2}, Shape{1}, Shape{0}, Shape{1}, false)};
}
PARITY_CASE(Pool, max_pool2d_with_indices, NOGRAD) {
  auto x = b.randn({2, 2, 6, 7});
  auto [v, i] = ops::max_pool2d_with_indices(b, x, Shape{3}, Shape{2}, Shape{1}, Shape{1}, true);
  auto [v2, i2] =
      ops::max_pool2d_with_indices(b, b.values({1, 1, 2, 2, 1, 1, 2, 2}, {1, 1, 2, 4}), Shape{2},
                                   Shape{2}, Shape{0}, Shape{1}, false);  // ties
  return std::vector{v, i, v2, i2};
}
BACKWARD_CASE(GradPool, avg_pool2d) {
  auto x = b.randn({2, 3, 7, 6});
  return std::vector{ops::avg_pool2d(b, x, Shape{2}, Shape{}, Shape{0}, false, true),
                     ops::avg_pool2d(b, x, Shape{3}, Shape{2}, Shape{1}, false, true),
                     ops::avg_pool2d(b, x, Shape{3}, Shape{2}, Shape{1}, false, false),
                     ops::avg_pool2d(b, x, Shape{3, 2}, Shape{2}, Shape{1}, true, true),
                     ops::avg_pool2d(b, x, Shape{3, 2}, Shape{2}, Shape{1}, true, false)};
}
PARITY_CASE(Pool, avg_pool_1d_3d) {
  return std::vector{
      ops::avg_pool1d(b, b.randn({2, 3, 9}), Shape{4}, Shape{3}, Shape{2}, true, false),
      ops::avg_pool3d(b, b.randn({1, 2, 4, 5, 3}), Shape{2}, Shape{2, 1, 2}, Shape{1, 0, 1}, false,
                      true)};
}

// ---- normalisation ----------------------------------------------------------------------------
BACKWARD_CASE(GradNorm, batch_norm_inference, TR) {
  auto x = b.randn({3, 4, 2, 2}), w = b.randn({4}), bias = b.randn({4});
  auto rm = b.randn({4}).detach(), rv = b.rand({4}, 0.5, 2).detach();
  return std::vector{
      ops::batch_norm(b, x, w, bias, rm, rv, false, 0.1, 1e-5),
      ops::batch_norm(b, x, typename B::T{}, typename B::T{}, rm, rv, false, 0.1, 1e-3)};
}
BACKWARD_CASE(GradNorm, batch_norm_training, TR) {
  auto x = b.randn({5, 3, 4}), w = b.randn({3}), bias = b.randn({3});
  return ops::batch_norm(b, x, w, bias, typename B::T{}, typename B::T{}, true, 0.1, 1e-5);
}
PARITY_CASE(Norm, batch_norm_training_updates_running_stats, TR, NOGRAD) {
  auto x = b.randn({6, 3, 2}), rm = b.randn({3}), rv = b.rand({3}, 0.5, 2);
  b.realize(rm);
  b.realize(rv);
  auto y = ops::batch_norm(b, x, b.randn({3}), b.randn({3}), rm, rv, true, 0.3, 1e-5);
  return std::vector{y, rm, rv};
}
BACKWARD_CASE(GradNorm, layer_norm, TR) {
  auto x = b.randn({2, 3, 4, 5});
  return std::vector{ops::layer_norm(b, x, Shape{5}, b.randn({5}), b.randn({5}), 1e-5),
                     ops::layer_norm(b, x, Shape{4, 5}, typename B::T{}, typename B::T{}, 1e-3)};
}
BACKWARD_CASE(GradNorm, group_and_instance_norm, TR) {
  auto x = b.randn({2, 6, 3, 2});
  return std::vector{ops::group_norm(b, x, int64_t{3}, b.randn({6}), b.randn({6}), 1e-5),
                     ops::group_norm(b, x, int64_t{6}, typename B::T{}, typename B::T{}, 1e-5),
                     ops::instance_norm(b, x, b.randn({6}), b.randn({6}), 1e-5)};
}

// ember/normalization.h — batch, layer, group and instance normalisation (libtorch's
// torch::batch_norm, torch::layer_norm, torch::group_norm, torch::instance_norm: names, argument
// orders, semantics). Compositions of mean, var, rsqrt and broadcasting; gradients by composition.
//
// Every one computes y = (x - mean) / sqrt(var + eps) * weight + bias with the biased variance
// (divided by the count, not count - 1) over:
//   batch_norm: every dim but the channel dim 1 (input [N, C, ...]); in inference
//     (training = false) mean and var are running_mean and running_var instead;
//   layer_norm: the last normalized_shape.size() dims, whose sizes must equal normalized_shape;
//     weight and bias have normalized_shape;
//   group_norm: each of num_groups groups of C / num_groups channels, with the spatial dims;
//   instance_norm: the spatial dims of each (sample, channel); libtorch's running statistics
//     (use_input_stats = false) are not offered, so its signature ends at eps.
// weight and bias (per channel, [C], except layer_norm's) may be undefined: 1 and 0. batch_norm in
// training updates defined running_mean / running_var in place: r = (1 - momentum) r + momentum
// s, s the batch mean and the unbiased batch variance (as libtorch); they must be realized.
// Errors: ShapeError for mismatched shapes; ValueError for a missing running statistic in
// inference or C not divisible by num_groups.
#pragma once
#include "ember/tensor.h"

namespace ember {

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);
Tensor layer_norm(const Tensor& input, IntList normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor instance_norm(const Tensor& input, const Tensor& weight = {}, const Tensor& bias = {},
                     double eps = 1e-5);

}  // namespace ember

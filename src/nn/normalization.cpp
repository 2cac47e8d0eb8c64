// BatchNorm2d, LayerNorm and GroupNorm (include/ember/nn/normalization.h).
#include "ember/nn/normalization.h"

#include <string>

#include "ember/grad_mode.h"
#include "ember/normalization.h"
#include "ember/support/shape_str.h"

namespace ember::nn {

BatchNorm2dImpl::BatchNorm2dImpl(BatchNormOptions o) : options(std::move(o)) {
  const int64_t C = options.num_features();
  if (C <= 0)
    throw ValueError("BatchNorm2d: num_features must be positive, got " + std::to_string(C));
  if (options.affine()) {
    weight = register_parameter("weight", ones({C}));
    bias = register_parameter("bias", zeros({C}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({C}));
    running_var = register_buffer("running_var", ones({C}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& x) {
  if (x.dim() != 4)
    throw ValueError("BatchNorm2d: expected a 4-d input, got " + support::shape_str(x.sizes()));
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum())  // a cumulative moving average
      momentum = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // libtorch's rule: batch statistics in training or when none are tracked.
  const bool use_batch = is_training() || !running_mean.defined();
  return batch_norm(x, weight, bias, running_mean, running_var, use_batch, momentum, options.eps());
}

LayerNormImpl::LayerNormImpl(LayerNormOptions o) : options(std::move(o)) {
  for (int64_t d : options.normalized_shape())
    if (d <= 0)
      throw ValueError("LayerNorm: normalized_shape must be positive, got " +
                       support::shape_str(options.normalized_shape()));
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(options.normalized_shape()));
    bias = register_parameter("bias", zeros(options.normalized_shape()));
  }
}

Tensor LayerNormImpl::forward(const Tensor& x) const {
  return layer_norm(x, options.normalized_shape(), weight, bias, options.eps());
}

GroupNormImpl::GroupNormImpl(GroupNormOptions o) : options(std::move(o)) {
  const int64_t G = options.num_groups(), C = options.num_channels();
  if (G <= 0 || C <= 0 || C % G)
    throw ValueError("GroupNorm: num_channels " + std::to_string(C) +
                     " must be a positive multiple of num_groups " + std::to_string(G));
  if (options.affine()) {
    weight = register_parameter("weight", ones({C}));
    bias = register_parameter("bias", zeros({C}));
  }
}

Tensor GroupNormImpl::forward(const Tensor& x) const {
  if (x.dim() < 2 || x.size(1) != options.num_channels())
    throw ShapeError("GroupNorm: expected input [N, " + std::to_string(options.num_channels()) +
                     ", ...], got " + support::shape_str(x.sizes()));
  return group_norm(x, options.num_groups(), weight, bias, options.eps());
}

}  // namespace ember::nn

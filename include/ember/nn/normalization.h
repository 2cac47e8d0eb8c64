// ember/nn/normalization.h — BatchNorm2d, LayerNorm and GroupNorm (libtorch's modules: options,
// the state dict's names, train()/eval() behaviour, initialisation). The computations are
// ember::batch_norm, layer_norm and group_norm (ember/normalization.h: formulas and errors).
#pragma once
#include <optional>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  /// The running statistics' update factor; nullopt: a cumulative average (1 / batches seen).
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};
using BatchNorm2dOptions = BatchNormOptions;

/// Input [N, num_features, H, W] (ValueError for another rank). State: parameters weight (ones)
/// and bias (zeros) [C] when affine; buffers running_mean (zeros), running_var (ones) [C] and
/// num_batches_tracked (int64, 0-d) when track_running_stats. In training mode it normalises by
/// the batch's statistics and updates the buffers in place (num_batches_tracked += 1); in eval
/// mode it normalises by the running statistics (by the batch's when they are not tracked).
class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(BatchNormOptions options);
  Tensor forward(const Tensor& input);
  BatchNormOptions options;
  Tensor weight, bias;
  Tensor running_mean, running_var, num_batches_tracked;
};
EMBER_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, elementwise_affine) = true;
};

/// Normalises the last normalized_shape.size() dims. Parameters weight (ones) and bias (zeros)
/// of normalized_shape when elementwise_affine.
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(LayerNormOptions options);
  Tensor forward(const Tensor& input) const;
  LayerNormOptions options;
  Tensor weight, bias;
};
EMBER_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(int64_t, num_channels);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, affine) = true;
};

/// Input [N, num_channels, ...]; parameters weight (ones) and bias (zeros) [num_channels] when
/// affine. ValueError when num_channels is not divisible by num_groups.
class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(GroupNormOptions options);
  Tensor forward(const Tensor& input) const;
  GroupNormOptions options;
  Tensor weight, bias;
};
EMBER_MODULE(GroupNorm);

}  // namespace ember::nn

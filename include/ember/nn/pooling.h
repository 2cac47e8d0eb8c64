// ember/nn/pooling.h — MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (libtorch's modules and
// options). The computations are ember::max_pool2d, avg_pool2d and adaptive_avg_pool2d
// (ember/pooling.h: output sizes, ceil_mode, errors). No parameters.
#pragma once
#include <optional>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

/// libtorch's MaxPoolOptions<D> and AvgPoolOptions<D> as one template over D spatial dims and the
/// kind: dilation is max pooling's, count_include_pad average pooling's.
template <size_t D, bool Max>
struct PoolNdOptions {
  PoolNdOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG_IF(Max, ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
  EMBER_ARG_IF(!Max, bool, count_include_pad) = true;
};
template <size_t D>
using MaxPoolOptions = PoolNdOptions<D, true>;
template <size_t D>
using AvgPoolOptions = PoolNdOptions<D, false>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using AvgPool2dOptions = AvgPoolOptions<2>;

/// libtorch's AdaptiveAvgPoolOptions (AdaptiveAvgPool2dOptions: D = 2).
template <size_t D>
struct AdaptiveAvgPoolOptions {
  AdaptiveAvgPoolOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}
  EMBER_ARG(ExpandingArray<D>, output_size);
};
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<2>;

/// Constructed from the options or from kernel_size (output_size for the adaptive pooling).
class MaxPool2dImpl : public OptionsModule<MaxPool2dOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& input) const;
};
EMBER_MODULE(MaxPool2d);

class AvgPool2dImpl : public OptionsModule<AvgPool2dOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& input) const;
};
EMBER_MODULE(AvgPool2d);

class AdaptiveAvgPool2dImpl : public OptionsModule<AdaptiveAvgPool2dOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& input) const;
};
EMBER_MODULE(AdaptiveAvgPool2d);

}  // namespace ember::nn

// ember/nn/pooling.h — MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (libtorch's modules and
// options). The computations are ember::max_pool2d, avg_pool2d and adaptive_avg_pool2d
// (ember/pooling.h: output sizes, ceil_mode, errors). No parameters.
#pragma once
#include <optional>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride);  // default: kernel_size
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size)
      : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(MaxPool2dOptions options) : options(std::move(options)) {}
  Tensor forward(const Tensor& input) const;
  MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride);  // default: kernel_size
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(bool, ceil_mode) = false;
  EMBER_ARG(bool, count_include_pad) = true;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size)
      : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(AvgPool2dOptions options) : options(std::move(options)) {}
  Tensor forward(const Tensor& input) const;
  AvgPool2dOptions options;
};
EMBER_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}
  EMBER_ARG(ExpandingArray<2>, output_size);
};

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions options) : options(std::move(options)) {}
  Tensor forward(const Tensor& input) const;
  AdaptiveAvgPool2dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool2d);

}  // namespace ember::nn

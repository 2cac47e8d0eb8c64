// ember/nn/conv.h — Conv2d and ConvTranspose2d (libtorch's modules: options, parameter names
// "weight" and "bias", default initialisation). The computation is ember::conv2d /
// ember::conv_transpose2d (ember/convolution.h: shapes and errors); zero padding only.
//
// Initialisation as libtorch's: weight ~ kaiming_uniform_(a = sqrt(5)), i.e. U(-1/sqrt(f),
// 1/sqrt(f)), and bias ~ U(-1/sqrt(f), 1/sqrt(f)), f = weight.size(1) * kernel area (the weight's
// fan in).
#pragma once
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
};

/// [N, in_channels, H, W] (or unbatched [in_channels, H, W]) -> [N, out_channels, H', W'].
/// ValueError for non-positive channels, or channels not divisible by groups.
class Conv2dImpl : public Module {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(Conv2dOptions options);
  Tensor forward(const Tensor& input) const;
  Conv2dOptions options;
  Tensor weight;  // [out_channels, in_channels / groups, kH, kW]
  Tensor bias;    // [out_channels] or undefined
};
EMBER_MODULE(Conv2d);

struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
};

/// [N, in_channels, H, W] -> [N, out_channels, H', W'] with H' = (H - 1) stride - 2 padding +
/// dilation (k - 1) + output_padding + 1. Errors as Conv2d.
class ConvTranspose2dImpl : public Module {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(ConvTranspose2dOptions options);
  Tensor forward(const Tensor& input) const;
  ConvTranspose2dOptions options;
  Tensor weight;  // [in_channels, out_channels / groups, kH, kW]
  Tensor bias;    // [out_channels] or undefined
};
EMBER_MODULE(ConvTranspose2d);

}  // namespace ember::nn

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

/// libtorch's Conv2dOptions and ConvTranspose2dOptions (ConvOptions<D>, ConvTransposeOptions<D>)
/// as one template: the transposed convolution adds output_padding.
template <size_t D, bool Transposed>
struct ConvNdOptions {
  static constexpr bool transposed = Transposed;
  ConvNdOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;

  /// ConvTranspose only: sizes added to one side of each output dim.
  EMBER_ARG_IF(Transposed, ExpandingArray<D>, output_padding) = 0;
};
using Conv2dOptions = ConvNdOptions<2, false>;
using ConvTranspose2dOptions = ConvNdOptions<2, true>;

/// What Conv2d and ConvTranspose2d share (libtorch's ConvNdImpl): the options, the parameters and
/// the constructors; conv.cpp checks the channels and initialises the parameters.
template <typename Options>
class ConvModule : public Module {
 public:
  ConvModule(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvModule(Options(in_channels, out_channels, kernel_size)) {}
  explicit ConvModule(Options options);
  Options options;
  /// Conv2d: [out_channels, in_channels / groups, kH, kW]; ConvTranspose2d: [in_channels,
  /// out_channels / groups, kH, kW].
  Tensor weight;
  Tensor bias;  // [out_channels] or undefined
};
extern template class ConvModule<Conv2dOptions>;
extern template class ConvModule<ConvTranspose2dOptions>;

/// [N, in_channels, H, W] (or unbatched [in_channels, H, W]) -> [N, out_channels, H', W'].
/// ValueError for non-positive channels, or channels not divisible by groups.
class Conv2dImpl : public ConvModule<Conv2dOptions> {
 public:
  using ConvModule::ConvModule;
  Tensor forward(const Tensor& input) const;
};
EMBER_MODULE(Conv2d);

/// [N, in_channels, H, W] -> [N, out_channels, H', W'] with H' = (H - 1) stride - 2 padding +
/// dilation (k - 1) + output_padding + 1. Errors as Conv2d.
class ConvTranspose2dImpl : public ConvModule<ConvTranspose2dOptions> {
 public:
  using ConvModule::ConvModule;
  Tensor forward(const Tensor& input) const;
};
EMBER_MODULE(ConvTranspose2d);

}  // namespace ember::nn

// Conv2d and ConvTranspose2d (include/ember/nn/conv.h).
#include "ember/nn/conv.h"

#include <cmath>
#include <string>

#include "ember/convolution.h"
#include "ember/nn/init.h"

namespace ember::nn {

namespace {

void check_channels(int64_t in, int64_t out, int64_t groups, const char* name) {
  if (in <= 0 || out <= 0 || groups <= 0)
    throw ValueError(std::string(name) + ": channels and groups must be positive, got " +
                     std::to_string(in) + ", " + std::to_string(out) + " and " +
                     std::to_string(groups));
  if (in % groups || out % groups)
    throw ValueError(std::string(name) + ": in_channels " + std::to_string(in) +
                     " and out_channels " + std::to_string(out) + " must be divisible by groups " +
                     std::to_string(groups));
}

// libtorch's ConvNdImpl::reset_parameters.
void reset(Module& m, Tensor& weight, Tensor& bias, const Shape& shape, int64_t out,
           bool with_bias) {
  weight = m.register_parameter("weight", zeros(shape));
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!with_bias) return;
  bias = m.register_parameter("bias", zeros({out}));
  const double bound = 1 / std::sqrt(static_cast<double>(weight.numel() / weight.size(0)));
  init::uniform_(bias, -bound, bound);
}

}  // namespace

template <typename Options>
ConvModule<Options>::ConvModule(Options o) : options(std::move(o)) {
  constexpr bool transposed = Options::transposed;
  const int64_t in = options.in_channels(), out = options.out_channels(), g = options.groups();
  check_channels(in, out, g, transposed ? "ConvTranspose2d" : "Conv2d");
  const auto& k = options.kernel_size();
  const Shape shape = transposed ? Shape{in, out / g, k[0], k[1]} : Shape{out, in / g, k[0], k[1]};
  reset(*this, weight, bias, shape, out, options.bias());
}
template class ConvModule<Conv2dOptions>;
template class ConvModule<ConvTranspose2dOptions>;

Tensor Conv2dImpl::forward(const Tensor& x) const {
  return conv2d(x, weight, bias, options.stride().vec(), options.padding().vec(),
                options.dilation().vec(), options.groups());
}

Tensor ConvTranspose2dImpl::forward(const Tensor& x) const {
  return conv_transpose2d(x, weight, bias, options.stride().vec(), options.padding().vec(),
                          options.output_padding().vec(), options.groups(),
                          options.dilation().vec());
}

}  // namespace ember::nn

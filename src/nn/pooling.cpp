// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d (include/ember/nn/pooling.h).
#include "ember/nn/pooling.h"

#include "ember/pooling.h"

namespace ember::nn {

Tensor MaxPool2dImpl::forward(const Tensor& x) const {
  return max_pool2d(x, options.kernel_size().vec(), options.stride().vec(), options.padding().vec(),
                    options.dilation().vec(), options.ceil_mode());
}

Tensor AvgPool2dImpl::forward(const Tensor& x) const {
  return avg_pool2d(x, options.kernel_size().vec(), options.stride().vec(), options.padding().vec(),
                    options.ceil_mode(), options.count_include_pad());
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) const {
  return adaptive_avg_pool2d(x, options.output_size().vec());
}

}  // namespace ember::nn

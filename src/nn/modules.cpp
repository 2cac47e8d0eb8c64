#include "ember/nn/modules.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/support/shape_str.h"

namespace ember::nn {

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias)
    : in_features(in), out_features(out) {
  if (in <= 0 || out <= 0)
    throw ValueError("Linear: in_features and out_features must be positive, got " +
                     std::to_string(in) + " and " + std::to_string(out));
  weight = register_parameter("weight", zeros({out, in}));
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (with_bias) {
    bias = register_parameter("bias", zeros({out}));
    double bound = 1.0 / std::sqrt(static_cast<double>(in));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) const {
  if (x.dim() == 0 || x.size(-1) != in_features)
    throw ShapeError("Linear: expected input with last dim " + std::to_string(in_features) +
                     ", got shape " + support::shape_str(x.sizes()));
  return ember::linear(x, weight, bias);
}

Tensor SequentialImpl::forward(const Tensor& x) const {
  Tensor y = x;
  for (auto& f : fns_) y = f(y);
  return y;
}

}  // namespace ember::nn

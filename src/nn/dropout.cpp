// Dropout (include/ember/nn/dropout.h).
#include "ember/nn/dropout.h"

#include <string>

#include "ember/dropout.h"

namespace ember::nn {

DropoutImpl::DropoutImpl(DropoutOptions o) : options(std::move(o)) {
  if (!(options.p() >= 0 && options.p() <= 1))
    throw ValueError("Dropout: probability must be in [0, 1], got " + std::to_string(options.p()));
}

Tensor DropoutImpl::forward(const Tensor& x) const {
  return dropout(x, options.p(), is_training());
}

}  // namespace ember::nn

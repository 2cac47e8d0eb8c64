// ember/nn/dropout.h — Dropout (libtorch's module and options). In training mode it is
// ember::dropout(input, p, true) (ember/dropout.h: the seeded mask, the scaling, errors); in eval
// mode the identity.
#pragma once
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}
  EMBER_ARG(double, p);
  /// Accepted for libtorch's spelling; ember's result is a new tensor either way.
  EMBER_ARG(bool, inplace) = false;
};

/// ValueError for p outside [0, 1].
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(DropoutOptions options = {});
  Tensor forward(const Tensor& input) const;
  DropoutOptions options;
};
EMBER_MODULE(Dropout);

}  // namespace ember::nn

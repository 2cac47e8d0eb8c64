// ember/nn/activation.h — activation modules (libtorch's Sigmoid, GELU, SiLU, LeakyReLU and their
// options) and Flatten. No parameters; the functions are ember's (ember/activations.h: formulas,
// dtypes, errors). Tanh and ReLU are in ember/nn/modules.h.
#pragma once
#include <string>

#include "ember/activations.h"
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

class SigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const { return x.sigmoid(); }
};
EMBER_MODULE(Sigmoid);

class SiLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const { return silu(x); }
};
EMBER_MODULE(SiLU);

struct GELUOptions {
  /// "none" (the exact erf form) or "tanh".
  EMBER_ARG(std::string, approximate) = "none";
};

class GELUImpl : public OptionsModule<GELUOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& x) const { return gelu(x, options.approximate()); }
};
EMBER_MODULE(GELU);

struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 1e-2;
  /// Accepted for libtorch's spelling; ember's result is a new tensor either way.
  EMBER_ARG(bool, inplace) = false;
};

class LeakyReLUImpl : public OptionsModule<LeakyReLUOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& x) const { return leaky_relu(x, options.negative_slope()); }
};
EMBER_MODULE(LeakyReLU);

struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};

/// Tensor::flatten(start_dim, end_dim): [N, C, H, W] -> [N, C H W] by default.
class FlattenImpl : public OptionsModule<FlattenOptions> {
 public:
  using OptionsModule::OptionsModule;
  Tensor forward(const Tensor& x) const {
    return x.flatten(options.start_dim(), options.end_dim());
  }
};
EMBER_MODULE(Flatten);

}  // namespace ember::nn

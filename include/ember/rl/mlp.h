// A tanh multi-layer perceptron: in -> hidden x layers (tanh) -> out (linear), the network shape of
// both the actor and the critic in docs/training.md "The workload" (8 -> 4 x 128 tanh -> 2 or 1).
//
// Initialisation (docs/training.md "The hyper-parameters"; as common PPO
// implementations): orthogonal weights (nn::init::orthogonal_, Saxe et al. 2013) with gain
// `hidden_gain` (sqrt(2)) on the hidden layers and `output_gain` on the output layer (0.01 actor,
// 1.0 critic); zero biases. Draws from ember's global generator (seed it with manual_seed).
//
// Shapes: forward takes x [B, in] float32 and returns [B, out] float32. Parameters, in order:
// "0.weight" [hidden, in], "0.bias" [hidden], ..., "<layers>.weight" [out, hidden],
// "<layers>.bias" [out].
//
// Performance note (scheduler behaviour, docs/design.md principle 3): forward materialises every
// hidden activation (Tensor::contiguous()). Before commit b5930ea the scheduler fused
// tanh(x W^T + b) into the next layer's matmul operand and recomputed the tanh for every output
// column (that matmul took ~400 ms instead of ~30 ms at 10000 x 128); it now materialises such
// values itself, so this is only explicit. Gradients come from autograd (ppo_update.h), whose
// tanh rule reads these materialised activations (tensor/backward.cpp). The explicit chain rule
// this class carried until 56f70d4 gave bit-identical training runs and no faster update.
#pragma once

#include <cstdint>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/modules.h"
#include "ember/tensor.h"

namespace ember::rl {

struct MlpOptions {
  int64_t in = 8;
  int64_t out = 2;
  int64_t hidden = 128;                     // width of every hidden layer
  int64_t layers = 4;                       // number of hidden layers (Linear + tanh); >= 1
  double hidden_gain = 1.4142135623730951;  // sqrt(2)
  double output_gain = 1.0;
};

class MlpImpl : public nn::Module {
 public:
  /// Throws ValueError for non-positive sizes.
  explicit MlpImpl(const MlpOptions& options);

  /// x [B, in] -> [B, out].
  Tensor forward(const Tensor& x) const;

  const MlpOptions& options() const { return options_; }
  const std::vector<nn::Linear>& linears() const { return linears_; }

 private:
  MlpOptions options_;
  std::vector<nn::Linear> linears_;
};

class Mlp : public nn::ModuleHolder<MlpImpl> {
 public:
  using nn::ModuleHolder<MlpImpl>::ModuleHolder;
};

}  // namespace ember::rl

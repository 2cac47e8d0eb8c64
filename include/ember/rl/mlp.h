// A tanh multi-layer perceptron: in -> hidden x layers (tanh) -> out (linear), the network shape of
// both the actor and the critic in spec/ppo.md "Workload" (8 -> 4 x 128 tanh -> 2 or 1).
//
// Initialisation (spec/ppo.md "A configuration known to reach 200"; as common PPO
// implementations): orthogonal weights (nn::init::orthogonal_, Saxe et al. 2013) with gain
// `hidden_gain` (sqrt(2)) on the hidden layers and `output_gain` on the output layer (0.01 actor,
// 1.0 critic); zero biases. Draws from ember's global generator (seed it with manual_seed).
//
// Shapes: forward takes x [B, in] float32 and returns [B, out] float32. Parameters, in order:
// "0.weight" [hidden, in], "0.bias" [hidden], ..., "<layers>.weight" [out, hidden],
// "<layers>.bias" [out].
//
// Two performance notes about the current scheduler (DESIGN.md principle 3), both handled here
// (measured at commit b802c23, 10000 x 128 activations, 1 thread):
//   * forward materialises every hidden activation (Tensor::contiguous()). Without it the
//     scheduler fuses tanh(x W^T + b) into the next layer's matmul operand and recomputes the tanh
//     for every output column: that matmul takes ~400 ms instead of ~30 ms.
//   * backward() is the layer-by-layer chain rule written out (dy = g * (1 - h^2) materialised,
//     dW = dy^T x, db = sum_rows dy, g_prev = dy W) so that the gradients of the pre-activations
//     are materialised once; autograd's backward graph instead fuses g * (1 - h^2) into the
//     operands of three reduces each, which then run at 9-22 instead of 43-54 GFLOPS (an MLP
//     training step at batch 10,000, 2 threads: ~1.0 s with autograd vs ~0.25 s). Both give the
//     same gradients (tests/rl/test_policy.cpp); the trainer can use either (--backward).
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
  /// As forward; `inputs` receives each linear layer's input (x, h1, ..., h_layers), for backward.
  Tensor forward(const Tensor& x, std::vector<Tensor>& inputs) const;
  /// Gradients of sum(grad_out * forward(x)) w.r.t. parameters() (same order), as lazy tensors;
  /// `inputs` from forward(x, inputs), grad_out [B, out]. Does not record gradients itself.
  std::vector<Tensor> backward(const std::vector<Tensor>& inputs, const Tensor& grad_out) const;

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

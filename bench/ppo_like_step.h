// The PPO-style training step of issues 4 and 11: actor and critic MLPs of the study's shape
// (8 -> 4x128 tanh -> 2 / 1), the Gaussian log-probability with a fixed log-std, the clipped
// surrogate, the value loss, backward, clip_grad_norm_ 0.5 and Adam. Simpler than the trainer's
// step (rl::PpoLearner), it shows the launches and the overhead of jit replay on their own:
// bench/jit_overhead.cpp and bench/step_vs_torch.cpp time it, tests/schedule/test_kernel_counts.cpp
// counts its launches.
#pragma once
#include <cstdint>
#include <vector>

#include "ember/ember.h"

namespace ppo_like {

/// 8 -> 128 -> 128 -> 128 -> 128 -> out with tanh between the layers, of ember's modules or of
/// libtorch's (they have the same names).
template <class Sequential = ember::nn::Sequential, class Linear = ember::nn::Linear,
          class Tanh = ember::nn::Tanh>
Sequential mlp(int64_t out) {
  Sequential s;
  s->push_back(Linear(8, 128));
  for (int i = 0; i < 3; i++) {
    s->push_back(Tanh());
    s->push_back(Linear(128, 128));
  }
  s->push_back(Tanh());
  s->push_back(Linear(128, out));
  return s;
}

/// The actor (the action mean, 2 outputs) and the critic (the value, 1 output), Adam (lr 1e-4)
/// over both, and the policy's log-std (zeros, realized, not trained).
struct Step {
  Step() { logstd.realize(); }

  /// One step on in = {obs [B, 8], act [B, 2], adv [B], ret [B]}; returns {the loss, detached}.
  std::vector<ember::Tensor> operator()(const std::vector<ember::Tensor>& in) {
    using ember::Tensor;
    opt.zero_grad();
    Tensor mean = actor->forward(in[0]);
    Tensor logp = (-((in[1] - mean) / logstd.exp()).square() * 0.5 - logstd).sum({1});
    Tensor ratio = logp.exp();
    Tensor pg = -(ratio * in[2]).minimum(ratio.clamp(0.8, 1.2) * in[2]).mean();
    Tensor v = critic->forward(in[0]).squeeze(1);
    Tensor loss = pg + (v - in[3]).square().mean() * 0.5;
    loss.backward();
    ember::nn::utils::clip_grad_norm_(params, 0.5);
    opt.step();
    return {loss.detach()};
  }

  ember::nn::Sequential actor = mlp(2), critic = mlp(1);
  std::vector<ember::Tensor> params = both_parameters();
  ember::optim::Adam opt{params, ember::optim::AdamOptions(1e-4)};
  ember::Tensor logstd = ember::zeros({2});

 private:
  std::vector<ember::Tensor> both_parameters() const {
    std::vector<ember::Tensor> p = actor->parameters();
    for (auto& q : critic->parameters()) p.push_back(q);
    return p;
  }
};

}  // namespace ppo_like

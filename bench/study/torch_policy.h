// The libtorch transcription of ember's PPO networks and training step, shared by the study's
// libtorch step (torch_step.cpp) and trainer (torch_ppo.cpp). It follows `ember train`
// (include/ember/rl/gaussian_policy.h, ppo_loss.h, ppo_update.h): actor and critic MLPs
// 8 -> four tanh layers of 128 -> 2 / 1, orthogonal init (gain sqrt(2) hidden, 0.01 actor output,
// 1.0 critic output), zero biases, log-std -1; PPO clipped surrogate (Schulman et al. 2017 eq. 7)
// on normalised advantages, value loss 0.5 * MSE, diagonal-Gaussian entropy, approx-KL and clip
// fraction; grad norms clipped to 0.5 separately for the actor (with log_std) and the critic;
// Adam (lr 1e-3, eps 1e-5).
#pragma once
#include <torch/torch.h>

#include <cmath>

namespace ember::study {

inline torch::nn::Sequential torch_mlp(int64_t in, int64_t hidden, int64_t layers, int64_t out,
                                       double out_gain) {
  torch::nn::Sequential s;
  for (int64_t i = 0; i < layers; i++) {
    torch::nn::Linear l(i == 0 ? in : hidden, hidden);
    torch::nn::init::orthogonal_(l->weight, std::sqrt(2.0));
    torch::nn::init::zeros_(l->bias);
    s->push_back(l);
    s->push_back(torch::nn::Tanh());
  }
  torch::nn::Linear l(layers > 0 ? hidden : in, out);
  torch::nn::init::orthogonal_(l->weight, out_gain);
  torch::nn::init::zeros_(l->bias);
  s->push_back(l);
  return s;
}

/// ember's advantage normalisation (include/ember/rl/ppo_loss.h): (A - mean) / (std + 1e-8), and
/// 0 where std(A) <= 1e-4 max|A_i| (a spread within rounding of equal advantages counts as none).
inline torch::Tensor normalize_advantages(const torch::Tensor& adv_raw) {
  torch::Tensor spread = adv_raw.std();
  return torch::where(spread <= adv_raw.abs().max() * 1e-4, torch::zeros_like(adv_raw),
                      (adv_raw - adv_raw.mean()) / (spread + 1e-8));
}

struct TorchStepMetrics {
  double loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction;
};

struct TorchActorCritic {
  torch::nn::Sequential actor = torch_mlp(8, 128, 4, 2, 0.01);
  torch::nn::Sequential critic = torch_mlp(8, 128, 4, 1, 1.0);
  torch::Tensor log_std = torch::full({2}, -1.0, torch::requires_grad());
  std::vector<torch::Tensor> actor_params, critic_params;
  std::unique_ptr<torch::optim::Adam> opt;
  double clip = 0.2, value_coef = 0.5, max_grad_norm = 0.5;

  TorchActorCritic(double lr = 1e-3, double eps = 1e-5) {
    actor_params = actor->parameters();
    actor_params.push_back(log_std);
    critic_params = critic->parameters();
    std::vector<torch::Tensor> all = actor_params;
    all.insert(all.end(), critic_params.begin(), critic_params.end());
    opt = std::make_unique<torch::optim::Adam>(all, torch::optim::AdamOptions(lr).eps(eps));
  }

  /// One optimizer step on a minibatch: obs [M, 8], act [M, 2], old_logp, adv (raw), ret [M].
  TorchStepMetrics step(const torch::Tensor& obs, const torch::Tensor& act,
                        const torch::Tensor& old_logp, const torch::Tensor& adv_raw,
                        const torch::Tensor& ret) {
    const double half_log_2pi = 0.5 * std::log(2 * M_PI);
    opt->zero_grad();
    torch::Tensor mean = actor->forward(obs);
    torch::Tensor value = critic->forward(obs).reshape({-1});
    torch::Tensor z = (act - mean) / log_std.exp();
    torch::Tensor logp = (-0.5 * z.square() - log_std - half_log_2pi).sum(1);
    torch::Tensor adv = normalize_advantages(adv_raw);
    torch::Tensor ratio = (logp - old_logp).exp();
    torch::Tensor policy_loss =
        -torch::min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv).mean();
    torch::Tensor value_loss = 0.5 * (value - ret).square().mean();
    torch::Tensor entropy = (0.5 + half_log_2pi + log_std).sum();
    torch::Tensor loss = policy_loss + value_coef * value_loss;
    torch::Tensor kl, clipfrac;
    {
      torch::NoGradGuard g;
      kl = ((ratio - 1) - ratio.log()).mean();
      clipfrac = ((ratio - 1).abs() > clip).to(torch::kFloat).mean();
    }
    loss.backward();
    torch::nn::utils::clip_grad_norm_(actor_params, max_grad_norm);
    torch::nn::utils::clip_grad_norm_(critic_params, max_grad_norm);
    opt->step();
    return {loss.item<double>(),    policy_loss.item<double>(), value_loss.item<double>(),
            entropy.item<double>(), kl.item<double>(),          clipfrac.item<double>()};
  }
};

}  // namespace ember::study

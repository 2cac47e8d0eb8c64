#include "ember/rl/ppo_loss.h"

#include <string>

#include "ember/rl/gaussian.h"

namespace ember::rl {

PpoLossTerms ppo_loss(const Tensor& means, const Tensor& log_std, const Tensor& values,
                      const Tensor& actions, const Tensor& old_log_probs, const Tensor& advantages,
                      const Tensor& returns, const PpoLossOptions& o) {
  const int64_t m = means.dim() == 2 ? means.size(0) : -1;
  auto is_vec = [m](const Tensor& t) { return t.dim() == 1 && t.size(0) == m; };
  if (m < 1 || actions.sizes() != means.sizes() || !is_vec(values) || !is_vec(old_log_probs) ||
      !is_vec(advantages) || !is_vec(returns))
    throw ShapeError(
        "ppo_loss: expected means/actions [M, A] and values, old_log_probs, "
        "advantages, returns [M] with M = " +
        std::to_string(m));
  Tensor adv = advantages;
  // A minibatch of one has no spread to normalise by (its std is NaN): it is left raw, as
  // Stable-Baselines3 does; TrainConfig::validate rejects that setting up front.
  if (o.normalize_advantages && m > 1) {
    const Tensor spread = adv.std();
    const Tensor equal = spread <= adv.abs().amax({0}) * kAdvantageSpreadFloor;  // ppo_loss.h
    adv = where(equal, zeros_like(adv), (adv - adv.mean()) / (spread + 1e-8));
  }
  const Tensor log_prob = gaussian_log_prob(actions, means, log_std);
  const Tensor log_ratio = log_prob - old_log_probs;
  const Tensor ratio = log_ratio.exp();
  const Tensor surr1 = ratio * adv;
  const Tensor surr2 = ratio.clamp(1.0 - o.clip, 1.0 + o.clip) * adv;
  PpoLossTerms t;
  t.policy_loss = -minimum(surr1, surr2).mean();
  t.value_loss = (values - returns).square().mean() * 0.5;
  t.entropy = gaussian_entropy(log_std);
  t.loss = t.policy_loss + t.value_loss * o.value_coef;
  if (o.entropy_coef != 0.0) t.loss = t.loss - t.entropy * o.entropy_coef;
  const Tensor r = ratio.detach(), lr = log_ratio.detach();
  t.approx_kl = ((r - 1.0) - lr).mean();
  t.clip_fraction = ((r - 1.0).abs() > o.clip).to(kFloat32).mean();
  return t;
}

}  // namespace ember::rl

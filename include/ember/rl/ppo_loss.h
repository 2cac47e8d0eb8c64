// The PPO objective on one minibatch (Schulman et al. 2017, "Proximal Policy Optimization
// Algorithms"), written as lazy tensor graph so that it is differentiated by autograd and can be
// captured by ember::jit.
//
// Inputs (M = minibatch size, A = action dims), all float32:
//   means [M, A]            the current actor's means for the stored observations
//   log_std [A]             the current log-std parameter
//   values [M]              the current critic's values
//   actions [M, A]          the stored UNCLIPPED actions
//   old_log_probs [M]       log pi_old(a | s) at collection time
//   advantages [M]          GAE advantages (gae.h), raw
//   returns [M]             GAE returns (value targets)
//
// Terms (each a 0-d float32 tensor):
//   A_hat = (A - mean(A)) / (std(A) + 1e-8) over the minibatch when normalize_advantages
//           (std with Bessel's correction, as torch.std) and M > 1 (A_hat = A for M = 1, whose
//           std is undefined). A spread that rounding alone can explain counts as none: where
//           std(A) <= kAdvantageSpreadFloor * max|A_i|, A_hat = 0, and the policy loss and its
//           gradient are 0. Equal advantages have std 0 in exact arithmetic, but float32 rounds
//           mean(A) (seven copies of 0.1: an ulp off), which leaves A - mean(A) and std(A) of an
//           ulp each and made A_hat O(1) (a policy loss of 0.41). The floor, 1e-4, is above the
//           worst-case rounding error of the mean and std of float32 values relative to max|A_i|
//           (under 2e-5 for minibatches up to 2^20 terms: the summation bound in tensor.h) and
//           far below the relative spread of advantages that carry a signal; on such data A_hat
//           is exactly the formula above. Advantages with a NaN or an infinity give NaN, as
//           before. bench/study's libtorch reference (torch_policy.h) applies the same rule;
//   r     = exp(log pi(a | s) - old_log_prob)                        (PPO paper eq. 6)
//   policy_loss = -mean(min(r A_hat, clip(r, 1 - eps, 1 + eps) A_hat))  (PPO paper eq. 7, negated)
//   value_loss  = 0.5 * mean((V(s) - R)^2)                        (PPO paper eq. 9's L^VF, with
//                                                                   CleanRL's factor 0.5)
//   entropy     = H of the diagonal Gaussian (gaussian.h)           (PPO paper eq. 9's S)
//   loss        = policy_loss + value_coef * value_loss - entropy_coef * entropy   (eq. 9 negated)
// Diagnostics (no gradient): approx_kl = mean((r - 1) - log r) (the low-variance estimator of
// KL[pi_old || pi], as CleanRL), clip_fraction = mean(|r - 1| > eps).
// Errors: ShapeError for inconsistent shapes.
#pragma once

#include "ember/tensor.h"

namespace ember::rl {

/// The relative spread below which advantages count as equal (A_hat above).
inline constexpr double kAdvantageSpreadFloor = 1e-4;

struct PpoLossOptions {
  double clip = 0.2;          // epsilon of eq. 7
  double value_coef = 0.5;    // c1 of eq. 9
  double entropy_coef = 0.0;  // c2 of eq. 9
  bool normalize_advantages = true;
};

struct PpoLossTerms {
  Tensor loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction;
};

PpoLossTerms ppo_loss(const Tensor& means, const Tensor& log_std, const Tensor& values,
                      const Tensor& actions, const Tensor& old_log_probs, const Tensor& advantages,
                      const Tensor& returns, const PpoLossOptions& options);

}  // namespace ember::rl

// Advantage normalisation over every rank's minibatch in data-parallel PPO (ppo_update.h,
// PpoUpdateOptions::data_parallel). ppo_loss.h normalises over one minibatch:
//   A_hat = (A - mean(A)) / (std(A) + 1e-8), std with Bessel's correction, A_hat = 0 where
//   std(A) <= kAdvantageSpreadFloor * max|A_i|;
// here mean, std and max|A| are those of the union of the ranks' minibatches of the step, so N
// ranks with minibatches of M train as one process with minibatches of N * M.
//
// Moments are kept in double: count, mean, m2 = sum (A_i - mean)^2 and max|A_i|; two sets combine
// by Chan, Golub and LeVeque's pairwise update ("Updating formulae and a pairwise algorithm for
// computing sample variances", 1979): with d = mean_b - mean_a and n = n_a + n_b,
//   mean = mean_a + d n_b / n,  m2 = m2_a + m2_b + d^2 n_a n_b / n.
// Advantages with a NaN give NaN, as in ppo_loss.
#pragma once

#include <span>
#include <vector>

namespace ember::rl {

struct AdvantageMoments {
  double count = 0, mean = 0, m2 = 0, max_abs = 0;
};

/// The moments of `a` (two passes: the mean, then m2).
AdvantageMoments advantage_moments(std::span<const float> a);
/// The moments of the union of the two sets (Chan et al., above).
AdvantageMoments combine(const AdvantageMoments& a, const AdvantageMoments& b);
/// A_hat of `a` (above) with the moments `m` of the whole batch; `a` unchanged when m.count < 2
/// (no spread to normalise by, as ppo_loss leaves a minibatch of one).
std::vector<float> normalize_advantages(std::span<const float> a, const AdvantageMoments& m);
/// normalize_advantages with the moments of every rank's `a` (ember/dist.h: one all_gather of
/// four doubles per rank, combined in rank order, so every rank uses the same moments).
std::vector<float> normalize_advantages_globally(std::span<const float> a);

}  // namespace ember::rl

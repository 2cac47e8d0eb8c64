#include "ember/rl/reward_scaler.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "ember/error.h"

namespace ember::rl {

RewardScaler::RewardScaler(int64_t envs, double gamma, double eps)
    : envs_(envs), gamma_(gamma), eps_(eps) {
  if (envs < 1 || !(gamma >= 0 && gamma <= 1) || !(eps > 0))
    throw ValueError("RewardScaler: need envs >= 1, gamma in [0, 1], eps > 0 (got " +
                     std::to_string(envs) + ", " + std::to_string(gamma) + ", " +
                     std::to_string(eps) + ")");
  returns_.assign(static_cast<size_t>(envs), 0.0);
}

void RewardScaler::scale(std::span<const float> rewards, std::span<const uint8_t> done,
                         std::span<float> scaled) {
  const size_t n = static_cast<size_t>(envs_);
  if (rewards.size() != n || done.size() != n || scaled.size() != n)
    throw ValueError("RewardScaler::scale: expected " + std::to_string(n) +
                     " rewards, flags and outputs");
  // Batch moments of the updated returns.
  double bmean = 0.0, bvar = 0.0;
  for (size_t i = 0; i < n; ++i) {
    returns_[i] = returns_[i] * gamma_ + rewards[i];
    bmean += returns_[i];
  }
  bmean /= static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) bvar += (returns_[i] - bmean) * (returns_[i] - bmean);
  bvar /= static_cast<double>(n);
  // Chan et al.: combine (mean_, var_, count_) with the batch (bmean, bvar, n).
  const double bcount = static_cast<double>(n), total = count_ + bcount;
  const double delta = bmean - mean_;
  const double m2 = var_ * count_ + bvar * bcount + delta * delta * count_ * bcount / total;
  mean_ += delta * bcount / total;
  var_ = m2 / total;
  count_ = total;
  const double inv = 1.0 / std::sqrt(var_ + eps_);
  for (size_t i = 0; i < n; ++i) {
    scaled[i] = static_cast<float>(rewards[i] * inv);
    if (done[i]) returns_[i] = 0.0;
  }
}

void RewardScaler::set_statistics(double mean, double var, double count) {
  if (!(var >= 0) || !(count > 0))
    throw ValueError("RewardScaler::set_statistics: var must be >= 0 and count > 0");
  mean_ = mean;
  var_ = var;
  count_ = count;
  returns_.assign(returns_.size(), 0.0);
}

}  // namespace ember::rl

// Reward scaling (docs/training.md "The hyper-parameters"; Engstrom et al. 2020,
// "Implementation Matters in Deep Policy Gradients", section 3 / Algorithm "PPO with reward
// scaling"; Gymnasium's NormalizeReward wrapper): each env keeps a discounted return
// R <- gamma * R + r, the running variance of all R values seen is tracked, and the reward handed
// to the learner is r / sqrt(var(R) + eps). R is reset to 0 after a step that ends the episode
// (terminated or truncated). The mean is tracked but not subtracted (rewards keep their sign).
//
// Running statistics: Chan et al.'s parallel update of (mean, var, count) with one batch per
// vector step (the N envs' R values), starting from mean 0, var 1, count 1e-4 (Gymnasium's
// RunningMeanStd). Statistics are kept in double.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ember::rl {

class RewardScaler {
 public:
  /// Throws ValueError for envs < 1, gamma outside [0, 1] or eps <= 0.
  RewardScaler(int64_t envs, double gamma, double eps = 1e-8);

  /// rewards [N] (env units), done [N] 0/1 (the step ended the episode) -> scaled [N] (may be the
  /// same memory as rewards). Updates the statistics, then resets R for envs whose episode ended.
  void scale(std::span<const float> rewards, std::span<const uint8_t> done,
             std::span<float> scaled);

  double mean() const { return mean_; }
  double var() const { return var_; }
  double count() const { return count_; }
  /// The per-env discounted returns (for checkpoints).
  const std::vector<double>& returns() const { return returns_; }
  /// Restores statistics (e.g. on resume); returns are zeroed (episodes restart on resume).
  void set_statistics(double mean, double var, double count);

 private:
  int64_t envs_;
  double gamma_, eps_;
  double mean_ = 0.0, var_ = 1.0, count_ = 1e-4;
  std::vector<double> returns_;
};

}  // namespace ember::rl

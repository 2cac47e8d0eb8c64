// The diagonal Gaussian policy distribution with a state-independent log-std (PPO paper,
// Schulman et al. 2017, section 6.1: "a Gaussian distribution with variable standard deviations";
// docs/training.md "The workload"): pi(a | s) = N(a; mu(s), diag(exp(log_std))^2).
//
// Formulas (per action dim i, summed over the A dims):
//   log pi(a | s) = sum_i [ -0.5 ((a_i - mu_i) / sigma_i)^2 - log sigma_i - 0.5 log(2 pi) ]
//   H[pi(. | s)]  = sum_i [ 0.5 + 0.5 log(2 pi) + log sigma_i ]       (independent of s)
// Units: actions and means are in the env's action units (LunarLander: [-1, 1] after clipping;
// samples are not clipped here), log-probs and entropies in nats.
//
// The tensor forms build lazy graph (differentiable w.r.t. means and log_std); the host forms are
// the same formulas in double precision for the collection loop, which samples host-side.
#pragma once

#include <cstdint>
#include <span>

#include "ember/rl/random.h"
#include "ember/tensor.h"

namespace ember::rl {

/// 0.5 log(2 pi).
inline constexpr double kHalfLog2Pi = 0.91893853320467274178;

/// actions [B, A] float32, means [B, A] float32, log_std [A] float32 -> log-prob [B] float32.
/// Throws ShapeError when the shapes do not broadcast as stated.
Tensor gaussian_log_prob(const Tensor& actions, const Tensor& means, const Tensor& log_std);

/// log_std [A] float32 -> entropy, 0-d float32 (the same for every state).
Tensor gaussian_entropy(const Tensor& log_std);

/// Host form of gaussian_log_prob for one action row (all spans of length A).
/// Throws ValueError when the lengths differ.
double gaussian_log_prob(std::span<const float> action, std::span<const float> mean,
                         std::span<const float> log_std);

/// Samples a ~ N(mean, exp(log_std)^2) host-side: standard normals by the Box-Muller transform on
/// xoshiro256++ unit doubles (random.h), so a seed fixes the stream on every platform.
class GaussianSampler {
 public:
  explicit GaussianSampler(uint64_t seed = 0) { reseed(seed); }
  void reseed(uint64_t seed);
  /// One standard normal draw.
  double standard_normal();
  /// means [n, A] row-major, log_std [A] -> actions [n, A] (unclipped samples).
  /// Throws ValueError when sizes disagree.
  void sample(std::span<const float> means, std::span<const float> log_std,
              std::span<float> actions);

 private:
  Xoshiro256 rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace ember::rl

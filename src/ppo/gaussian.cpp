#include "ember/rl/gaussian.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/support/shape_str.h"

namespace ember::rl {

Tensor gaussian_log_prob(const Tensor& actions, const Tensor& means, const Tensor& log_std) {
  if (actions.dim() != 2 || means.sizes() != actions.sizes() || log_std.dim() != 1 ||
      log_std.size(0) != actions.size(1))
    throw ShapeError("gaussian_log_prob: expected actions [B, A], means [B, A], log_std [A]; got " +
                     support::shape_str(actions.sizes()) + ", " +
                     support::shape_str(means.sizes()) + ", " +
                     support::shape_str(log_std.sizes()));
  Tensor z = (actions - means) * (-log_std).exp();
  return (z.square() * -0.5 - log_std - kHalfLog2Pi).sum({-1});
}

Tensor gaussian_entropy(const Tensor& log_std) {
  if (log_std.dim() != 1) throw ShapeError("gaussian_entropy: log_std must be 1-d [A]");
  return (log_std + (0.5 + kHalfLog2Pi)).sum();
}

double gaussian_log_prob(std::span<const float> action, std::span<const float> mean,
                         std::span<const float> log_std) {
  if (action.size() != mean.size() || action.size() != log_std.size())
    throw ValueError("gaussian_log_prob: action, mean and log_std lengths differ (" +
                     std::to_string(action.size()) + ", " + std::to_string(mean.size()) + ", " +
                     std::to_string(log_std.size()) + ")");
  double lp = 0.0;
  for (size_t i = 0; i < action.size(); ++i) {
    const double z = (double(action[i]) - mean[i]) * std::exp(-double(log_std[i]));
    lp += -0.5 * z * z - log_std[i] - kHalfLog2Pi;
  }
  return lp;
}

void GaussianSampler::reseed(uint64_t seed) {
  rng_.seed_with(seed);
  has_spare_ = false;
}

double GaussianSampler::standard_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // Box-Muller: u1 in (0, 1] keeps the log finite.
  const double u1 = 1.0 - rng_.unit();
  const double u2 = rng_.unit();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * std::numbers::pi * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

void GaussianSampler::sample(std::span<const float> means, std::span<const float> log_std,
                             std::span<float> actions) {
  const size_t a = log_std.size();
  if (a == 0 || means.size() % a != 0 || actions.size() != means.size())
    throw ValueError("GaussianSampler::sample: means has " + std::to_string(means.size()) +
                     " values, actions " + std::to_string(actions.size()) + ", log_std " +
                     std::to_string(a));
  for (size_t i = 0; i < means.size(); ++i) {
    const double sigma = std::exp(double(log_std[i % a]));
    actions[i] = static_cast<float>(means[i] + sigma * standard_normal());
  }
}

}  // namespace ember::rl

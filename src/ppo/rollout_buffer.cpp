#include "ember/rl/rollout_buffer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ember/error.h"
#include "ember/rl/gae.h"
#include "ember/rl/gaussian.h"

namespace ember::rl {

RolloutBuffer::RolloutBuffer(int64_t steps, int64_t envs, int64_t obs_dim, int64_t act_dim,
                             int64_t truncation_capacity)
    : steps_(steps),
      envs_(envs),
      obs_dim_(obs_dim),
      act_dim_(act_dim),
      capacity_(truncation_capacity) {
  if (steps < 1 || envs < 1 || obs_dim < 1 || act_dim < 1 || truncation_capacity < 0)
    throw ValueError(
        "RolloutBuffer: steps, envs, obs_dim, act_dim must be >= 1 and "
        "the truncation capacity >= 0");
  const size_t n = static_cast<size_t>(steps * envs);
  obs_.assign(static_cast<size_t>((steps * envs + envs + capacity_) * obs_dim), 0.0f);
  actions_.assign(n * static_cast<size_t>(act_dim), 0.0f);
  rewards_.assign(n, 0.0f);
  raw_rewards_.assign(n, 0.0f);
  terminated_.assign(n, 0);
  truncated_.assign(n, 0);
  log_probs_.assign(n, 0.0f);
  values_.assign(n, 0.0f);
  next_values_.assign(n, 0.0f);
  advantages_.assign(n, 0.0f);
  returns_.assign(n, 0.0f);
}

void RolloutBuffer::clear() {
  truncation_rows_.clear();
  const size_t first = static_cast<size_t>((size() + envs_) * obs_dim_);
  std::fill(obs_.begin() + static_cast<std::ptrdiff_t>(first), obs_.end(), 0.0f);
  have_bootstrap_ = have_outputs_ = false;
}

void RolloutBuffer::check_step(int64_t t) const {
  if (t < 0 || t >= steps_)
    throw ValueError("RolloutBuffer: step " + std::to_string(t) + " outside [0, " +
                     std::to_string(steps_) + ")");
}

std::span<float> RolloutBuffer::observations(int64_t t) {
  check_step(t);
  return std::span<float>(obs_).subspan(static_cast<size_t>(t * envs_ * obs_dim_),
                                        static_cast<size_t>(envs_ * obs_dim_));
}
std::span<float> RolloutBuffer::actions(int64_t t) {
  check_step(t);
  return std::span<float>(actions_).subspan(static_cast<size_t>(t * envs_ * act_dim_),
                                            static_cast<size_t>(envs_ * act_dim_));
}
std::span<float> RolloutBuffer::rewards(int64_t t) {
  check_step(t);
  return std::span<float>(rewards_).subspan(static_cast<size_t>(t * envs_),
                                            static_cast<size_t>(envs_));
}
std::span<float> RolloutBuffer::raw_rewards(int64_t t) {
  check_step(t);
  return std::span<float>(raw_rewards_)
      .subspan(static_cast<size_t>(t * envs_), static_cast<size_t>(envs_));
}
std::span<uint8_t> RolloutBuffer::terminated(int64_t t) {
  check_step(t);
  return std::span<uint8_t>(terminated_)
      .subspan(static_cast<size_t>(t * envs_), static_cast<size_t>(envs_));
}
std::span<uint8_t> RolloutBuffer::truncated(int64_t t) {
  check_step(t);
  return std::span<uint8_t>(truncated_)
      .subspan(static_cast<size_t>(t * envs_), static_cast<size_t>(envs_));
}

void RolloutBuffer::add_truncation(int64_t t, int64_t env, std::span<const float> final_obs) {
  check_step(t);
  if (env < 0 || env >= envs_ || final_obs.size() != static_cast<size_t>(obs_dim_))
    throw ValueError("RolloutBuffer::add_truncation: env " + std::to_string(env) +
                     " or observation size " + std::to_string(final_obs.size()) + " out of range");
  const int64_t slot = static_cast<int64_t>(truncation_rows_.size());
  if (slot >= capacity_) {  // grow (the batched inference input changes shape)
    capacity_ = std::max<int64_t>(2 * capacity_, capacity_ + envs_);
    obs_.resize(static_cast<size_t>((size() + envs_ + capacity_) * obs_dim_), 0.0f);
  }
  std::copy(final_obs.begin(), final_obs.end(),
            obs_.begin() + static_cast<std::ptrdiff_t>((size() + envs_ + slot) * obs_dim_));
  truncation_rows_.push_back(t * envs_ + env);
}

void RolloutBuffer::set_bootstrap_observations(std::span<const float> observations) {
  if (observations.size() != static_cast<size_t>(envs_ * obs_dim_))
    throw ValueError("RolloutBuffer::set_bootstrap_observations: expected " +
                     std::to_string(envs_ * obs_dim_) + " values");
  std::copy(observations.begin(), observations.end(),
            obs_.begin() + static_cast<std::ptrdiff_t>(size() * obs_dim_));
  have_bootstrap_ = true;
}

void RolloutBuffer::set_policy_outputs(std::span<const float> means, std::span<const float> log_std,
                                       std::span<const float> values) {
  const int64_t rows = inference_rows();
  if (!have_bootstrap_)
    throw Error("RolloutBuffer::set_policy_outputs: set_bootstrap_observations() must come first");
  if (means.size() != static_cast<size_t>(rows * act_dim_) ||
      values.size() != static_cast<size_t>(rows) || log_std.size() != static_cast<size_t>(act_dim_))
    throw ValueError("RolloutBuffer::set_policy_outputs: expected means [" + std::to_string(rows) +
                     ", " + std::to_string(act_dim_) + "], values [" + std::to_string(rows) +
                     "], log_std [" + std::to_string(act_dim_) + "]");
  const int64_t n = size();
  const size_t a = static_cast<size_t>(act_dim_);
  for (int64_t i = 0; i < n; ++i) {
    const size_t off = static_cast<size_t>(i) * a;
    log_probs_[static_cast<size_t>(i)] = static_cast<float>(gaussian_log_prob(
        std::span<const float>(actions_).subspan(off, a), means.subspan(off, a), log_std));
    values_[static_cast<size_t>(i)] = values[static_cast<size_t>(i)];
  }
  // V(s'_t): the next step's observation (when the episode goes on), the bootstrap row after the
  // last step; truncations overwrite theirs with the final observation's value below.
  for (int64_t i = 0; i < n; ++i)
    next_values_[static_cast<size_t>(i)] = values[static_cast<size_t>(i + envs_)];
  for (size_t k = 0; k < truncation_rows_.size(); ++k)
    next_values_[static_cast<size_t>(truncation_rows_[k])] =
        values[static_cast<size_t>(n + envs_) + k];
  have_outputs_ = true;
}

void RolloutBuffer::compute_advantages(double gamma, double lambda) {
  if (!have_outputs_)
    throw Error("RolloutBuffer::compute_advantages: set_policy_outputs() must come first");
  compute_gae(steps_, envs_, rewards_, values_, next_values_, terminated_, truncated_, gamma,
              lambda, advantages_, returns_);
}

void RolloutBuffer::gather(std::span<const int64_t> indices, MiniBatch& out) const {
  const size_t m = indices.size(), o = static_cast<size_t>(obs_dim_),
               a = static_cast<size_t>(act_dim_);
  out.size = static_cast<int64_t>(m);
  out.observations.resize(m * o);
  out.actions.resize(m * a);
  out.log_probs.resize(m);
  out.advantages.resize(m);
  out.returns.resize(m);
  const int64_t n = size();
  for (size_t j = 0; j < m; ++j) {
    const int64_t i = indices[j];
    if (i < 0 || i >= n)
      throw ValueError("RolloutBuffer::gather: index " + std::to_string(i) + " outside [0, " +
                       std::to_string(n) + ")");
    const size_t u = static_cast<size_t>(i);
    std::copy_n(obs_.begin() + static_cast<std::ptrdiff_t>(u * o), o,
                out.observations.begin() + static_cast<std::ptrdiff_t>(j * o));
    std::copy_n(actions_.begin() + static_cast<std::ptrdiff_t>(u * a), a,
                out.actions.begin() + static_cast<std::ptrdiff_t>(j * a));
    out.log_probs[j] = log_probs_[u];
    out.advantages[j] = advantages_[u];
    out.returns[j] = returns_[u];
  }
}

double explained_variance(std::span<const float> values, std::span<const float> returns) {
  if (values.size() != returns.size() || values.empty())
    throw ValueError("explained_variance: values and returns must be equal, non-empty");
  const double n = static_cast<double>(values.size());
  double mr = 0, md = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    mr += returns[i];
    md += returns[i] - values[i];
  }
  mr /= n;
  md /= n;
  double vr = 0, vd = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    vr += (returns[i] - mr) * (returns[i] - mr);
    const double d = returns[i] - values[i] - md;
    vd += d * d;
  }
  if (vr == 0) return std::numeric_limits<double>::quiet_NaN();
  return 1.0 - vd / vr;
}

}  // namespace ember::rl

// The rollout buffer of one PPO epoch (docs/training.md "The workload", "Collection"): T vector
// steps of N envs, written step by step during collection, then completed by ONE batched forward
// pass of the policy over every stored observation (old log-probs and values), then GAE (gae.h),
// then read in shuffled minibatches gathered host-side into contiguous arrays.
//
// Layout (row-major, float32 unless noted; row i = t * N + n is env n at step t):
//   observations [T * N + N + C, O]   rows [0, T*N): the observation each step acted on;
//                                     rows [T*N, T*N + N): the observation after the last step
//                                     (bootstrap values); rows [T*N + N, ...): the true final
//                                     observations of truncated episodes (C = capacity, grows if
//                                     needed), zero-filled beyond the ones recorded.
//   actions [T * N, A]     the UNCLIPPED samples (their log-probs are what the ratio needs)
//   rewards [T * N]        learner rewards (after reward scaling); raw_rewards: env units
//   terminated, truncated [T * N] uint8
//   log_probs, values, next_values, advantages, returns [T * N]  (filled after collection)
// Errors: ValueError on out-of-range indices or mismatched sizes, ember::Error when a phase is
// run out of order (the message names the call that must come first).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ember::rl {

/// One minibatch gathered into contiguous arrays: obs [M, O], actions [M, A], the rest [M].
struct MiniBatch {
  int64_t size = 0;
  std::vector<float> observations, actions, log_probs, advantages, returns;
};

class RolloutBuffer {
 public:
  RolloutBuffer(int64_t steps, int64_t envs, int64_t obs_dim, int64_t act_dim,
                int64_t truncation_capacity);

  int64_t steps() const { return steps_; }
  int64_t envs() const { return envs_; }
  int64_t obs_dim() const { return obs_dim_; }
  int64_t act_dim() const { return act_dim_; }
  /// Transitions held: T * N.
  int64_t size() const { return steps_ * envs_; }

  /// Starts a new rollout (forgets truncations and completion state).
  void clear();

  // ---- collection: views of step t's rows -----------------------------------------------------
  std::span<float> observations(int64_t t);  // [N, O]
  std::span<float> actions(int64_t t);       // [N, A]
  std::span<float> rewards(int64_t t);       // [N]
  std::span<float> raw_rewards(int64_t t);   // [N]
  std::span<uint8_t> terminated(int64_t t);  // [N]
  std::span<uint8_t> truncated(int64_t t);   // [N]
  /// Records env `env`'s true final observation [O] of a truncation at step t.
  void add_truncation(int64_t t, int64_t env, std::span<const float> final_observation);
  /// The observations [N, O] after the last step (the rollout's bootstrap states).
  void set_bootstrap_observations(std::span<const float> observations);

  // ---- completion ------------------------------------------------------------------------------
  /// Rows of the batched inference input (T*N + N + capacity) and the input itself.
  int64_t inference_rows() const { return static_cast<int64_t>(obs_.size()) / obs_dim_; }
  std::span<const float> inference_observations() const { return obs_; }
  /// From the batched forward pass over inference_observations(): means [rows, A], the log-std
  /// [A] and values [rows]; fills log_probs (diagonal Gaussian, gaussian.h), values and
  /// next_values (V of the next observation, the bootstrap row or the truncation's final row).
  void set_policy_outputs(std::span<const float> means, std::span<const float> log_std,
                          std::span<const float> values);
  /// GAE (gae.h) over the rollout; fills advantages and returns.
  void compute_advantages(double gamma, double lambda);

  // ---- update
  // ------------------------------------------------------------------------------------
  /// Copies rows `indices` (each in [0, T*N)) into `out` (resized as needed).
  void gather(std::span<const int64_t> indices, MiniBatch& out) const;

  std::span<const float> log_probs() const { return log_probs_; }
  std::span<const float> values() const { return values_; }
  std::span<const float> next_values() const { return next_values_; }
  std::span<const float> advantages() const { return advantages_; }
  std::span<const float> returns() const { return returns_; }
  int64_t truncations() const { return static_cast<int64_t>(truncation_rows_.size()); }

 private:
  void check_step(int64_t t) const;

  int64_t steps_, envs_, obs_dim_, act_dim_, capacity_;
  std::vector<float> obs_, actions_, rewards_, raw_rewards_;
  std::vector<uint8_t> terminated_, truncated_;
  std::vector<float> log_probs_, values_, next_values_, advantages_, returns_;
  std::vector<int64_t> truncation_rows_;  // rollout row (t * N + n) of each recorded truncation
  bool have_bootstrap_ = false, have_outputs_ = false;
};

/// 1 - Var(returns - values) / Var(returns) (population variances); NaN when Var(returns) == 0.
double explained_variance(std::span<const float> values, std::span<const float> returns);

}  // namespace ember::rl

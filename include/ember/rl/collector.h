// Rollout collection (docs/training.md "The workload"): T vector steps of a VectorEnv. Each step
// runs the actor on the N current observations, samples a ~ N(mean, std) host-side, stores the
// UNCLIPPED sample, sends clip(a, low, high) to the envs, and records rewards (raw and scaled,
// reward_scaler.h), termination and truncation flags, and the true final observation of every
// truncated episode (VectorEnv exposes it before its auto-reset). Episodes continue across
// collect() calls: the envs are reset only once, on the first call.
//
// Time is split into actor inference, action sampling, env stepping and buffer writes
// (docs/training.md "The hyper-parameters").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ember/rl/evaluation.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/reward_scaler.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/vector_env.h"

namespace ember::rl {

struct CollectStats {
  double inference_seconds = 0, sampling_seconds = 0, env_seconds = 0, buffer_seconds = 0;
  double seconds = 0;
  int64_t transitions = 0;
  std::vector<double> episode_returns;  // training episodes completed (env reward units)
  std::vector<int64_t> episode_lengths;
};

class Collector {
 public:
  /// `seed` seeds the envs (env i: seed + i) and the action noise. reward_scaling off hands raw
  /// rewards to the learner. Throws ValueError for a discrete action space.
  Collector(VectorEnv& env, uint64_t seed, double gamma, bool reward_scaling);

  /// Fills buffer (whose envs and dims must match) with buffer.steps() vector steps, including
  /// its bootstrap observations. `on_step(t)`, if set, is called after each step (progress).
  CollectStats collect(const MeansFn& actor, std::span<const float> log_std, RolloutBuffer& buffer,
                       const std::function<void(int64_t)>& on_step = {});

  RewardScaler& reward_scaler() { return scaler_; }
  GaussianSampler& sampler() { return sampler_; }

 private:
  VectorEnv& env_;
  uint64_t seed_;
  bool reward_scaling_, started_ = false;
  RewardScaler scaler_;
  GaussianSampler sampler_;
  VectorBuffers out_;
  std::vector<float> obs_, means_, clipped_, scaled_;
  std::vector<uint8_t> done_;
  std::vector<double> ep_return_;
  std::vector<int64_t> ep_length_;
};

}  // namespace ember::rl

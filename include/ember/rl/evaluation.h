// Policy evaluation under the study's protocol (docs/training.md "The workload"): `envs` separate
// LunarLander envs (default 4), each playing exactly `episodes_per_env` (default 25) COMPLETE
// episodes from fresh resets (not the first 100 episodes to finish, which would favour short
// ones), stochastic actions a ~ N(mean, std) clipped to the action bounds [-1, 1], one fixed policy
// for all episodes. The score is the mean of the complete-episode returns (env reward units).
//
// Seeding: env i is reset with seed `seed + i` for its first episode and continues its own stream
// for the next ones; action noise comes from a GaussianSampler seeded with a mix of `seed`
// (gaussian.h). Same policy, same seed -> same result.
//
// The actor is called on all `envs` observations at once (a fixed batch shape, so a jitted actor
// never re-captures); an env that has finished its episodes keeps its last observation in the
// batch and is no longer stepped.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ember/rl/lunar_lander.h"

namespace ember::rl {

/// Fills means [n, A] from observations [n, O] (row-major float32).
using MeansFn = std::function<void(std::span<const float> observations, std::span<float> means)>;

struct EvalOptions {
  int64_t envs = 4;
  int64_t episodes_per_env = 25;
  uint64_t seed = 0;
  bool stochastic = true;  // false: act with the clipped means
  // At most this many threads of the process's pool step the envs (the results do not depend on
  // it); 1: the calling thread alone.
  int threads = 1;
  LunarLanderOptions env;  // continuous must be true
};

struct EvalResult {
  double mean = 0, std = 0, min = 0, max = 0;  // over complete-episode returns
  std::vector<double> returns;                 // env-major: env 0's episodes first
  std::vector<int64_t> lengths;                // steps of each episode, same order
  std::vector<int64_t> episodes_per_env;       // complete episodes counted per env
  int64_t env_steps = 0;                       // sub-env steps taken
  int64_t actor_calls = 0;
  double seconds = 0, inference_seconds = 0, sampling_seconds = 0, env_seconds = 0;
};

/// Throws ValueError for envs < 1, episodes_per_env < 1, threads < 1, a discrete env, or a log_std
/// of the wrong length.
EvalResult evaluate(const MeansFn& actor, std::span<const float> log_std,
                    const EvalOptions& options);

}  // namespace ember::rl

// VectorEnv: N environments stepped as one batch, with auto-reset (Gymnasium's "same-step"
// autoreset mode), optionally on the process's thread pool (ember/support/thread_pool.h).
//
// Layout: all buffers are contiguous, row-major, float32 unless noted:
//   actions            [N, A]   A = single_action_space().flat_size() (2 continuous, 1 discrete)
//   observations       [N, O]   O = single_observation_space().flat_size() (8 for LunarLander)
//   rewards            [N]
//   terminated         [N]      uint8 0/1
//   truncated          [N]      uint8 0/1
//   final_observations [N, O]
// After step(), for every sub-env i, final_observations[i] is the observation that step produced
// (before any reset); if sub-env i ended (terminated or truncated), it has been reset and
// observations[i] is the new episode's first observation, otherwise observations[i] equals
// final_observations[i]. So a learner bootstraps a truncated episode from final_observations[i].
//
// Seeding: reset(seed) seeds sub-env i with seed + i; auto-resets continue each sub-env's stream.
// Each sub-env step runs wholly on one thread (threads claim sub-envs one at a time), so results
// do not depend on the thread count. An exception from a sub-env reaches the caller; sub-envs no
// thread had started by then are not stepped.
// Errors: InvalidActionError (wrong action count or NaN, checked for the whole batch before any
// sub-env is stepped), EnvStateError (step before reset), ValueError (buffer sizes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ember/rl/env.h"
#include "ember/rl/lunar_lander.h"

namespace ember::rl {

// Views of the caller's output buffers for one batched step (shapes above).
struct VectorStepOutput {
  std::span<float> observations;
  std::span<float> rewards;
  std::span<uint8_t> terminated;
  std::span<uint8_t> truncated;
  std::span<float> final_observations;
};

// Owning buffers of the right sizes, for callers that don't bring their own.
struct VectorBuffers {
  VectorBuffers(int64_t num_envs, int64_t obs_dim);
  VectorStepOutput view();
  std::vector<float> observations, rewards, final_observations;
  std::vector<uint8_t> terminated, truncated;
};

class VectorEnv {
 public:
  // All envs must share observation and action space sizes. `threads` >= 1 caps the threads of
  // the process's pool (ember::set_num_threads) that step them, the caller included (1: the
  // calling thread alone). Throws ValueError on an empty list, more than 2^20 - 1 envs,
  // mismatched spaces or threads < 1.
  VectorEnv(std::vector<std::unique_ptr<Env>> envs, int threads = 1);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  int64_t num_envs() const { return static_cast<int64_t>(envs_.size()); }
  int64_t observation_dim() const { return obs_dim_; }
  int64_t action_dim() const { return act_dim_; }
  // Threads that step the envs: the cap, at most the pool's size and the env count.
  int threads() const;
  const Space& single_observation_space() const { return envs_[0]->observation_space(); }
  const Space& single_action_space() const { return envs_[0]->action_space(); }
  Env& env(int64_t i) { return *envs_.at(static_cast<size_t>(i)); }

  // Resets every sub-env (seeded seed+i, or unseeded) into observations [N, O].
  void reset(std::optional<uint64_t> seed, std::span<float> observations);
  // Steps every sub-env with its row of `actions` [N, A], auto-resetting those that end.
  void step(std::span<const float> actions, const VectorStepOutput& out);

 private:
  // Calls fn(i) for every sub-env, on up to threads() threads.
  void for_each_env(const std::function<void(int64_t)>& fn);
  void step_one(int64_t i, std::span<const float> actions, const VectorStepOutput& out);

  std::vector<std::unique_ptr<Env>> envs_;
  int64_t obs_dim_ = 0, act_dim_ = 0;
  int max_threads_ = 1;
  bool was_reset_ = false;
};

// N LunarLanders with the same options.
std::unique_ptr<VectorEnv> make_lunar_lander_vector(int64_t num_envs,
                                                    const LunarLanderOptions& options = {},
                                                    int threads = 1);

}  // namespace ember::rl

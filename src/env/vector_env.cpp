#include "ember/rl/vector_env.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/support/thread_pool.h"

namespace ember::rl {
namespace {

void check_size(const char* name, size_t got, int64_t want) {
  if (got != static_cast<size_t>(want)) {
    throw ValueError(std::string("VectorEnv: ") + name + " has " + std::to_string(got) +
                     " elements, expected " + std::to_string(want));
  }
}

}  // namespace

VectorBuffers::VectorBuffers(int64_t num_envs, int64_t obs_dim)
    : observations(num_envs * obs_dim),
      rewards(num_envs),
      final_observations(num_envs * obs_dim),
      terminated(num_envs),
      truncated(num_envs) {}

VectorStepOutput VectorBuffers::view() {
  return {observations, rewards, terminated, truncated, final_observations};
}

VectorEnv::VectorEnv(std::vector<std::unique_ptr<Env>> envs, int threads) : envs_(std::move(envs)) {
  if (envs_.empty()) throw ValueError("VectorEnv: no environments");
  if (envs_.size() >= (size_t{1} << 20)) {
    throw ValueError("VectorEnv: " + std::to_string(envs_.size()) +
                     " environments, at most 2^20 - 1");
  }
  obs_dim_ = envs_[0]->observation_space().flat_size();
  act_dim_ = envs_[0]->action_space().flat_size();
  for (size_t i = 0; i < envs_.size(); ++i) {
    if (!envs_[i]) throw ValueError("VectorEnv: env " + std::to_string(i) + " is null");
    if (envs_[i]->observation_space().flat_size() != obs_dim_ ||
        envs_[i]->action_space().flat_size() != act_dim_) {
      throw ValueError("VectorEnv: env " + std::to_string(i) +
                       " has different space sizes from env 0");
    }
  }
  if (threads < 1) {
    throw ValueError("VectorEnv: threads = " + std::to_string(threads) + " < 1");
  }
  max_threads_ = threads;
}

VectorEnv::~VectorEnv() = default;

int VectorEnv::threads() const {
  if (max_threads_ == 1) return 1;
  return static_cast<int>(std::min<int64_t>({max_threads_, support::num_threads(), num_envs()}));
}

void VectorEnv::for_each_env(const std::function<void(int64_t)>& fn) {
  const auto run = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  };
  // One thread: no need to start the process's pool (an env-only program never does).
  if (max_threads_ == 1) return run(0, num_envs());
  support::thread_pool().parallel_for(num_envs(), run, 1, max_threads_);
}

void VectorEnv::reset(std::optional<uint64_t> seed, std::span<float> observations) {
  check_size("observations", observations.size(), num_envs() * obs_dim_);
  for_each_env([&](int64_t i) {
    std::optional<uint64_t> s;
    if (seed) s = *seed + static_cast<uint64_t>(i);
    envs_[i]->reset_into(s, observations.subspan(i * obs_dim_, obs_dim_));
  });
  was_reset_ = true;
}

void VectorEnv::step(std::span<const float> actions, const VectorStepOutput& out) {
  if (!was_reset_) throw EnvStateError("VectorEnv: step() called before reset()");
  if (actions.size() != static_cast<size_t>(num_envs() * act_dim_)) {
    throw InvalidActionError("VectorEnv: actions have " + std::to_string(actions.size()) +
                             " values, expected [" + std::to_string(num_envs()) + ", " +
                             std::to_string(act_dim_) + "]");
  }
  // Validate the whole batch first so that a bad row leaves no sub-env half-stepped.
  for (int64_t i = 0; i < num_envs(); ++i) {
    try {
      validate_action(envs_[i]->action_space(), actions.subspan(i * act_dim_, act_dim_));
    } catch (const InvalidActionError& e) {
      throw InvalidActionError("VectorEnv: env " + std::to_string(i) + ": " + e.what());
    }
  }
  check_size("observations", out.observations.size(), num_envs() * obs_dim_);
  check_size("final_observations", out.final_observations.size(), num_envs() * obs_dim_);
  check_size("rewards", out.rewards.size(), num_envs());
  check_size("terminated", out.terminated.size(), num_envs());
  check_size("truncated", out.truncated.size(), num_envs());
  for_each_env([&](int64_t i) { step_one(i, actions, out); });
}

void VectorEnv::step_one(int64_t i, std::span<const float> actions, const VectorStepOutput& out) {
  Env& env = *envs_[i];
  const auto final_obs = out.final_observations.subspan(i * obs_dim_, obs_dim_);
  const StepInfo info = env.step_into(actions.subspan(i * act_dim_, act_dim_), final_obs);
  out.rewards[i] = static_cast<float>(info.reward);
  out.terminated[i] = info.terminated;
  out.truncated[i] = info.truncated;
  const auto obs = out.observations.subspan(i * obs_dim_, obs_dim_);
  if (info.done()) {
    env.reset_into(std::nullopt, obs);
  } else {
    std::copy(final_obs.begin(), final_obs.end(), obs.begin());
  }
}

std::unique_ptr<VectorEnv> make_lunar_lander_vector(int64_t num_envs,
                                                    const LunarLanderOptions& options,
                                                    int threads) {
  if (num_envs < 1) {
    throw ValueError("make_lunar_lander_vector: num_envs = " + std::to_string(num_envs) + " < 1");
  }
  std::vector<std::unique_ptr<Env>> envs;
  envs.reserve(num_envs);
  for (int64_t i = 0; i < num_envs; ++i) envs.push_back(std::make_unique<LunarLander>(options));
  return std::make_unique<VectorEnv>(std::move(envs), threads);
}

}  // namespace ember::rl

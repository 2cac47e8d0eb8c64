// Test helper: plays whole LunarLander episodes.
#pragma once

#include <optional>
#include <vector>

#include "ember/rl/heuristic.h"
#include "ember/rl/lunar_lander.h"

namespace ember::rl::test {

struct Episode {
  std::vector<std::vector<float>> observations;  // [0] = reset observation
  std::vector<double> rewards;
  double total = 0.0;
  bool terminated = false, truncated = false;
  bool slept = false;  // terminated by coming to rest
  int length() const { return static_cast<int>(rewards.size()); }
};

// Plays from reset(seed) until the episode ends; `policy(obs) -> action vector`.
template <typename Policy>
Episode play(LunarLander& env, std::optional<uint64_t> seed, Policy policy) {
  Episode e;
  e.observations.push_back(env.reset(seed));
  for (;;) {
    const std::vector<float> action = policy(e.observations.back());
    const StepResult r = env.step(action);
    e.observations.push_back(r.observation);
    e.rewards.push_back(r.reward);
    e.total += r.reward;
    if (r.terminated || r.truncated) {
      e.terminated = r.terminated;
      e.truncated = r.truncated;
      e.slept = r.terminated && !env.last_trace().awake;
      return e;
    }
  }
}

inline std::vector<float> heuristic(const std::vector<float>& obs) {
  const auto a = heuristic_action(obs);
  return {a[0], a[1]};
}

inline std::vector<float> no_op(const std::vector<float>&) { return {0.0f, 0.0f}; }

}  // namespace ember::rl::test

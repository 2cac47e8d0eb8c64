// The command-line arguments that the tests' short `ember train` runs share (apps/cmd_train.cpp
// defines them). Header-only.
#pragma once
#include <string>
#include <vector>

namespace ember_test {

/// A policy of one hidden layer of `hidden` units, evaluated as briefly as it gets (one env, one
/// episode, and one per env for the saved policy; episodes cut at `max_episode_steps`), with plain
/// progress lines.
inline std::vector<std::string> short_train_args(int hidden, int max_episode_steps) {
  return {"--hidden",
          std::to_string(hidden),
          "--layers",
          "1",
          "--eval-envs",
          "1",
          "--eval-episodes-per-env",
          "1",
          "--final-eval-episodes-per-env",
          "1",
          "--max-episode-steps",
          std::to_string(max_episode_steps),
          "--progress",
          "plain"};
}

/// short_train_args without evaluations during training, on one thread for kernels and one for
/// the envs: 2 training envs.
inline std::vector<std::string> one_thread_train_args(int hidden, int max_episode_steps) {
  std::vector<std::string> a = short_train_args(hidden, max_episode_steps);
  for (const char* s :
       {"--envs", "2", "--eval-every", "1000", "--threads", "1", "--env-threads", "1"})
    a.push_back(s);
  return a;
}

}  // namespace ember_test

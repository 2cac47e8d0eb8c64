// The evaluation protocol (src/ppo/evaluation.cpp): exactly 25 COMPLETE episodes per eval env
// (not the first 100 to finish), each env's episodes reproducible from its own seed stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ember/error.h"
#include "ember/rl/evaluation.h"
#include "ember/rl/heuristic.h"
#include "ember/rl/lunar_lander.h"
#include "ember/support/thread_pool.h"

namespace {

using namespace ember::rl;

// The heuristic controller as a "means" function (deterministic evaluation acts with clip(mean)).
void heuristic_means(std::span<const float> obs, std::span<float> means) {
  HeuristicPolicy(true).act(obs, means);
}

// Env 0 switches its engines off and crashes quickly; the others land with the heuristic, which
// takes several times longer. "The first 100 episodes to finish" would over-count env 0.
void mixed_means(std::span<const float> obs, std::span<float> means) {
  heuristic_means(obs, means);
  means[0] = -1.0f;
  means[1] = 0.0f;
}

double mean_length(const EvalResult& r, size_t env, size_t per_env) {
  double s = 0;
  for (size_t k = 0; k < per_env; ++k) s += static_cast<double>(r.lengths[env * per_env + k]);
  return s / static_cast<double>(per_env);
}

TEST(Evaluation, CountsExactly25CompleteEpisodesPerEnv) {
  EvalOptions o;  // the protocol's defaults: 4 envs x 25 episodes, stochastic, clipped
  ASSERT_EQ(o.envs, 4);
  ASSERT_EQ(o.episodes_per_env, 25);
  o.seed = 123;
  const std::vector<float> log_std = {-1.0f, -1.0f};
  int64_t calls = 0;
  const EvalResult r = evaluate(
      [&](std::span<const float> obs, std::span<float> m) {
        EXPECT_EQ(obs.size(), 4u * 8u);  // always the full batch of 4 (fixed shape for jit)
        ++calls;
        mixed_means(obs, m);
      },
      log_std, o);
  ASSERT_EQ(r.episodes_per_env, (std::vector<int64_t>{25, 25, 25, 25}));
  ASSERT_EQ(r.returns.size(), 100u);
  ASSERT_EQ(r.lengths.size(), 100u);
  // Every step taken belongs to a counted, complete episode (none cut off, none extra).
  EXPECT_EQ(std::accumulate(r.lengths.begin(), r.lengths.end(), int64_t{0}), r.env_steps);
  EXPECT_EQ(calls, r.actor_calls);
  // Env 0's episodes are much shorter, yet it contributes exactly 25 of the 100.
  EXPECT_LT(mean_length(r, 0, 25) * 2, mean_length(r, 1, 25));
  double sum = 0;
  for (double x : r.returns) sum += x;
  EXPECT_NEAR(r.mean, sum / 100.0, 1e-9);
  EXPECT_LE(r.min, r.mean);
  EXPECT_GE(r.max, r.mean);
}

// Deterministic actions: env i's 25 episodes are exactly what one LunarLander plays from
// reset(seed + i) and then unseeded resets.
TEST(Evaluation, EpisodesReproduceFromEachEnvsSeedStream) {
  EvalOptions o;
  o.envs = 3;
  o.episodes_per_env = 4;
  o.seed = 2024;
  o.stochastic = false;
  const std::vector<float> log_std = {0.0f, 0.0f};
  const EvalResult r = evaluate(heuristic_means, log_std, o);
  for (int64_t i = 0; i < o.envs; ++i) {
    LunarLander env;
    std::vector<float> obs = env.reset(o.seed + static_cast<uint64_t>(i));
    for (int64_t k = 0; k < o.episodes_per_env; ++k) {
      if (k > 0) obs = env.reset();
      double ret = 0;
      int64_t len = 0;
      for (;;) {
        std::vector<float> a(2);
        heuristic_means(obs, a);
        for (float& x : a) x = std::clamp(x, -1.0f, 1.0f);
        const StepResult s = env.step(a);
        ret += s.reward;
        ++len;
        obs = s.observation;
        if (s.terminated || s.truncated) break;
      }
      const size_t idx = static_cast<size_t>(i * o.episodes_per_env + k);
      EXPECT_DOUBLE_EQ(r.returns[idx], ret) << "env " << i << " episode " << k;
      EXPECT_EQ(r.lengths[idx], len);
    }
  }
  // The heuristic lands: a sanity check of the whole loop.
  EXPECT_GT(r.mean, 100.0);
}

TEST(Evaluation, SameSeedSameResultAndBadOptions) {
  EvalOptions o;
  o.envs = 2;
  o.episodes_per_env = 3;
  o.seed = 5;
  const std::vector<float> log_std = {-0.5f, -0.5f};
  const EvalResult a = evaluate(heuristic_means, log_std, o),
                   b = evaluate(heuristic_means, log_std, o);
  EXPECT_EQ(a.returns, b.returns);
  o.episodes_per_env = 0;
  EXPECT_THROW(evaluate(heuristic_means, log_std, o), ember::ValueError);
  o.episodes_per_env = 1;
  EXPECT_THROW(evaluate(heuristic_means, std::vector<float>{0.0f}, o), ember::ValueError);
}

// The envs step on the pool (`threads`), each touching only its own state: the same episodes,
// steps and actor calls as one thread, with stochastic actions and envs that finish at different
// times (env 0 crashes quickly, so the others keep stepping without it).
TEST(Evaluation, ThreadCountDoesNotChangeResults) {
  ember::support::set_num_threads(4);  // every cap below is real
  EvalOptions o;
  o.envs = 5;
  o.episodes_per_env = 3;
  o.seed = 77;
  const std::vector<float> log_std = {-0.7f, -0.7f};
  const EvalResult one = evaluate(mixed_means, log_std, o);
  for (int threads : {2, 3, 8}) {
    o.threads = threads;
    const EvalResult r = evaluate(mixed_means, log_std, o);
    EXPECT_EQ(r.returns, one.returns) << threads << " threads";  // bit-identical doubles
    EXPECT_EQ(r.lengths, one.lengths) << threads << " threads";
    EXPECT_EQ(r.episodes_per_env, one.episodes_per_env);
    EXPECT_EQ(r.env_steps, one.env_steps);
    EXPECT_EQ(r.actor_calls, one.actor_calls);
  }
  EXPECT_EQ(std::accumulate(one.lengths.begin(), one.lengths.end(), int64_t{0}), one.env_steps);
  EXPECT_LT(mean_length(one, 0, 3) * 2, mean_length(one, 1, 3));
  o.threads = 0;
  EXPECT_THROW(evaluate(mixed_means, log_std, o), ember::ValueError);
  ember::support::set_num_threads(2);
}

}  // namespace

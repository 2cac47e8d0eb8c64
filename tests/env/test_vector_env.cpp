// VectorEnv: auto-reset with final observations, equality with envs stepped one by one, thread
// count independence, seeding and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "ember/error.h"
#include "ember/rl/heuristic.h"
#include "ember/rl/vector_env.h"
#include "ember/support/thread_pool.h"

namespace ember::rl {
namespace {

constexpr int64_t kObs = lunar::kObsDim;

// Mixed actions so that episodes end every way: heuristic landings (sleep, i % 3 == 0), random
// crashes (i % 3 == 1) and hovering until the time limit (i % 3 == 2). Row i's action depends only
// on its observation and the step.
void policy(int64_t n, int step, std::span<const float> obs, std::span<float> actions) {
  for (int64_t i = 0; i < n; ++i) {
    const auto s = obs.subspan(i * kObs, kObs);
    const auto a = heuristic_action(s);
    if (i % 3 == 0) {
      actions[2 * i] = a[0], actions[2 * i + 1] = a[1];
    } else if (i % 3 == 2) {
      const double hover = 0.5 * (0.8 - s[1]) - 0.5 * s[3];
      actions[2 * i] = static_cast<float>(std::clamp(20 * hover - 1, -1.0, 1.0));
      actions[2 * i + 1] = a[1];
    } else {
      Xoshiro256 rng(static_cast<uint64_t>(step) * 131 + i);
      actions[2 * i] = static_cast<float>(rng.uniform(-1, 1));
      actions[2 * i + 1] = static_cast<float>(rng.uniform(-1, 1));
    }
  }
}

struct Trace {
  std::vector<float> observations, rewards, final_observations;
  std::vector<uint8_t> terminated, truncated;
  bool operator==(const Trace&) const = default;
};

Trace run_vector(int64_t n, int threads, int steps, const LunarLanderOptions& options) {
  auto venv = make_lunar_lander_vector(n, options, threads);
  VectorBuffers buf(n, kObs);
  std::vector<float> actions(n * 2);
  Trace t;
  venv->reset(100, buf.observations);
  for (int s = 0; s < steps; ++s) {
    policy(n, s, buf.observations, actions);
    venv->step(actions, buf.view());
    const auto append = [](auto& to, const auto& from) {
      to.insert(to.end(), from.begin(), from.end());
    };
    append(t.observations, buf.observations);
    append(t.rewards, buf.rewards);
    append(t.final_observations, buf.final_observations);
    append(t.terminated, buf.terminated);
    append(t.truncated, buf.truncated);
  }
  return t;
}

// The same envs stepped one by one, with the auto-reset written out by hand.
Trace run_single(int64_t n, int steps, const LunarLanderOptions& options) {
  std::vector<std::unique_ptr<LunarLander>> envs;
  std::vector<float> obs(n * kObs), actions(n * 2);
  for (int64_t i = 0; i < n; ++i) {
    envs.push_back(std::make_unique<LunarLander>(options));
    const auto o = envs[i]->reset(100 + i);
    std::copy(o.begin(), o.end(), obs.begin() + i * kObs);
  }
  Trace t;
  for (int s = 0; s < steps; ++s) {
    policy(n, s, obs, actions);
    for (int64_t i = 0; i < n; ++i) {
      const StepResult r = envs[i]->step(std::span<const float>(actions).subspan(2 * i, 2));
      t.final_observations.insert(t.final_observations.end(), r.observation.begin(),
                                  r.observation.end());
      t.rewards.push_back(static_cast<float>(r.reward));
      t.terminated.push_back(r.terminated);
      t.truncated.push_back(r.truncated);
      const auto next = r.terminated || r.truncated ? envs[i]->reset() : r.observation;
      std::copy(next.begin(), next.end(), obs.begin() + i * kObs);
    }
    t.observations.insert(t.observations.end(), obs.begin(), obs.end());
  }
  return t;
}

// Long enough for a heuristic landing (~216 steps), short enough to truncate hovering.
const LunarLanderOptions kShortEpisodes{.max_episode_steps = 250};

TEST(VectorEnv, EqualsEnvsSteppedOneByOne) {
  const Trace v = run_vector(5, 1, 600, kShortEpisodes);
  const Trace s = run_single(5, 600, kShortEpisodes);
  EXPECT_TRUE(v == s);
  // The run covers every way an episode ends.
  int sleeps = 0, crashes = 0, truncations = 0;
  for (size_t k = 0; k < v.rewards.size(); ++k) {
    sleeps += v.terminated[k] && v.rewards[k] == 100.0f;
    crashes += v.terminated[k] && v.rewards[k] == -100.0f;
    truncations += v.truncated[k];
  }
  EXPECT_GT(sleeps, 0);
  EXPECT_GT(crashes, 0);
  EXPECT_GT(truncations, 0);
}

TEST(VectorEnv, FinalObservationsAndFlagsAcrossAutoReset) {
  const int64_t n = 4;
  const Trace v = run_vector(n, 2, 600, kShortEpisodes);
  int finished = 0;
  for (size_t step = 0; step < 600; ++step) {
    for (int64_t i = 0; i < n; ++i) {
      const size_t row = step * n + i;
      const auto obs = std::span(v.observations).subspan(row * kObs, kObs);
      const auto fin = std::span(v.final_observations).subspan(row * kObs, kObs);
      const bool same = std::equal(obs.begin(), obs.end(), fin.begin());
      if (v.terminated[row] || v.truncated[row]) {
        ++finished;
        EXPECT_FALSE(same) << "a finished sub-env hands back a new episode's observation";
        // The reset observation: the lander back at the top, no leg contact.
        EXPECT_GT(obs[1], 1.2f);
        EXPECT_EQ(obs[6] + obs[7], 0.0f);
        if (v.terminated[row] && v.rewards[row] == 100.0f) {
          EXPECT_EQ(fin[6] + fin[7], 2.0f);  // landed on both legs
        }
      } else {
        EXPECT_TRUE(same);
      }
    }
  }
  EXPECT_GT(finished, 4);
}

TEST(VectorEnv, ThreadCountDoesNotChangeResults) {
  // Sub-envs run on the process's pool; give it 8 threads so that every cap below is real.
  support::set_num_threads(8);
  const Trace one = run_vector(5, 1, 300, kShortEpisodes);
  EXPECT_TRUE(one == run_vector(5, 2, 300, kShortEpisodes));
  EXPECT_TRUE(one == run_vector(5, 3, 300, kShortEpisodes));
  EXPECT_TRUE(one == run_vector(5, 8, 300, kShortEpisodes));  // more threads than envs
  EXPECT_EQ(make_lunar_lander_vector(5, {}, 3)->threads(), 3);
  EXPECT_EQ(make_lunar_lander_vector(5, {}, 8)->threads(), 5);
  support::set_num_threads(2);
  EXPECT_EQ(make_lunar_lander_vector(5, {}, 8)->threads(), 2);  // capped by the pool
}

// A LunarLander whose step throws once `fail` is set.
class FailingLander : public Env {
 public:
  explicit FailingLander(const bool* fail) : fail_(fail) {}
  const Space& observation_space() const override { return env_.observation_space(); }
  const Space& action_space() const override { return env_.action_space(); }
  void reset_into(std::optional<uint64_t> seed, std::span<float> observation) override {
    env_.reset_into(seed, observation);
  }
  StepInfo step_into(std::span<const float> action, std::span<float> observation) override {
    if (*fail_) throw EnvStateError("FailingLander: step failed");
    return env_.step_into(action, observation);
  }

 private:
  LunarLander env_;
  const bool* fail_;
};

TEST(VectorEnv, ExceptionFromASubEnvReachesTheCaller) {
  support::set_num_threads(3);
  bool fail = false;
  std::vector<std::unique_ptr<Env>> envs;
  for (int i = 0; i < 6; ++i) {
    if (i == 4)
      envs.push_back(std::make_unique<FailingLander>(&fail));
    else
      envs.push_back(std::make_unique<LunarLander>());
  }
  VectorEnv venv(std::move(envs), 3);
  VectorBuffers buf(6, kObs);
  std::vector<float> actions(12, 0.0f);
  venv.reset(1, buf.observations);
  venv.step(actions, buf.view());
  fail = true;
  try {
    venv.step(actions, buf.view());
    ADD_FAILURE() << "no exception";
  } catch (const EnvStateError& e) {
    EXPECT_STREQ(e.what(), "FailingLander: step failed");
  }
  support::set_num_threads(2);
}

TEST(VectorEnv, SubEnvIIsSeededWithSeedPlusI) {
  auto venv = make_lunar_lander_vector(3, {}, 2);
  std::vector<float> obs(3 * kObs);
  venv->reset(7, obs);
  for (int64_t i = 0; i < 3; ++i) {
    LunarLander single;
    const auto expected = single.reset(7 + i);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), obs.begin() + i * kObs)) << i;
  }
}

TEST(VectorEnv, Errors) {
  auto venv = make_lunar_lander_vector(3, {}, 2);
  VectorBuffers buf(3, kObs);
  std::vector<float> actions(6, 0.0f);
  EXPECT_THROW(venv->step(actions, buf.view()), EnvStateError);
  venv->reset(0, buf.observations);
  std::vector<float> short_actions(5, 0.0f);
  EXPECT_THROW(venv->step(short_actions, buf.view()), InvalidActionError);
  actions[5] = std::numeric_limits<float>::quiet_NaN();
  try {
    venv->step(actions, buf.view());
    ADD_FAILURE() << "NaN accepted";
  } catch (const InvalidActionError& e) {
    EXPECT_NE(std::string(e.what()).find("env 2: action[1] is NaN"), std::string::npos) << e.what();
  }
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(static_cast<LunarLander&>(venv->env(i)).elapsed_steps(), 0)
        << "stepped by a bad batch";
  }
  actions[5] = 0.0f;
  VectorBuffers small(2, kObs);
  EXPECT_THROW(venv->step(actions, small.view()), ember::ValueError);
  EXPECT_NO_THROW(venv->step(actions, buf.view()));
  EXPECT_THROW(make_lunar_lander_vector(0), ember::ValueError);
  EXPECT_THROW(make_lunar_lander_vector(2, {}, 0), ember::ValueError);
  EXPECT_THROW(make_lunar_lander_vector(2, {.gravity = -20}), InvalidOptionError);
}

TEST(VectorEnv, DiscreteActionsAreOneColumn) {
  auto venv = make_lunar_lander_vector(2, {.continuous = false});
  EXPECT_EQ(venv->action_dim(), 1);
  VectorBuffers buf(2, kObs);
  venv->reset(0, buf.observations);
  std::vector<float> actions{2.0f, 0.0f};
  EXPECT_NO_THROW(venv->step(actions, buf.view()));
  actions[1] = 4.0f;
  EXPECT_THROW(venv->step(actions, buf.view()), InvalidActionError);
}

}  // namespace
}  // namespace ember::rl

// LunarLander's interface: spaces, option and action errors, episode state, seeding, time limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "episode_util.h"

namespace ember::rl {
namespace {

using test::Episode;
using test::heuristic;
using test::play;

// Expects `statement` to throw `Error` with a message containing `needle`.
#define EXPECT_THROW_WITH(statement, Error, needle)                                 \
  do {                                                                              \
    try {                                                                           \
      statement;                                                                    \
      ADD_FAILURE() << "no exception from " #statement;                             \
    } catch (const Error& e) {                                                      \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); \
    }                                                                               \
  } while (0)

TEST(LunarLander, Spaces) {
  LunarLander env;
  const Space& obs = env.observation_space();
  EXPECT_EQ(obs.kind, Space::Kind::kBox);
  EXPECT_EQ(obs.dtype, Space::DType::kFloat32);
  EXPECT_EQ(obs.shape, std::vector<int64_t>{8});
  const float pi2 = static_cast<float>(2 * std::numbers::pi);
  EXPECT_EQ(obs.low, (std::vector<float>{-2.5f, -2.5f, -10, -10, -pi2, -10, 0, 0}));
  EXPECT_EQ(obs.high, (std::vector<float>{2.5f, 2.5f, 10, 10, pi2, 10, 1, 1}));
  const Space& act = env.action_space();
  EXPECT_EQ(act.shape, std::vector<int64_t>{2});
  EXPECT_EQ(act.low, (std::vector<float>{-1, -1}));
  EXPECT_EQ(act.high, (std::vector<float>{1, 1}));
  EXPECT_EQ(act.flat_size(), 2);

  LunarLander discrete({.continuous = false});
  EXPECT_TRUE(discrete.action_space().is_discrete());
  EXPECT_EQ(discrete.action_space().n, 4);
  EXPECT_EQ(discrete.action_space().dtype, Space::DType::kInt64);
  EXPECT_EQ(discrete.action_space().flat_size(), 1);
  EXPECT_EQ(discrete.action_space().to_string(), "Discrete(4)");
}

TEST(LunarLander, OptionRangesAreChecked) {
  EXPECT_THROW_WITH(LunarLander({.gravity = -12.0}), InvalidOptionError, "gravity = -12");
  EXPECT_THROW_WITH(LunarLander({.gravity = 0.0}), InvalidOptionError, "(-12, 0)");
  EXPECT_THROW_WITH(LunarLander({.gravity = 3.0}), InvalidOptionError, "gravity = 3");
  EXPECT_THROW(LunarLander({.gravity = std::nan("")}), InvalidOptionError);
  EXPECT_NO_THROW(LunarLander({.gravity = -11.99}));
  EXPECT_NO_THROW(LunarLander({.gravity = -0.01}));
  EXPECT_THROW_WITH(LunarLander({.wind_power = 25.0}), InvalidOptionError, "wind_power = 25");
  EXPECT_THROW_WITH(LunarLander({.turbulence_power = -1.0}), InvalidOptionError,
                    "turbulence_power = -1");
  EXPECT_THROW_WITH(LunarLander({.max_episode_steps = 0}), InvalidOptionError,
                    "max_episode_steps = 0");
}

TEST(LunarLander, BadActionsAreRejected) {
  LunarLander env;
  env.reset(0);
  const std::vector<float> three{0, 0, 0}, one{0};
  EXPECT_THROW_WITH(env.step(three), InvalidActionError, "action has 3 values, expected 2");
  EXPECT_THROW_WITH(env.step(one), InvalidActionError, "action has 1 values");
  const std::vector<float> nan{0.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW_WITH(env.step(nan), InvalidActionError, "action[1] is NaN");
  EXPECT_EQ(env.elapsed_steps(), 0);  // rejected actions do not advance the env
  // Out-of-bounds and infinite values are clipped, as in the reference.
  const std::vector<float> big{std::numeric_limits<float>::infinity(), -7.0f};
  EXPECT_NO_THROW(env.step(big));
  EXPECT_DOUBLE_EQ(env.last_trace().main_power, 1.0);
  EXPECT_DOUBLE_EQ(env.last_trace().side_power, 1.0);

  LunarLander discrete({.continuous = false});
  discrete.reset(0);
  for (float bad : {4.0f, -1.0f, 1.5f}) {
    const std::vector<float> a{bad};
    EXPECT_THROW_WITH(discrete.step(a), InvalidActionError, "is not an integer in [0, 4)");
  }
  const std::vector<float> pair{1, 2};
  EXPECT_THROW(discrete.step(pair), InvalidActionError);
  const std::vector<float> ok{3};
  EXPECT_NO_THROW(discrete.step(ok));
}

TEST(LunarLander, SteppingOutsideAnEpisodeThrows) {
  LunarLander env;
  const std::vector<float> zero{0, 0};
  EXPECT_THROW_WITH(env.step(zero), EnvStateError, "before reset");
  const Episode e = play(env, 0, test::no_op);
  ASSERT_TRUE(e.terminated);
  EXPECT_THROW_WITH(env.step(zero), EnvStateError, "after the episode ended (terminated");
  EXPECT_TRUE(env.needs_reset());
  env.reset();
  EXPECT_NO_THROW(env.step(zero));

  LunarLander short_env({.max_episode_steps = 5});
  short_env.reset(1);
  for (int i = 0; i < 5; ++i) short_env.step(zero);
  EXPECT_THROW_WITH(short_env.step(zero), EnvStateError, "truncated at step 5");
}

TEST(LunarLander, SameSeedSameTrajectoryBitForBit) {
  LunarLander a, b;
  const Episode ea = play(a, 123, heuristic);
  play(b, 999, heuristic);  // b's history must not matter after reseeding
  const Episode eb = play(b, 123, heuristic);
  ASSERT_EQ(ea.length(), eb.length());
  EXPECT_EQ(ea.observations, eb.observations);
  EXPECT_EQ(ea.rewards, eb.rewards);
  EXPECT_EQ(a.terrain_heights(), b.terrain_heights());
}

TEST(LunarLander, DifferentSeedsDifferentTerrain) {
  LunarLander env;
  env.reset(1);
  const auto t1 = env.terrain_heights();
  env.reset(2);
  const auto t2 = env.terrain_heights();
  EXPECT_NE(t1, t2);
  // The pad is flat at 0.99 * H/4 (spec "Terrain") whatever the seed.
  for (const auto& t : {t1, t2}) {
    for (int i = 4; i <= 6; ++i) EXPECT_NEAR(t[i], 0.99 * lunar::kH_M / 4, 1e-12);
  }
  // An unseeded reset continues the stream: a new terrain, reproducible from the first seed.
  env.reset(1);
  env.reset();
  const auto t3 = env.terrain_heights();
  EXPECT_NE(t3, t1);
  LunarLander other;
  other.reset(1);
  other.reset();
  EXPECT_EQ(other.terrain_heights(), t3);
}

TEST(LunarLander, TimeLimitTruncates) {
  // The heuristic's attitude control with a fixed hover height: the lander hovers high above the
  // pad, so the episode can only end by the time limit.
  const auto hover = [](const std::vector<float>& s) {
    const HeuristicTodo todo = heuristic_todo(s);
    const double hover = 0.5 * (0.8 - s[1]) - 0.5 * s[3];
    return std::vector<float>{static_cast<float>(std::clamp(20 * hover - 1, -1.0, 1.0)),
                              static_cast<float>(std::clamp(-20 * todo.angle, -1.0, 1.0))};
  };
  LunarLander env;
  const Episode e = play(env, 5, hover);
  EXPECT_EQ(env.options().max_episode_steps, 1000);
  EXPECT_EQ(e.length(), 1000);
  EXPECT_TRUE(e.truncated);
  EXPECT_FALSE(e.terminated);

  LunarLander short_env({.max_episode_steps = 50});
  const Episode s = play(short_env, 0, heuristic);
  EXPECT_EQ(s.length(), 50);
  EXPECT_TRUE(s.truncated);
  EXPECT_FALSE(s.terminated);
}

TEST(LunarLander, WindIsDeterministicAndPushes) {
  LunarLander calm, windy({.enable_wind = true}), windy2({.enable_wind = true});
  const Episode c = play(calm, 4, heuristic);
  const Episode w = play(windy, 4, heuristic);
  const Episode w2 = play(windy2, 4, heuristic);
  EXPECT_EQ(w.observations, w2.observations);
  EXPECT_NE(c.observations[5], w.observations[5]);
}

}  // namespace
}  // namespace ember::rl

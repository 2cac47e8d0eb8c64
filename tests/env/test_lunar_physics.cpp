// Physics smoke checks and reward arithmetic (spec "Step" 9-10, "Acceptance").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "episode_util.h"

namespace ember::rl {
namespace {

using test::Episode;
using test::play;

double lowest_leg_y(const LanderScene& scene) {
  double y = 1e9;
  for (const auto& leg : scene.legs) {
    for (const auto& p : leg) y = std::min(y, p[1]);
  }
  return y;
}

// spec "Step" 9: the shaping potential of an observation.
double shaping(const std::vector<float>& s) {
  const auto d = [&](int k) { return static_cast<double>(s[k]); };
  return -100 * std::sqrt(d(0) * d(0) + d(1) * d(1)) - 100 * std::sqrt(d(2) * d(2) + d(3) * d(3)) -
         100 * std::abs(d(4)) + 10 * d(6) + 10 * d(7);
}

TEST(LunarPhysics, FreeFallCrashesWithMinus100) {
  for (uint64_t seed = 0; seed < 10; ++seed) {
    SCOPED_TRACE(seed);
    LunarLander env;
    const Episode e = play(env, seed, test::no_op);
    EXPECT_TRUE(e.terminated);
    EXPECT_FALSE(e.truncated);
    EXPECT_EQ(e.rewards.back(), -100.0);
    EXPECT_TRUE(env.last_trace().game_over || std::abs(e.observations.back()[0]) >= 1.0f);
    EXPECT_LT(e.length(), 200);  // ~13 m fall at 10 m/s^2, plus the initial push
  }
}

TEST(LunarPhysics, LanderAtRestOnThePadSleepsWithPlus100) {
  LunarLander env;
  env.reset(3);
  // Put the lander upright over the pad centre, legs 1 cm above the pad, at rest.
  const double pad_y = env.terrain_heights()[5];
  env.teleport({.x = lunar::kW_M / 2, .y = pad_y + 2.0, .angle = 0.0});
  const double leg_drop = env.scene().lander_y - lowest_leg_y(env.scene());
  env.teleport({.x = lunar::kW_M / 2, .y = pad_y + leg_drop + 0.01, .angle = 0.0});
  ASSERT_NEAR(lowest_leg_y(env.scene()), pad_y + 0.01, 1e-4);

  const std::vector<float> zero{0, 0};
  StepResult r;
  int steps = 0;
  do {
    r = env.step(zero);
    ++steps;
    if (!r.terminated) {
      EXPECT_FALSE(env.last_trace().game_over) << "step " << steps;
    }
  } while (!r.terminated && !r.truncated);
  EXPECT_TRUE(r.terminated);
  EXPECT_EQ(r.reward, 100.0);
  EXPECT_FALSE(env.last_trace().awake);
  EXPECT_FALSE(env.last_trace().game_over);
  EXPECT_EQ(r.observation[6], 1.0f);
  EXPECT_EQ(r.observation[7], 1.0f);
  EXPECT_NEAR(r.observation[0], 0.0f, 0.01f);
  EXPECT_LT(steps, 200);  // Box2D sleeps a body after 0.5 s (25 steps) at rest, plus settling
}

TEST(LunarPhysics, LegContactsTurnOnAtTouchdown) {
  LunarLander env;
  const Episode e = play(env, 0, test::heuristic);
  ASSERT_TRUE(e.slept);
  // Replay to the first step with a contact flag and look at the geometry there.
  env.reset(0);
  int first = -1;
  for (int t = 1; t <= e.length(); ++t) {
    const StepResult r = env.step(test::heuristic(e.observations[t - 1]));
    ASSERT_EQ(r.observation, e.observations[t]);
    if (r.observation[6] == 1.0f || r.observation[7] == 1.0f) {
      first = t;
      // The touching leg reaches the pad (3.3 m); Box2D's contact margin is about a centimetre.
      EXPECT_NEAR(lowest_leg_y(env.scene()), env.terrain_heights()[5], 0.03);
      break;
    }
    EXPECT_GT(lowest_leg_y(env.scene()), env.terrain_heights()[5] - 0.01) << "step " << t;
  }
  ASSERT_GT(first, 20);
  EXPECT_EQ(e.observations.back()[6], 1.0f);
  EXPECT_EQ(e.observations.back()[7], 1.0f);
}

TEST(LunarPhysics, RewardIsShapingDifferenceMinusFuel) {
  struct Case {
    std::vector<float> action;
    double main, side;  // hand-computed engine powers
  };
  const std::vector<Case> script = {
      {{0.5f, -0.75f}, 0.75, 0.75},     // (0.5+1)/2; |a1| > 0.5 fires the side engine
      {{0.2f, 0.3f}, 0.6, 0.0},         // side engine idle below |0.5|
      {{-0.5f, 0.4f}, 0.0, 0.0},        // main engine only for a0 > 0
      {{1.5f, -2.0f}, 1.0, 1.0},        // clipped to [-1, 1]
      {{0.0f, 0.5f}, 0.0, 0.0},         // both thresholds are strict
      {{0.25f, 0.625f}, 0.625, 0.625},  // exact binary fractions
      {{-1.0f, -0.5625f}, 0.0, 0.5625},
  };
  LunarLander env;
  std::vector<float> prev = env.reset(11);
  for (const Case& c : script) {
    const StepResult r = env.step(c.action);
    // 1e-7: float32 actions such as 0.2f are not exactly 0.2.
    EXPECT_NEAR(env.last_trace().main_power, c.main, 1e-7);
    EXPECT_NEAR(env.last_trace().side_power, c.side, 1e-7);
    const double expected = shaping(r.observation) - shaping(prev) - 0.30 * c.main - 0.03 * c.side;
    // The observations are float32; the env uses their double values, hence the tolerance.
    EXPECT_NEAR(r.reward, expected, 2e-4);
    const LanderStepTrace& t = env.last_trace();
    EXPECT_DOUBLE_EQ(t.shaping - t.prev_shaping - 0.30 * t.main_power - 0.03 * t.side_power,
                     r.reward);
    prev = r.observation;
  }

  // Discrete engines fire at full power.
  LunarLander discrete({.continuous = false});
  discrete.reset(11);
  const double powers[4][2] = {{0, 0}, {0, 1}, {1, 0}, {0, 1}};
  for (int a = 0; a < 4; ++a) {
    const std::vector<float> action{static_cast<float>(a)};
    discrete.step(action);
    EXPECT_EQ(discrete.last_trace().main_power, powers[a][0]) << a;
    EXPECT_EQ(discrete.last_trace().side_power, powers[a][1]) << a;
  }
}

TEST(LunarPhysics, ResetStepSetsShapingWithoutReward) {
  LunarLander env;
  const std::vector<float> obs = env.reset(2);
  EXPECT_FALSE(env.last_trace().had_prev_shaping);
  EXPECT_NEAR(env.last_trace().shaping, shaping(obs), 1e-4);
  EXPECT_EQ(env.elapsed_steps(), 0);
  // The lander starts at the top centre; the first world step applied the random push.
  EXPECT_NEAR(obs[0], 0.0f, 0.05f);
  EXPECT_NEAR(
      obs[1],
      (lunar::kH_M - lunar::kHelipadY_M - lunar::kLegDown / lunar::kScale) / (lunar::kH_M / 2),
      0.05f);
}

}  // namespace
}  // namespace ember::rl

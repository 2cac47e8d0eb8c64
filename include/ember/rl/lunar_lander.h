// LunarLander on Box2D 2.4: a port of Gymnasium 1.4's LunarLander-v3 written from the facts in
// docs/lunar_lander.md (the spec sections cited below and in src/env are that page's sections).
//
// Observation: float32[8] (spec "Step" 8):
//   [0] x relative to the pad centre / (W/2)    [1] y relative to pad height + LEG_DOWN / (H/2)
//   [2] vx * (W/2) / FPS                         [3] vy * (H/2) / FPS
//   [4] angle, radians, not wrapped              [5] 20 * angular velocity / FPS
//   [6] left leg touching (1.0/0.0)              [7] right leg touching
//   Bounds low (-2.5,-2.5,-10,-10,-2pi,-10,0,0), high (2.5,2.5,10,10,2pi,10,1,1); not clipped.
//
// Action, continuous: float32[2], clipped to [-1, 1] (spec "Step" 2, 5, 6).
//   a0 > 0 fires the main engine at power (clip(a0,0,1)+1)/2;
//   |a1| > 0.5 fires the side engine in direction sign(a1) at power clip(|a1|,0.5,1).
// Action, discrete: one float holding 0 (noop), 1 (left engine), 2 (main), 3 (right engine).
//
// Reward (spec "Step" 9-10): shaping difference minus 0.3 * main power and 0.03 * side power;
// -100 on a crash or leaving the screen, +100 when the lander comes to rest (sleeps).
// Episodes truncate after max_episode_steps steps (the internal reset step does not count).
//
// Randomness: an Xoshiro256 (random.h) per env, reseeded by reset(seed); reset() without a seed
// continues the stream (an env never seeded is seeded from std::random_device). Same seed, same
// build -> bit-identical trajectories. set_random_source() replaces the generator (for tests).
// Draws per reset: 12 terrain heights, 2 force components, 2 wind offsets if wind is on, then 2
// dispersions per step (including the internal reset step).
//
// Errors: the constructor throws InvalidOptionError (gravity outside (-12, 0), wind_power outside
// [0, 20], turbulence_power outside [0, 2], max_episode_steps < 1); step throws InvalidActionError
// (length, NaN, discrete index) and EnvStateError (before reset or after the episode ended);
// reset/step throw EnvError for an observation buffer that is not 8 floats, and pass on EnvError
// from an injected RandomSource that runs out.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "ember/rl/env.h"
#include "ember/rl/random.h"

namespace ember::rl {

// Constants of spec "Constants". Lengths in pixels unless named *_M (metres = pixels / kScale).
namespace lunar {
inline constexpr double kFps = 50.0;
inline constexpr double kScale = 30.0;
inline constexpr double kMainEnginePower = 13.0;
inline constexpr double kSideEnginePower = 0.6;
inline constexpr double kInitialRandom = 1000.0;
inline constexpr double kLegAway = 20.0, kLegDown = 18.0;
inline constexpr double kLegW = 2.0, kLegH = 8.0;
inline constexpr double kLegSpringTorque = 40.0;
inline constexpr double kSideEngineHeight = 14.0, kSideEngineAway = 12.0;
inline constexpr double kMainEngineYLocation = 4.0;
inline constexpr int kViewportW = 600, kViewportH = 400;
inline constexpr double kW_M = kViewportW / kScale;  // 20 m
inline constexpr double kH_M = kViewportH / kScale;  // 13.333 m
inline constexpr int kChunks = 11;                   // terrain: 11 points, 10 edges
inline constexpr double kHelipadY_M = kH_M / 4;      // observation's reference height
inline constexpr int kObsDim = 8;
}  // namespace lunar

struct LunarLanderOptions {
  bool continuous = true;
  double gravity = -10.0;  // m/s^2, must lie in (-12, 0)
  bool enable_wind = false;
  double wind_power = 15.0;       // must lie in [0, 20] (the reference's documented range)
  double turbulence_power = 1.5;  // must lie in [0, 2]
  int max_episode_steps = 1000;   // >= 1; truncation, not termination
};

// World-space geometry of the current state (metres), for rendering and tests.
struct LanderScene {
  std::array<std::array<double, 2>, lunar::kChunks> terrain{};  // (chunk_x, smooth_y) polyline
  double helipad_x1 = 0, helipad_x2 = 0, helipad_y = 0;
  double lander_x = 0, lander_y = 0, lander_angle = 0;         // body origin and angle
  std::array<std::array<double, 2>, 6> lander{};               // hull vertices, counter-clockwise
  std::array<std::array<std::array<double, 2>, 4>, 2> legs{};  // leg 0 (left), leg 1 (right)
  std::array<bool, 2> leg_contact{};
  double main_power = 0, side_power = 0;  // engines fired by the last step (0 if not)
  int side_direction = 0;                 // -1, 0, +1
};

// What the last step computed, in double, for tests and diagnostics.
struct LanderStepTrace {
  double shaping = 0, prev_shaping = 0;
  bool had_prev_shaping = false;
  double main_power = 0, side_power = 0;
  bool game_over = false, awake = true;
};

// Pose and velocities of the lander body for teleport() (metres, radians, per second).
struct LanderPose {
  double x = 0, y = 0, angle = 0;
  double vx = 0, vy = 0, omega = 0;
};

class LunarLander final : public Env {
 public:
  // Throws InvalidOptionError for options outside the ranges above.
  explicit LunarLander(LunarLanderOptions options = {});
  ~LunarLander() override;
  LunarLander(const LunarLander&) = delete;
  LunarLander& operator=(const LunarLander&) = delete;

  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  void reset_into(std::optional<uint64_t> seed, std::span<float> observation) override;
  StepInfo step_into(std::span<const float> action, std::span<float> observation) override;

  const LunarLanderOptions& options() const { return options_; }
  // Replaces the generator by `source` (nullptr restores the built-in one). Seeds passed to
  // reset() then only reseed the built-in generator.
  void set_random_source(std::shared_ptr<RandomSource> source) { injected_ = std::move(source); }

  int elapsed_steps() const { return elapsed_; }
  bool needs_reset() const { return !world_ || done_; }
  // Smoothed terrain heights smooth_y[0..10] (metres) of the current episode.
  std::array<double, lunar::kChunks> terrain_heights() const { return smooth_y_; }
  LanderScene scene() const;
  const LanderStepTrace& last_trace() const { return trace_; }

  // Test hook: moves the lander to `pose` and the legs with it rigidly (keeping their pose
  // relative to the lander), with the same linear and angular velocity, and wakes them.
  // Contacts update on the next step. Throws EnvStateError before reset().
  void teleport(const LanderPose& pose);

 private:
  struct World;  // Box2D world, bodies and contact listener (lunar_lander_world.h)

  double draw_uniform(double low, double high) {
    return injected_ ? injected_->uniform(low, high) : rng_.uniform(low, high);
  }
  int64_t draw_integer(int64_t low, int64_t high) {
    return injected_ ? injected_->integers(low, high) : rng_.integers(low, high);
  }
  // One physics step (spec "Step" 1, 3-10) firing the engines at the given powers (0 = off).
  StepInfo advance(double main_power, double side_power, int side_direction,
                   std::span<float> observation);

  LunarLanderOptions options_;
  Space observation_space_, action_space_;
  Xoshiro256 rng_;
  bool rng_seeded_ = false;
  std::shared_ptr<RandomSource> injected_;
  std::unique_ptr<World> world_;
  std::array<double, lunar::kChunks> smooth_y_{};
  int64_t wind_idx_ = 0, torque_idx_ = 0;
  bool has_prev_shaping_ = false;
  double prev_shaping_ = 0;
  int elapsed_ = 0;
  bool done_ = false;
  bool last_terminated_ = false;
  LanderStepTrace trace_;
  int last_side_direction_ = 0;
};

}  // namespace ember::rl

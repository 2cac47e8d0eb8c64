// LunarLander: reset, step, observation and reward (spec "Reset", "Step"); the Box2D world
// itself is built in lunar_lander_world.cpp.
#include "ember/rl/lunar_lander.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <sstream>

#include "lunar_lander_world.h"

namespace ember::rl {
namespace {

using namespace lunar;

// Engine command decoded from an action (spec "Step" 2, 5, 6).
struct EngineCommand {
  double main_power = 0.0;  // 0 when the main engine does not fire
  double side_power = 0.0;  // 0 when no side engine fires
  int side_direction = 0;   // -1 left, +1 right
};

EngineCommand decode_continuous(double a0, double a1) {
  a0 = std::clamp(a0, -1.0, 1.0);
  a1 = std::clamp(a1, -1.0, 1.0);
  EngineCommand c;
  if (a0 > 0.0) c.main_power = (std::clamp(a0, 0.0, 1.0) + 1.0) * 0.5;
  if (std::abs(a1) > 0.5) {
    c.side_direction = a1 > 0 ? 1 : -1;
    c.side_power = std::clamp(std::abs(a1), 0.5, 1.0);
  }
  return c;
}

EngineCommand decode_discrete(int a) {
  EngineCommand c;
  if (a == 2) c.main_power = 1.0;
  if (a == 1 || a == 3) {
    c.side_direction = a - 2;
    c.side_power = 1.0;
  }
  return c;
}

void check_range(bool ok, const char* name, double value, const char* range) {
  if (ok) return;
  std::ostringstream msg;
  msg << "LunarLander option " << name << " = " << value << " is out of range " << range;
  throw InvalidOptionError(msg.str());
}

void check_observation_buffer(std::span<float> observation) {
  if (observation.size() != static_cast<size_t>(kObsDim)) {
    throw EnvError("LunarLander: observation buffer has " + std::to_string(observation.size()) +
                   " floats, expected " + std::to_string(kObsDim));
  }
}

b2Vec2 vec(double x, double y) { return b2Vec2(static_cast<float>(x), static_cast<float>(y)); }

}  // namespace

LunarLander::LunarLander(LunarLanderOptions options) : options_(options) {
  const auto& o = options_;
  check_range(std::isfinite(o.gravity) && o.gravity > -12.0 && o.gravity < 0.0, "gravity",
              o.gravity, "(-12, 0)");
  check_range(std::isfinite(o.wind_power) && o.wind_power >= 0.0 && o.wind_power <= 20.0,
              "wind_power", o.wind_power, "[0, 20]");
  check_range(
      std::isfinite(o.turbulence_power) && o.turbulence_power >= 0.0 && o.turbulence_power <= 2.0,
      "turbulence_power", o.turbulence_power, "[0, 2]");
  check_range(o.max_episode_steps >= 1, "max_episode_steps", o.max_episode_steps, "[1, inf)");

  const float pi2 = static_cast<float>(2 * std::numbers::pi);
  observation_space_ = Space::box({kObsDim}, {-2.5f, -2.5f, -10.f, -10.f, -pi2, -10.f, 0.f, 0.f},
                                  {2.5f, 2.5f, 10.f, 10.f, pi2, 10.f, 1.f, 1.f});
  action_space_ = o.continuous ? Space::box({2}, {-1.f, -1.f}, {1.f, 1.f}) : Space::discrete(4);
}

LunarLander::~LunarLander() = default;

void LunarLander::reset_into(std::optional<uint64_t> seed, std::span<float> observation) {
  check_observation_buffer(observation);
  if (seed) {
    rng_.seed_with(*seed);
    rng_seeded_ = true;
  } else if (!rng_seeded_) {
    std::random_device device;
    rng_.seed_with((static_cast<uint64_t>(device()) << 32) ^ device());
    rng_seeded_ = true;
  }
  world_.reset();

  // Terrain (spec "Terrain"): 12 heights drawn, the pad's 5 overwritten, then a 3-point average
  // that wraps around at i = 0 (so the pad sits at 0.99 * H/4).
  std::array<double, kChunks + 1> height;
  for (double& h : height) h = draw_uniform(0.0, kH_M / 2);
  for (int i = kChunks / 2 - 2; i <= kChunks / 2 + 2; ++i) height[i] = kHelipadY_M;
  for (int i = 0; i < kChunks; ++i) {
    const double prev = height[(i + kChunks) % (kChunks + 1)];
    smooth_y_[i] = 0.33 * (prev + height[i] + height[i + 1]);
  }

  const double force_x = draw_uniform(-kInitialRandom, kInitialRandom);
  const double force_y = draw_uniform(-kInitialRandom, kInitialRandom);
  if (options_.enable_wind) {
    wind_idx_ = draw_integer(-9999, 9999);
    torque_idx_ = draw_integer(-9999, 9999);
  }
  world_ = std::make_unique<World>(options_.gravity, smooth_y_, force_x, force_y);

  has_prev_shaping_ = false;
  prev_shaping_ = 0.0;
  elapsed_ = 0;
  done_ = false;
  advance(0.0, 0.0, 0, observation);  // sets prev_shaping; its reward is discarded
}

StepInfo LunarLander::step_into(std::span<const float> action, std::span<float> observation) {
  if (!world_) throw EnvStateError("LunarLander: step() called before reset()");
  if (done_) {
    throw EnvStateError(std::string("LunarLander: step() called after the episode ended (") +
                        (last_terminated_ ? "terminated" : "truncated") + " at step " +
                        std::to_string(elapsed_) + ") without reset()");
  }
  validate_action(action_space_, action);
  check_observation_buffer(observation);
  const EngineCommand command = options_.continuous ? decode_continuous(action[0], action[1])
                                                    : decode_discrete(static_cast<int>(action[0]));
  ++elapsed_;
  StepInfo info =
      advance(command.main_power, command.side_power, command.side_direction, observation);
  info.truncated = elapsed_ >= options_.max_episode_steps;
  done_ = info.done();
  last_terminated_ = info.terminated;
  return info;
}

StepInfo LunarLander::advance(double main_power, double side_power, int side_direction,
                              std::span<float> observation) {
  World& w = *world_;
  b2Body* lander = w.lander;

  // 1. Wind and turbulence while airborne; the phase counters advance only when applied.
  if (options_.enable_wind && !(w.leg_contact[0] || w.leg_contact[1])) {
    const auto wave = [](double k) {
      return std::tanh(std::sin(0.02 * k) + std::sin(std::numbers::pi * 0.01 * k));
    };
    lander->ApplyForceToCenter(vec(wave(wind_idx_++) * options_.wind_power, 0.0), true);
    lander->ApplyTorque(static_cast<float>(wave(torque_idx_++) * options_.turbulence_power), true);
  }

  // 3-4. Body axes, and the dispersion drawn every step whether or not an engine fires.
  const double angle = lander->GetAngle();
  const double tip_x = std::sin(angle), tip_y = std::cos(angle);
  const double side_x = -tip_y, side_y = tip_x;
  const double d0 = draw_uniform(-1.0, 1.0) / kScale;
  const double d1 = draw_uniform(-1.0, 1.0) / kScale;

  // 5. Main engine: an impulse pushing along the body's up axis, from just below its centre.
  if (main_power > 0.0) {
    const b2Vec2 pos = lander->GetPosition();
    const double ox = tip_x * (kMainEngineYLocation / kScale + 2 * d0) + side_x * d1;
    const double oy = -tip_y * (kMainEngineYLocation / kScale + 2 * d0) - side_y * d1;
    const double p = main_power;
    lander->ApplyLinearImpulse(vec(-ox * kMainEnginePower * p, -oy * kMainEnginePower * p),
                               vec(pos.x + ox, pos.y + oy), true);
  }

  // 6. Side engine: a sideways impulse at the side thruster, which also turns the lander.
  if (side_power > 0.0) {
    const b2Vec2 pos = lander->GetPosition();
    const double away = 3 * d1 + side_direction * kSideEngineAway / kScale;
    const double ox = tip_x * d0 + side_x * away;
    const double oy = -tip_y * d0 - side_y * away;
    const double p = side_power;
    lander->ApplyLinearImpulse(
        vec(-ox * kSideEnginePower * p, -oy * kSideEnginePower * p),
        vec(pos.x + ox - tip_x * 17 / kScale, pos.y + oy + tip_y * kSideEngineHeight / kScale),
        true);
  }

  // 7. The world step: Box2D's velocity/position iteration counts of the reference.
  w.world.Step(static_cast<float>(1.0 / kFps), 6 * 30, 2 * 30);

  // 8. Observation, in double for the reward and float32 for the caller.
  const b2Vec2 pos = lander->GetPosition();
  const b2Vec2 vel = lander->GetLinearVelocity();
  const double half_w = kW_M / 2, half_h = kH_M / 2;
  const double s[kObsDim] = {
      (pos.x - half_w) / half_w,    (pos.y - (kHelipadY_M + kLegDown / kScale)) / half_h,
      vel.x * half_w / kFps,        vel.y * half_h / kFps,
      lander->GetAngle(),           20.0 * lander->GetAngularVelocity() / kFps,
      w.leg_contact[0] ? 1.0 : 0.0, w.leg_contact[1] ? 1.0 : 0.0,
  };
  for (int k = 0; k < kObsDim; ++k) observation[k] = static_cast<float>(s[k]);

  // 9. Potential-based shaping plus fuel costs.
  const double shaping = -100 * std::sqrt(s[0] * s[0] + s[1] * s[1]) -
                         100 * std::sqrt(s[2] * s[2] + s[3] * s[3]) - 100 * std::abs(s[4]) +
                         10 * s[6] + 10 * s[7];
  StepInfo info;
  trace_.had_prev_shaping = has_prev_shaping_;
  trace_.prev_shaping = prev_shaping_;
  if (has_prev_shaping_) info.reward = shaping - prev_shaping_;
  prev_shaping_ = shaping;
  has_prev_shaping_ = true;
  info.reward -= main_power * 0.30;
  info.reward -= side_power * 0.03;

  // 10. Crash or out of bounds, then sleep (checked second, so it wins).
  if (w.game_over || std::abs(s[0]) >= 1.0) {
    info.terminated = true;
    info.reward = -100;
  }
  if (!lander->IsAwake()) {
    info.terminated = true;
    info.reward = +100;
  }

  trace_.shaping = shaping;
  trace_.main_power = main_power;
  trace_.side_power = side_power;
  trace_.game_over = w.game_over;
  trace_.awake = lander->IsAwake();
  last_side_direction_ = side_direction;
  return info;
}

LanderScene LunarLander::scene() const {
  if (!world_) throw EnvStateError("LunarLander: scene() called before reset()");
  LanderScene scene;
  for (int i = 0; i < kChunks; ++i) scene.terrain[i] = {kW_M / (kChunks - 1) * i, smooth_y_[i]};
  scene.helipad_x1 = kW_M / (kChunks - 1) * (kChunks / 2 - 1);
  scene.helipad_x2 = kW_M / (kChunks - 1) * (kChunks / 2 + 1);
  scene.helipad_y = kHelipadY_M;
  const auto corners = [](const b2Body* body, auto& out) {
    const auto* shape = static_cast<const b2PolygonShape*>(body->GetFixtureList()->GetShape());
    for (size_t k = 0; k < out.size(); ++k) {
      const b2Vec2 p = body->GetWorldPoint(shape->m_vertices[k]);
      out[k] = {p.x, p.y};
    }
  };
  corners(world_->lander, scene.lander);
  scene.lander_x = world_->lander->GetPosition().x;
  scene.lander_y = world_->lander->GetPosition().y;
  scene.lander_angle = world_->lander->GetAngle();
  for (int k = 0; k < 2; ++k) {
    corners(world_->legs[k], scene.legs[k]);
    scene.leg_contact[k] = world_->leg_contact[k];
  }
  scene.main_power = trace_.main_power;
  scene.side_power = trace_.side_power;
  scene.side_direction = last_side_direction_;
  return scene;
}

void LunarLander::teleport(const LanderPose& pose) {
  if (!world_) throw EnvStateError("LunarLander: teleport() called before reset()");
  b2Body* lander = world_->lander;
  const b2Transform old_xf = lander->GetTransform();
  const b2Vec2 v = vec(pose.vx, pose.vy);
  const float omega = static_cast<float>(pose.omega);
  lander->SetTransform(vec(pose.x, pose.y), static_cast<float>(pose.angle));
  lander->SetLinearVelocity(v);
  lander->SetAngularVelocity(omega);
  lander->SetAwake(true);
  const b2Transform new_xf = lander->GetTransform();
  for (b2Body* leg : world_->legs) {
    const b2Transform rel = b2MulT(old_xf, leg->GetTransform());
    const b2Transform xf = b2Mul(new_xf, rel);
    leg->SetTransform(xf.p, xf.q.GetAngle());
    const b2Vec2 r = leg->GetWorldCenter() - lander->GetWorldCenter();
    leg->SetLinearVelocity(v + b2Cross(omega, r));
    leg->SetAngularVelocity(omega);
    leg->SetAwake(true);
  }
}

}  // namespace ember::rl

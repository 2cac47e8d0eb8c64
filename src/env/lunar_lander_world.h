// Internal: the Box2D side of LunarLander (spec "World and bodies", "Terrain").
#pragma once

#include <box2d/box2d.h>

#include <array>
#include <memory>

#include "ember/rl/lunar_lander.h"

namespace ember::rl {

struct LunarLander::World final : public b2ContactListener {
  // Builds terrain, moon, lander (with its initial force) and legs, in the spec's creation order
  // (it fixes Box2D's contact ordering). `smooth_y` are the terrain heights (metres).
  World(double gravity, const std::array<double, lunar::kChunks>& smooth_y, double force_x,
        double force_y);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Contact listener (spec "World and bodies" 7): the lander body touching anything ends the
  // game; leg contact is a plain flag set on begin and cleared on end.
  void BeginContact(b2Contact* contact) override;
  void EndContact(b2Contact* contact) override;

  b2World world;
  b2Body* moon = nullptr;
  b2Body* lander = nullptr;
  std::array<b2Body*, 2> legs{};
  std::array<bool, 2> leg_contact{};
  bool game_over = false;
};

}  // namespace ember::rl

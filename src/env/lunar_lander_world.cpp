#include "lunar_lander_world.h"

namespace ember::rl {
namespace {

using namespace lunar;

constexpr uint16_t kGroundCategory = 0x0001;
constexpr uint16_t kLanderCategory = 0x0010;
constexpr uint16_t kLegCategory = 0x0020;

b2Vec2 vec(double x, double y) { return b2Vec2(static_cast<float>(x), static_cast<float>(y)); }

// A dynamic body (the lander or a leg) with one fixture of `shape`, restitution 0, in `category`:
// it collides with the ground only.
b2Body* dynamic_body(b2World& world, b2Vec2 position, float angle, const b2Shape& shape,
                     float density, float friction, uint16_t category) {
  b2BodyDef def;
  def.type = b2_dynamicBody;
  def.position = position;
  def.angle = angle;
  b2Body* body = world.CreateBody(&def);
  b2FixtureDef fixture;
  fixture.shape = &shape;
  fixture.density = density;
  fixture.friction = friction;
  fixture.restitution = 0.0f;
  fixture.filter.categoryBits = category;
  fixture.filter.maskBits = kGroundCategory;
  body->CreateFixture(&fixture);
  return body;
}

}  // namespace

LunarLander::World::World(double gravity, const std::array<double, kChunks>& smooth_y,
                          double force_x, double force_y)
    : world(vec(0.0, gravity)) {
  world.SetAllowSleeping(true);
  world.SetContactListener(this);

  // Moon: the flat base edge with default fixture values, then the 10 terrain edges.
  b2BodyDef moon_def;  // static
  moon = world.CreateBody(&moon_def);
  b2EdgeShape base;
  base.SetTwoSided(vec(0, 0), vec(kW_M, 0));
  b2FixtureDef base_fixture;
  base_fixture.shape = &base;
  moon->CreateFixture(&base_fixture);
  for (int i = 0; i + 1 < kChunks; ++i) {
    b2EdgeShape edge;
    const double x0 = kW_M / (kChunks - 1) * i, x1 = kW_M / (kChunks - 1) * (i + 1);
    edge.SetTwoSided(vec(x0, smooth_y[i]), vec(x1, smooth_y[i + 1]));
    b2FixtureDef fixture;
    fixture.shape = &edge;
    fixture.density = 0.0f;
    fixture.friction = 0.1f;
    moon->CreateFixture(&fixture);
  }

  // Lander at the top centre; its random push is a force, so it acts during one world step only.
  const double initial_y = kH_M;
  static constexpr double kPoly[6][2] = {{-14, 17}, {-17, 0}, {-17, -10},
                                         {17, -10}, {17, 0},  {14, 17}};
  b2Vec2 hull[6];
  for (int k = 0; k < 6; ++k) hull[k] = vec(kPoly[k][0] / kScale, kPoly[k][1] / kScale);
  b2PolygonShape lander_shape;
  lander_shape.Set(hull, 6);
  lander = dynamic_body(world, vec(kW_M / 2, initial_y), 0.0f, lander_shape, 5.0f, 0.1f,
                        kLanderCategory);
  lander->ApplyForceToCenter(vec(force_x, force_y), true);

  // Legs i = -1 (left, index 0) then i = +1 (right, index 1), each on a motored, limited joint.
  for (int k = 0; k < 2; ++k) {
    const double i = k == 0 ? -1.0 : 1.0;
    b2PolygonShape leg_shape;
    leg_shape.SetAsBox(static_cast<float>(kLegW / kScale), static_cast<float>(kLegH / kScale));
    b2Body* leg = dynamic_body(world, vec(kW_M / 2 - i * kLegAway / kScale, initial_y),
                               static_cast<float>(i * 0.05), leg_shape, 1.0f, 0.2f, kLegCategory);
    legs[k] = leg;

    b2RevoluteJointDef joint;
    joint.bodyA = lander;
    joint.bodyB = leg;
    joint.localAnchorA.Set(0.0f, 0.0f);
    joint.localAnchorB = vec(i * kLegAway / kScale, kLegDown / kScale);
    // Box2D 2.4 defaults this to 0; the reference's joints start at the legs' initial angle.
    joint.referenceAngle = static_cast<float>(i * 0.05);
    joint.enableMotor = true;
    joint.maxMotorTorque = static_cast<float>(kLegSpringTorque);
    joint.motorSpeed = static_cast<float>(0.3 * i);
    joint.enableLimit = true;
    joint.lowerAngle = static_cast<float>(k == 0 ? 0.9 - 0.5 : -0.9);
    joint.upperAngle = static_cast<float>(k == 0 ? 0.9 : -0.9 + 0.5);
    world.CreateJoint(&joint);
  }
}

LunarLander::World::~World() { world.SetContactListener(nullptr); }

void LunarLander::World::BeginContact(b2Contact* contact) {
  const b2Body* a = contact->GetFixtureA()->GetBody();
  const b2Body* b = contact->GetFixtureB()->GetBody();
  if (a == lander || b == lander) game_over = true;
  for (int k = 0; k < 2; ++k) {
    if (a == legs[k] || b == legs[k]) leg_contact[k] = true;
  }
}

void LunarLander::World::EndContact(b2Contact* contact) {
  const b2Body* a = contact->GetFixtureA()->GetBody();
  const b2Body* b = contact->GetFixtureB()->GetBody();
  for (int k = 0; k < 2; ++k) {
    if (a == legs[k] || b == legs[k]) leg_contact[k] = false;
  }
}

}  // namespace ember::rl

// The environment interface of ember's RL layer, in Gymnasium's terms.
//
// An Env is a single, sequential episode generator: reset(seed) -> observation, then
// step(action) -> (observation, reward, terminated, truncated) until terminated or truncated, then
// reset again. Observations and actions are float32; a discrete action is passed as one float
// holding the integer index (0 <= a < n). Spaces describe shapes, bounds and dtypes.
//
// Errors (all derive from EnvError, itself an ember::Error: one vocabulary with the tensor
// library):
//   InvalidActionError  wrong number of action values, NaN, or a discrete index out of range;
//   EnvStateError       step() before the first reset() or after the episode ended;
//   InvalidOptionError  an environment option outside its documented range.
// Every message names the offending value(s).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::rl {

class EnvError : public Error {
 public:
  using Error::Error;
};
class InvalidActionError : public EnvError {
 public:
  using EnvError::EnvError;
};
class EnvStateError : public EnvError {
 public:
  using EnvError::EnvError;
};
class InvalidOptionError : public EnvError {
 public:
  using EnvError::EnvError;
};

// Gymnasium's Box (dtype float32, per-component bounds) or Discrete (dtype int64, values 0..n-1).
struct Space {
  enum class Kind { kBox, kDiscrete };
  enum class DType { kFloat32, kInt64 };

  Kind kind = Kind::kBox;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // Box: its shape; Discrete: {} (a scalar)
  std::vector<float> low;      // Box: one bound per element; Discrete: {0}
  std::vector<float> high;     // Box: one bound per element; Discrete: {n - 1}
  int64_t n = 0;               // Discrete only: number of actions

  static Space box(std::vector<int64_t> shape, std::vector<float> low, std::vector<float> high);
  static Space discrete(int64_t n);

  bool is_discrete() const { return kind == Kind::kDiscrete; }
  // Floats one sample occupies in a flat buffer (product of the shape; 1 for Discrete).
  int64_t flat_size() const;
  std::string to_string() const;  // e.g. "Box(float32, [8], low=[...], high=[...])"
};

// Checks one action against `space`: its length, NaN, and for Discrete an integral index in
// [0, n). Values outside a Box's bounds are allowed (envs clip them). Throws InvalidActionError.
void validate_action(const Space& space, std::span<const float> action);

// What one step returns besides the observation. `reward` is in the env's units (double, as
// Gymnasium's Python float). Both flags can be true on the same step.
struct StepInfo {
  double reward = 0.0;
  bool terminated = false;  // the MDP ended (crash, landed, out of bounds)
  bool truncated = false;   // cut by the time limit; bootstrap from the observation
  bool done() const { return terminated || truncated; }
};

struct StepResult {
  std::vector<float> observation;
  double reward = 0.0;
  bool terminated = false;
  bool truncated = false;
};

class Env {
 public:
  virtual ~Env() = default;

  virtual const Space& observation_space() const = 0;
  virtual const Space& action_space() const = 0;

  // Starts an episode; writes observation_space().flat_size() floats into `observation`.
  // With a seed the env's generator is reseeded first; without one it continues its stream.
  virtual void reset_into(std::optional<uint64_t> seed, std::span<float> observation) = 0;
  // Advances one step; writes the next observation. Throws InvalidActionError, EnvStateError.
  virtual StepInfo step_into(std::span<const float> action, std::span<float> observation) = 0;

  // Allocating conveniences over the two calls above.
  std::vector<float> reset(std::optional<uint64_t> seed = std::nullopt);
  StepResult step(std::span<const float> action);
};

}  // namespace ember::rl

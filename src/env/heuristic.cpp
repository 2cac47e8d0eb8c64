#include "ember/rl/heuristic.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/rl/lunar_lander.h"

namespace ember::rl {

HeuristicTodo heuristic_todo(std::span<const float> s) {
  if (s.size() != static_cast<size_t>(lunar::kObsDim)) {
    throw ValueError("heuristic: observation has " + std::to_string(s.size()) +
                     " values, expected 8");
  }
  // Point towards the centre, and aim for a height that shrinks as the lander nears the pad.
  const double angle_target = std::clamp(0.5 * s[0] + 1.0 * s[2], -0.4, 0.4);
  const double hover_target = 0.55 * std::abs(s[0]);
  HeuristicTodo todo;
  todo.angle = 0.5 * (angle_target - s[4]) - 1.0 * s[5];
  todo.hover = 0.5 * (hover_target - s[1]) - 0.5 * s[3];
  if (s[6] != 0.0f || s[7] != 0.0f) {  // touching down: stop steering, only brake the fall
    todo.angle = 0.0;
    todo.hover = -0.5 * s[3];
  }
  return todo;
}

std::array<float, 2> heuristic_action(std::span<const float> observation) {
  const HeuristicTodo todo = heuristic_todo(observation);
  return {static_cast<float>(std::clamp(20.0 * todo.hover - 1.0, -1.0, 1.0)),
          static_cast<float>(std::clamp(-20.0 * todo.angle, -1.0, 1.0))};
}

int heuristic_discrete_action(std::span<const float> observation) {
  const HeuristicTodo todo = heuristic_todo(observation);
  if (todo.hover > std::abs(todo.angle) && todo.hover > 0.05) return 2;
  if (todo.angle < -0.05) return 3;
  if (todo.angle > 0.05) return 1;
  return 0;
}

void HeuristicPolicy::act(std::span<const float> observations, std::span<float> actions) const {
  const size_t obs_dim = lunar::kObsDim, act_dim = action_dim();
  const size_t n = observations.size() / obs_dim;
  if (observations.size() % obs_dim != 0 || actions.size() != n * act_dim) {
    throw ValueError("HeuristicPolicy::act: " + std::to_string(observations.size()) +
                     " observation floats and " + std::to_string(actions.size()) +
                     " action floats do not form [n, 8] and [n, " + std::to_string(act_dim) + "]");
  }
  for (size_t i = 0; i < n; ++i) {
    const auto obs = observations.subspan(i * obs_dim, obs_dim);
    if (continuous_) {
      const auto a = heuristic_action(obs);
      actions[2 * i] = a[0];
      actions[2 * i + 1] = a[1];
    } else {
      actions[i] = static_cast<float>(heuristic_discrete_action(obs));
    }
  }
}

}  // namespace ember::rl

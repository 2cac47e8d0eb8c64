// The reference heuristic LunarLander controller (spec "The reference heuristic controller"):
// a PD rule on the observation that lands on the pad; a baseline and a test oracle.
#pragma once

#include <array>
#include <span>

namespace ember::rl {

// The controller's two error terms for one observation (float32[8], see lunar_lander.h).
struct HeuristicTodo {
  double angle = 0.0;  // angle correction: > 0 turns left (fire the left engine)
  double hover = 0.0;  // height correction: > 0 needs thrust
};
HeuristicTodo heuristic_todo(std::span<const float> observation);

// Continuous action: (20*hover - 1, -20*angle), each clipped to [-1, 1].
std::array<float, 2> heuristic_action(std::span<const float> observation);
// Discrete action: 2 (main) if hover > |angle| and > 0.05, else 3 if angle < -0.05, else 1 if
// angle > 0.05, else 0.
int heuristic_discrete_action(std::span<const float> observation);

// Batched form for vector envs: observations [n, 8] float32 row-major -> actions [n, 2]
// (continuous) or [n, 1] holding the discrete index. Throws ValueError when sizes
// disagree.
class HeuristicPolicy {
 public:
  explicit HeuristicPolicy(bool continuous = true) : continuous_(continuous) {}
  int action_dim() const { return continuous_ ? 2 : 1; }
  void act(std::span<const float> observations, std::span<float> actions) const;

 private:
  bool continuous_;
};

}  // namespace ember::rl

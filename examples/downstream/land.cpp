// Lands LunarLander once with the reference heuristic controller; exits 0 when it came to rest
// with a return above 200.
#include <array>
#include <cstdio>
#include <vector>

#include "ember/rl/heuristic.h"
#include "ember/rl/lunar_lander.h"

int main() {
  ember::rl::LunarLander env;
  std::vector<float> obs = env.reset(1);
  double total = 0;
  for (;;) {
    const std::array<float, 2> action = ember::rl::heuristic_action(obs);
    ember::rl::StepResult r = env.step(action);
    total += r.reward;
    obs = r.observation;
    if (r.terminated || r.truncated) break;
  }
  std::printf("return %.2f\n", total);
  return total > 200 ? 0 : 1;
}

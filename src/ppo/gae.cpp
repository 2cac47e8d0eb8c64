#include "ember/rl/gae.h"

#include <stdexcept>
#include <string>

#include "ember/error.h"

namespace ember::rl {

void compute_gae(int64_t steps, int64_t envs, std::span<const float> rewards,
                 std::span<const float> values, std::span<const float> next_values,
                 std::span<const uint8_t> terminated, std::span<const uint8_t> truncated,
                 double gamma, double lambda, std::span<float> advantages,
                 std::span<float> returns) {
  if (steps < 0 || envs < 1) throw ValueError("compute_gae: bad steps/envs");
  const size_t n = static_cast<size_t>(steps * envs);
  auto check = [&](const char* name, size_t got) {
    if (got != n)
      throw ValueError(std::string("compute_gae: ") + name + " has " + std::to_string(got) +
                       " elements, expected T * N = " + std::to_string(n));
  };
  check("rewards", rewards.size());
  check("values", values.size());
  check("next_values", next_values.size());
  check("terminated", terminated.size());
  check("truncated", truncated.size());
  check("advantages", advantages.size());
  check("returns", returns.size());
  if (!(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1))
    throw ValueError("compute_gae: gamma " + std::to_string(gamma) + " and lambda " +
                     std::to_string(lambda) + " must lie in [0, 1]");
  for (int64_t e = 0; e < envs; ++e) {
    double next_adv = 0.0;
    for (int64_t t = steps; t-- > 0;) {
      const size_t i = static_cast<size_t>(t * envs + e);
      const bool term = terminated[i] != 0, done = term || truncated[i] != 0;
      const double bootstrap = term ? 0.0 : gamma * next_values[i];
      const double delta = rewards[i] + bootstrap - values[i];
      next_adv = delta + (done ? 0.0 : gamma * lambda * next_adv);
      advantages[i] = static_cast<float>(next_adv);
      returns[i] = static_cast<float>(next_adv + values[i]);
    }
  }
}

}  // namespace ember::rl

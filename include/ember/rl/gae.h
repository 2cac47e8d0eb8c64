// Generalized Advantage Estimation (Schulman et al. 2016, "High-Dimensional Continuous Control
// Using Generalized Advantage Estimation", eq. 16; in the truncated form of the PPO paper,
// Schulman et al. 2017, eqs. 11-12), with the episode-boundary rules of docs/training.md "The
// workload".
//
// Layout: every array is [T, N] row-major (step t, env n at t * N + n), float32; flags uint8 0/1.
//   rewards[t, n]      reward of step t (as used for learning, e.g. after reward scaling)
//   values[t, n]       V(s_t), the critic's value of the observation step t acted on
//   next_values[t, n]  V(s'_t), the value of the observation step t produced: the next step's
//                      observation, or for an episode that ended at t the TRUE final observation
//                      (VectorEnv's final_observations, before the auto-reset). Ignored where
//                      terminated[t, n]; for the last step t = T - 1 it is the bootstrap value.
//   terminated, truncated [t, n]   how step t ended (both may be 1).
//
// Recursion, backwards over t for each env:
//   delta_t = r_t + gamma * (1 - terminated_t) * V(s'_t) - V(s_t)
//   A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1},   done_t = terminated_t |
//   truncated_t R_t     = A_t + V(s_t)                                          (the critic's
//   regression target)
// So a time-limit truncation bootstraps from the final observation's value but does not carry
// advantages across the episode boundary; a termination does neither.
#pragma once

#include <cstdint>
#include <span>

namespace ember::rl {

/// Fills advantages [T, N] and returns [T, N]. Throws ValueError when an array's size
/// is not T * N or gamma/lambda lie outside [0, 1].
void compute_gae(int64_t steps, int64_t envs, std::span<const float> rewards,
                 std::span<const float> values, std::span<const float> next_values,
                 std::span<const uint8_t> terminated, std::span<const uint8_t> truncated,
                 double gamma, double lambda, std::span<float> advantages,
                 std::span<float> returns);

}  // namespace ember::rl

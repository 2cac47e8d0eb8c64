// Running the policy outside the training step: the actor's means for acting (collection and
// evaluation, a few observations per call), and the ONE batched forward pass after collection
// that gives every stored transition its old log-prob and value (docs/training.md "The workload":
// old-policy log-probs and critic values).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/rl/evaluation.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/tensor_fn.h"

namespace ember::rl {

/// The actor's inference as a TensorFn: {obs [n, O]} -> {means [n, A]}, no gradients recorded.
TensorFn actor_means_fn(const ActorCritic& policy);

/// A MeansFn (evaluation.h) over actor_means_fn, wrapped in ember::jit when `use_jit` (then the
/// batch size must stay fixed). Each call copies the observations in and the means out; it reads
/// the live parameters (also after optimizer steps and checkpoint loads).
MeansFn make_means_fn(const ActorCritic& policy, bool use_jit);

/// Batched forward over buffer.inference_observations(): means and values in one schedule, then
/// buffer.set_policy_outputs(means, log_std, values).
void compute_policy_outputs(const ActorCritic& policy, RolloutBuffer& buffer);
/// Its forward: {means [n, A], values [n]} of obs [n, O], realized in one schedule, no gradients
/// recorded (also what the trainer compiles ahead, PpoLearner::compile_ahead).
std::vector<Tensor> realize_policy_outputs(const ActorCritic& policy, const Tensor& obs);

}  // namespace ember::rl

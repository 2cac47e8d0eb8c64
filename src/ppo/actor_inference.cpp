#include "ember/rl/actor_inference.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/grad_mode.h"

namespace ember::rl {

TensorFn actor_means_fn(const ActorCritic& policy) {
  return [policy](const std::vector<Tensor>& in) {
    NoGradGuard no_grad;
    return std::vector<Tensor>{policy->means(in.at(0))};
  };
}

MeansFn make_means_fn(const ActorCritic& policy, bool use_jit) {
  auto fn = std::make_shared<TensorFn>(maybe_jit(actor_means_fn(policy), use_jit));
  const int64_t o = policy->options().obs_dim, a = policy->options().act_dim;
  return [fn, o, a](std::span<const float> obs, std::span<float> means) {
    const int64_t n = static_cast<int64_t>(obs.size()) / o;
    if (n * o != static_cast<int64_t>(obs.size()) || means.size() != static_cast<size_t>(n * a))
      throw ValueError("actor: " + std::to_string(obs.size()) + " observation values and " +
                       std::to_string(means.size()) + " mean slots do not form [n, " +
                       std::to_string(o) + "] -> [n, " + std::to_string(a) + "]");
    const std::vector<Tensor> out = (*fn)({from_blob(obs.data(), {n, o}, kFloat32)});
    const std::vector<float> m = out.at(0).to_vector<float>();
    std::copy(m.begin(), m.end(), means.begin());
  };
}

std::vector<Tensor> realize_policy_outputs(const ActorCritic& policy, const Tensor& obs) {
  NoGradGuard no_grad;
  std::vector<Tensor> out = {policy->means(obs), policy->values(obs)};
  realize(out);
  return out;
}

void compute_policy_outputs(const ActorCritic& policy, RolloutBuffer& buffer) {
  const Tensor obs = from_blob(buffer.inference_observations().data(),
                               {buffer.inference_rows(), buffer.obs_dim()}, kFloat32);
  const std::vector<Tensor> mv = realize_policy_outputs(policy, obs);
  const std::vector<float> m = mv[0].to_vector<float>(), v = mv[1].to_vector<float>();
  const std::vector<float> log_std = policy->log_std_values();
  buffer.set_policy_outputs(m, log_std, v);
}

}  // namespace ember::rl

#include "ember/rl/collector.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/support/clock.h"

namespace ember::rl {
namespace {

using support::now_seconds;

}  // namespace

Collector::Collector(VectorEnv& env, uint64_t seed, double gamma, bool reward_scaling)
    : env_(env),
      seed_(seed),
      reward_scaling_(reward_scaling),
      scaler_(env.num_envs(), gamma),
      sampler_(seed ^ 0x5A3C9E1F0B7D2468ULL),
      out_(env.num_envs(), env.observation_dim()) {
  if (env.single_action_space().is_discrete())
    throw ValueError("Collector: the Gaussian policy needs a continuous action space");
  const size_t n = static_cast<size_t>(env.num_envs());
  obs_.resize(n * static_cast<size_t>(env.observation_dim()));
  means_.resize(n * static_cast<size_t>(env.action_dim()));
  clipped_.resize(means_.size());
  scaled_.resize(n);
  done_.resize(n);
  ep_return_.assign(n, 0.0);
  ep_length_.assign(n, 0);
}

CollectStats Collector::collect(const MeansFn& actor, std::span<const float> log_std,
                                RolloutBuffer& buf, const std::function<void(int64_t)>& on_step) {
  const int64_t n = env_.num_envs(), o = env_.observation_dim(), a = env_.action_dim();
  if (buf.envs() != n || buf.obs_dim() != o || buf.act_dim() != a)
    throw ValueError("Collector::collect: buffer is [" + std::to_string(buf.envs()) +
                     " envs, obs " + std::to_string(buf.obs_dim()) + ", act " +
                     std::to_string(buf.act_dim()) + "], env is [" + std::to_string(n) + ", " +
                     std::to_string(o) + ", " + std::to_string(a) + "]");
  const double t_start = now_seconds();
  CollectStats st;
  if (!started_) {
    env_.reset(seed_, obs_);
    started_ = true;
  }
  buf.clear();
  const Space& space = env_.single_action_space();
  const VectorStepOutput view = out_.view();
  for (int64_t t = 0; t < buf.steps(); ++t) {
    const double t0 = now_seconds();
    actor(obs_, means_);
    const double t1 = now_seconds();
    std::span<float> act = buf.actions(t);
    sampler_.sample(means_, log_std, act);
    for (size_t k = 0; k < act.size(); ++k)
      clipped_[k] = std::clamp(act[k], space.low[k % static_cast<size_t>(a)],
                               space.high[k % static_cast<size_t>(a)]);
    const double t2 = now_seconds();
    std::copy(obs_.begin(), obs_.end(), buf.observations(t).begin());
    const double t3 = now_seconds();
    env_.step(clipped_, view);
    const double t4 = now_seconds();
    std::span<float> raw = buf.raw_rewards(t), rew = buf.rewards(t);
    std::span<uint8_t> term = buf.terminated(t), trunc = buf.truncated(t);
    for (int64_t i = 0; i < n; ++i) {
      const size_t u = static_cast<size_t>(i);
      raw[u] = out_.rewards[u];
      term[u] = out_.terminated[u];
      trunc[u] = out_.truncated[u];
      done_[u] = (term[u] || trunc[u]) ? 1 : 0;
      ep_return_[u] += out_.rewards[u];
      ++ep_length_[u];
      if (trunc[u] && !term[u])
        buf.add_truncation(t, i,
                           std::span<const float>(out_.final_observations)
                               .subspan(u * static_cast<size_t>(o), static_cast<size_t>(o)));
      if (done_[u]) {
        st.episode_returns.push_back(ep_return_[u]);
        st.episode_lengths.push_back(ep_length_[u]);
        ep_return_[u] = 0.0;
        ep_length_[u] = 0;
      }
    }
    if (reward_scaling_) {
      scaler_.scale(raw, done_, scaled_);
      std::copy(scaled_.begin(), scaled_.end(), rew.begin());
    } else {
      std::copy(raw.begin(), raw.end(), rew.begin());
    }
    std::copy(out_.observations.begin(), out_.observations.end(), obs_.begin());
    const double t5 = now_seconds();
    st.inference_seconds += t1 - t0;
    st.sampling_seconds += t2 - t1;
    st.buffer_seconds += (t3 - t2) + (t5 - t4);
    st.env_seconds += t4 - t3;
    if (on_step) on_step(t);
  }
  const double t0 = now_seconds();
  buf.set_bootstrap_observations(obs_);
  st.buffer_seconds += now_seconds() - t0;
  st.transitions = buf.size();
  st.seconds = now_seconds() - t_start;
  return st;
}

}  // namespace ember::rl

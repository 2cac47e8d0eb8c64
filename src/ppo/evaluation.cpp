#include "ember/rl/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "ember/error.h"
#include "ember/rl/gaussian.h"
#include "ember/support/clock.h"
#include "ember/support/thread_pool.h"

namespace ember::rl {
namespace {

using support::now_seconds;

// fn(ids[k]) for each k: on the calling thread alone when threads == 1 (the pool is not started)
// or one id is left (waking a worker for it costs more than it saves), else on up to `threads`
// threads of the process's pool.
void for_each_id(const std::vector<size_t>& ids, int threads,
                 const std::function<void(size_t)>& fn) {
  const auto run = [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) fn(ids[static_cast<size_t>(k)]);
  };
  const auto count = static_cast<int64_t>(ids.size());
  if (threads <= 1 || count <= 1) return run(0, count);
  support::thread_pool().parallel_for(count, run, 1, threads);
}

}  // namespace

EvalResult evaluate(const MeansFn& actor, std::span<const float> log_std,
                    const EvalOptions& options) {
  if (options.envs < 1 || options.episodes_per_env < 1)
    throw ValueError("evaluate: envs (" + std::to_string(options.envs) +
                     ") and episodes_per_env (" + std::to_string(options.episodes_per_env) +
                     ") must be >= 1");
  if (options.threads < 1)
    throw ValueError("evaluate: threads = " + std::to_string(options.threads) + " < 1");
  if (!options.env.continuous)
    throw ValueError("evaluate: the Gaussian policy needs continuous actions");
  const double t_start = now_seconds();
  const size_t n = static_cast<size_t>(options.envs);
  std::vector<std::unique_ptr<LunarLander>> envs;
  for (size_t i = 0; i < n; ++i) envs.push_back(std::make_unique<LunarLander>(options.env));
  const size_t o = static_cast<size_t>(envs[0]->observation_space().flat_size());
  const Space& aspace = envs[0]->action_space();
  const size_t a = static_cast<size_t>(aspace.flat_size());
  if (log_std.size() != a)
    throw ValueError("evaluate: log_std has " + std::to_string(log_std.size()) + " values for " +
                     std::to_string(a) + " action dims");

  std::vector<float> obs(n * o), means(n * a), actions(n * a);
  std::vector<double> ep_return(n, 0.0);
  std::vector<int64_t> ep_length(n, 0), done_count(n, 0);
  std::vector<std::vector<double>> returns(n);
  std::vector<std::vector<int64_t>> lengths(n);
  for (size_t i = 0; i < n; ++i)
    envs[i]->reset_into(options.seed + i, std::span<float>(obs).subspan(i * o, o));
  // Not the envs' own generator stream (env 0 is seeded with `seed` itself).
  GaussianSampler sampler(options.seed ^ 0x9E3779B97F4A7C15ULL);
  EvalResult r;
  // The envs still playing. Env i's step touches only env i's state, so they step on up to
  // options.threads threads with the same results as one after another.
  std::vector<size_t> active(n);
  for (size_t i = 0; i < n; ++i) active[i] = i;
  const auto step_env = [&](size_t i) {
    std::span<float> row = std::span<float>(obs).subspan(i * o, o);
    const StepInfo s = envs[i]->step_into(std::span<const float>(actions).subspan(i * a, a), row);
    ep_return[i] += s.reward;
    ++ep_length[i];
    if (s.done()) {
      returns[i].push_back(ep_return[i]);
      lengths[i].push_back(ep_length[i]);
      ep_return[i] = 0.0;
      ep_length[i] = 0;
      if (++done_count[i] < options.episodes_per_env) envs[i]->reset_into(std::nullopt, row);
    }
  };
  while (!active.empty()) {
    double t0 = now_seconds();
    actor(obs, means);
    ++r.actor_calls;
    double t1 = now_seconds();
    r.inference_seconds += t1 - t0;
    if (options.stochastic)
      sampler.sample(means, log_std, actions);
    else
      std::copy(means.begin(), means.end(), actions.begin());
    for (size_t k = 0; k < n * a; ++k)
      actions[k] = std::clamp(actions[k], aspace.low[k % a], aspace.high[k % a]);
    double t2 = now_seconds();
    r.sampling_seconds += t2 - t1;
    for_each_id(active, options.threads, step_env);
    r.env_steps += static_cast<int64_t>(active.size());
    std::erase_if(active, [&](size_t i) { return done_count[i] >= options.episodes_per_env; });
    r.env_seconds += now_seconds() - t2;
  }
  for (size_t i = 0; i < n; ++i) {
    r.returns.insert(r.returns.end(), returns[i].begin(), returns[i].end());
    r.lengths.insert(r.lengths.end(), lengths[i].begin(), lengths[i].end());
    r.episodes_per_env.push_back(done_count[i]);
  }
  double sum = 0, sq = 0;
  r.min = r.returns.empty() ? 0 : r.returns[0];
  r.max = r.min;
  for (double x : r.returns) {
    sum += x;
    r.min = std::min(r.min, x);
    r.max = std::max(r.max, x);
  }
  r.mean = sum / static_cast<double>(r.returns.size());
  for (double x : r.returns) sq += (x - r.mean) * (x - r.mean);
  r.std = std::sqrt(sq / static_cast<double>(r.returns.size()));
  r.seconds = now_seconds() - t_start;
  return r;
}

}  // namespace ember::rl

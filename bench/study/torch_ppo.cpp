// The study's libtorch PPO trainer on ember's own LunarLander: the same env, vector env,
// collection (rl::Collector: sampling, reward scaling, truncation bootstrap), rollout buffer, GAE,
// evaluation protocol and settings (rl::TrainConfig defaults) as `ember train`; only the networks
// and the update run in libtorch (torch_policy.h). With the env shared, a difference in time is
// the framework's. Prints one JSON line per epoch (transitions, phase seconds, evaluation mean)
// and a summary line. Stops at a scheduled evaluation mean >= target or at --max-transitions; the
// clock runs from process start. The final evaluation is of the live policy (no save and load).
//   study_torch_ppo [--seed N] [--max-transitions N] [--steps-per-env N] [--minibatch N]
//                   [--eval-every N] [--eval-episodes-per-env N] [--threads N]
// A benchmark reference, not a test.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>

#include "ember/rl/collector.h"
#include "ember/rl/evaluation.h"
#include "ember/rl/random.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/train_config.h"
#include "ember/rl/trainer.h"
#include "ember/rl/vector_env.h"
#include "ember/support/clock.h"
#include "torch_policy.h"

using namespace ember;
using namespace ember::study;
using json = nlohmann::json;

namespace {

const double g_start = support::now_seconds();
double now() { return support::now_seconds() - g_start; }  // seconds since start

// Seeds by purpose, as ember's trainer derives them (rl::derive_seed; the purposes differ from
// the trainer's private ones, so the streams are independent of ember train's).
enum : uint64_t { kInit = 101, kTrainEnvs, kEval, kFinalEval, kShuffle };

rl::MeansFn means_fn(TorchActorCritic& ac) {
  return [&ac](std::span<const float> obs, std::span<float> means) {
    torch::NoGradGuard g;
    const int64_t n = static_cast<int64_t>(obs.size()) / 8;
    torch::Tensor x = torch::from_blob(const_cast<float*>(obs.data()), {n, 8});
    torch::Tensor m = ac.actor->forward(x).contiguous();
    std::memcpy(means.data(), m.data_ptr<float>(), means.size() * sizeof(float));
  };
}

std::vector<float> log_std_of(const TorchActorCritic& ac) {
  torch::Tensor l = ac.log_std.detach().contiguous();
  return std::vector<float>(l.data_ptr<float>(), l.data_ptr<float>() + l.numel());
}

}  // namespace

int main(int argc, char** argv) {
  rl::TrainConfig c;
  c.eval_every = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (k == "--seed")
      c.seed = static_cast<uint64_t>(v);
    else if (k == "--max-transitions")
      c.max_transitions = v;
    else if (k == "--steps-per-env")
      c.steps_per_env = v;
    else if (k == "--minibatch")
      c.update.minibatch = v;
    else if (k == "--eval-every")
      c.eval_every = v;
    else if (k == "--eval-episodes-per-env")
      c.eval_episodes_per_env = v;
    else if (k == "--threads")
      c.threads = static_cast<int>(v);
    else {
      std::fprintf(stderr, "%s: unknown option %s\n", argv[0], k.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s: every option takes a value\n", argv[0]);
    return 2;
  }
  try {
    c.validate();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  if (c.threads > 0) torch::set_num_threads(c.threads);
  torch::manual_seed(rl::derive_seed(c.seed, kInit));
  TorchActorCritic ac(c.update.lr, c.update.adam_eps);

  rl::LunarLanderOptions env_options;
  env_options.max_episode_steps = c.max_episode_steps;
  auto venv = rl::make_lunar_lander_vector(c.envs, env_options, c.env_threads);
  rl::Collector collector(*venv, rl::derive_seed(c.seed, kTrainEnvs), c.gamma, c.reward_scaling);
  rl::RolloutBuffer buffer(c.steps_per_env, c.envs, 8, 2,
                           c.envs * (c.steps_per_env / c.max_episode_steps + 2));
  const rl::MeansFn actor = means_fn(ac);
  rl::EvalOptions eval_opts;
  eval_opts.envs = c.eval_envs;
  eval_opts.episodes_per_env = c.eval_episodes_per_env;
  eval_opts.env = env_options;
  eval_opts.threads = c.env_threads;  // as ember train's evaluation

  int64_t transitions = 0;
  bool reached = false;
  double seconds_to_stop = 0;
  const int64_t n = c.transitions_per_epoch(), mb = c.update.minibatch;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  rl::MiniBatch batch;
  for (int64_t epoch = 0;; ++epoch) {
    const double e0 = now();
    const std::vector<float> log_std = log_std_of(ac);
    const rl::CollectStats cs = collector.collect(actor, log_std, buffer);
    transitions += n;
    json r = {{"kind", "epoch"},
              {"impl", "libtorch"},
              {"epoch", epoch},
              {"transitions", transitions},
              {"collect_s", cs.seconds},
              {"collect_inference_s", cs.inference_seconds},
              {"collect_sampling_s", cs.sampling_seconds},
              {"collect_env_s", cs.env_seconds},
              {"collect_buffer_s", cs.buffer_seconds}};
    std::optional<rl::EvalResult> ev;
    if (epoch % c.eval_every == 0) {
      eval_opts.seed = rl::derive_seed(c.seed, kEval, uint64_t(epoch));
      ev = rl::evaluate(actor, log_std, eval_opts);
    }
    r["eval_s"] = ev ? ev->seconds : 0.0;
    r["eval_mean"] = ev ? json(ev->mean) : json(nullptr);
    const bool stop_target = ev && ev->mean >= c.target;
    double update_s = 0;
    if (!stop_target) {
      const double u0 = now();
      {
        torch::NoGradGuard g;
        const int64_t rows = buffer.inference_rows();
        torch::Tensor x =
            torch::from_blob(const_cast<float*>(buffer.inference_observations().data()), {rows, 8});
        torch::Tensor m = ac.actor->forward(x).contiguous();
        torch::Tensor v = ac.critic->forward(x).reshape({-1}).contiguous();
        buffer.set_policy_outputs(std::span<const float>(m.data_ptr<float>(), size_t(m.numel())),
                                  log_std,
                                  std::span<const float>(v.data_ptr<float>(), size_t(v.numel())));
      }
      buffer.compute_advantages(c.gamma, c.gae_lambda);
      const double u1 = now();
      rl::Xoshiro256 rng(rl::derive_seed(c.seed, kShuffle, uint64_t(epoch)));
      double steps_s = 0;
      for (int64_t pass = 0; pass < c.update.passes; ++pass) {
        std::iota(perm.begin(), perm.end(), int64_t{0});
        for (int64_t i = n - 1; i > 0; --i)
          std::swap(perm[size_t(i)], perm[size_t(rng.integers(0, i + 1))]);
        for (int64_t start = 0; start < n; start += mb) {
          buffer.gather(std::span<const int64_t>(perm).subspan(size_t(start), size_t(mb)), batch);
          const double s0 = now();
          ac.step(torch::from_blob(batch.observations.data(), {mb, 8}),
                  torch::from_blob(batch.actions.data(), {mb, 2}),
                  torch::from_blob(batch.log_probs.data(), {mb}),
                  torch::from_blob(batch.advantages.data(), {mb}),
                  torch::from_blob(batch.returns.data(), {mb}));
          steps_s += now() - s0;
        }
      }
      update_s = now() - u0;
      r["update_policy_outputs_s"] = u1 - u0;
      r["update_steps_s"] = steps_s;
    }
    r["update_s"] = update_s;
    r["epoch_s"] = now() - e0;
    r["elapsed_s"] = now();
    std::printf("%s\n", r.dump().c_str());
    std::fflush(stdout);
    if (stop_target) {
      reached = true;
      seconds_to_stop = now();
      break;
    }
    if (transitions >= c.max_transitions) {
      seconds_to_stop = now();
      break;
    }
  }
  rl::EvalOptions final_opts = eval_opts;
  final_opts.seed = rl::derive_seed(c.seed, kFinalEval);
  const rl::EvalResult fin = rl::evaluate(actor, log_std_of(ac), final_opts);
  json s = {{"kind", "summary"},
            {"impl", "libtorch"},
            {"seed", c.seed},
            {"transitions_at_stop", transitions},
            {"seconds_to_stop", seconds_to_stop},
            {"reached_target", reached},
            {"stop_reason", reached ? "target" : "max_transitions"},
            {"saved_policy_eval", fin.mean},
            {"threads", torch::get_num_threads()},
            {"version", TORCH_VERSION}};
  std::printf("%s\n", s.dump().c_str());
  return 0;
}

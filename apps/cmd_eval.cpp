// `ember eval --policy FILE|RUN`: evaluates a policy saved by `ember train` (safetensors with its
// architecture in the metadata) under the study's evaluation protocol (src/ppo/evaluation.cpp):
// separate envs, each playing the same number of complete episodes, stochastic clipped actions.
// `--render OUT` also writes one episode as PNG frames into the directory OUT.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "commands.h"
#include "ember/context.h"
#include "ember/error.h"
#include "ember/rl/actor_inference.h"
#include "ember/rl/checkpoint.h"
#include "ember/rl/evaluation.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/render.h"
#include "option_rules.h"

namespace ember::app {
namespace {

struct EvalArgs {
  std::string policy;
  int64_t episodes = 100;
  int64_t envs = 4;
  uint64_t seed = 12345;
  bool deterministic = false;
  int threads = 0;
  int env_threads = 2;
  int max_episode_steps = 1000;
  std::string render;
  int render_every = 1;
};

// The policy file --policy names: a policy file as given; a run directory (or its checkpoints/)
// gives the policy of its newest checkpoint, as `train --resume` picks it. A checkpoint manifest
// is refused with the files to pass instead.
std::string policy_file(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec))
    return rl::read_checkpoint_manifest(rl::find_checkpoint(arg)).policy_file;
  if (std::filesystem::path(arg).extension() == ".json") {
    rl::CheckpointManifest m;
    try {
      m = rl::read_checkpoint_manifest(arg);
    } catch (const IOError&) {
      throw ValueError("--policy " + arg +
                       " is not a policy (a .safetensors file written by ember train) nor a "
                       "checkpoint manifest; pass a policy file or a run directory");
    }
    throw ValueError("--policy " + arg +
                     " is a checkpoint manifest, not a policy: pass the policy it names, " +
                     m.policy_file + ", or the run directory, " + m.run_dir);
  }
  return arg;
}

void run_eval(EvalArgs a) {
  a.policy = policy_file(a.policy);
  if (a.threads > 0) set_num_threads(a.threads);
  Metadata meta;
  const rl::ActorCritic policy = rl::load_policy(a.policy, &meta);
  const std::vector<float> log_std = policy->log_std_values();
  // Split the episodes evenly: the largest env count <= --envs that divides --episodes.
  int64_t envs = std::min(a.envs, a.episodes);
  while (a.episodes % envs != 0) --envs;
  rl::EvalOptions o;
  o.envs = envs;
  o.episodes_per_env = a.episodes / envs;
  o.seed = a.seed;
  o.stochastic = !a.deterministic;
  o.threads = a.env_threads;
  o.env.max_episode_steps = a.max_episode_steps;
  const rl::EvalResult r = rl::evaluate(rl::make_means_fn(policy, true), log_std, o);
  std::printf("policy %s", a.policy.c_str());
  if (auto it = meta.find("transitions"); it != meta.end())
    std::printf(" (trained %s transitions)", it->second.c_str());
  std::printf("\n%lld episodes (%lld envs x %lld), %s actions, std [%.3f, %.3f], seed %llu\n",
              static_cast<long long>(r.returns.size()), static_cast<long long>(envs),
              static_cast<long long>(o.episodes_per_env),
              o.stochastic ? "stochastic clipped" : "deterministic (mean)", std::exp(log_std[0]),
              std::exp(log_std.size() > 1 ? log_std[1] : 0.f),
              static_cast<unsigned long long>(a.seed));
  double mean_len = 0;
  for (int64_t l : r.lengths) mean_len += static_cast<double>(l);
  mean_len /= static_cast<double>(std::max<size_t>(r.lengths.size(), 1));
  std::printf("return: mean %.2f std %.2f min %.2f max %.2f; mean length %.1f; %.2f s\n", r.mean,
              r.std, r.min, r.max, mean_len, r.seconds);

  if (!a.render.empty()) {
    rl::LunarLanderOptions eo;
    eo.max_episode_steps = a.max_episode_steps;
    rl::LunarLander env(eo);
    const rl::MeansFn means = rl::make_means_fn(policy, false);
    auto sampler = std::make_shared<rl::GaussianSampler>(a.seed ^ 0xD1CEULL);
    const bool stochastic = o.stochastic;
    const rl::RenderedEpisode e = rl::render_episode(
        env,
        [&](std::span<const float> obs, std::span<float> action) {
          means(obs, action);
          if (stochastic) {
            std::vector<float> m(action.begin(), action.end());
            sampler->sample(m, log_std, action);
          }
          for (float& x : action) x = std::clamp(x, -1.0f, 1.0f);
        },
        a.seed, a.render, a.render_every);
    std::printf("rendered one episode (seed %llu): return %.2f, length %d, %s; %d frames in %s\n",
                static_cast<unsigned long long>(a.seed), e.episode_return, e.length,
                e.slept ? "landed (came to rest)" : "did not come to rest", e.frames,
                a.render.c_str());
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Evaluate a policy saved by `ember train` on fresh LunarLander episodes");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("--policy", a->policy,
                  "Policy file (safetensors) written by ember train, or a run directory (the "
                  "policy of its newest checkpoint, as train --resume picks it)")
      ->required()
      ->check(rule::existing_path());
  cmd->add_option("--episodes", a->episodes,
                  "Complete episodes, split evenly over the evaluation envs")
      ->check(rule::positive());
  cmd->add_option("--envs", a->envs,
                  "Evaluation envs (reduced to a divisor of --episodes if needed)")
      ->check(rule::positive());
  cmd->add_option("--seed", a->seed, "Seed of the episodes and the action noise");
  cmd->add_flag("--deterministic", a->deterministic,
                "Act with the clipped means instead of sampling");
  cmd->add_option(
         "--threads", a->threads,
         "Threads of the pool that runs kernels and env steps; 0 = EMBER_THREADS or all cores")
      ->check(rule::in_range(0, 1024));
  cmd->add_option("--env-threads", a->env_threads,
                  "At most this many of them step the evaluation envs (same results for any)")
      ->check(rule::in_range(1, 1024));
  cmd->add_option("--max-episode-steps", a->max_episode_steps, "LunarLander time limit")
      ->check(rule::positive());
  cmd->add_option("--render", a->render,
                  "Also play one episode (seed --seed) and write it as PNG frames into this "
                  "directory");
  cmd->add_option("--render-every", a->render_every, "With --render: keep every Nth frame")
      ->check(rule::in_range(1, 1000000));
  cmd->callback([a] { run_eval(*a); });
}

}  // namespace ember::app

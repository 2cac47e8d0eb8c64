// `ember env`: plays LunarLander episodes with the heuristic or a random policy on a VectorEnv and
// prints return statistics and throughput; `--render DIR` writes one episode as PNG frames.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/heuristic.h"
#include "ember/rl/lunar_lander.h"
#include "ember/rl/random.h"
#include "ember/rl/render.h"
#include "ember/rl/vector_env.h"
#include "ember/support/clock.h"
#include "ember/support/thread_pool.h"
#include "option_rules.h"

namespace ember::app {
namespace {

using namespace ember::rl;

struct EnvArgs {
  std::string policy = "heuristic";
  int64_t episodes = 100;
  uint64_t seed = 0;
  int64_t envs = 1;
  int threads = 1;
  bool discrete = false;
  bool wind = false;
  double gravity = -10.0, wind_power = 15.0, turbulence_power = 1.5;
  std::string render_dir;
  int render_every = 1;
  double action_noise = 0.0;  // std of Gaussian noise added to continuous actions (then clipped)
};

// The policy's action for one row: the heuristic, or uniform over the action space.
void act_noiseless(const EnvArgs& args, Xoshiro256& rng, std::span<const float> obs,
                   std::span<float> action) {
  if (args.policy == "heuristic") {
    if (args.discrete) {
      action[0] = static_cast<float>(heuristic_discrete_action(obs));
    } else {
      const auto a = heuristic_action(obs);
      action[0] = a[0], action[1] = a[1];
    }
  } else if (args.discrete) {
    action[0] = static_cast<float>(rng.integers(0, 4));
  } else {
    for (float& a : action) a = static_cast<float>(rng.uniform(-1.0, 1.0));
  }
}

// Fills one action row: act_noiseless, then for continuous actions N(0, action_noise^2) noise and
// clipping to [-1, 1] (how a stochastic policy's actions reach the env, docs/training.md
// "Collection"; with the heuristic it measures how hard coming to rest is under noise).
void act(const EnvArgs& args, Xoshiro256& rng, GaussianSampler& noise, std::span<const float> obs,
         std::span<float> action) {
  act_noiseless(args, rng, obs, action);
  if (args.discrete || args.action_noise <= 0.0) return;
  for (float& a : action)
    a = std::clamp(static_cast<float>(a + args.action_noise * noise.standard_normal()), -1.0f,
                   1.0f);
}

LunarLanderOptions lander_options(const EnvArgs& args) {
  LunarLanderOptions o;
  o.continuous = !args.discrete;
  o.gravity = args.gravity;
  o.enable_wind = args.wind;
  o.wind_power = args.wind_power;
  o.turbulence_power = args.turbulence_power;
  return o;
}

void run_render(const EnvArgs& args) {
  LunarLander env(lander_options(args));
  Xoshiro256 rng(args.seed ^ 0x5eedULL);
  GaussianSampler noise(args.seed ^ 0x9015eULL);
  const RenderedEpisode r = render_episode(
      env, [&](auto obs, auto action) { act(args, rng, noise, obs, action); }, args.seed,
      args.render_dir, args.render_every);
  std::printf("rendered seed %llu: return %.2f, length %d, %s; %d frames in %s\n",
              static_cast<unsigned long long>(args.seed), r.episode_return, r.length,
              r.slept ? "landed (slept)" : "did not land", r.frames, args.render_dir.c_str());
}

// Sub-env i plays episodes[i] = episodes/envs (+1 for the first episodes%envs) counted episodes,
// so the statistics do not favour short episodes.
void run_stats(const EnvArgs& args) {
  // --threads sizes the process's pool and lets all of it step the envs.
  if (args.threads > 1) ember::support::set_num_threads(args.threads);
  auto venv = make_lunar_lander_vector(args.envs, lander_options(args), args.threads);
  const int64_t n = venv->num_envs(), obs_dim = venv->observation_dim(),
                act_dim = venv->action_dim();
  std::vector<int64_t> quota(n), finished(n, 0), length(n, 0);
  for (int64_t i = 0; i < n; ++i) quota[i] = args.episodes / n + (i < args.episodes % n ? 1 : 0);
  std::vector<double> running(n, 0.0), returns;
  int64_t total_length = 0, sleeps = 0, steps = 0, remaining = args.episodes;
  std::vector<Xoshiro256> rngs;
  std::vector<GaussianSampler> noise;
  for (int64_t i = 0; i < n; ++i) {
    rngs.emplace_back(args.seed + static_cast<uint64_t>(i) + 0x5eedULL);
    noise.emplace_back(args.seed + static_cast<uint64_t>(i) + 0x9015eULL);
  }

  VectorBuffers buf(n, obs_dim);
  std::vector<float> actions(n * act_dim);
  const double start = ember::support::now_seconds();
  venv->reset(args.seed, buf.observations);
  while (remaining > 0) {
    for (int64_t i = 0; i < n; ++i) {
      act(args, rngs[i], noise[i],
          std::span<const float>(buf.observations).subspan(i * obs_dim, obs_dim),
          std::span<float>(actions).subspan(i * act_dim, act_dim));
    }
    venv->step(actions, buf.view());
    steps += n;
    for (int64_t i = 0; i < n; ++i) {
      running[i] += buf.rewards[i];
      ++length[i];
      if (!buf.terminated[i] && !buf.truncated[i]) continue;
      if (finished[i] < quota[i]) {
        ++finished[i];
        --remaining;
        returns.push_back(running[i]);
        total_length += length[i];
        if (buf.terminated[i] && buf.rewards[i] == 100.0f) ++sleeps;
      }
      running[i] = 0.0;
      length[i] = 0;
    }
  }
  const double seconds = ember::support::now_seconds() - start;

  double mean = 0.0, var = 0.0;
  for (double r : returns) mean += r;
  mean /= returns.size();
  for (double r : returns) var += (r - mean) * (r - mean);
  const double count = static_cast<double>(returns.size());
  if (args.action_noise > 0) std::printf("action noise: N(0, %g^2), clipped\n", args.action_noise);
  std::printf("policy %s, %s actions, seed %llu, %lld envs, %d threads\n", args.policy.c_str(),
              args.discrete ? "discrete" : "continuous", static_cast<unsigned long long>(args.seed),
              static_cast<long long>(n), venv->threads());
  std::printf("return: mean %.2f std %.2f count %lld\n", mean, std::sqrt(var / count),
              static_cast<long long>(returns.size()));
  std::printf("length: mean %.1f\n", total_length / count);
  std::printf("ended by sleeping: %.1f%%\n", 100.0 * sleeps / count);
  std::printf("speed: %.0f steps/s (%lld steps in %.3f s)\n", steps / seconds,
              static_cast<long long>(steps), seconds);
}

}  // namespace

void add_env_command(CLI::App& app) {
  auto args = std::make_shared<EnvArgs>();
  CLI::App* cmd = app.add_subcommand("env", "Play LunarLander episodes with a fixed policy");
  cmd->option_defaults()->always_capture_default();
  cmd->add_option("--policy", args->policy,
                  "Policy: heuristic (the reference controller) or random")
      ->check(rule::one_of({"heuristic", "random"}));
  cmd->add_option("--episodes", args->episodes, "Episodes to play")->check(rule::in_range(1, 1e9));
  cmd->add_option("--seed", args->seed, "Seed; sub-env i is seeded seed+i");
  cmd->add_option("--envs", args->envs, "Environments in the vector env")
      ->check(rule::in_range(1, 65536));
  cmd->add_option("--threads", args->threads, "Threads stepping the envs (the caller included)")
      ->check(rule::in_range(1, 1024));
  cmd->add_flag("--discrete", args->discrete, "Discrete actions (4) instead of continuous");
  cmd->add_flag("--wind", args->wind, "Enable wind and turbulence");
  cmd->add_option("--gravity", args->gravity, "Gravity in m/s^2")
      ->check(rule::in_range(-12, 0, "()"));
  cmd->add_option("--wind-power", args->wind_power, "Wind power")->check(rule::in_range(0, 20));
  cmd->add_option("--turbulence-power", args->turbulence_power, "Turbulence power")
      ->check(rule::in_range(0, 2));
  cmd->add_option("--render", args->render_dir,
                  "Instead of statistics, write the episode of --seed as PNG frames into this "
                  "directory");
  cmd->add_option("--render-every", args->render_every, "With --render: keep every Nth frame")
      ->check(rule::in_range(1, 1000000));
  cmd->add_option("--action-noise", args->action_noise,
                  "Std of Gaussian noise added to every continuous action before clipping to "
                  "[-1, 1]")
      ->check(rule::non_negative());
  cmd->callback([args] {
    if (args->discrete && args->action_noise > 0)
      throw CLI::ValidationError("--action-noise", "applies to continuous actions only");
    if (args->render_dir.empty()) {
      run_stats(*args);
    } else {
      run_render(*args);
    }
  });
}

}  // namespace ember::app

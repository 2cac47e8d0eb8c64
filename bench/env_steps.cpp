// LunarLander throughput (heuristic actions): one env, and a VectorEnv of 4 on 1 and 2 threads.
// Items/s = env steps per second (auto-resets included).
#include <benchmark/benchmark.h>

#include <vector>

#include "ember/rl/heuristic.h"
#include "ember/rl/lunar_lander.h"
#include "ember/rl/vector_env.h"

namespace {

using namespace ember::rl;

void BM_LunarLanderStep(benchmark::State& state) {
  LunarLander env;
  std::vector<float> obs = env.reset(0);
  for (auto _ : state) {
    const auto action = heuristic_action(obs);
    if (env.step_into(action, obs).done()) env.reset_into(std::nullopt, obs);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LunarLanderStep);

void BM_VectorEnvStep(benchmark::State& state) {
  const auto envs = state.range(0);
  const auto threads = static_cast<int>(state.range(1));
  auto venv = make_lunar_lander_vector(envs, {}, threads);
  VectorBuffers buf(envs, venv->observation_dim());
  std::vector<float> actions(envs * venv->action_dim());
  const HeuristicPolicy policy;
  venv->reset(0, buf.observations);
  for (auto _ : state) {
    policy.act(buf.observations, actions);
    venv->step(actions, buf.view());
  }
  state.SetItemsProcessed(state.iterations() * envs);
}
BENCHMARK(BM_VectorEnvStep)
    ->ArgNames({"envs", "threads"})
    ->Args({4, 1})
    ->Args({4, 2})
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

// Issue 17 (cold start), counted with an empty kernel cache of the test's own: building the policy
// compiles nothing (nn::init works on the host), and a scripted one-epoch training run compiles a
// bounded number of distinct programs in few compiler processes. Its own process (ctest).
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "ember/context.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/trainer.h"
#include "ember/support/settings.h"
#include "ember/tensor.h"

namespace {

using namespace ember;
namespace fs = std::filesystem;

struct EmptyCache {
  std::string dir;
  EmptyCache() {
    char templ[] = "/tmp/ember-cold-start-XXXXXX";
    if (!mkdtemp(templ)) throw std::runtime_error("mkdtemp failed");
    dir = templ;
    ember::support::settings().cache_dir = dir + "/cache";
  }
  ~EmptyCache() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    ember::support::settings().cache_dir.clear();
  }
};

TEST(ColdStart, PolicyInitCompilesNothing) {
  EmptyCache cache;
  reset_runtime_stats();
  manual_seed(3);
  rl::ActorCritic policy(rl::PolicyOptions{});  // 10 orthogonal_ weights, 10 zeroed biases
  const RuntimeStats s = runtime_stats();
  EXPECT_EQ(s.kernels_compiled, 0);
  EXPECT_EQ(s.compiler_runs, 0);
  // Initialised: the actor's first weight is not zero.
  EXPECT_NE(policy->actor->linears()[0]->weight.abs().sum().item<float>(), 0.0f);
}

TEST(ColdStart, OneEpochCompilesFewProgramsInFewProcesses) {
  EmptyCache cache;
  rl::TrainConfig c;
  c.seed = 5;
  c.threads = 2;
  c.progress = "none";
  c.envs = 2;
  c.steps_per_env = 100;
  c.update.minibatch = 100;
  c.update.passes = 2;
  c.eval_envs = 2;
  c.eval_episodes_per_env = 1;
  c.final_eval_episodes_per_env = 1;
  c.max_episode_steps = 50;
  c.max_transitions = 200;  // one epoch
  c.policy.hidden = 16;
  c.policy.layers = 2;
  reset_runtime_stats();
  rl::Trainer(c).run();
  const RuntimeStats s = runtime_stats();
  std::printf("one epoch, cold: %lld programs compiled, %lld compiler processes, %lld batches\n",
              static_cast<long long>(s.kernels_from_compiler),
              static_cast<long long>(s.compiler_runs), static_cast<long long>(s.compile_batches));
  EXPECT_EQ(s.kernels_from_disk_cache, 0);
  // Measured: 47 programs in 3 batches (the actor's inference, the policy outputs, the jitted
  // step) and 7 processes: a batch with enough source is compiled by one job per thread (2) and
  // linked by one more process (compiler.h). A per-kernel compile anywhere (the initialisers' were
  // one per parameter shape, 23 in the default run) or per-size copies of kernels show here.
  EXPECT_LE(s.kernels_from_compiler, 72);
  EXPECT_LE(s.compile_batches, 3);
  EXPECT_LE(s.compiler_runs, 3 * s.compile_batches);
  EXPECT_LT(s.compiler_runs * 4, s.kernels_from_compiler);
}

}  // namespace

// Issue 17 (cold start), counted with an empty kernel cache of the test's own: building the policy
// compiles nothing (nn::init works on the host), and a scripted one-epoch training run compiles a
// bounded number of distinct programs in few compiler processes. Its own process (ctest).
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ember/context.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_update.h"
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
  // Measured: 44 programs in 2 batches (the actor's inference; the policy outputs with the jitted
  // step, compiled ahead) and 6 processes (3 batches and 7 before the compile-ahead): a batch with
  // enough source is compiled by one job per thread (2) and linked by one more process
  // (compiler.h). A per-kernel compile anywhere (the initialisers' were one per parameter shape, 23
  // in the default run) or per-size copies of kernels show here. The first update's kernels (and
  // the forward before it) compile ahead, during the collection.
  EXPECT_GT(s.kernels_compiled_ahead, 0);
  EXPECT_LE(s.kernels_from_compiler, 72);
  EXPECT_LE(s.compile_batches, 3);
  EXPECT_LE(s.compiler_runs, 3 * s.compile_batches);
  EXPECT_LT(s.compiler_runs * 4, s.kernels_from_compiler);
}

// PpoLearner::compile_ahead: the first training steps then compile nothing, training is
// bit-identical to a learner without it, and the scratch policy's initial draws leave the global
// generator alone. Shapes no other test here compiles (so the counts are this test's).
// update()'s minibatch: buffers of its shapes (from_blob).
std::vector<Tensor> minibatch(int64_t mb, int step) {
  std::vector<float> v(static_cast<size_t>(mb * 8)), logp(static_cast<size_t>(mb));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(std::sin(0.7 * i + step));
  for (size_t i = 0; i < logp.size(); i++) logp[i] = -1.0f - 0.1f * v[i];
  const float* p = v.data();
  return {from_blob(p, {mb, 8}, kFloat32), from_blob(p, {mb, 2}, kFloat32),
          from_blob(logp.data(), {mb}, kFloat32), from_blob(p + 2, {mb}, kFloat32),
          from_blob(p + 3, {mb}, kFloat32)};
}

void run_steps(rl::PpoLearner& l, int n) {
  for (int i = 0; i < n; i++) {
    auto m = l.step_fn()(minibatch(l.options().minibatch, i));
    ASSERT_TRUE(std::isfinite(m[0].item<double>()));
  }
}

void expect_bit_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); i++) {
    const auto x = a[i].to_vector<float>(), y = b[i].to_vector<float>();
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 0; k < x.size(); k++) ASSERT_EQ(x[k], y[k]) << "tensor " << i << " at " << k;
  }
}

// A small policy and its update, in shapes no other test here compiles.
rl::PolicyOptions two_layers_of(int64_t hidden) {
  rl::PolicyOptions po;
  po.hidden = hidden;
  po.layers = 2;
  return po;
}
rl::PpoUpdateOptions minibatch_of(int64_t minibatch) {
  rl::PpoUpdateOptions uo;
  uo.minibatch = minibatch;
  return uo;
}

struct Threads {
  int before = get_num_threads();
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(before); }
};

// A learner's cold start: an empty kernel cache, `threads` threads for the pool, a policy of two
// layers of `hidden` units and minibatches of `minibatch` rows.
struct ColdLearner {
  ColdLearner(int threads, int64_t hidden, int64_t minibatch)
      : threads(threads), po(two_layers_of(hidden)), uo(minibatch_of(minibatch)) {}
  EmptyCache cache;
  Threads threads;
  const rl::PolicyOptions po;
  const rl::PpoUpdateOptions uo;
};

TEST(ColdStart, CompileAheadLeavesTheFirstStepsNothingToCompile) {
  const ColdLearner cold(2, 24, 64);
  manual_seed(11);
  rl::ActorCritic pa(cold.po);
  rl::PpoLearner a(pa, cold.uo);
  const RuntimeStats s0 = runtime_stats();
  a.compile_ahead();
  a.wait_compile_ahead();
  const RuntimeStats s1 = runtime_stats();
  EXPECT_GT(a.compile_ahead_stats().kernels, 0);
  EXPECT_EQ(s1.kernels_launched, s0.kernels_launched);
  // pa_next: the generator where the scratch policy's draws did not move it.
  rl::ActorCritic pa_next(cold.po);
  run_steps(a, 3);  // the jit's warm-up call, its capture and a replay
  const RuntimeStats s2 = runtime_stats();
  EXPECT_EQ(s2.kernels_compiled, s1.kernels_compiled);
  EXPECT_GT(s2.kernels_launched, s1.kernels_launched);

  manual_seed(11);
  rl::ActorCritic pb(cold.po);
  rl::PpoLearner b(pb, cold.uo);
  rl::ActorCritic pb_next(cold.po);
  run_steps(b, 3);
  expect_bit_equal(pa->parameters(), pb->parameters());
  expect_bit_equal(pa_next->parameters(), pb_next->parameters());
}

TEST(ColdStart, CompileAheadWithOneThreadRunsWhenTheStepNeedsIt) {
  const ColdLearner cold(1, 20, 48);
  manual_seed(12);
  rl::PpoLearner a(rl::ActorCritic(cold.po), cold.uo);
  const RuntimeStats s0 = runtime_stats();
  a.compile_ahead();  // no second thread: nothing happens yet
  EXPECT_EQ(runtime_stats().kernels_compiled, s0.kernels_compiled);
  EXPECT_EQ(a.compile_ahead_stats().kernels, 0);
  a.wait_compile_ahead();  // update() calls this first
  EXPECT_GT(a.compile_ahead_stats().kernels, 0);
  const RuntimeStats s1 = runtime_stats();
  run_steps(a, 2);
  EXPECT_EQ(runtime_stats().kernels_compiled, s1.kernels_compiled);
}

}  // namespace

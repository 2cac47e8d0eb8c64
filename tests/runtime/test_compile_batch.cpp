// Issue 17 (cold start): the kernels of one schedule are compiled as one batch, so a training step
// with an empty kernel cache starts at most one compiler process per schedule, not one per
// kernel. Runs in its own process (ctest), with an empty cache directory of its own.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "ember/ember.h"

namespace {

using namespace ember;

TEST(CompileBatch, ColdTrainingStepStartsAtMostOneCompilerPerSchedule) {
  char templ[] = "/tmp/ember-compile-batch-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  setenv("EMBER_CACHE_DIR", (std::string(templ) + "/cache").c_str(), 1);
  set_num_threads(1);  // one compile job per batch (compiler.h); more threads add parallel jobs
  reset_runtime_stats();

  // The scripted step: an MLP regression with Adam, jitted as the trainer does (warm-up call,
  // capture, replays), then one eager step.
  manual_seed(7);
  nn::Linear fc1(8, 32), fc2(32, 32), fc3(32, 1);
  std::vector<Tensor> params;
  for (auto* m : {&fc1, &fc2, &fc3})
    for (auto& p : (*m)->parameters()) params.push_back(p);
  optim::Adam opt(params, optim::AdamOptions(1e-2));
  auto step = [&](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    Tensor h = fc2->forward(fc1->forward(in[0]).tanh()).tanh();
    Tensor loss = (fc3->forward(h) - in[1]).square().mean();
    opt.zero_grad();
    loss.backward();
    opt.step();
    return {loss};
  };
  Jit jitted(step);
  Tensor x = randn({64, 8}), y = randn({64, 1});
  std::vector<float> losses;
  for (int i = 0; i < 4; i++) losses.push_back(jitted({x, y})[0].item<float>());
  losses.push_back(step({x, y})[0].item<float>());

  const RuntimeStats s = runtime_stats();
  EXPECT_EQ(jitted.replays(), 2);
  EXPECT_GT(s.kernels_from_compiler, 20);
  EXPECT_EQ(s.kernels_from_disk_cache, 0);
  EXPECT_GT(s.compile_batches, 0);
  EXPECT_LE(s.compile_batches, s.realizes);
  // The check: compiler processes <= schedules compiled, far fewer than kernels.
  EXPECT_LE(s.compiler_runs, s.compile_batches);
  EXPECT_LT(s.compiler_runs * 2, s.kernels_from_compiler);
  for (size_t i = 1; i < losses.size(); i++) EXPECT_LT(losses[i], losses[0]) << i;

  std::error_code ec;
  std::filesystem::remove_all(templ, ec);
  unsetenv("EMBER_CACHE_DIR");
}

}  // namespace

// Issue 17 (cold start): the kernels of one schedule are compiled as one batch, so a training step
// with an empty kernel cache starts at most one compiler process per schedule, not one per
// kernel, and a jitted function's warm-up call compiles its kernels as one batch. Runs in its own
// process (ctest), with an empty cache directory of its own.
#include <stdlib.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ember/ember.h"
#include "ember/support/settings.h"

namespace {

using namespace ember;

// A small MLP regression trained with Adam; the same seed gives the same initial weights.
struct Model {
  nn::Linear fc1, fc2, fc3;
  std::unique_ptr<optim::Adam> opt;
  Model() {
    manual_seed(7);
    fc1 = nn::Linear(8, 32);
    fc2 = nn::Linear(32, 32);
    fc3 = nn::Linear(32, 1);
    std::vector<Tensor> params;
    for (auto* l : {&fc1, &fc2, &fc3})
      for (auto& p : (*l)->parameters()) params.push_back(p);
    opt = std::make_unique<optim::Adam>(params, optim::AdamOptions(1e-2));
  }
  std::vector<Tensor> step(const std::vector<Tensor>& in) {
    Tensor h = fc2->forward(fc1->forward(in[0]).tanh()).tanh();
    Tensor loss = (fc3->forward(h) - in[1]).square().mean();
    opt->zero_grad();
    loss.backward();
    opt->step();
    return {loss};
  }
};

TEST(CompileBatch, ColdTrainingStepStartsAtMostOneCompilerPerSchedule) {
  char templ[] = "/tmp/ember-compile-batch-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  support::settings().cache_dir = std::string(templ) + "/cache";
  set_num_threads(1);  // one compile job per batch (compiler.h); more threads add parallel jobs
  reset_runtime_stats();

  // The scripted step: an MLP regression with Adam, jitted as the trainer does (warm-up call,
  // capture, replays), then one eager step.
  Model m;
  auto step = [&m](const std::vector<Tensor>& in) { return m.step(in); };
  Jit jitted(step);
  manual_seed(8);
  Tensor x = randn({64, 8}), y = randn({64, 1});
  std::vector<float> losses;
  // The warm-up call (the first) compiles the whole function as one batch: one process.
  const RuntimeStats before = runtime_stats();
  losses.push_back(jitted({x, y})[0].item<float>());
  EXPECT_EQ(runtime_stats().compiler_runs - before.compiler_runs, 1);
  EXPECT_GT(runtime_stats().kernels_from_compiler - before.kernels_from_compiler, 10);
  for (int i = 1; i < 4; i++) losses.push_back(jitted({x, y})[0].item<float>());
  losses.push_back(step({x, y})[0].item<float>());

  const RuntimeStats s = runtime_stats();
  EXPECT_EQ(jitted.replays(), 2);
  // Enough kernels for the process bound below to mean something: 19 since multi-output fusion
  // (Adam's updates are one kernel per parameter) and same-body sharing (issues 11, 17).
  EXPECT_GT(s.kernels_from_compiler, 15);
  EXPECT_EQ(s.kernels_from_disk_cache, 0);
  EXPECT_GT(s.compile_batches, 0);
  EXPECT_LE(s.compile_batches, s.realizes);
  // The check: compiler processes <= schedules compiled, far fewer than kernels.
  EXPECT_LE(s.compiler_runs, s.compile_batches);
  EXPECT_LT(s.compiler_runs * 2, s.kernels_from_compiler);
  for (size_t i = 1; i < losses.size(); i++) EXPECT_LT(losses[i], losses[0]) << i;

  // Deferring the warm-up's launches changes no value: the same steps run eagerly (kernels now
  // compiled) give the same bits.
  Model eager;
  for (size_t i = 0; i < losses.size(); i++) {
    const float l = eager.step({x, y})[0].item<float>();
    EXPECT_EQ(std::memcmp(&l, &losses[i], sizeof l), 0) << i << ": " << l << " vs " << losses[i];
  }
  const std::vector<float> w = m.fc1->weight.to_vector<float>(),
                           w_eager = eager.fc1->weight.to_vector<float>();
  ASSERT_EQ(w.size(), w_eager.size());
  EXPECT_EQ(std::memcmp(w.data(), w_eager.data(), w.size() * sizeof(float)), 0);

  std::error_code ec;
  std::filesystem::remove_all(templ, ec);
  support::settings().cache_dir.clear();
}

// Kernels whose code differs only in a size that is the launch's range (the same elementwise
// update of parameters of different shapes, as an optimizer step has) are compiled once.
TEST(CompileBatch, KernelsDifferingOnlyInSizeShareOneFunction) {
  char templ[] = "/tmp/ember-compile-batch-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  support::settings().cache_dir = std::string(templ) + "/cache";
  reset_runtime_stats();
  manual_seed(21);
  // Values no other test computes (fresh programs): a * b + 0.375 over three sizes, one schedule.
  std::vector<Tensor> a, b, out;
  for (int64_t n : {3, 70, 1000}) {
    a.push_back(rand({n}));
    b.push_back(rand({n}));
    out.push_back(a.back() * b.back() + 0.375);
  }
  realize(out);
  const RuntimeStats s = runtime_stats();
  EXPECT_GE(s.kernels_compiled, 3);  // three programs (three kernels of different sizes) ...
  EXPECT_EQ(s.kernels_from_compiler, s.kernels_compiled - 2);  // ... two of them shared
  for (size_t k = 0; k < out.size(); k++) {
    const auto va = a[k].to_vector<float>(), vb = b[k].to_vector<float>(),
               vo = out[k].to_vector<float>();
    ASSERT_EQ(vo.size(), va.size());
    for (size_t i = 0; i < vo.size(); i++)
      // One rounding where the target fuses the multiply-add, two otherwise.
      EXPECT_TRUE(vo[i] == std::fma(va[i], vb[i], 0.375f) || vo[i] == va[i] * vb[i] + 0.375f)
          << k << " " << i;
  }
  std::error_code ec;
  std::filesystem::remove_all(templ, ec);
  support::settings().cache_dir.clear();
}

}  // namespace

// Products that differ only in their row count (the trainer's policy on a whole epoch, 20,032
// rows, and on a minibatch, 10,000) read it at run time, so the second one's schedule, a later
// batch, reuses the first one's function: no compiler process. Each still computes its own rows,
// the last row block partial (1,001 rows: ten blocks of 96 and one of 41).
TEST(CompileBatch, ProductsDifferingOnlyInRowCountShareOneFunction) {
  char templ[] = "/tmp/ember-compile-batch-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  setenv("EMBER_CACHE_DIR", (std::string(templ) + "/cache").c_str(), 1);
  manual_seed(33);
  // Values no other test computes (fresh programs): tanh(x w + b) - 0.625, K = 8, 128 columns.
  Tensor w = randn({8, 128}), b = randn({128});
  realize({w, b});
  for (int64_t n : {10000, 20032, 1001}) {
    Tensor x = randn({n, 8});
    x.realize();
    const RuntimeStats before = runtime_stats();
    Tensor y = (matmul(x, w) + b).tanh() - 0.625f;
    y.realize();
    const RuntimeStats after = runtime_stats();
    EXPECT_EQ(after.kernels_compiled - before.kernels_compiled, 1) << n;
    if (n != 10000) {  // the function compiled for 10,000 rows
      EXPECT_EQ(after.kernels_from_compiler - before.kernels_from_compiler, 0) << n;
      EXPECT_EQ(after.compiler_runs - before.compiler_runs, 0) << n;
    }
    const auto vx = x.to_vector<float>(), vw = w.to_vector<float>(), vb = b.to_vector<float>(),
               vy = y.to_vector<float>();
    ASSERT_EQ(vy.size(), static_cast<size_t>(n * 128));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < 128; j++) {
        double acc = vb[j];
        for (int64_t k = 0; k < 8; k++) acc += static_cast<double>(vx[i * 8 + k]) * vw[k * 128 + j];
        const double ref = std::tanh(acc) - 0.625;
        ASSERT_NEAR(vy[i * 128 + j], ref, 1e-5 + 1e-5 * std::abs(ref)) << n << " " << i << " " << j;
      }
  }
  std::error_code ec;
  std::filesystem::remove_all(templ, ec);
  unsetenv("EMBER_CACHE_DIR");
}

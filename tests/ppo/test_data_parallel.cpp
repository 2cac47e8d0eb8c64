// Data-parallel PPO steps (ppo_update.h, "Data-parallel"; advantage_moments.h). ctest runs this
// program in one process and on 2 ranks (mpirun): each rank's step must equal one process's step
// on the union of every rank's minibatch, and the replicas must stay bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ember/context.h"
#include "ember/dist.h"
#include "ember/rl/advantage_moments.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_update.h"

namespace {

using namespace ember;
using namespace ember::rl;

TEST(AdvantageMoments, HandValues) {
  const std::vector<float> a = {1, 2, 3, 4};
  const AdvantageMoments m = advantage_moments(a);
  EXPECT_EQ(m.count, 4);
  EXPECT_EQ(m.mean, 2.5);
  EXPECT_EQ(m.m2, 5);  // 2.25 + 0.25 + 0.25 + 2.25
  EXPECT_EQ(m.max_abs, 4);
  // Chan et al.: {1, 2} (mean 1.5, m2 0.5) and {3, 4} (3.5, 0.5): d = 2, m2 = 1 + 4 * 2 * 2 / 4.
  const std::vector<float> lo = {1, 2}, up = {3, 4}, hi = {3, -4};
  const AdvantageMoments c = combine(advantage_moments(lo), advantage_moments(up));
  EXPECT_EQ(c.count, 4);
  EXPECT_EQ(c.mean, 2.5);
  EXPECT_EQ(c.m2, 5);
  EXPECT_EQ(combine(advantage_moments(lo), advantage_moments(hi)).max_abs, 4);
  // (x - 2.5) / sqrt(5 / 3): -1.161895, -0.387298, 0.387298, 1.161895.
  const std::vector<float> n = normalize_advantages(a, m);
  const float s = 1.f / std::sqrt(5.f / 3.f);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(n[i], (a[i] - 2.5f) * s, 1e-6f);
  EXPECT_NEAR(n[0], -1.161895f, 1e-6f);
  // Equal values (a rounding spread) normalise to 0; one value stays raw; NaN gives NaN.
  const std::vector<float> same(7, 0.1f);
  for (float x : normalize_advantages(same, advantage_moments(same))) EXPECT_EQ(x, 0.f);
  const std::vector<float> one = {5.f};
  EXPECT_EQ(normalize_advantages(one, advantage_moments(one))[0], 5.f);
  const std::vector<float> bad = {1.f, NAN, 3.f};
  for (float x : normalize_advantages(bad, advantage_moments(bad))) EXPECT_TRUE(std::isnan(x));
}

struct Batch {
  std::vector<float> obs, actions, log_probs, advantages, returns;
};

// Rank r's minibatch of m rows at step `step`. Rank r's advantages are shifted by 3 r and scaled
// by 1 + r, so that normalising over one rank's rows instead of every rank's changes the step.
Batch make_batch(int r, int step, int64_t m) {
  std::mt19937 g(uint32_t(1000 * step + r));
  std::normal_distribution<float> n(0.f, 1.f);
  Batch b;
  for (int64_t i = 0; i < m; ++i) {
    for (int k = 0; k < 8; ++k) b.obs.push_back(n(g));
    for (int k = 0; k < 2; ++k) b.actions.push_back(0.5f * n(g));
    b.log_probs.push_back(-2.f + 0.3f * n(g));
    b.advantages.push_back(3.f * float(r) + (1.f + float(r)) * n(g));
    b.returns.push_back(n(g));
  }
  return b;
}

void append(Batch& to, const Batch& b) {
  for (auto [t, f] : {std::pair{&to.obs, &b.obs},
                      {&to.actions, &b.actions},
                      {&to.log_probs, &b.log_probs},
                      {&to.advantages, &b.advantages},
                      {&to.returns, &b.returns}})
    t->insert(t->end(), f->begin(), f->end());
}

std::vector<Tensor> inputs(const Batch& b) {
  const int64_t m = int64_t(b.returns.size());
  return {from_blob(b.obs.data(), {m, 8}, kFloat32), from_blob(b.actions.data(), {m, 2}, kFloat32),
          from_blob(b.log_probs.data(), {m}, kFloat32),
          from_blob(b.advantages.data(), {m}, kFloat32),
          from_blob(b.returns.data(), {m}, kFloat32)};
}

PolicyOptions small_policy() {
  PolicyOptions p;
  p.hidden = 16;
  p.layers = 1;
  return p;
}

// Three steps (jit: a plain call, the capture, a replay) of a data-parallel learner on this rank's
// rows against a one-process learner on every rank's rows: the same metrics (the ranks' means)
// and parameters, within float32 summation-order tolerance; the replicas bit-identical.
void check_steps_match_one_process(bool jit) {
  const int ranks = dist::world_size(), rank = dist::rank();
  const int64_t m = 32;
  PpoUpdateOptions o;
  o.minibatch = m;
  o.jit = jit;
  o.data_parallel = true;
  PpoUpdateOptions one = o;
  one.data_parallel = false;
  one.minibatch = m * ranks;
  manual_seed(7);
  const ActorCritic dp_policy(small_policy());
  PpoLearner dp(dp_policy, o);
  manual_seed(7);
  const ActorCritic one_policy(small_policy());
  PpoLearner ref(one_policy, one);
  const char* names[] = {"loss",      "policy_loss",   "value_loss",      "entropy",
                         "approx_kl", "clip_fraction", "actor_grad_norm", "critic_grad_norm"};
  for (int step = 0; step < 3; ++step) {
    Batch all;
    std::vector<Batch> per_rank;
    for (int r = 0; r < ranks; ++r) {
      per_rank.push_back(make_batch(r, step, m));
      append(all, per_rank.back());
    }
    const std::vector<float> before = dp.optimizer().params()[0].to_vector<float>();
    const int64_t compiled0 = runtime_stats_snapshot().kernels_compiled;
    const std::vector<Tensor> got = dp.step_fn()(inputs(per_rank[size_t(rank)]));
    ASSERT_EQ(got.size(), 8u);
    std::vector<double> got_values;
    for (const Tensor& t : got) got_values.push_back(t.item<double>());
    // A replay and the reads of its metrics compile nothing (a metric built as a lazy constant
    // compiled a kernel for every new value: 0.7 s a step on a cold kernel cache).
    if (jit && step == 2) {
      EXPECT_EQ(runtime_stats_snapshot().kernels_compiled, compiled0) << "on rank " << rank;
    }
    const std::vector<Tensor> want = ref.step_fn()(inputs(all));
    for (size_t k = 0; k < 8; ++k) {
      const double w = want[k].item<double>();
      EXPECT_NEAR(got_values[k], w, 1e-6 + 1e-4 * std::abs(w))
          << names[k] << " at step " << step << " on rank " << rank;
    }
    const auto& pd = dp.optimizer().params();
    const auto& pr = ref.optimizer().params();
    for (size_t i = 0; i < pd.size(); ++i) {
      const std::vector<float> a = pd[i].to_vector<float>(), b = pr[i].to_vector<float>();
      for (size_t j = 0; j < a.size(); ++j)
        ASSERT_NEAR(a[j], b[j], 1e-6f)
            << "parameter " << i << " element " << j << " at step " << step << " on rank " << rank;
    }
    // The step moved the weights (by about lr = 1e-3), so the tolerance above is meaningful.
    EXPECT_NE(pd[0].to_vector<float>(), before);
    std::vector<Tensor> replica = pd;
    for (const auto& [name, t] : dp.optimizer().state()) replica.push_back(t);
    dist::check_replicas(replica,
                         "the parameters and Adam state after step " + std::to_string(step));
  }
}

TEST(DataParallel, StepsEqualOneProcessOnEveryRanksRowsJit) { check_steps_match_one_process(true); }
TEST(DataParallel, StepsEqualOneProcessOnEveryRanksRowsEager) {
  check_steps_match_one_process(false);
}

// The update's timings: one all_reduce per optimizer step.
TEST(DataParallel, UpdateCountsTheAllReduceTime) {
  PpoUpdateOptions o;
  o.minibatch = 16;
  o.passes = 2;
  o.data_parallel = true;
  manual_seed(3);
  PpoLearner learner(ActorCritic(small_policy()), o);
  RolloutBuffer buf(8, 4, 8, 2, 4);
  std::vector<float> obs(4 * 8, 0.1f * float(dist::rank() + 1));
  for (int64_t t = 0; t < 8; ++t) {
    std::copy(obs.begin(), obs.end(), buf.observations(t).begin());
    for (float& r : buf.rewards(t)) r = float(t % 3);
  }
  buf.set_bootstrap_observations(obs);
  const int64_t rows = buf.inference_rows();
  buf.set_policy_outputs(std::vector<float>(size_t(rows * 2), 0.f), std::vector<float>{-1.f, -1.f},
                         std::vector<float>(size_t(rows), 0.5f));
  buf.compute_advantages(0.99, 0.95);
  const UpdateStats st = learner.update(buf, 5);
  EXPECT_EQ(st.optimizer_steps, 4);  // 2 passes x 32 / 16
  EXPECT_GE(st.allreduce_seconds, 0);
  if (dist::world_size() > 1) {
    EXPECT_GT(st.allreduce_seconds, 0);
  }
  EXPECT_LE(st.allreduce_seconds, st.step_seconds);
  EXPECT_GE(st.advantage_moments_seconds, 0);
  EXPECT_TRUE(std::isfinite(st.loss));
}

}  // namespace

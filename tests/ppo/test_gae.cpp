// GAE (src/ppo/gae.cpp) and the rollout buffer's bootstrap bookkeeping, on trajectories computed by
// hand (the derivations are in the comments).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/error.h"
#include "ember/rl/gae.h"
#include "ember/rl/reward_scaler.h"
#include "ember/rl/rollout_buffer.h"

namespace {

using namespace ember::rl;

// T = 5 steps, N = 2 envs, gamma = 0.5, lambda = 0.5 (so gamma * lambda = 0.25).
// Env 0: r = 1..5, V(s_t) = 0.5, 1.0, 1.5, 2.0, 2.5; step 1 TERMINATES (its next value 99 must be
// ignored), step 3 is TRUNCATED with V(final observation) = 10 (not V(s_4) = 2.5), step 4's
// bootstrap value is 3.
//   t4: delta = 5 + 0.5*3  - 2.5 = 4.0                   A = 4.0
//   t3: delta = 4 + 0.5*10 - 2.0 = 7.0 (truncation: no carry)  A = 7.0
//   t2: delta = 3 + 0.5*2  - 1.5 = 2.5                   A = 2.5 + 0.25*7 = 4.25
//   t1: delta = 2 + 0      - 1.0 = 1.0 (termination)     A = 1.0
//   t0: delta = 1 + 0.5*1  - 0.5 = 1.0                   A = 1.0 + 0.25*1 = 1.25
//   returns = A + V = 1.75, 2.0, 5.75, 9.0, 6.5
// Env 1: r = 0, 0, 0, 0, 1, V = 0, no episode end, bootstrap 2:
//   A4 = 1 + 0.5*2 = 2; A3 = 0.25*2 = 0.5; A2 = 0.125; A1 = 0.03125; A0 = 0.0078125.
TEST(Gae, HandComputedTerminationAndTruncation) {
  const int64_t T = 5, N = 2;
  // [t, n] row-major.
  std::vector<float> rewards = {1, 0, 2, 0, 3, 0, 4, 0, 5, 1};
  std::vector<float> values = {0.5f, 0, 1.0f, 0, 1.5f, 0, 2.0f, 0, 2.5f, 0};
  std::vector<float> next_values = {1.0f, 0, 99.0f, 0, 2.0f, 0, 10.0f, 0, 3.0f, 2.0f};
  std::vector<uint8_t> term = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  std::vector<uint8_t> trunc = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
  std::vector<float> adv(T * N), ret(T * N);
  compute_gae(T, N, rewards, values, next_values, term, trunc, 0.5, 0.5, adv, ret);
  const std::vector<float> a0 = {1.25f, 1.0f, 4.25f, 7.0f, 4.0f};
  const std::vector<float> r0 = {1.75f, 2.0f, 5.75f, 9.0f, 6.5f};
  const std::vector<float> a1 = {0.0078125f, 0.03125f, 0.125f, 0.5f, 2.0f};
  for (int64_t t = 0; t < T; ++t) {
    EXPECT_FLOAT_EQ(adv[t * N], a0[t]) << "env 0, t " << t;
    EXPECT_FLOAT_EQ(ret[t * N], r0[t]) << "env 0, t " << t;
    EXPECT_FLOAT_EQ(adv[t * N + 1], a1[t]) << "env 1, t " << t;
    EXPECT_FLOAT_EQ(ret[t * N + 1], a1[t]) << "env 1, t " << t;
  }
}

// A step both terminated and truncated counts as a termination: no bootstrap.
TEST(Gae, TerminatedAndTruncatedOnTheSameStepDoesNotBootstrap) {
  std::vector<float> r = {1}, v = {0.25f}, nv = {100}, adv(1), ret(1);
  std::vector<uint8_t> term = {1}, trunc = {1};
  compute_gae(1, 1, r, v, nv, term, trunc, 0.99, 0.95, adv, ret);
  EXPECT_FLOAT_EQ(adv[0], 0.75f);
  EXPECT_FLOAT_EQ(ret[0], 1.0f);
}

// lambda = 1 gives the discounted Monte-Carlo return minus V; lambda = 0 the one-step TD error.
TEST(Gae, LambdaLimits) {
  std::vector<float> r = {1, 1, 1}, v = {0.5f, 0.5f, 0.5f}, nv = {0.5f, 0.5f, 0.5f};
  std::vector<uint8_t> z = {0, 0, 0};
  std::vector<float> adv(3), ret(3);
  compute_gae(3, 1, r, v, nv, z, z, 0.9, 1.0, adv, ret);
  EXPECT_NEAR(ret[0], 1 + 0.9 + 0.81 + 0.729 * 0.5, 1e-6);
  compute_gae(3, 1, r, v, nv, z, z, 0.9, 0.0, adv, ret);
  for (float a : adv) EXPECT_NEAR(a, 1 + 0.9 * 0.5 - 0.5, 1e-6);
}

TEST(Gae, RejectsBadSizesAndParameters) {
  std::vector<float> x(4), bad(3);
  std::vector<uint8_t> f(4);
  EXPECT_THROW(compute_gae(2, 2, bad, x, x, f, f, 0.9, 0.9, x, x), ember::ValueError);
  EXPECT_THROW(compute_gae(2, 2, x, x, x, f, f, 1.5, 0.9, x, x), ember::ValueError);
}

// The buffer maps V(s'_t): the next row's value, the bootstrap row after the last step, or the
// final observation's value for a truncation (rows after the bootstrap rows, in record order).
TEST(RolloutBuffer, NextValuesUseBootstrapAndTruncationRows) {
  const int64_t T = 3, N = 2, O = 1, A = 1;
  RolloutBuffer buf(T, N, O, A, /*truncation_capacity=*/1);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t n = 0; n < N; ++n) buf.observations(t)[n] = float(10 * t + n);
  }
  buf.truncated(1)[1] = 1;
  buf.add_truncation(1, 1, std::vector<float>{-7.0f});
  buf.terminated(2)[0] = 1;
  buf.truncated(2)[0] = 1;  // both: stored as a termination only (the collector does the same)
  buf.set_bootstrap_observations(std::vector<float>{30.0f, 31.0f});
  ASSERT_EQ(buf.inference_rows(), T * N + N + 1);
  const auto in = buf.inference_observations();
  EXPECT_EQ(in[T * N + 1], 31.0f);
  EXPECT_EQ(in[T * N + N], -7.0f);
  // Value of row i := i + 0.5; means 0, log_std 0.
  const auto rows = static_cast<size_t>(buf.inference_rows());
  std::vector<float> values(rows), means(rows * A, 0.0f), log_std(A, 0.0f);
  for (size_t i = 0; i < rows; ++i) values[i] = float(i) + 0.5f;
  buf.set_policy_outputs(means, log_std, values);
  const auto nv = buf.next_values();
  EXPECT_EQ(nv[0], 2.5f);  // t0 env0 -> row 2
  EXPECT_EQ(nv[1], 3.5f);  // t0 env1 -> row 3
  EXPECT_EQ(nv[3], 8.5f);  // t1 env1 truncated -> truncation row 8
  EXPECT_EQ(nv[4], 6.5f);  // t2 env0 -> bootstrap row 6 (ignored by GAE: terminated)
  EXPECT_EQ(nv[5], 7.5f);  // t2 env1 -> bootstrap row 7
  EXPECT_EQ(buf.values()[5], 5.5f);
  // A second truncation grows the capacity.
  buf.add_truncation(0, 0, std::vector<float>{-8.0f});
  EXPECT_GE(buf.inference_rows(), T * N + N + 2);
}

TEST(RolloutBuffer, GatherCopiesRows) {
  RolloutBuffer buf(2, 2, 2, 1, 0);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t n = 0; n < 2; ++n) {
      buf.observations(t)[2 * n] = float(t);
      buf.observations(t)[2 * n + 1] = float(n);
      buf.actions(t)[n] = float(10 * t + n);
    }
  MiniBatch mb;
  const std::vector<int64_t> idx = {3, 0};
  buf.gather(idx, mb);
  ASSERT_EQ(mb.size, 2);
  EXPECT_EQ(mb.observations, (std::vector<float>{1, 1, 0, 0}));
  EXPECT_EQ(mb.actions, (std::vector<float>{11, 0}));
  const std::vector<int64_t> bad = {4};
  EXPECT_THROW(buf.gather(bad, mb), ember::ValueError);
}

// The phases run in order: policy outputs after the bootstrap observations, advantages after the
// policy outputs; out of order, an ember::Error that names the call to make first.
TEST(RolloutBuffer, PhasesOutOfOrderAreErrors) {
  RolloutBuffer buf(1, 1, 2, 1, 0);
  const std::vector<float> means = {0, 0}, log_std = {0}, values = {0, 0};  // 2 rows: T N + N
  auto expect_error = [](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one naming " << needle;
    } catch (const ember::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([&] { buf.set_policy_outputs(means, log_std, values); },
               "set_bootstrap_observations() must come first");
  expect_error([&] { buf.compute_advantages(0.99, 0.95); }, "set_policy_outputs() must come first");
  buf.set_bootstrap_observations(values);  // N = 1 row of 2 observations
  buf.set_policy_outputs(means, log_std, values);
  buf.compute_advantages(0.99, 0.95);
  EXPECT_EQ(buf.advantages().size(), 1u);
}

TEST(ExplainedVariance, PerfectAndMeanPredictions) {
  std::vector<float> ret = {1, 2, 3, 4};
  EXPECT_NEAR(explained_variance(ret, ret), 1.0, 1e-12);
  std::vector<float> mean(4, 2.5f);
  EXPECT_NEAR(explained_variance(mean, ret), 0.0, 1e-12);
}

// Reward scaling: R = gamma R + r per env, Chan-combined running variance starting at
// (mean 0, var 1, count 1e-4), reward / sqrt(var + 1e-8), R reset after an episode end.
TEST(RewardScaler, HandComputedTwoSteps) {
  RewardScaler s(2, 0.5);
  std::vector<float> out(2);
  // Step 1: R = (2, 4); batch mean 3, var 1; combined: count 2.0001,
  // mean = 3 * 2 / 2.0001, M2 = 1e-4 + 2 + 9 * 1e-4 * 2 / 2.0001.
  s.scale(std::vector<float>{2, 4}, std::vector<uint8_t>{0, 1}, out);
  const double c = 2.0001, mean1 = 6.0 / c, var1 = (1e-4 + 2.0 + 9 * 2e-4 / c) / c;
  EXPECT_NEAR(s.mean(), mean1, 1e-9);
  EXPECT_NEAR(s.var(), var1, 1e-9);
  EXPECT_NEAR(out[0], 2 / std::sqrt(var1 + 1e-8), 1e-5);
  EXPECT_NEAR(out[1], 4 / std::sqrt(var1 + 1e-8), 1e-5);
  // Step 2: env 1 was reset: R = (0.5*2 + 1, 0 + 1) = (2, 1).
  EXPECT_EQ(s.returns()[1], 0.0);
  s.scale(std::vector<float>{1, 1}, std::vector<uint8_t>{0, 0}, out);
  EXPECT_DOUBLE_EQ(s.returns()[0], 2.0);
  EXPECT_DOUBLE_EQ(s.returns()[1], 1.0);
}

}  // namespace

// The PPO training step at the study's minibatch (10,000 transitions) on the opencl device (PoCL
// in CI) against cpu: the same policy (same seed, initialised on the host), the same minibatches,
// two steps of rl::PpoLearner::step_fn (the jitted step `ember train` runs: a capture, then a
// replay), compared metric by metric and parameter by parameter with the codegen fuzz test's
// cpu-vs-interp tolerance (|a - b| <= 1e-4 |b| + 1e-5 max|b|; a parameter also within 1e-3 of
// Adam's step size lr a step, below). The host tensors run on opencl as
// EMBER_DEVICE=opencl runs them (Context::device). Skipped, with the reason, where the device is
// unavailable. Its time on PoCL: `EMBER_DEVICE=opencl build/release/bench/study_ember_step
// --batch 10000` beside EMBER_DEVICE=cpu (bench/study/ember_step.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_update.h"

namespace {

using namespace ember;

constexpr int64_t kBatch = 10000;

// Minibatch `step`: observations, actions, old log-probs, advantages and returns of varied,
// deterministic values.
std::vector<Tensor> minibatch(int step) {
  const size_t n = static_cast<size_t>(kBatch);
  std::vector<float> obs(n * 8), act(n * 2), logp(n), adv(n), ret(n);
  for (size_t i = 0; i < obs.size(); i++) obs[i] = float(std::sin(0.7 * double(i) + step));
  for (size_t i = 0; i < act.size(); i++) act[i] = float(0.5 * std::cos(1.3 * double(i) + step));
  for (size_t i = 0; i < logp.size(); i++) {
    logp[i] = float(-2.0 + 0.3 * std::sin(0.11 * double(i)));
    adv[i] = float(std::cos(0.05 * double(i) + step));
    ret[i] = float(3.0 * std::sin(0.02 * double(i)) + 1.0);
  }
  return {from_vector(obs).reshape({kBatch, 8}), from_vector(act).reshape({kBatch, 2}),
          from_vector(logp), from_vector(adv), from_vector(ret)};
}

struct After {
  std::vector<std::vector<double>> metrics;  // per step
  std::vector<std::vector<float>> params;    // after both steps
};

After two_steps(const char* device) {
  DeviceGuard g(device);
  manual_seed(17);
  rl::ActorCritic policy{rl::PolicyOptions{}};
  rl::PpoLearner learner(policy, rl::PpoUpdateOptions{});
  After out;
  for (int s = 0; s < 2; s++) {
    std::vector<double> m;
    for (const Tensor& t : learner.step_fn()(minibatch(s))) m.push_back(t.item<double>());
    out.metrics.push_back(m);
  }
  for (const auto& group : {policy->actor_parameters(), policy->critic_parameters()})
    for (const Tensor& p : group) out.params.push_back(p.to_vector<float>());
  return out;
}

bool close(double got, double want, double scale) {
  return std::isfinite(got) && std::fabs(got - want) <= 1e-4 * std::fabs(want) + 1e-5 * scale;
}

TEST(PpoStepOpenCL, MatchesCpuAtTheStudyBatch) {
  try {
    Device d("opencl");
  } catch (const ValueError& e) {
    GTEST_SKIP() << e.what();
  }
  const After cpu = two_steps("cpu");
  const After got = two_steps("opencl");
  const char* names[] = {"loss",      "policy_loss",   "value_loss",      "entropy",
                         "approx_kl", "clip_fraction", "actor_grad_norm", "critic_grad_norm"};
  ASSERT_EQ(got.metrics.size(), cpu.metrics.size());
  for (size_t s = 0; s < cpu.metrics.size(); s++) {
    ASSERT_EQ(got.metrics[s].size(), 8u);
    ASSERT_EQ(cpu.metrics[s].size(), 8u);
    for (size_t i = 0; i < 8; i++) {
      const double want = cpu.metrics[s][i];
      // clip_fraction counts transitions: a ratio within rounding of the clip range's edge may
      // fall on either side, so it may differ by one transition in 10,000.
      const double slack = i == 5 ? 1.0 / double(kBatch) : 0.0;
      EXPECT_TRUE(close(got.metrics[s][i], want, std::fabs(want)) ||
                  std::fabs(got.metrics[s][i] - want) <= slack)
          << "step " << s << " " << names[i] << ": opencl " << got.metrics[s][i] << " vs cpu "
          << want;
    }
  }
  ASSERT_EQ(got.params.size(), cpu.params.size());
  for (size_t p = 0; p < cpu.params.size(); p++) {
    ASSERT_EQ(got.params[p].size(), cpu.params[p].size());
    double scale = 0;
    for (float v : cpu.params[p]) scale = std::max(scale, double(std::fabs(v)));
    int bad = 0;
    // Adam moves a parameter by about lr a step whatever its gradient's size (m / sqrt(v)), so
    // where a gradient is small because its rows cancel (normalised advantages have mean zero)
    // the float32 rounding of its sum over 10,000 rows shows in the step. The cpu needs the same
    // slack against the interpreter: on these two steps, beyond the fuzz tolerance, cpu against
    // interp 3.6e-4 lr and opencl against cpu 3.7e-4 lr (opencl against interp 8.2e-4 lr), all
    // at the same element (parameter 8, element 106): summation order, not a device's defect. A
    // wrong kernel moves a parameter by the order of lr; the slack is 1e-3 lr a step. (The
    // metrics, the gradient norms among them, hold the fuzz tolerance above.)
    const double step_slack = 1e-3 * rl::PpoUpdateOptions{}.lr * double(cpu.metrics.size());
    for (size_t i = 0; i < cpu.params[p].size() && bad < 3; i++)
      if (!close(got.params[p][i], cpu.params[p][i], scale) &&
          !(std::fabs(got.params[p][i] - cpu.params[p][i]) <= step_slack)) {
        ADD_FAILURE() << "parameter " << p << " element " << i << ": opencl " << got.params[p][i]
                      << " vs cpu " << cpu.params[p][i];
        bad++;
      }
  }
  // The step moved the parameters (the comparison is not of two initial states).
  manual_seed(17);
  rl::ActorCritic fresh{rl::PolicyOptions{}};
  EXPECT_NE(fresh->actor_parameters()[0].to_vector<float>(), cpu.params[0]);
}

}  // namespace

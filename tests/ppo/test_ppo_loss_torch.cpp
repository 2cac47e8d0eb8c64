// The libtorch reference trainer of the study (bench/study/torch_policy.h) normalises advantages by
// ember's rule (include/ember/rl/ppo_loss.h): on equal advantages both give A_hat = 0, and on
// other data the same policy loss, for float32 values of every magnitude and several minibatch
// sizes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>
#include <vector>

#include "../../bench/study/torch_policy.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/ppo_loss.h"

namespace {

// ember's policy loss for ratios r: one-dim actions 0, log_std 0, means mu_i, old log-probs
// log N(0; mu_i, 1) - log r_i.
double ember_policy_loss(const std::vector<float>& adv, const std::vector<double>& r) {
  using namespace ember;
  const int64_t m = static_cast<int64_t>(adv.size());
  std::vector<float> old(adv.size());
  for (size_t i = 0; i < adv.size(); i++)
    old[i] = float(-0.5 * 0.25 - rl::kHalfLog2Pi - std::log(r[i]));
  const Tensor means = full({m, 1}, 0.5), zero = zeros({m});
  return rl::ppo_loss(means, zeros({1}), zero, zeros({m, 1}), from_vector<float>(old),
                      from_vector<float>(adv), zero, rl::PpoLossOptions{})
      .policy_loss.item<float>();
}

// The study's loss on the same ratios (eq. 7 negated, clip 0.2, as TorchActorCritic::step).
double torch_policy_loss(const std::vector<float>& adv, const std::vector<double>& r) {
  torch::Tensor a = torch::tensor(adv), ratio = torch::tensor(r).to(torch::kFloat);
  torch::Tensor ah = ember::study::normalize_advantages(a);
  return -torch::min(ratio * ah, ratio.clamp(0.8, 1.2) * ah).mean().item<double>();
}

TEST(PpoLossTorchReference, NormalisesAdvantagesByEmbersRule) {
  for (int64_t m : {2, 7, 64, 1000, 4096}) {
    std::mt19937 g(static_cast<uint32_t>(m));
    std::uniform_real_distribution<double> u(-1, 1);
    std::normal_distribution<double> n(0, 1);
    std::vector<double> r(static_cast<size_t>(m));
    for (double& x : r) x = 1 + 0.4 * u(g);
    for (float value : {0.1f, -1.0f / 3.0f, 7.7f, 123456.7f, 0.0f}) {
      SCOPED_TRACE("M = " + std::to_string(m) + ", value " + std::to_string(value));
      const std::vector<float> equal(static_cast<size_t>(m), value);
      EXPECT_EQ(torch::count_nonzero(ember::study::normalize_advantages(torch::tensor(equal)))
                    .item<int64_t>(),
                0);
      EXPECT_EQ(torch_policy_loss(equal, r), 0.0);
      EXPECT_EQ(ember_policy_loss(equal, r), 0.0);
      for (double spread : {1.0, 1e-3, 1e-6}) {
        std::vector<float> adv(static_cast<size_t>(m));
        for (size_t i = 0; i < adv.size(); i++)
          adv[i] =
              float(value + (value == 0 ? 1.0 : std::abs(value)) * spread * (i == 0 ? 1.0 : n(g)));
        const double want = torch_policy_loss(adv, r), got = ember_policy_loss(adv, r);
        // Rounding of A - mean(A) relative to the spread, beside the float32 loss's own.
        EXPECT_NEAR(got, want, 1e-5 + 1e-3 * std::abs(want) + 1e-6 / spread) << spread;
      }
    }
  }
}

}  // namespace

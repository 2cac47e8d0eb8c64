// The diagonal Gaussian's log-prob and entropy (src/ppo/gaussian.cpp) and the PPO loss
// (src/ppo/ppo_loss.cpp) against values computed by hand; derivations in the comments
// (c = 0.5 log(2 pi) = 0.918938533).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ember/autograd.h"
#include "ember/context.h"
#include "ember/rl/gaussian.h"
#include "ember/rl/ppo_loss.h"

namespace {

using namespace ember;
using namespace ember::rl;

// a = (0.5, -1), mu = (0, 0.5), log_std = (-1, 0.5):
//   z = (0.5 e, -1.5 e^-0.5) = (1.359140914, -0.909795989)
//   log p = -0.5 (1.847264 + 0.827729) - (-1 + 0.5) - 2c = -2.675373450
//   H = 2 (0.5 + c) + (-1 + 0.5) = 2.337877066
TEST(Gaussian, LogProbAndEntropyHandComputed) {
  const Tensor a = from_vector<float>({0.5f, -1.0f}, IntList{1, 2});
  const Tensor mu = from_vector<float>({0.0f, 0.5f}, IntList{1, 2});
  const Tensor ls = from_vector<float>({-1.0f, 0.5f});
  EXPECT_NEAR(gaussian_log_prob(a, mu, ls).item<float>(), -2.675373450, 1e-5);
  EXPECT_NEAR(gaussian_entropy(ls).item<float>(), 2.337877066, 1e-5);
  const std::vector<float> av = {0.5f, -1.0f}, mv = {0.0f, 0.5f}, lv = {-1.0f, 0.5f};
  EXPECT_NEAR(gaussian_log_prob(av, mv, lv), -2.675373450, 1e-9);
  EXPECT_EQ(gaussian_log_prob(a, mu, ls).sizes(), (Shape{1}));
  EXPECT_THROW(gaussian_log_prob(a, mu.reshape({2, 1}), ls), ShapeError);
}

// The log-prob's gradients: d/dmu = (a - mu) / sigma^2, d/dlog_std = z^2 - 1.
TEST(Gaussian, LogProbGradients) {
  Tensor mu = from_vector<float>({0.0f, 0.5f}, IntList{1, 2});
  Tensor ls = from_vector<float>({-1.0f, 0.5f});
  const Tensor a = from_vector<float>({0.5f, -1.0f}, IntList{1, 2});
  const auto g = autograd::grad({gaussian_log_prob(a, mu, ls).sum()}, {mu, ls});
  const auto gm = g[0].to_vector<float>(), gl = g[1].to_vector<float>();
  EXPECT_NEAR(gm[0], 0.5 * std::exp(2.0), 1e-4);
  EXPECT_NEAR(gm[1], -1.5 * std::exp(-1.0), 1e-5);
  EXPECT_NEAR(gl[0], 1.359140914 * 1.359140914 - 1, 1e-4);
  EXPECT_NEAR(gl[1], 0.909795989 * 0.909795989 - 1, 1e-5);
}

TEST(Gaussian, SamplerMomentsAndDeterminism) {
  GaussianSampler s(7), s2(7);
  const int n = 200000;
  std::vector<float> means(2 * n), ls = {-1.0f, 0.5f}, out(2 * n), out2(2 * n);
  for (int i = 0; i < n; ++i) means[2 * i] = 1.0f, means[2 * i + 1] = -2.0f;
  s.sample(means, ls, out);
  s2.sample(means, ls, out2);
  EXPECT_EQ(out, out2);
  double m0 = 0, m1 = 0, v0 = 0, v1 = 0;
  for (int i = 0; i < n; ++i) m0 += out[2 * i], m1 += out[2 * i + 1];
  m0 /= n, m1 /= n;
  for (int i = 0; i < n; ++i)
    v0 += (out[2 * i] - m0) * (out[2 * i] - m0),
        v1 += (out[2 * i + 1] - m1) * (out[2 * i + 1] - m1);
  v0 /= n, v1 /= n;
  EXPECT_NEAR(m0, 1.0, 0.01);
  EXPECT_NEAR(m1, -2.0, 0.02);
  EXPECT_NEAR(v0, std::exp(-2.0), 0.005);
  EXPECT_NEAR(v1, std::exp(1.0), 0.05);
}

// Four samples, one action dim, sigma = 1, means 0, actions a = (0.5, -0.25, 1.0, 0.5); old
// log-probs chosen so that the ratios are r = (1.5, 0.5, 1.1, 1.0).
// Advantages (1, -1, 2, 0): mean 0.5, unbiased std sqrt(5/3) = 1.290994449, so
//   A_hat = (0.387298335, -1.161894995, 1.161894995, -0.387298335).
// Surrogates r A_hat = (0.580947502, -0.580947502, 1.278084494, -0.387298335);
// clipped clip(r, 0.8, 1.2) A_hat = (0.464758002, -0.929515996, 1.278084494, -0.387298335);
// min = (0.464758002, -0.929515996, 1.278084494, -0.387298335), mean 0.106507041
//   -> policy_loss = -0.106507041.
// Values (1, 2, -1, 0.5), returns (0, 4, -1, 1.5): 0.5 * mean(1, 4, 0, 1) = 0.75.
// Entropy 0.5 + c = 1.418938533. With c1 = 0.5, c2 = 0.01:
//   loss = -0.106507041 + 0.375 - 0.014189385 = 0.254303573.
// approx_kl = mean(r - 1 - log r) = 0.073092973; clip_fraction = mean(|r - 1| > 0.2) = 0.5.
TEST(PpoLoss, HandComputedTerms) {
  const std::vector<float> act = {0.5f, -0.25f, 1.0f, 0.5f};
  const std::vector<double> ratio = {1.5, 0.5, 1.1, 1.0};
  std::vector<float> old(4);
  const double c = kHalfLog2Pi;
  for (int i = 0; i < 4; ++i) old[i] = float(-0.5 * act[i] * act[i] - c - std::log(ratio[i]));
  Tensor means = zeros({4, 1}).clone();
  means.realize();
  Tensor log_std = zeros({1});
  Tensor values = from_vector<float>({1.0f, 2.0f, -1.0f, 0.5f});
  const Tensor actions = from_vector<float>(act, IntList{4, 1});
  const Tensor old_lp = from_vector<float>(old);
  const Tensor adv = from_vector<float>({1.0f, -1.0f, 2.0f, 0.0f});
  const Tensor ret = from_vector<float>({0.0f, 4.0f, -1.0f, 1.5f});
  PpoLossOptions o;
  o.entropy_coef = 0.01;
  const PpoLossTerms t = ppo_loss(means, log_std, values, actions, old_lp, adv, ret, o);
  EXPECT_NEAR(t.policy_loss.item<float>(), -0.106507041, 1e-5);
  EXPECT_NEAR(t.value_loss.item<float>(), 0.75, 1e-6);
  EXPECT_NEAR(t.entropy.item<float>(), 1.418938533, 1e-6);
  EXPECT_NEAR(t.loss.item<float>(), 0.254303573, 1e-5);
  EXPECT_NEAR(t.approx_kl.item<float>(), 0.073092973, 1e-5);
  EXPECT_NEAR(t.clip_fraction.item<float>(), 0.5, 1e-7);
  for (const Tensor* x :
       {&t.loss, &t.policy_loss, &t.value_loss, &t.entropy, &t.approx_kl, &t.clip_fraction})
    EXPECT_EQ(x->dim(), 0);

  // Eq. 7's gradient: rows whose min picks the CLIPPED surrogate (0: r = 1.5 > 1.2 with A > 0;
  // 1: r = 0.5 < 0.8 with A < 0) get none; the others get -(1/M) A_hat r (a - mu) / sigma^2:
  //   row 2: -(1/4) 1.161894995 * 1.1 * 1.0 = -0.319521124; row 3: -(1/4)(-0.387298335) 0.5
  //   = 0.048412292.
  const Tensor pl = ppo_loss(means, log_std, values, actions, old_lp, adv, ret, o).policy_loss;
  const auto g = autograd::grad({pl}, {means})[0].to_vector<float>();
  EXPECT_NEAR(g[0], 0.0, 1e-7);
  EXPECT_NEAR(g[1], 0.0, 1e-7);
  EXPECT_NEAR(g[2], -0.319521124, 1e-5);
  EXPECT_NEAR(g[3], 0.048412292, 1e-5);
}

TEST(PpoLoss, WithoutAdvantageNormalisation) {
  // One sample, r = 1, A = 3: policy_loss = -3; no clipping.
  const Tensor z = zeros({1, 1});
  PpoLossOptions o;
  o.normalize_advantages = false;
  const float lp = float(-kHalfLog2Pi);
  const PpoLossTerms t =
      ppo_loss(z, zeros({1}), zeros({1}), z, full({1}, lp), full({1}, 3.0), zeros({1}), o);
  EXPECT_NEAR(t.policy_loss.item<float>(), -3.0, 1e-5);
  EXPECT_NEAR(t.clip_fraction.item<float>(), 0.0, 1e-7);
  EXPECT_NEAR(t.approx_kl.item<float>(), 0.0, 1e-6);
}

// ---- advantage normalisation (ppo_loss.h): equal advantages, ordinary data, the floor ---------

// A minibatch of M one-dim actions with ratios r: actions 0, log_std 0, means mu_i (the leaf the
// gradient is taken for), old_log_prob_i = log N(0; mu_i, 1) - log r_i.
struct Batch {
  Tensor means, log_std, actions, old_log_probs, values, returns;
};
Batch batch_with_ratios(const std::vector<double>& mu, const std::vector<double>& r) {
  const int64_t m = static_cast<int64_t>(mu.size());
  std::vector<float> mv(mu.begin(), mu.end()), old(mu.size());
  for (size_t i = 0; i < mu.size(); i++)
    old[i] = float(-0.5 * mu[i] * mu[i] - kHalfLog2Pi - std::log(r[i]));
  Batch b;
  b.means = from_vector<float>(mv, IntList{m, 1});
  b.means.set_requires_grad(true);
  b.log_std = zeros({1});
  b.actions = zeros({m, 1});
  b.old_log_probs = from_vector<float>(old);
  b.values = zeros({m});
  b.returns = zeros({m});
  return b;
}

// -mean(min(r A_hat, clip(r, 1 - eps, 1 + eps) A_hat)) in double, with A_hat the documented
// formula.
double host_policy_loss(const std::vector<double>& r, const std::vector<float>& adv, double clip) {
  const size_t n = adv.size();
  double mean = 0, var = 0;
  for (float a : adv) mean += a;
  mean /= double(n);
  for (float a : adv) var += (a - mean) * (a - mean);
  const double sd = std::sqrt(var / double(n - 1));
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    const double ah = (adv[i] - mean) / (sd + 1e-8);
    sum += std::min(r[i] * ah, std::clamp(r[i], 1 - clip, 1 + clip) * ah);
  }
  return -sum / double(n);
}

// Equal advantages give A_hat = 0: a zero policy loss and a zero gradient, whatever the value and
// the minibatch size, although float32 rounds their mean (seven copies of 0.1 gave a policy loss
// of 0.41 and gradients up to 0.56 before the floor). On both devices.
TEST(PpoLoss, EqualAdvantagesGiveZeroPolicyLossAndGradient) {
  int rounded = 0;  // cases whose float32 mean differs from the value (the ones that failed)
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    Context::get().device = device;
    for (float value : {0.1f, -0.1f, 1.0f / 3.0f, 1e-3f, 7.7f, 123456.7f, -2.5e4f, 0.0f, 3e-30f}) {
      for (int64_t m : {2, 3, 7, 64, 1000, 4096}) {
        SCOPED_TRACE("value " + std::to_string(value) + ", M = " + std::to_string(m));
        std::mt19937 g(static_cast<uint32_t>(m));
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> mu(static_cast<size_t>(m)), r(static_cast<size_t>(m));
        for (size_t i = 0; i < mu.size(); i++) {
          mu[i] = u(g);
          r[i] = 1 + 0.4 * u(g);  // both sides of the clip range [0.8, 1.2]
        }
        const Batch b = batch_with_ratios(mu, r);
        const Tensor adv = full({m}, value);
        rounded += adv.mean().item<float>() != value;
        const PpoLossTerms t = ppo_loss(b.means, b.log_std, b.values, b.actions, b.old_log_probs,
                                        adv, b.returns, PpoLossOptions{});
        EXPECT_EQ(t.policy_loss.item<float>(), 0.0f);
        for (float x : autograd::grad({t.policy_loss}, {b.means})[0].to_vector<float>())
          ASSERT_EQ(x, 0.0f);
      }
    }
  }
  Context::get().device = "cpu";
  EXPECT_GT(rounded, 0) << "no case had a rounded mean: the sweep does not test the rule";
}

// Advantages with a spread above the floor are normalised exactly as the formula says (the rule
// leaves ordinary data, and so training, unchanged), down to a spread of 1e-3 of max|A|; a spread
// of 1e-5 of max|A|, within float32 rounding of equal values (an ulp of 1 is 1.2e-7), counts
// as none.
TEST(PpoLoss, AdvantagesAboveTheSpreadFloorAreNormalised) {
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    Context::get().device = device;
    for (int64_t m : {2, 7, 64, 1000}) {
      for (double spread : {1.0, 1e-2, 1e-3, 1e-5}) {
        SCOPED_TRACE("M = " + std::to_string(m) + ", spread " + std::to_string(spread));
        std::mt19937 g(static_cast<uint32_t>(m * 7 + 1));
        std::normal_distribution<double> n(0, 1);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<double> mu(static_cast<size_t>(m)), r(static_cast<size_t>(m));
        std::vector<float> adv(static_cast<size_t>(m));
        for (size_t i = 0; i < mu.size(); i++) {
          mu[i] = u(g);
          r[i] = 1 + 0.4 * u(g);
          adv[i] = float(2.0 + spread * (i == 0 ? 1.0 : n(g)));  // never all equal
        }
        const Batch b = batch_with_ratios(mu, r);
        const PpoLossTerms t = ppo_loss(b.means, b.log_std, b.values, b.actions, b.old_log_probs,
                                        from_vector<float>(adv), b.returns, PpoLossOptions{});
        const double got = t.policy_loss.item<float>();
        if (spread >= 1e-3) {
          // Rounding of A - mean(A) relative to the spread: u max|A| / spread.
          const double want = host_policy_loss(r, adv, 0.2);
          EXPECT_NEAR(got, want, 1e-5 + 1e-3 * std::abs(want) + 3e-7 * 2.0 / spread);
          EXPECT_NE(got, 0.0);
        } else {
          EXPECT_EQ(got, 0.0);
        }
      }
    }
  }
  Context::get().device = "cpu";
}

TEST(PpoLoss, RejectsInconsistentShapes) {
  EXPECT_THROW(ppo_loss(zeros({4, 2}), zeros({2}), zeros({3}), zeros({4, 2}), zeros({4}),
                        zeros({4}), zeros({4}), {}),
               ShapeError);
}

}  // namespace

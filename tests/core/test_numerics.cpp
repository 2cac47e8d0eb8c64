// Numerics users can trust (issue 13): the five inputs with their right values, and
// float32 sums of 1e7 - 1e8 terms within tensor.h's stated bound of the float64 sum, on the `cpu`
// device (generated C) and, where it runs in seconds, on `interp`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "ember/ember.h"
#include "ember/rl/ppo_loss.h"
#include "ember/rl/train_config.h"

using namespace ember;

namespace {

// tensor.h's first-order bound on a cpu sum of n terms (U = 16 accumulators at most).
double cpu_sum_bound(double n, double sum_abs, double u) {
  return (256 + std::ceil(std::log2(n)) + 16) * u * sum_abs;
}

// ---- 1. float32 sums
// -------------------------------------------------------------------------------
TEST(Numerics, OnesSumOf2To25IsExactOnCpuAndInterp) {
  for (const char* dev : {"cpu", "interp"}) {
    SCOPED_TRACE(dev);
    DeviceGuard g(dev);
    EXPECT_EQ(ones({1 << 25}).sum().item<float>(), 33554432.0f);
  }
}

TEST(Numerics, OnesSumsOverEveryReduceShapeAreExact) {
  // A long last axis (blocked), a short last axis under a long outer reduce axis (blocks of whole
  // rows), a column sum (upcast accumulators) and a mean.
  EXPECT_EQ(ones({3, 1 << 25}).sum({1}).to_vector<float>(), std::vector<float>(3, 33554432.0f));
  EXPECT_EQ(ones({1 << 24, 3}).sum().item<float>(), 50331648.0f);
  EXPECT_EQ(ones({1 << 25, 16}).sum({0}).to_vector<float>(), std::vector<float>(16, 33554432.0f));
  EXPECT_EQ(ones({1 << 25}).mean().item<float>(), 1.0f);
  EXPECT_EQ(full({100'000'000}, 1.0).sum().item<float>(), 1e8f);
}

// Uniform [0, 1) values generated inside the reduce kernel (no 400 MB input): the float32 sum
// against the float64 sum of the very same float32 values.
void check_large_sum(int64_t n, const char* dev) {
  DeviceGuard g(dev);
  manual_seed(7);
  Tensor x = rand({n});
  Tensor s32 = x.sum(), s64 = x.to(kFloat64).sum(), abs64 = x.to(kFloat64).abs().sum();
  realize({s32, s64, abs64});
  double a = s32.item<float>(), r = s64.item<double>();
  double bound = cpu_sum_bound(static_cast<double>(n), abs64.item<double>(), std::ldexp(1.0, -24));
  std::printf(
      "[ %s n=%lld ] float32 sum %.1f, float64 sum %.3f, |error| %.3g = %.3g of sum|x|; "
      "bound %.3g\n",
      dev, static_cast<long long>(n), a, r, std::abs(a - r), std::abs(a - r) / abs64.item<double>(),
      bound);
  EXPECT_LE(std::abs(a - r), bound);
  // The float32 result is within a few of its own ulps of the exact sum (well inside the bound).
  EXPECT_LE(std::abs(a - r), 64 * std::ldexp(1.0, std::ilogb(r) - 23));
}

TEST(Numerics, LargeFloat32SumsWithinBoundOfFloat64Sum) {
  for (int64_t n : {int64_t{10'000'000}, int64_t{33'333'333}, int64_t{100'000'000}})
    check_large_sum(n, "cpu");
}

TEST(Numerics, MeanAndVarOverALargeBatch) {
  // 2^24 + 4 values alternating 0.1f and 0.4f (as [n/2, 2]): against the float64 mean and
  // variance of the same float32 values (a running float32 sum drifts by percents here).
  const int64_t n = (1 << 24) + 4;
  Tensor x = tensor({0.1f, 0.4f}).expand({n / 2, 2});
  Tensor m = x.mean(), v = x.var();
  realize({m, v});
  const double lo = 0.1f, hi = 0.4f;
  const double k = static_cast<double>(n / 2), nd = static_cast<double>(n);  // count of hi
  const double mean = ((nd - k) * lo + k * hi) / nd;
  const double var =
      ((nd - k) * (lo - mean) * (lo - mean) + k * (hi - mean) * (hi - mean)) / (nd - 1);
  // tensor.h's sum bound, plus a few roundings of the elementwise terms and the final division.
  const double u = std::ldexp(1.0, -24);
  EXPECT_NEAR(m.item<float>(), mean, cpu_sum_bound(nd, nd * mean, u) / nd + 2 * u * mean);
  EXPECT_NEAR(v.item<float>(), var, cpu_sum_bound(nd, (nd - 1) * var, u) / (nd - 1) + 8 * u * var);
  std::printf("mean error %.3g, var error %.3g (relative)\n",
              std::abs(m.item<float>() - mean) / mean, std::abs(v.item<float>() - var) / var);
}

// Matrix products over a long k (the register-tiled kernels), in the forward layout and in the
// weight-gradient layout (a transposed operand): each float32 output against the float64 product
// of the same float32 values, within tensor.h's bound (256 + ceil(k / 256)) u sum_k |a b|. A
// running float32 sum along k misses by hundreds of ulps here; the blocked sum by a few dozen.
TEST(Numerics, LongKMatrixProductsWithinBoundOfFloat64) {
  const int64_t k = 1 << 20;
  manual_seed(11);
  Tensor a = rand({6, k}), b = rand({k, 16}), at = rand({k, 6});
  for (Tensor lhs : {a, at.t()}) {
    Tensor c32 = lhs.matmul(b), c64 = lhs.to(kFloat64).matmul(b.to(kFloat64));
    realize({c32, c64});
    auto got = c32.to_vector<float>();
    auto want = c64.to_vector<double>();
    const double u = std::ldexp(1.0, -24);
    double worst_ulps = 0;
    for (size_t i = 0; i < got.size(); i++) {
      // All terms are positive, so sum |a b| is the product itself.
      const double bound = (256 + std::ceil(k / 256.0)) * u * want[i];
      EXPECT_LE(std::abs(got[i] - want[i]), bound) << "output " << i;
      worst_ulps = std::max(worst_ulps,
                            std::abs(got[i] - want[i]) / std::ldexp(1.0, std::ilogb(want[i]) - 23));
    }
    std::printf("k = %lld: worst error %.1f ulps of the float64 product\n",
                static_cast<long long>(k), worst_ulps);
    EXPECT_LE(worst_ulps, 64);
  }
}

// ---- 2. cos
// ----------------------------------------------------------------------------------------
TEST(Numerics, CosOfMinus17Point3MatchesLibm) {
  for (const char* dev : {"cpu", "interp"}) {
    SCOPED_TRACE(dev);
    DeviceGuard g(dev);
    double v = from_vector<double>({-17.3}).cos().item<double>();
    // cos(-17.3) = 0.0212388081736460126547... (MPFR, 200 bits; the quoted digits are
    // not this value); the old sin(pi/2 - x) gave 0.021238808173644177, 524 ulp away.
    const double ulp = std::ldexp(1.0, std::ilogb(0.021238808173646013) - 52);
    EXPECT_NEAR(v, 0.021238808173646013, ulp);
    EXPECT_NEAR(v, std::cos(-17.3), ulp);
  }
}

// ---- 3. gradients at singular points
// ---------------------------------------------------------------
TEST(Numerics, StdGradientOfEqualValuesIsZero) {
  for (const char* dev : {"cpu", "interp"}) {
    SCOPED_TRACE(dev);
    DeviceGuard g(dev);
    Tensor x = tensor({2, 2, 2}).requires_grad_(true);
    x.std().backward();
    EXPECT_EQ(x.grad().to_vector<float>(), std::vector<float>({0, 0, 0}));
    Tensor y = tensor({2, 2, 2}).requires_grad_(true);
    ((y - y.mean()) / (y.std() + 1e-8)).sum().backward();
    EXPECT_EQ(y.grad().to_vector<float>(), std::vector<float>({0, 0, 0}));
  }
}

TEST(Numerics, PpoLossWithEqualAdvantagesHasFiniteGradients) {
  Tensor means = zeros({4, 2}).requires_grad_(true), log_std = zeros({2}).requires_grad_(true);
  Tensor values = zeros({4}).requires_grad_(true);
  rl::PpoLossOptions o;
  auto t =
      rl::ppo_loss(means, log_std, values, zeros({4, 2}), zeros({4}), full({4}, 3.0), ones({4}), o);
  t.loss.backward();
  for (const Tensor& g : {means.grad(), log_std.grad(), values.grad()})
    for (float v : g.to_vector<float>()) EXPECT_TRUE(std::isfinite(v));
  // A minibatch of one is left unnormalised (its std is undefined): finite too.
  auto t1 = rl::ppo_loss(zeros({1, 2}), zeros({2}), zeros({1}), zeros({1, 2}), zeros({1}),
                         full({1}, 3.0), ones({1}), o);
  EXPECT_TRUE(std::isfinite(t1.loss.item<float>()));
}

// ---- 4. indexes
// ------------------------------------------------------------------------------------
TEST(Numerics, GatherRejectsOutOfRangeIndexesNamingThem) {
  Tensor x = from_vector<float>({10, 20, 30}, IntList{1, 3});
  for (int64_t bad : {int64_t{3}, int64_t{-1}, int64_t{1'000'000}}) {
    SCOPED_TRACE(bad);
    try {
      x.gather(1, from_vector<int64_t>({bad}, IntList{1, 1})).to_vector<float>();
      ADD_FAILURE() << "no error";
    } catch (const IndexError& e) {
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad) + " is out of bounds"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(x.gather(1, from_vector<int64_t>({2, 0}, IntList{1, 2})).to_vector<float>(),
            std::vector<float>({30, 10}));
}

TEST(Numerics, GatherInsideAJitReplayGivesNaNForOutOfRange) {
  Tensor x = from_vector<float>({10, 20, 30}, IntList{1, 3});
  auto f =
      jit([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{x.gather(1, in[0])}; });
  auto call = [&](int64_t i) {
    return f({from_vector<int64_t>({i, 1}, IntList{1, 2})})[0].to_vector<float>();
  };
  EXPECT_EQ(call(2), std::vector<float>({30, 20}));  // runs normally
  EXPECT_EQ(call(0), std::vector<float>({10, 20}));  // captures
  EXPECT_EQ(call(1), std::vector<float>({20, 20}));  // replays
  auto bad = call(3);                                // replays an out-of-range index
  EXPECT_TRUE(std::isnan(bad[0]));
  EXPECT_EQ(bad[1], 20.0f);
  EXPECT_TRUE(std::isnan(call(-1)[0]));
  EXPECT_GE(f.replays(), 3);
}

// ---- 5. trainer configuration
// ----------------------------------------------------------------------
TEST(Numerics, TrainConfigRejectsSettingsThatCannotTrain) {
  auto rejects = [](const std::function<void(rl::TrainConfig&)>& set, const std::string& what) {
    rl::TrainConfig c;
    set(c);
    try {
      c.validate();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  rejects([](auto& c) { c.update.minibatch = 1; }, "a minibatch of 1 cannot normalise advantages");
  rejects([](auto& c) { c.update.minibatch = 0; }, "minibatch (0)");
  rejects([](auto& c) { c.update.minibatch = -4; }, "minibatch (-4)");
  rejects([](auto& c) { c.update.minibatch = 40'000; }, "minibatch (40000) must lie in [1, ");
  rejects([](auto& c) { c.update.minibatch = 3000; }, "must divide the transitions per epoch");
  rejects([](auto& c) { c.envs = 0; }, "envs must be >= 1");
  rejects([](auto& c) { c.steps_per_env = -1; }, "steps-per-env must be >= 1");
  rejects([](auto& c) { c.update.passes = 0; }, "passes must be >= 1");
  rejects([](auto& c) { c.update.lr = NAN; }, "lr must be finite");
  rejects([](auto& c) { c.update.adam_beta2 = 1.0; }, "adam-beta1 and adam-beta2");
  rejects([](auto& c) { c.update.loss.clip = 0; }, "clip must be");
  rejects([](auto& c) { c.policy.log_std_init = INFINITY; }, "log-std-init");
  rejects([](auto& c) { c.update.loss.value_coef = NAN; }, "value-coef");
  rejects([](auto& c) { c.policy.hidden = 0; }, "hidden and layers");
  rl::TrainConfig ok;
  ok.validate();
  ok.update.minibatch = 1;
  ok.update.loss.normalize_advantages = false;
  ok.validate();  // a minibatch of 1 trains without advantage normalisation
}

}  // namespace

// An MLP (8 -> 4x128 tanh -> 2) trained 20 steps with each optimizer on ember and on libtorch from
// identical weights and data: parameters must agree within 1e-4 after every step, and so must the
// norm returned by clip_grad_norm_.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "../../bench/ppo_like_step.h"
#include "ember/ember.h"

namespace {

constexpr int64_t kIn = 8, kOut = 2, kBatch = 64;  // kIn: the input of ppo_like::mlp

std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// The study's MLP (bench/ppo_like_step.h: 8 -> 4 x 128 tanh -> kOut) of each library.
struct EmberMlp {
  ember::nn::Sequential net = ppo_like::mlp(kOut);
};

torch::nn::Sequential torch_mlp() {
  return ppo_like::mlp<torch::nn::Sequential, torch::nn::Linear, torch::nn::Tanh>(kOut);
}

torch::Tensor to_torch(const ember::Tensor& t) {
  auto v = t.to_vector<float>();
  return torch::from_blob(v.data(), t.sizes(), torch::kFloat32).clone();
}

void copy_weights(EmberMlp& e, torch::nn::Sequential& t) {
  auto ep = e.net->parameters();
  auto tp = t->parameters();
  ASSERT_EQ(ep.size(), tp.size());
  torch::NoGradGuard g;
  for (size_t i = 0; i < ep.size(); i++) tp[i].copy_(to_torch(ep[i]));
}

void expect_close(EmberMlp& e, torch::nn::Sequential& t, int step, double tol) {
  auto ep = e.net->parameters();
  auto tp = t->parameters();
  for (size_t i = 0; i < ep.size(); i++) {
    auto a = ep[i].to_vector<float>();
    auto b = tp[i].contiguous();
    const float* bp = b.data_ptr<float>();
    double worst = 0;
    for (size_t k = 0; k < a.size(); k++)
      worst = std::max(worst, static_cast<double>(std::abs(a[k] - bp[k])));
    ASSERT_LE(worst, tol) << "parameter " << i << " after step " << step;
  }
}

enum class Opt { SGD, SGDMomentum, Nesterov, Adam, AdamW };

// Which parameters have no gradient at a step, in the sparse runs: the even ones until step 2
// (their first update is step 2's), and every third one at every fourth step. torch.optim skips a
// parameter without a gradient and keeps its state where it was; ember must do the same.
bool skipped(size_t param, int step) {
  return (step < 2 && param % 2 == 0) || (step % 4 == 3 && param % 3 == 1);
}

void run(Opt which, bool clip, bool sparse = false) {
  ember::manual_seed(7);
  EmberMlp em;
  auto tm = torch_mlp();
  copy_weights(em, tm);
  std::unique_ptr<ember::optim::Optimizer> eo;
  std::unique_ptr<torch::optim::Optimizer> to;
  auto ep = em.net->parameters();
  auto tp = tm->parameters();
  switch (which) {
    case Opt::SGD:
      eo = std::make_unique<ember::optim::SGD>(ep, ember::optim::SGDOptions(0.05));
      to = std::make_unique<torch::optim::SGD>(tp, torch::optim::SGDOptions(0.05));
      break;
    case Opt::SGDMomentum: {
      ember::optim::SGDOptions o(0.02);
      o.momentum = 0.9;
      o.weight_decay = 0.01;
      eo = std::make_unique<ember::optim::SGD>(ep, o);
      to = std::make_unique<torch::optim::SGD>(
          tp, torch::optim::SGDOptions(0.02).momentum(0.9).weight_decay(0.01));
      break;
    }
    case Opt::Nesterov: {
      ember::optim::SGDOptions o(0.02);
      o.momentum = 0.9;
      o.nesterov = true;
      eo = std::make_unique<ember::optim::SGD>(ep, o);
      to = std::make_unique<torch::optim::SGD>(
          tp, torch::optim::SGDOptions(0.02).momentum(0.9).nesterov(true));
      break;
    }
    case Opt::Adam: {
      ember::optim::AdamOptions o(1e-3);
      o.weight_decay = 0.01;
      eo = std::make_unique<ember::optim::Adam>(ep, o);
      to = std::make_unique<torch::optim::Adam>(tp,
                                                torch::optim::AdamOptions(1e-3).weight_decay(0.01));
      break;
    }
    case Opt::AdamW: {
      ember::optim::AdamOptions o(1e-3);
      o.weight_decay = 0.05;
      eo = std::make_unique<ember::optim::AdamW>(ep, o);
      to = std::make_unique<torch::optim::AdamW>(
          tp, torch::optim::AdamWOptions(1e-3).weight_decay(0.05));
      break;
    }
  }
  for (int step = 0; step < 20; step++) {
    auto xs = random_vec(kBatch * kIn, 100 + step);
    auto ys = random_vec(kBatch * kOut, 200 + step);
    auto ex = ember::from_vector(xs, ember::IntList{kBatch, kIn});
    auto ey = ember::from_vector(ys, ember::IntList{kBatch, kOut});
    auto tx = torch::from_blob(xs.data(), {kBatch, kIn}).clone();
    auto ty = torch::from_blob(ys.data(), {kBatch, kOut}).clone();

    eo->zero_grad();
    auto eloss = ember::nn::functional::mse_loss(em.net->forward(ex), ey);
    eloss.backward();
    to->zero_grad();
    auto tloss = torch::mse_loss(tm->forward(tx), ty);
    tloss.backward();
    ASSERT_NEAR(eloss.item<float>(), tloss.item<float>(), 1e-4) << "loss at step " << step;
    if (sparse)
      for (size_t i = 0; i < ep.size(); i++)
        if (skipped(i, step)) {
          ep[i].set_grad(ember::Tensor());
          tp[i].mutable_grad() = torch::Tensor();
        }
    if (clip) {
      double en = ember::nn::utils::clip_grad_norm_(ep, 0.5).item<double>();
      double tn = torch::nn::utils::clip_grad_norm_(tp, 0.5);
      ASSERT_NEAR(en, tn, 1e-4 * std::max(1.0, tn)) << "grad norm at step " << step;
    }
    eo->step();
    to->step();
    expect_close(em, tm, step, 1e-4);
  }
}

TEST(TrainParity, SGD) { run(Opt::SGD, false); }
TEST(TrainParity, SGDMomentumWeightDecay) { run(Opt::SGDMomentum, false); }
TEST(TrainParity, SGDNesterov) { run(Opt::Nesterov, false); }
TEST(TrainParity, Adam) { run(Opt::Adam, false); }
TEST(TrainParity, AdamW) { run(Opt::AdamW, false); }
TEST(TrainParity, AdamWithClipGradNorm) { run(Opt::Adam, true); }
// Per-parameter state: parameters that first get a gradient at step 2, and that miss some later.
TEST(TrainParity, SGDSkipsParametersWithoutGradient) { run(Opt::SGD, false, true); }
TEST(TrainParity, SGDMomentumPerParameterState) { run(Opt::SGDMomentum, false, true); }
TEST(TrainParity, SGDNesterovPerParameterState) { run(Opt::Nesterov, false, true); }
TEST(TrainParity, AdamPerParameterSteps) { run(Opt::Adam, false, true); }
TEST(TrainParity, AdamWPerParameterSteps) { run(Opt::AdamW, false, true); }
TEST(TrainParity, AdamPerParameterStepsWithClipGradNorm) { run(Opt::Adam, true, true); }

// The case by hand: p gets a gradient at steps 1 and 2, q only at step 2. q's first update
// is Adam's first (t = 1): it moves by lr, 1 -> 0.99 (the bias-corrected m / sqrt(v) is
// g / |g|), not by the t = 2 correction (0.992559). And q's state has not moved at step 1.
TEST(OptimizerState, AdamBiasCorrectionCountsEachParametersOwnSteps) {
  for (bool decoupled : {false, true}) {
    ember::Tensor p = ember::ones({1}), q = ember::ones({1});
    p.set_requires_grad(true);
    q.set_requires_grad(true);
    ember::optim::Adam opt({p, q}, ember::optim::AdamOptions(0.01), decoupled);
    p.set_grad(ember::full({1}, 0.5));
    opt.step();
    EXPECT_EQ(opt.steps().to_vector<float>(), (std::vector<float>{1, 0}));
    EXPECT_EQ(q.item<float>(), 1.0f);
    EXPECT_EQ(opt.state()[2].second.item<float>(), 0.0f);  // q's exp_avg
    p.set_grad(ember::full({1}, 0.5));
    q.set_grad(ember::full({1}, 0.5));
    opt.step();
    EXPECT_EQ(opt.steps().to_vector<float>(), (std::vector<float>{2, 1}));
    EXPECT_NEAR(q.item<float>(), 0.99, 1e-6);
    EXPECT_NEAR(p.item<float>(), 0.98, 1e-6);
  }
}

// SGD with momentum: q's buffer starts as q's own first gradient (at step 2), not as
// momentum * 0 + (1 - dampening) g, and a step without q's gradient leaves q and its buffer.
TEST(OptimizerState, SGDMomentumBufferStartsAtEachParametersFirstGradient) {
  ember::Tensor p = ember::ones({1}), q = ember::ones({1});
  p.set_requires_grad(true);
  q.set_requires_grad(true);
  ember::optim::SGDOptions o(0.1);
  o.momentum = 0.9;
  o.dampening = 0.5;
  ember::optim::SGD opt({p, q}, o);
  p.set_grad(ember::full({1}, 1.0));
  opt.step();  // p: buf = 1, p = 0.9
  p.set_grad(ember::full({1}, 1.0));
  q.set_grad(ember::full({1}, 2.0));
  opt.step();  // p: buf = 0.9 + 0.5 = 1.4, p = 0.76; q: buf = 2, q = 0.8
  EXPECT_NEAR(p.item<float>(), 0.76, 1e-6);
  EXPECT_NEAR(q.item<float>(), 0.8, 1e-6);
  q.set_grad(ember::Tensor());
  p.set_grad(ember::full({1}, 1.0));
  opt.step();  // q and its buffer stay
  EXPECT_NEAR(q.item<float>(), 0.8, 1e-6);
  EXPECT_NEAR(opt.state()[1].second.item<float>(), 2.0, 1e-6);
  EXPECT_EQ(opt.steps().to_vector<float>(), (std::vector<float>{3, 1}));
}

// ---- clip_grad_norm_: no overflow or underflow where the true norm is finite ------------------

// Gradients `values` of dtype t on one parameter per entry of `shapes`; returns the norm and the
// clipped gradients (flattened), computed on `device`.
std::pair<double, std::vector<double>> clip(const std::vector<std::vector<double>>& grads,
                                            const std::vector<ember::ScalarType>& dtypes,
                                            double max_norm, const char* device) {
  ember::Context::get().device = device;
  std::vector<ember::Tensor> ps;
  for (size_t i = 0; i < grads.size(); i++) {
    auto g = ember::from_vector(grads[i]).to(dtypes[i]);
    ember::Tensor p = ember::zeros_like(g);
    p.set_requires_grad(true);
    p.set_grad(g.contiguous());
    ps.push_back(p);
  }
  const ember::Tensor norm = ember::nn::utils::clip_grad_norm_(ps, max_norm);
  std::vector<double> out;
  for (auto& p : ps)
    for (double v : p.grad().to_vector<double>()) out.push_back(v);
  const double n = norm.item<double>();
  ember::Context::get().device = "cpu";
  return {n, out};
}

TEST(ClipGradNorm, NoOverflowOrUnderflowWhereTheNormIsFinite) {
  using ember::kFloat32, ember::kFloat64;
  struct Case {
    std::vector<std::vector<double>> grads;
    std::vector<ember::ScalarType> dtypes;
    double norm;
  };
  const double r2 = std::sqrt(2.0);
  const std::vector<Case> cases = {
      {{{1e25, 1e25}}, {kFloat64}, r2 * 1e25},  // the case: was inf, gradients zeroed
      {{{1e200, -1e200}, {1e200}}, {kFloat64, kFloat64}, std::sqrt(3.0) * 1e200},
      {{{3e-300, 4e-300}}, {kFloat64}, 5e-300},
      {{{1e20, 1e20}}, {kFloat32}, r2 * 1e20},
      {{{3e20}, {-4e20}}, {kFloat32, kFloat32}, 5e20},
      {{{1e-30, 1e-30}}, {kFloat32}, r2 * 1e-30},
      {{{3e-30, 4e-30}}, {kFloat32}, 5e-30},
      {{{3e20}, {4e200}}, {kFloat32, kFloat64}, 4e200},  // mixed: float64 accumulation, scaled
      {{{0.0, 0.0}, {0.0}}, {kFloat32, kFloat64}, 0.0},
      {{{0.3, -0.4}, {1.2}}, {kFloat32, kFloat32}, 1.3},
  };
  for (const char* device : {"cpu", "interp"}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(device) + ", norm " + std::to_string(c.norm));
      auto [norm, clipped] = clip(c.grads, c.dtypes, 1.0, device);
      EXPECT_NEAR(norm, c.norm, 1e-6 * c.norm);
      // Clipped to norm 1 (untouched when the norm is below 1).
      const double coef = c.norm > 1 ? 1.0 / (c.norm + 1e-6) : 1.0;
      size_t k = 0;
      for (size_t i = 0; i < c.grads.size(); i++)
        for (double g : c.grads[i]) {
          // float32 gradients are scaled in float32 (by the factor rounded to float32).
          const double want = c.dtypes[i] == kFloat32 ? double(float(g) * float(coef)) : g * coef;
          EXPECT_NEAR(clipped[k], want, 1e-6 * std::abs(want) + 1e-300) << k;
          k++;
        }
    }
    auto [nan_norm, nan_g] = clip({{1.0, NAN}}, {kFloat64}, 1.0, device);
    EXPECT_TRUE(std::isnan(nan_norm));
    auto [inf_norm, inf_g] = clip({{1.0}, {-INFINITY}}, {kFloat32, kFloat64}, 1.0, device);
    EXPECT_EQ(inf_norm, INFINITY);
  }
}

// Against libtorch where its norm does not overflow: float32 and float64 gradients of ordinary
// size, one dtype each, several parameters.
TEST(ClipGradNorm, MatchesLibtorch) {
  for (auto [et, tt] :
       {std::pair{ember::kFloat32, torch::kFloat32}, std::pair{ember::kFloat64, torch::kFloat64}}) {
    std::vector<ember::Tensor> ep;
    std::vector<torch::Tensor> tp;
    for (int i = 0; i < 3; i++) {
      auto v = random_vec(size_t(7 + 5 * i), 300 + uint32_t(i), 3.0f);
      std::vector<double> d(v.begin(), v.end());
      ember::Tensor p = ember::zeros({int64_t(d.size())}, et);
      p.set_requires_grad(true);
      p.set_grad(ember::from_vector(d).to(et).contiguous());
      ep.push_back(p);
      torch::Tensor q = torch::zeros({int64_t(d.size())}, tt).requires_grad_();
      q.mutable_grad() = torch::tensor(d).to(tt);
      tp.push_back(q);
    }
    const double en = ember::nn::utils::clip_grad_norm_(ep, 1.0).item<double>();
    const double tn = torch::nn::utils::clip_grad_norm_(tp, 1.0);
    EXPECT_NEAR(en, tn, 1e-6 * tn);
    for (size_t i = 0; i < ep.size(); i++) {
      auto a = ep[i].grad().to_vector<double>();
      auto b = tp[i].grad().to(torch::kFloat64).contiguous();
      for (size_t k = 0; k < a.size(); k++)
        EXPECT_NEAR(a[k], b.data_ptr<double>()[k], 1e-6 * std::abs(b.data_ptr<double>()[k]));
    }
  }
}

TEST(TrainParity, LearningRateChangeDoesNotRecompile) {
  ember::nn::Linear l(4, 3);
  ember::optim::Adam opt(l->parameters(), ember::optim::AdamOptions(1e-2));
  auto x = ember::ones({2, 4});
  auto step = [&] {
    opt.zero_grad();
    l->forward(x).sum().backward();
    opt.step();
  };
  step();
  step();
  auto before = ember::runtime_stats().kernels_compiled;
  opt.set_lr(5e-3);
  step();
  EXPECT_EQ(ember::runtime_stats().kernels_compiled, before);
}

}  // namespace

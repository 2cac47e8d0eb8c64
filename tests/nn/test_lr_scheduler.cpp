// Learning-rate schedulers: each against values computed by hand from PyTorch's formulas
// (torch.optim.lr_scheduler's documentation), StepLR also against libtorch's C++ StepLR (which
// decays one step later), and the optimizer's lr following them.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <numbers>

#include "ember/ember.h"

namespace {

using namespace ember;

// An SGD optimizer over one parameter at lr 0.5.
struct Fixture {
  Tensor p = zeros({2});
  optim::SGD opt{std::vector<Tensor>{p.requires_grad_()}, optim::SGDOptions(0.5)};
};

}  // namespace

TEST(LRScheduler, step_lr_by_hand_and_against_libtorch) {
  Fixture f;
  optim::StepLR s(f.opt, 3, 0.1);
  auto tp = torch::zeros({2}, torch::requires_grad());
  torch::optim::SGD topt({tp}, torch::optim::SGDOptions(0.5));
  torch::optim::StepLR ts(topt, 3, 0.1);
  ts.step();  // libtorch's first step leaves the rate: it lags PyTorch's Python StepLR by one
  const double want[] = {0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005, 0.005};
  for (int e = 0; e < 8; e++) {
    if (e > 0) {
      s.step();
      ts.step();
    }
    EXPECT_DOUBLE_EQ(f.opt.lr(), want[e]) << "epoch " << e;
    EXPECT_NEAR(f.opt.lr(), topt.param_groups()[0].options().get_lr(), 1e-15) << "epoch " << e;
    EXPECT_EQ(s.get_last_lr(), f.opt.lr());
    EXPECT_EQ(s.last_epoch(), e);
  }
}

TEST(LRScheduler, cosine_annealing_by_hand) {
  Fixture f;
  optim::CosineAnnealingLR s(f.opt, 4, 0.1);
  // 0.1 + 0.4 (1 + cos(pi e / 4)) / 2 for e = 0..8 (past T_max it rises again, as PyTorch's form).
  const double c = std::cos(std::numbers::pi / 4);
  const double want[] = {0.5, 0.3 + 0.2 * c, 0.3, 0.3 - 0.2 * c, 0.1, 0.3 - 0.2 * c,
                         0.3, 0.3 + 0.2 * c, 0.5};
  for (int e = 0; e < 9; e++) {
    if (e > 0) s.step();
    EXPECT_NEAR(f.opt.lr(), want[e], 1e-15) << "epoch " << e;
  }
}

TEST(LRScheduler, linear_by_hand) {
  Fixture f;
  optim::LinearLR s(f.opt, 0.5, 1.0, 4);
  const double want[] = {0.25, 0.3125, 0.375, 0.4375, 0.5, 0.5, 0.5};
  for (int e = 0; e < 7; e++) {
    if (e > 0) s.step();
    EXPECT_DOUBLE_EQ(f.opt.lr(), want[e]) << "epoch " << e;
  }
}

TEST(LRScheduler, lambda_by_hand_and_the_step_uses_the_rate) {
  Fixture f;
  optim::LambdaLR s(f.opt, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); });
  EXPECT_DOUBLE_EQ(f.opt.lr(), 0.5);
  s.step();
  s.step();
  EXPECT_DOUBLE_EQ(f.opt.lr(), 0.5 / 3);
  // SGD without momentum: p -= lr g, at the scheduled rate.
  (f.p * 3).sum().backward();
  f.opt.step();
  EXPECT_NEAR(f.p.to_vector<float>()[0], -0.5, 1e-6);
}

TEST(LRScheduler, bad_options) {
  Fixture f;
  EXPECT_THROW(optim::StepLR(f.opt, 0), ValueError);
  EXPECT_THROW(optim::CosineAnnealingLR(f.opt, 0), ValueError);
  EXPECT_THROW(optim::LinearLR(f.opt, 0.0), ValueError);
  EXPECT_THROW(optim::LinearLR(f.opt, 0.5, 1.5), ValueError);
  EXPECT_THROW(optim::LinearLR(f.opt, 0.5, 1.0, 0), ValueError);
  EXPECT_THROW(optim::LambdaLR(f.opt, nullptr), ValueError);
  EXPECT_DOUBLE_EQ(f.opt.lr(), 0.5);  // a rejected scheduler leaves the rate alone
}

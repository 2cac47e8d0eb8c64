// nn::Module::to(Device) on the opencl device (PoCL here): a model moved there trains as on cpu
// (within the parity suite's float32 tolerances), its optimizer's states live there, gradients
// and buffers move with it, it moves back, and a cpu input names both devices. Skipped, with the
// reason, where the device is unavailable.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/device_cases.h"
#include "ember/ember.h"
#include "ember/error.h"
#include "ember/host_values.h"

namespace ember {
namespace {

using ModuleDevice = test::OnOpenCL;

// Linear -> tanh -> BatchNorm2d (over 4 channels of 2 x 2) -> Linear: parameters, float and
// int64 buffers.
struct NetImpl : nn::Module {
  NetImpl()
      : l1(register_module("l1", nn::Linear(6, 16))),
        bn(register_module("bn", nn::BatchNorm2d(4))),
        l2(register_module("l2", nn::Linear(16, 3))) {}
  Tensor forward(const Tensor& x) {
    const int64_t n = x.size(0);
    Tensor h = bn(l1(x).tanh().reshape({n, 4, 2, 2})).reshape({n, 16});
    return l2(h);
  }
  nn::Linear l1;
  nn::BatchNorm2d bn;
  nn::Linear l2;
};
EMBER_MODULE(Net);

struct Trained {
  std::vector<float> losses;
  NamedTensors params, buffers;  // after the steps
};

// Two Adam steps of a Net made with seed 7, moved to `device` first (nothing for cpu).
Trained train_two_steps(const std::string& device) {
  manual_seed(7);
  Net net;
  if (device != "cpu") net->to(device);
  const Tensor x = test::test_values({8, 6}, 1).to(device),
               y = test::test_values({8, 3}, 2).to(device);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  Trained t;
  for (int step = 0; step < 2; step++) {
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
    t.losses.push_back(loss.item<float>());
  }
  for (const auto& [name, s] : opt.state())
    EXPECT_EQ(s.device().str(), Device(device).str()) << "optimizer state " << name;
  t.params = net->named_parameters();
  t.buffers = net->named_buffers();
  return t;
}

// Each tensor's device and its values against `want`'s within atol + rtol |want|.
void expect_near(const NamedTensors& got, const NamedTensors& want, const std::string& device,
                 double atol, double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    const auto& [name, t] = got[i];
    EXPECT_EQ(name, want[i].first);
    EXPECT_EQ(t.device().str(), device) << name;
    EXPECT_EQ(t.dtype(), want[i].second.dtype()) << name;
    const std::vector<double> g = t.to_vector<double>(), w = want[i].second.to_vector<double>();
    ASSERT_EQ(g.size(), w.size()) << name;
    for (size_t j = 0; j < w.size(); j++)
      EXPECT_NEAR(g[j], w[j], atol + rtol * std::abs(w[j])) << name << " element " << j;
  }
}

TEST_F(ModuleDevice, TwoTrainingStepsOnOpenCLMatchCpu) {
  const Trained want = train_two_steps("cpu"), got = train_two_steps("opencl");
  // The parity suite's float32 tolerances: forward values (losses, running statistics) atol 1e-6
  // rtol 1e-3; what gradients made (the parameters after two steps) atol 1e-4 rtol 1e-3.
  ASSERT_EQ(got.losses.size(), 2u);
  for (size_t i = 0; i < 2; i++)
    EXPECT_NEAR(got.losses[i], want.losses[i], 1e-6 + 1e-3 * std::abs(want.losses[i]));
  EXPECT_LT(got.losses[1], got.losses[0]);  // it learns
  expect_near(got.params, want.params, "opencl:0", 1e-4, 1e-3);
  expect_near(got.buffers, want.buffers, "opencl:0", 1e-6, 1e-3);
  EXPECT_EQ(got.buffers.back().first, "bn.num_batches_tracked");
  EXPECT_EQ(got.buffers.back().second.item<int64_t>(), 2);
}

// Every handle follows (the modules' members are the registered tensors), gradients move with
// their parameters, and to(cpu) brings it all back.
TEST_F(ModuleDevice, HandlesAndGradientsMoveThereAndBack) {
  manual_seed(7);
  Net net;
  const Tensor x = test::test_values({8, 6}, 1);
  nn::functional::mse_loss(net->forward(x), zeros({8, 3})).backward();
  const NamedTensors params = net->named_parameters(), buffers = net->named_buffers();
  NamedTensors grads;
  for (const auto& [n, p] : params) grads.emplace_back(n, realized_clone(p.grad()));

  net->to(Device("opencl:0"));
  EXPECT_EQ(net->l1->weight.device().str(), "opencl:0");
  EXPECT_EQ(net->l1->weight.impl(), params[0].second.impl());
  EXPECT_TRUE(net->l1->weight.requires_grad());
  EXPECT_EQ(net->bn->num_batches_tracked.device().str(), "opencl:0");
  EXPECT_EQ(net->bn->num_batches_tracked.dtype(), kInt64);
  NamedTensors moved_grads;
  for (const auto& [n, p] : net->named_parameters()) moved_grads.emplace_back(n, p.grad());
  expect_near(moved_grads, grads, "opencl:0", 0, 0);
  expect_near(net->named_parameters(), params, "opencl:0", 0, 0);
  expect_near(net->named_buffers(), buffers, "opencl:0", 0, 0);

  net->to("cpu");
  expect_near(net->named_parameters(), params, "cpu", 0, 0);
  expect_near(net->named_buffers(), buffers, "cpu", 0, 0);
  EXPECT_EQ(net->l2->bias.grad().device().str(), "cpu");
  EXPECT_EQ(net->forward(x).device().str(), "cpu");  // runs on cpu again
}

TEST_F(ModuleDevice, InputsOnAnotherDeviceNameBoth) {
  Net net;
  net->to("opencl");
  const Tensor x = test::test_values({8, 6}, 1);
  try {
    net->forward(x).realize();
    FAIL() << "a cpu input ran through a model on opencl";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("opencl:0"), std::string::npos) << m;
  }
  // Nothing was lost: the model runs on an input moved there.
  EXPECT_EQ(net->forward(x.to("opencl")).realize().sizes(), (std::vector<int64_t>{8, 3}));

  // An optimizer over parameters in two memories is refused, naming both.
  Net other;
  std::vector<Tensor> mixed = net->parameters();
  mixed.push_back(other->l1->weight);
  try {
    optim::Adam opt(mixed, optim::AdamOptions(1e-2));
    FAIL() << "an optimizer took parameters on opencl and cpu";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("opencl:0"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace ember

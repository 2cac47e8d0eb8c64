// Tensors that live on the opencl device (ember/device.h, Tensor::to and Tensor::device): round
// trips, the two-device error, an op chain against cpu and the interpreter, gradients through
// to(), and buffers that stay on the device between launches (counted copies). Skipped, with the
// reason, where the device is unavailable.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/device_cases.h"
#include "ember/ember.h"
#include "ember/error.h"

namespace ember {
namespace {

using TensorDevice = test::OnOpenCL;

// Distinct, non-trivial values: (i * 0.37 mod 2) - 1.
Tensor values(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = std::fmod(0.37f * float(i), 2.0f) - 1.0f;
  return from_vector(v).reshape(shape);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); i++)
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::abs(want[i]) + 1e-6) << what << " element " << i;
}

TEST(DeviceNames, ParseAndPrintAsLibtorch) {
  EXPECT_EQ(Device("cpu").str(), "cpu");
  EXPECT_EQ(Device("cpu").index(), -1);
  EXPECT_TRUE(Device("cpu").is_cpu());
  EXPECT_EQ(zeros({2}).device(), Device("cpu"));
  EXPECT_THROW(Device("tpu"), ValueError);
  try {
    Device d("interp");
    FAIL() << "interp named a memory";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
  }
}

TEST_F(TensorDevice, RoundTripKeepsValues) {
  EXPECT_EQ(Device("opencl").str(), "opencl:0");
  EXPECT_EQ(Device("opencl"), Device("opencl:0"));
  EXPECT_THROW(Device("opencl:1"), ValueError);
  for (ScalarType t : {kFloat32, kFloat64, kInt64, kUInt8, kBool}) {
    SCOPED_TRACE(dtype_name(t));
    const Tensor x = (values({5, 7}) * 10).to(t);
    const Tensor d = x.to("opencl");
    EXPECT_EQ(d.device().str(), "opencl:0");
    EXPECT_EQ(d.dtype(), t);
    EXPECT_EQ(d.sizes(), x.sizes());
    const Tensor back = d.to(Device("cpu"));
    EXPECT_TRUE(back.device().is_cpu());
    EXPECT_EQ(back.to_vector<double>(), x.to_vector<double>());
    EXPECT_EQ(d.to_vector<double>(), x.to_vector<double>());  // a read copies back
  }
  // A view moves as its contiguous value; to() of a tensor already there is itself.
  const Tensor v = values({4, 6}).t();
  EXPECT_EQ(v.to("opencl").to_vector<float>(), v.contiguous().to_vector<float>());
  const Tensor d = v.to("opencl");
  EXPECT_EQ(d.to("opencl:0").impl(), d.impl());
}

TEST_F(TensorDevice, AnOpOnTwoDevicesNamesBoth) {
  const Tensor c = values({3, 4});
  const Tensor d = values({3, 4}).to("opencl");
  const std::string want =
      "Expected all tensors to be on the same device, but found at least two devices, cpu and "
      "opencl:0";
  for (const Tensor& mixed : {c + d, d * c, d.matmul(c.t())}) {
    try {
      mixed.realize();
      FAIL() << "an op on cpu and opencl ran";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    EXPECT_THROW(mixed.device(), ValueError);
  }
  // Nothing was lost: both operands still read their values.
  EXPECT_EQ(d.to_vector<float>(), c.to_vector<float>());
}

// One chain (products, broadcasts, reductions, softmax, in-place) on opencl's own buffers, on
// cpu and on the interpreter.
std::vector<std::vector<float>> chain(const std::string& where) {
  const bool on_opencl = where == "opencl";
  DeviceGuard g(on_opencl ? "cpu" : where);
  auto place = [&](const Tensor& t) { return on_opencl ? t.to("opencl") : t; };
  const Tensor x = place(values({6, 5})), w = place(values({5, 4}) * 0.5), b = place(values({4}));
  Tensor h = (x.matmul(w) + b).tanh();
  Tensor p = h.softmax(1);
  Tensor s = (p * h).sum({0});
  Tensor acc = place(zeros({4}));
  acc.add_(s, 2.0);
  acc.add_(h.amax({0}));
  std::vector<Tensor> outs = {h, p, s, acc, h.mean()};
  realize(outs);
  std::vector<std::vector<float>> v;
  for (const Tensor& t : outs) {
    EXPECT_EQ(t.device().str(), on_opencl ? "opencl:0" : "cpu");
    v.push_back(t.to_vector<float>());
  }
  return v;
}

TEST_F(TensorDevice, OpChainMatchesCpuAndInterp) {
  const auto got = chain("opencl"), cpu = chain("cpu"), ref = chain("interp");
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); i++) {
    expect_close(got[i], ref[i], "opencl vs interp, output " + std::to_string(i));
    expect_close(cpu[i], ref[i], "cpu vs interp, output " + std::to_string(i));
  }
}

// d/dw sum(tanh(w.to(opencl) * a)) reaches the cpu leaf through to()'s backward (a to() back),
// and a leaf on opencl gets its gradient there; both as computed on cpu alone.
TEST_F(TensorDevice, GradientsFlowThroughTo) {
  const Tensor a = values({3, 4}) + 0.25;
  Tensor w = values({3, 4}) * 0.7;
  w.set_requires_grad(true);
  (w * a).tanh().sum().backward();
  const std::vector<float> want = w.grad().to_vector<float>();
  w.set_grad(Tensor());

  (w.to("opencl") * a.to("opencl")).tanh().sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(w.grad().device().is_cpu());
  expect_close(w.grad().to_vector<float>(), want, "cpu leaf");

  Tensor wd = (values({3, 4}) * 0.7).to("opencl");
  wd.set_requires_grad(true);
  (wd.to("cpu") * a).tanh().sum().backward();
  ASSERT_TRUE(wd.grad().defined());
  EXPECT_EQ(wd.grad().device().str(), "opencl:0");
  expect_close(wd.grad().to_vector<float>(), want, "opencl leaf");
}

// Tensors that live on the device are launched on their own buffers: a chain of realizes (and an
// in-place update) copies nothing in or out; reading the result copies it out once.
TEST_F(TensorDevice, BuffersStayOnTheDeviceBetweenLaunches) {
  Tensor x = values({64, 32}).to("opencl");
  Tensor w = (values({32, 32}) * 0.1).to("opencl");
  Tensor acc = zeros({64, 32}).to("opencl");
  reset_runtime_stats();
  for (int i = 0; i < 4; i++) {
    x = x.matmul(w).tanh().realize();
    acc.add_(x).realize();
  }
  const RuntimeStats s = runtime_stats();
  EXPECT_GE(s.kernels_launched, 8);
  EXPECT_EQ(s.copies_to_device, 0);
  EXPECT_EQ(s.copies_to_host, 0);
  const std::vector<float> got = acc.to_vector<float>();
  EXPECT_EQ(runtime_stats().copies_to_host, 1);
  acc.to_vector<float>();  // the host copy is current: no second copy
  EXPECT_EQ(runtime_stats().copies_to_host, 1);
  EXPECT_EQ(runtime_stats().copies_to_device, 0);

  // The same on cpu.
  Tensor xc = values({64, 32}), wc = values({32, 32}) * 0.1, accc = zeros({64, 32});
  for (int i = 0; i < 4; i++) {
    xc = xc.matmul(wc).tanh().realize();
    accc.add_(xc).realize();
  }
  expect_close(got, accc.to_vector<float>(), "accumulated");
}

// Host tensors computed on the opencl device (Context::device, EMBER_DEVICE=opencl) are copied in
// and out around each launch, and their results stay in host memory.
TEST_F(TensorDevice, HostTensorsOnTheOpenCLContextCopyAroundLaunches) {
  const Tensor x = values({8, 8});
  reset_runtime_stats();
  Tensor y;
  {
    DeviceGuard g("opencl");
    y = (x * 2 + 1).realize();
  }
  EXPECT_TRUE(y.device().is_cpu());
  EXPECT_EQ(runtime_stats().copies_to_device, 1);
  EXPECT_EQ(runtime_stats().copies_to_host, 1);
  expect_close(y.to_vector<float>(), (x * 2 + 1).to_vector<float>(), "x * 2 + 1");
}

}  // namespace
}  // namespace ember

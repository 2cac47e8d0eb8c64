#include "device_cases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "ember/ember.h"
#include "ember/error.h"

namespace ember::test {

namespace {

Outputs realized(std::vector<Tensor> outs) {
  realize(outs);
  Outputs v;
  for (Tensor& t : outs) v.push_back(t.to_vector<float>());
  return v;
}

}  // namespace

Tensor test_values(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = float(std::sin(0.37 * double(i) + 1.7 * seed));
  return from_vector(v).reshape(IntList(shape));
}

void OnOpenCL::SetUp() {
  try {
    Device d("opencl");
  } catch (const ValueError& e) {
    GTEST_SKIP() << e.what();
  }
}

Outputs adam_steps(const std::string& device, bool jit) {
  manual_seed(3);
  nn::Sequential net(nn::Linear(8, 64), nn::Tanh(), nn::Linear(64, 2));
  net->to(device);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  auto step = [&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = nn::functional::mse_loss(net->forward(in[0]), in[1]);
    loss.backward();
    opt.step();
    return std::vector<Tensor>{loss};
  };
  Jit jitted = ember::jit(step);
  Outputs out;
  for (int i = 0; i < 6; i++) {
    const std::vector<Tensor> in = {test_values({32, 8}, 2 * i).to(device),
                                    test_values({32, 2}, 2 * i + 1).to(device)};
    const Tensor loss = (jit ? jitted(in) : step(in))[0];
    EXPECT_EQ(loss.device().str(), Device(device).str());
    out.push_back({loss.item<float>()});
  }
  for (const Tensor& p : net->parameters()) out.push_back(p.to_vector<float>());
  return out;
}

void expect_adam_steps_near(const Outputs& got, const Outputs& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    ASSERT_EQ(got[i].size(), want[i].size());
    const double atol = i < 6 ? 1e-6 : 1e-4;
    for (size_t j = 0; j < want[i].size(); j++)
      EXPECT_NEAR(got[i][j], want[i][j], atol + 1e-3 * std::abs(want[i][j]))
          << (i < 6 ? "loss " : "parameter ") << i << " element " << j;
  }
}

void expect_copies_round_trip(runtime::Device& dev) {
  std::vector<float> in(1000);
  std::iota(in.begin(), in.end(), 0.5f);
  const size_t bytes = in.size() * sizeof(float);
  runtime::DeviceBuffer a = dev.allocate(bytes), b = dev.allocate(bytes);
  EXPECT_EQ(a.bytes, bytes);
  dev.copy_in(a, in.data(), bytes);
  dev.copy(b, a, bytes);
  std::vector<float> out(in.size(), -1);
  dev.copy_out(out.data(), b, bytes);
  EXPECT_EQ(out, in);
  EXPECT_THROW(dev.copy_out(out.data(), a, bytes + 4), Error);  // past the end: refused
  dev.free(a);
  dev.free(b);
}

Outputs small_kernels(const std::string& device) {
  DeviceGuard g(device);
  Tensor x = arange(24, kFloat32).reshape({4, 6}) * 0.25 - 2.0;
  Tensor w = ones({4, 6});
  w.add_(x * x);  // in place
  return realized({w, x.sum(), x.exp().amax({1}), x.sum({0})});
}

Outputs gpu_shape_cases(const std::string& device) {
  DeviceGuard g(device);
  std::vector<Tensor> outs;
  int seed = 0;
  auto next = [&seed](std::vector<int64_t> shape) { return test_values(std::move(shape), seed++); };
  for (int64_t n : {1, 7, 1000, 10001}) {
    Tensor x = next({n}), rows = next({3, n});
    outs.push_back(x.sum());
    outs.push_back(x.amax({0}));
    outs.push_back(rows.mean({1}));
    outs.push_back((rows * rows).sum({1}));
  }
  const std::vector<std::vector<int64_t>> mkn = {
      {1, 1, 1}, {5, 7, 3}, {129, 65, 257}, {4, 128, 128}, {10000, 128, 128}};
  for (const auto& s : mkn) {
    Tensor a = next({s[0], s[1]}), b = next({s[1], s[2]});
    outs.push_back(a.matmul(b));
  }
  Tensor a3 = next({3, 33, 17}), b3 = next({3, 17, 40});
  outs.push_back(a3.matmul(b3));  // batched
  Tensor a = next({50, 20}), bt = next({30, 20});
  outs.push_back(a.matmul(bt.t()));  // a transposed operand
  Tensor x = next({64, 9}), w = next({9, 33}), bias = next({33});
  outs.push_back((x.matmul(w) + bias).tanh());  // an epilogue
  return realized(outs);
}

Outputs many_operand_product(const std::string& device) {
  DeviceGuard g(device);
  const int64_t n = 40, k = 37, m = 33;
  Tensor sum;
  for (int q = 0; q < 7; q++) {
    // Realized float64 buffers, and cheap computed operands (a scale and shift, a square: under
    // the scheduler's cost to materialise), fused into the product's panels.
    const Tensor a = test_values({n, k}, 2 * q).to(kFloat64).realize(),
                 b = test_values({k, m}, 2 * q + 1).to(kFloat64).realize();
    const Tensor term =
        (a * (0.5 + 0.1 * q) + 0.25).unsqueeze(1) * (b * b - 0.5).t().unsqueeze(0);  // [n, m, k]
    sum = q == 0 ? term : sum + term;
  }
  return realized({sum.sum({2}).tanh()});
}

void expect_outputs_near(const Outputs& got, const Outputs& want, double rtol, double atol,
                         double stol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    ASSERT_EQ(got[i].size(), want[i].size()) << "output " << i;
    double scale = 0;
    for (float w : want[i]) scale = std::max(scale, double(std::fabs(w)));
    int bad = 0;
    for (size_t j = 0; j < want[i].size() && bad < 5; j++)
      if (!(std::fabs(got[i][j] - want[i][j]) <=
            rtol * std::fabs(want[i][j]) + atol + stol * scale)) {
        ADD_FAILURE() << "output " << i << " element " << j << ": " << got[i][j] << " vs "
                      << want[i][j];
        bad++;
      }
  }
}

}  // namespace ember::test

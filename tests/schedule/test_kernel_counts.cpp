// Golden kernel counts after fusion (docs/design.md, Testing: Schedule).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../../bench/ppo_like_step.h"
#include "ember/ember.h"
#include "engine/realize.h"
#include "kernel_probe.h"

namespace {

using namespace ember;
using ember_schedule_test::kernels_for;
using ember_schedule_test::on_each_device;  // inputs are realized beforehand

Tensor input(IntList shape, float scale = 1.0f) {
  Tensor t = rand(shape) * scale;
  t.realize();
  return t;
}

TEST(KernelCounts, MulAddIsOneKernel) {
  auto a = input({64, 32}), b = input({64, 32}), c = input({64, 32});
  Tensor r = a * b + c;
  EXPECT_EQ(kernels_for({r}), 1);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  auto rv = r.to_vector<float>();
  for (size_t i = 0; i < rv.size(); i++) ASSERT_FLOAT_EQ(rv[i], av[i] * bv[i] + cv[i]);
}

TEST(KernelCounts, BroadcastMulAddIsOneKernel) {
  auto a = input({64, 32}), b = input({32}), c = input({64, 1});
  EXPECT_EQ(kernels_for({a * b + c}), 1);
}

TEST(KernelCounts, ProductSumIsOneKernel) {
  auto a = input({16, 40}), b = input({16, 40});
  Tensor r = (a * b).sum({1});
  EXPECT_EQ(kernels_for({r}), 1);
  auto av = a.to_vector<float>(), bv = b.to_vector<float>(), rv = r.to_vector<float>();
  for (int i = 0; i < 16; i++) {
    float s = 0;
    for (int j = 0; j < 40; j++) s += av[i * 40 + j] * bv[i * 40 + j];
    ASSERT_NEAR(rv[i], s, 1e-4);
  }
}

TEST(KernelCounts, ReduceFusesIntoElementwiseEpilogue) {
  auto a = input({16, 40});
  EXPECT_EQ(kernels_for({(a.sum({1}) * 2.0 + 1.0).sqrt()}), 1);
}

TEST(KernelCounts, SqueezeExcitationComputesTheTapSumOnce) {
  // A squeeze-excitation block over a 3x3 tap sum y (17 ALU ops per element): a global average
  // pool of y, its sigmoid as the gate (materialised under its broadcast), y times the gate.
  // Fused into both the pool's kernel and the scaling's, y would be computed twice (3 kernels);
  // it is materialised instead (4: y, the pool, the gate, the scaled y).
  auto x = input({2, 8, 10, 10});
  Tensor xp = constant_pad_nd(x, {1, 1, 1, 1});
  Tensor y;
  for (int t = 0; t < 9; t++) {
    Tensor v = xp.narrow(2, t / 3, 10).narrow(3, t % 3, 10) * (0.1 * (t + 1));
    y = t ? y + v : v;
  }
  Tensor r = y * y.mean({2, 3}, true).sigmoid();
  EXPECT_EQ(kernels_for({r}), 4);
  auto xv = x.to_vector<float>(), rv = r.to_vector<float>();
  for (int p = 0; p < 16; p++) {  // planes
    std::vector<double> yv(100);
    double mean = 0;
    for (int i = 0; i < 10; i++)
      for (int j = 0; j < 10; j++) {
        double s = 0;
        for (int t = 0; t < 9; t++) {
          const int a = i + t / 3 - 1, b = j + t % 3 - 1;
          if (a >= 0 && a < 10 && b >= 0 && b < 10) s += 0.1 * (t + 1) * xv[p * 100 + a * 10 + b];
        }
        yv[i * 10 + j] = s;
        mean += s / 100;
      }
    for (int e = 0; e < 100; e++)
      ASSERT_NEAR(rv[p * 100 + e], yv[e] / (1 + std::exp(-mean)), 1e-5) << p << " " << e;
  }
}

TEST(KernelCounts, SoftmaxIsAtMostThreeKernels) {
  auto x = input({32, 10}, 4.0f);
  Tensor m = x.amax({1}, true);
  Tensor e = (x - m).exp();
  Tensor s = e / e.sum({1}, true);
  EXPECT_LE(kernels_for({s}), 3);
  EXPECT_LE(kernels_for({x.softmax(1)}), 3);
  auto rows = s.sum({1}).to_vector<float>();
  for (float r : rows) EXPECT_NEAR(r, 1.0f, 1e-5);
}

TEST(KernelCounts, SixElementwiseOpsOnThreeInputsIsOneKernel) {
  auto a = input({100}), b = input({100}), c = input({100});
  Tensor r = ((a * b + c).exp() - a).tanh() * c / (b + 1.0);
  EXPECT_EQ(kernels_for({r}), 1);
}

TEST(KernelCounts, MatmulIsOneKernel) {
  auto a = input({64, 32}), b = input({32, 16});
  EXPECT_EQ(kernels_for({a.matmul(b)}), 1);
  EXPECT_EQ(kernels_for({a.t().t().matmul(b.t().t())}), 1);
}

TEST(KernelCounts, LinearTanhIsOneKernel) {
  auto x = input({8, 32}), w = input({16, 32}), bias = input({16});
  EXPECT_EQ(kernels_for({(x.matmul(w.t()) + bias).tanh()}), 1);
}

TEST(KernelCounts, ViewsAreNotCopies) {
  auto a = input({4, 6});
  // Movement ops chained into one elementwise kernel: no copy kernels.
  Tensor r = a.t().reshape({6, 4}).flip({0}).narrow(1, 1, 2) + 1.0;
  EXPECT_EQ(kernels_for({r}), 1);
  // A pure view of a realized tensor needs no kernel at all.
  EXPECT_EQ(kernels_for({a.permute({1, 0})}), 0);
}

TEST(KernelCounts, TransposeOfTransposedProductIsOneKernel) {
  // t().t() over a product is the identity on memory order: the product stores into the result's
  // buffer (no copy kernel). A single t() is a real transpose, which the product's store makes
  // (schedule/lower.cpp, bijective_above): one kernel too.
  auto a = input({5, 7}), b = input({7, 3});
  Tensor want = a.matmul(b);
  want.realize();
  Tensor tt = a.matmul(b).t().t();
  EXPECT_EQ(kernels_for({tt}), 1);
  Tensor t1 = a.matmul(b).t().contiguous();
  EXPECT_EQ(kernels_for({t1}), 1);
  auto w = want.to_vector<float>(), got = tt.to_vector<float>(), got_t = t1.to_vector<float>();
  ASSERT_EQ(got.size(), w.size());
  for (size_t i = 0; i < 5; i++)
    for (size_t j = 0; j < 3; j++) {
      EXPECT_EQ(got[i * 3 + j], w[i * 3 + j]);
      EXPECT_EQ(got_t[j * 5 + i], w[i * 3 + j]);
    }
}

TEST(KernelCounts, MlpBackwardReadsTheMaterialisedActivation) {
  // h = tanh(x W1^T + b1) materialised by contiguous(); gradients of sum(g * (h W2^T + b2)).
  // Kernels: h (matmul + bias + tanh), dpre = (g W2) * (1 - h^2) (one matmul with its epilogue,
  // read by two reduces), dW1 = dpre^T x with db1 = sum dpre as its second output, dW2 = g^T h
  // with db2 = sum g (each bias gradient a row sum of its weight gradient's kernel, which reads
  // the same operand along the same reduce axis; 6 kernels before that fusion): 4. The
  // weight gradients are transposes of transposed products, which store straight into [out, in]
  // (two copy kernels more before that fusion). The tanh rule reads h from its buffer;
  // recomputing tanh there instead cost a 7th kernel (and one per layer in an MLP).
  auto x = input({64, 8}), g = input({64, 4});
  nn::Linear l1(8, 16), l2(16, 4);
  Tensor h = l1->forward(x).tanh().contiguous();
  Tensor loss = (l2->forward(h) * g).sum();
  const auto grads = autograd::grad({loss}, {l1->weight, l1->bias, l2->weight, l2->bias});
  EXPECT_EQ(kernels_for(grads), 4);
}

TEST(KernelCounts, LinearWeightAndBiasGradientAreOneKernel) {
  // dW = dZ^T x and db = sum dZ over the batch both read dZ along the batch: db is a second
  // output of dW's kernel (a row sum), not a kernel of its own, at any batch and on interp too.
  on_each_device([] {
    for (int64_t batch : {5, 3000}) {
      auto x = input({batch, 24}), g = input({batch, 40});
      nn::Linear l(24, 40);
      Tensor loss = (l->forward(x) * g).sum();
      const auto grads = autograd::grad({loss}, {l->weight, l->bias});
      EXPECT_EQ(kernels_for(grads), 1) << "batch " << batch;
      auto dw = grads[0].to_vector<float>(), db = grads[1].to_vector<float>();
      auto gv = g.to_vector<float>(), xv = x.to_vector<float>();
      for (int64_t o : {0, 17, 39}) {
        double s = 0, w = 0;
        for (int64_t r = 0; r < batch; r++) {
          s += gv[r * 40 + o];
          w += double(gv[r * 40 + o]) * xv[r * 24 + 5];
        }
        EXPECT_NEAR(db[o], s, 1e-4 * batch) << "bias " << o;
        EXPECT_NEAR(dw[o * 24 + 5], w, 1e-4 * batch) << "weight " << o;
      }
    }
  });
}

TEST(KernelCounts, AdamStepOverMlpIsBounded) {
  // 8 -> 4x128 tanh -> 2: 5 Linear layers, 10 parameters. The step realizes the step counter
  // with the two bias corrections 1 - beta^t (powf: materialised once rather than recomputed for
  // every element they are broadcast to) in one kernel, and exp_avg, exp_avg_sq and the parameter
  // of each parameter in one kernel (multi-output fusion): 1 + 10 = 11 kernels.
  nn::Sequential net = ppo_like::mlp(2);
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-3));
  net->forward(input({16, 8})).square().mean().backward();
  auto before = runtime_stats().kernels_launched;
  opt.step();
  EXPECT_EQ(runtime_stats().kernels_launched - before, 11);
}

TEST(KernelCounts, JittedPpoStepIsAtMost100Launches) {
  // The PPO-like training step of bench/ppo_like_step.h (issue 11's target: at most 100 launches;
  // tinygrad's is 150), at batch 64: the launch count does not depend on the batch. Forward,
  // backward and the loss 36 (backward() computes the loss with the gradients, so the returned loss
  // is not computed again after the step; each of the 10 bias gradients is a row sum in its weight
  // gradient's kernel, not a kernel of its own); clip_grad_norm_ 2 (the norm, realized in the
  // call, its twenty squared sums nests of one kernel, not twenty kernels of their own; then the
  // clip factor, from the norm's buffer: 1 more than when the factor's kernel summed the squares
  // itself, which a caller that also read the norm paid with a second pass over every gradient,
  // ClipGradNormReadsEveryGradientOnce); Adam 1 + 20; the returned
  // loss.detach() as a new buffer 1; copies of the old weights 20 (the lazy forward values, such
  // as `mean`, are alive at opt.step() and still read them).
  manual_seed(0);
  ppo_like::Step ppo;
  const int64_t B = 64;
  Tensor obs = input({B, 8}), act = input({B, 2}), adv = input({B}), ret = input({B});
  Jit step([&](const std::vector<Tensor>& in) { return ppo(in); });
  for (int i = 0; i < 3; i++) step({obs, act, adv, ret});
  ASSERT_GE(step.replays(), 1);
  EXPECT_EQ(step.captured_launches(), 36 + 2 + 21 + 1 + 20);
  EXPECT_LE(step.captured_launches(), 100);
}

}  // namespace

// clip_grad_norm_ as a training step uses it: the norm realized first (to be logged), the clipped
// gradients later. The sum of squares over all gradients is computed once: the clip factor reads
// the norm's buffer instead of a later kernel reading every gradient again to compute it anew.
// Values against a host computation of the norm and of the clipped gradients.
TEST(KernelCounts, ClipGradNormReadsEveryGradientOnce) {
  on_each_device([] {
    std::vector<Tensor> params = {input({33, 17}), input({17}), input({5, 33}), input({5})};
    std::vector<std::vector<float>> host;
    double sq = 0;
    for (size_t i = 0; i < params.size(); i++) {
      params[i].set_requires_grad(true);
      Tensor g = input(params[i].sizes(), 3.0f);
      params[i].set_grad(g);
      host.push_back(g.to_vector<float>());
      for (float v : host.back()) sq += double(v) * v;
    }
    std::vector<const void*> grads;
    for (auto& p : params) grads.push_back(p.grad().storage_id());
    int reads_all = 0;  // launches that read every gradient
    engine::LaunchLog log;
    Tensor norm;
    {
      engine::RecordLaunches record(log);
      norm = nn::utils::clip_grad_norm_(params, 0.5);
      norm.realize();
      std::vector<Tensor> clipped;
      for (auto& p : params) clipped.push_back(p.grad());
      realize(clipped);
    }
    for (const engine::Launch& l : log.launches) {
      size_t n = 0;
      for (const void* g : grads)
        for (auto& b : l.buffers) n += b.get() == g;
      reads_all += n >= grads.size();
    }
    EXPECT_EQ(reads_all, 1);
    const double want = std::sqrt(sq), coef = std::min(1.0, 0.5 / (want + 1e-6));
    EXPECT_NEAR(norm.item<double>(), want, 1e-5 * want);
    for (size_t i = 0; i < params.size(); i++) {
      auto got = params[i].grad().to_vector<float>();
      for (size_t j = 0; j < got.size(); j++)
        ASSERT_NEAR(got[j], host[i][j] * coef, 1e-5) << "parameter " << i << " element " << j;
    }
  });
}

// Nests (schedule/kernel.h): full reductions, each over its own loop space, computed once inside a
// kernel whose value is one element. Kernel counts, and values on the cpu device and the interp
// reference against sums computed here in double precision. Parity against libtorch:
// ReduceChain.nests_* in tests/parity/parity_reduce.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ember/ember.h"
#include "kernel_probe.h"

namespace {

using namespace ember;
using ember_schedule_test::kernels_for;
using ember_schedule_test::on_each_device;

// Sizes that divide no vector width, an empty tensor and a one-element one, a 2-d one.
const std::vector<std::vector<int64_t>> kShapes = {{0},   {1},   {3},     {17},
                                                   {127}, {129}, {10001}, {129, 127}};

std::vector<Tensor> inputs() {
  manual_seed(11);
  std::vector<Tensor> xs;
  for (auto& s : kShapes) {
    Tensor x = randn(s);
    x.realize();
    xs.push_back(x);
  }
  return xs;
}

double squared_norm(const std::vector<Tensor>& xs) {
  double total = 0;
  for (auto& x : xs)
    for (float v : x.to_vector<float>()) total += static_cast<double>(v) * v;
  return total;
}

TEST(MultiReduce, SquaredNormsOfManySizesAreOneKernel) {
  on_each_device([] {
    auto xs = inputs();
    Tensor total = xs[0].square().sum();
    for (size_t i = 1; i < xs.size(); i++) total = total + xs[i].square().sum();
    Tensor norm = total.sqrt();
    EXPECT_EQ(kernels_for({norm}), 1);
    EXPECT_NEAR(norm.item<double>(), std::sqrt(squared_norm(xs)),
                1e-5 * std::sqrt(squared_norm(xs)));
  });
}

TEST(MultiReduce, AKernelReduceAndNestsOfEachOp) {
  // x.sum() is the kernel's own reduce loop; the max, the product and the mean over a transposed
  // slice are nests.
  on_each_device([] {
    auto xs = inputs();
    const Tensor& x = xs[6];              // 10001
    const Tensor& y = xs[7];              // 129 x 127
    Tensor z = xs[3].abs() * 0.01 + 1.0;  // 17 factors near 1
    Tensor r = x.sum() + y.max() * z.prod() - y.t().slice(0, 3, 126).mean();
    EXPECT_EQ(kernels_for({r}), 1);
    auto xv = x.to_vector<float>(), yv = y.to_vector<float>(), zv = z.to_vector<float>();
    double sx = 0, my = -INFINITY, pz = 1, sy = 0;
    for (float v : xv) sx += v;
    for (float v : yv) my = std::max(my, static_cast<double>(v));
    for (float v : zv) pz *= v;
    int64_t n = 0;
    for (int64_t i = 0; i < 129; i++)
      for (int64_t j = 3; j < 126; j++, n++) sy += yv[static_cast<size_t>(i * 127 + j)];
    double want = sx + my * pz - sy / static_cast<double>(n);
    EXPECT_NEAR(r.item<double>(), want, 1e-4 * (std::abs(sx) + std::abs(my * pz) + 1));
  });
}

TEST(MultiReduce, ANestReadByTwoKernelsIsMaterialisedOnce) {
  // t feeds two outputs: nested in both kernels, each sum would be computed twice.
  on_each_device([] {
    auto xs = inputs();
    Tensor t = xs[5].sum() + xs[6].sum();
    Tensor a = t * 2.0, b = t - 1.0;
    EXPECT_EQ(kernels_for({a, b}), 4);
    double s = 0;
    for (size_t i : {5, 6})
      for (float v : xs[i].to_vector<float>()) s += v;
    EXPECT_NEAR(a.item<double>(), 2 * s, 1e-4);
    EXPECT_NEAR(b.item<double>(), s - 1, 1e-4);
  });
}

TEST(MultiReduce, ClipGradNormIsOneKernelBeforeTheInPlaceClips) {
  on_each_device([] {
    auto xs = inputs();
    std::vector<Tensor> ps;
    for (auto& x : xs) {
      Tensor p = zeros(x.sizes());
      p.set_requires_grad(true);
      ps.push_back(p);
    }
    Tensor loss = (ps[0] * xs[0]).sum();
    for (size_t i = 1; i < ps.size(); i++) loss = loss + (ps[i] * xs[i]).sum();
    loss.backward();  // grad_i = x_i
    const double norm = std::sqrt(squared_norm(xs)), coef = std::min(1.0, 0.5 / (norm + 1e-6));
    auto before = runtime_stats().kernels_launched;
    Tensor got = nn::utils::clip_grad_norm_(ps, 0.5);
    std::vector<Tensor> grads;
    for (auto& p : ps) grads.push_back(p.grad());
    grads.push_back(got);
    realize(grads);
    // The norm (the eight squared sums: its own loop over the empty one and seven nests), the
    // coefficient, and one in-place clip per gradient.
    EXPECT_EQ(runtime_stats().kernels_launched - before, 1 + 1 + 8);
    EXPECT_NEAR(got.item<double>(), norm, 1e-5 * norm);
    for (size_t i = 0; i < ps.size(); i++) {
      auto g = ps[i].grad().to_vector<float>(), x = xs[i].to_vector<float>();
      ASSERT_EQ(g.size(), x.size());
      for (size_t j = 0; j < g.size(); j++) ASSERT_NEAR(g[j], x[j] * coef, 1e-5 * coef) << i;
    }
  });
}

}  // namespace

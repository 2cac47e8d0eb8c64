// Multi-output fusion (schedule/fuse_outputs.h): kernel counts, and values on the cpu device and
// the interp reference against hand-computed results, in-place updates included.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ember/ember.h"
#include "kernel_probe.h"

namespace {

using namespace ember;
using ember_schedule_test::kernels_for;
using ember_schedule_test::on_each_device;

std::vector<float> iota_values(int64_t n, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[static_cast<size_t>(i)] = scale * static_cast<float>(i) + shift;
  return v;
}

Tensor make(const std::vector<float>& v, IntList shape) {
  Tensor t = from_blob(v.data(), shape, kFloat32).clone();
  t.realize();
  return t;
}

TEST(MultiOutput, TwoOutputsOfASharedElementwiseInputAreOneKernel) {
  on_each_device([] {
    auto xv = iota_values(3 * 37, 0.25f, 0.5f);
    Tensor x = make(xv, {3, 37});
    Tensor a = x * 2.0 + 1.0, b = x.sqrt() * x;
    EXPECT_EQ(kernels_for({a, b}), 1);
    auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    for (size_t i = 0; i < xv.size(); i++) {
      ASSERT_EQ(av[i], xv[i] * 2.0f + 1.0f);
      ASSERT_NEAR(bv[i], std::sqrt(xv[i]) * xv[i], 1e-6 * xv[i] * xv[i]);
    }
  });
}

TEST(MultiOutput, AConsumerAtTheSameIndexInlinesItsProducer) {
  on_each_device([] {
    auto xv = iota_values(50, 0.5f, -3.0f);
    Tensor x = make(xv, {50});
    Tensor y = (x * 3.0).exp(), z = y + x;  // z reads y at the index y is stored
    EXPECT_EQ(kernels_for({y, z}), 1);
    auto yv = y.to_vector<float>(), zv = z.to_vector<float>();
    for (size_t i = 0; i < xv.size(); i++) {
      ASSERT_NEAR(yv[i], std::exp(3.0f * xv[i]), 4e-7 * std::exp(3.0f * xv[i]));
      ASSERT_EQ(zv[i], yv[i] + xv[i]);
    }
  });
}

TEST(MultiOutput, OtherLoopSpacesOrIndicesStaySeparate) {
  auto x = make(iota_values(12, 1.0f, 0.0f), {3, 4});
  // A transposed read of a value is not at its stored index: two kernels.
  Tensor y = (x * 2.0).contiguous();
  EXPECT_EQ(kernels_for({y, y.t() + 1.0}), 2);
  // Different loop spaces: two kernels.
  EXPECT_EQ(kernels_for({x * 2.0, x.sum({1}) + 1.0}), 2);
  // A shared scalar alone is no shared traffic: two kernels.
  auto s = make({2.0f}, {});
  auto u = make(iota_values(12, -1.0f, 0.0f), {3, 4});
  EXPECT_EQ(kernels_for({x * s, u * s}), 2);
}

// A sum of a broadcast scalar (the gradient of a parameter expanded over a batch) beside a
// product that reads the same scalar: each of the sum's outputs is stored, not only the first
// (row-sum fusion, schedule/fuse_row_sums.cpp, once merged them and left the rest unwritten).
// Row counts below and above the sum's block of 256.
TEST(MultiOutput, ASumOfABroadcastScalarBesideAProductKeepsEveryOutput) {
  on_each_device([] {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{2, 50}, {5, 300}}) {
      auto av = iota_values(rows * cols, 0.125f, -3.0f);
      Tensor a = make(av, {rows, cols}), s = make({0.5f}, {});
      Tensor p = (a * s).sum({1}), r = s.expand({rows, cols}).sum({1}) * 2.0;
      const auto got = cat({p, r}).to_vector<float>();
      ASSERT_EQ(got.size(), static_cast<size_t>(2 * rows));
      for (int64_t i = 0; i < rows; i++) {
        double want = 0;
        for (int64_t j = 0; j < cols; j++) want += 0.5 * av[static_cast<size_t>(i * cols + j)];
        EXPECT_NEAR(got[static_cast<size_t>(i)], want, 1e-4 * std::fabs(want) + 1e-4) << i;
        EXPECT_EQ(got[static_cast<size_t>(rows + i)], static_cast<float>(cols)) << rows << " " << i;
      }
    }
  });
}

TEST(MultiOutput, InPlaceUpdatesReadTheOldValueAtTheirIndex) {
  // a <- a + b and b <- a - b in one kernel that stores into a and b: each must see the other's
  // old value, whichever is stored first.
  on_each_device([] {
    auto av = iota_values(33, 1.0f, 1.0f), bv = iota_values(33, -0.5f, 4.0f);
    Tensor a = make(av, {33}), b = make(bv, {33});
    {  // (lazy values still held when a and b are written would keep copies of the old data)
      Tensor a_new = a + b, b_new = a - b;
      a.copy_(a_new);
      b.copy_(b_new);
    }
    auto preserved = runtime_stats().buffers_preserved;
    EXPECT_EQ(kernels_for({a, b}), 1);
    EXPECT_EQ(runtime_stats().buffers_preserved, preserved);
    auto ra = a.to_vector<float>(), rb = b.to_vector<float>();
    for (size_t i = 0; i < av.size(); i++) {
      ASSERT_EQ(ra[i], av[i] + bv[i]);
      ASSERT_EQ(rb[i], av[i] - bv[i]);
    }
  });
}

TEST(MultiOutput, InPlaceUpdateNextToAShiftedReadOfItsTarget) {
  // a <- 2a, c = flip(a) + 1: c reads the old a at other indices, so it must not see the update.
  on_each_device([] {
    auto av = iota_values(9, 1.0f, 0.0f);
    Tensor a = make(av, {9});
    Tensor c = a.flip({0}) + 1.0;
    a.copy_(a * 2.0);
    realize({a, c});
    auto ra = a.to_vector<float>(), rc = c.to_vector<float>();
    for (size_t i = 0; i < av.size(); i++) {
      ASSERT_EQ(ra[i], 2.0f * av[i]);
      ASSERT_EQ(rc[i], av[av.size() - 1 - i] + 1.0f);
    }
  });
}

TEST(MultiOutput, AReduceBeforeAnInPlaceUpdateCostsNoCopy) {
  // g <- g * sum(g^2) (gradient clipping's shape): the sum reads g before the kernel that
  // overwrites it runs, so g is updated in place: two launches, no copy.
  auto gv = iota_values(64, 0.01f, -0.3f);
  Tensor g = make(gv, {64});
  Jit j([&](const std::vector<Tensor>&) {
    g.mul_((g * g).sum());
    realize({g});
    return std::vector<Tensor>{};
  });
  j({});  // warm-up
  j({});  // capture
  EXPECT_EQ(j.captured_launches(), 2);
  std::vector<double> want(gv.begin(), gv.end());
  for (int call = 0; call < 2; call++) {
    double s = 0;
    for (double v : want) s += v * v;
    for (double& v : want) v *= s;
  }
  auto r = g.to_vector<float>();
  for (size_t i = 0; i < gv.size(); i++) ASSERT_NEAR(r[i], want[i], 1e-5 * std::abs(want[i]));
}

TEST(MultiOutput, AdamUpdateOfOneParameterIsOneKernel) {
  // The step counter with both bias corrections is one kernel; exp_avg, exp_avg_sq and the
  // parameter are one more.
  Tensor p = make(iota_values(40, 0.1f, -2.05f), {40});
  p.set_requires_grad(true);
  optim::Adam opt({p}, optim::AdamOptions(0.1));
  (p * p).sum().backward();
  auto before = runtime_stats().kernels_launched;
  opt.step();
  EXPECT_EQ(runtime_stats().kernels_launched - before, 2);
  // One step of Adam from zero state moves every element by lr * sign(g) (up to eps).
  auto r = p.to_vector<float>();
  auto p0 = iota_values(40, 0.1f, -2.05f);
  for (size_t i = 0; i < r.size(); i++) {
    float want = p0[i] - (p0[i] > 0 ? 0.1f : (p0[i] < 0 ? -0.1f : 0.0f));
    ASSERT_NEAR(r[i], want, 1e-6) << i;
  }
}

TEST(MultiOutput, ClippedAdamUpdateOfOneParameterIsOneKernel) {
  // clip_grad_norm_ then Adam: the clip coefficient (the squared sum is its nest), the step
  // counter with the bias corrections, and one kernel that clips the gradient in place and
  // updates exp_avg, exp_avg_sq and the parameter.
  Tensor p = make(iota_values(40, 0.1f, -2.05f), {40});
  p.set_requires_grad(true);
  optim::Adam opt({p}, optim::AdamOptions(0.1));
  (p * p).sum().backward();
  nn::utils::clip_grad_norm_({p}, 0.5);
  auto before = runtime_stats().kernels_launched;
  opt.step();
  EXPECT_EQ(runtime_stats().kernels_launched - before, 3);
  // Adam's first step is invariant to a positive scale of the gradient; the gradient is clipped.
  auto p0 = iota_values(40, 0.1f, -2.05f);
  double norm = 0;
  for (float v : p0) norm += 4.0 * v * v;
  norm = std::sqrt(norm);
  auto r = p.to_vector<float>(), g = p.grad().to_vector<float>();
  for (size_t i = 0; i < r.size(); i++) {
    float want = p0[i] - (p0[i] > 0 ? 0.1f : (p0[i] < 0 ? -0.1f : 0.0f));
    ASSERT_NEAR(r[i], want, 2e-6) << i;
    ASSERT_NEAR(g[i], 2.0 * p0[i] * 0.5 / (norm + 1e-6), 1e-6) << i;
  }
}

}  // namespace

// A product whose consumer sees it through a permute and a split reshape (a convolution's
// [N, L, C] product read as NCHW [N, C, H, W]) is one kernel: the product iterates its own output
// space, stores the result through the inverse view and loads the consumer's other operands
// (a broadcast bias, a residual) through the composed views (schedule/lower.cpp,
// bijective_above). Views that are no bijection (a broadcast, a slice, a flip) or that no strided
// view expresses in the product's space (a padded operand split across merged dims) keep the
// product in a buffer of its own. Values against double-precision host loops, on the cpu device
// and the interp reference, at odd sizes on both sides of the register tile.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"
#include "kernel_probe.h"

namespace {

using namespace ember;
using ember_schedule_test::kernels_for;
using ember_schedule_test::on_each_device;

Tensor input(IntList shape) {
  Tensor t = rand(shape) - 0.5;
  t.realize();
  return t;
}

struct Sizes {
  int64_t n, h, w, c, k;
};

// p[n, l, c] = sum_r x[n, l, r] w[c, r] in double.
std::vector<double> product(const Sizes& s, const std::vector<float>& x,
                            const std::vector<float>& w) {
  const int64_t L = s.h * s.w;
  std::vector<double> p(static_cast<size_t>(s.n * L * s.c));
  for (int64_t n = 0; n < s.n; n++)
    for (int64_t l = 0; l < L; l++)
      for (int64_t c = 0; c < s.c; c++) {
        double a = 0;
        for (int64_t r = 0; r < s.k; r++) a += double(x[(n * L + l) * s.k + r]) * w[c * s.k + r];
        p[(n * L + l) * s.c + c] = a;
      }
  return p;
}

// relu(x W^T viewed NCHW + bias + residual): one kernel, values within the float sum's bound.
void expect_fused_epilogue(const Sizes& s) {
  SCOPED_TRACE(std::to_string(s.n) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
               std::to_string(s.c) + "x" + std::to_string(s.k));
  const int64_t L = s.h * s.w;
  Tensor x = input({s.n, L, s.k}), w = input({s.c, s.k}), b = input({s.c});
  Tensor res = input({s.n, s.c, s.h, s.w});
  const std::vector<double> p = product(s, x.to_vector<float>(), w.to_vector<float>());
  const auto bv = b.to_vector<float>(), rv = res.to_vector<float>();
  on_each_device([&] {
    Tensor y = x.matmul(w.t()).transpose(1, 2).reshape({s.n, s.c, s.h, s.w});
    Tensor out = (y + b.reshape({s.c, 1, 1}) + res).relu();
    EXPECT_EQ(kernels_for({out}), 1);
    const auto got = out.to_vector<float>();
    ASSERT_EQ(got.size(), rv.size());
    for (int64_t n = 0; n < s.n; n++)
      for (int64_t c = 0; c < s.c; c++)
        for (int64_t l = 0; l < L; l++) {
          const size_t at = static_cast<size_t>((n * s.c + c) * L + l);
          const double want = std::max(0.0, p[(n * L + l) * s.c + c] + bv[c] + rv[at]);
          ASSERT_NEAR(got[at], want, 1e-5 * (1 + s.k)) << "at n " << n << " c " << c << " l " << l;
        }
  });
}

TEST(PermutedEpilogue, ConvolutionLayoutIsOneKernel) {
  expect_fused_epilogue({1, 1, 1, 1, 1});
  expect_fused_epilogue({2, 5, 7, 11, 13});   // below a register tile
  expect_fused_epilogue({1, 9, 13, 37, 70});  // whole tiles and a remainder
  expect_fused_epilogue({3, 7, 11, 19, 129});
}

// The product's values [L, C] for the cases below, in double.
std::vector<double> plain(const Tensor& a, const Tensor& w) {
  const int64_t L = a.size(0), C = w.size(0);
  return product({1, L, 1, C, a.size(1)}, a.to_vector<float>(), w.to_vector<float>());
}

TEST(PermutedEpilogue, NoBijectionKeepsTheProductApart) {
  const int64_t L = 35, C = 11, K = 13;
  Tensor a = input({L, K}), w = input({C, K});
  const std::vector<double> p = plain(a, w);
  on_each_device([&] {
    // A broadcast repeats the product: fused, it would be computed three times.
    Tensor rep = a.matmul(w.t()).t().unsqueeze(0).expand({3, C, L}) + 1.0;
    EXPECT_EQ(kernels_for({rep}), 2);
    // A slice and a flip reach only part of it, or in reverse.
    Tensor part = a.matmul(w.t()).t().narrow(1, 2, 30) * 2.0;
    EXPECT_EQ(kernels_for({part}), 2);
    Tensor flipped = a.matmul(w.t()).t().flip({1}) - 1.0;
    EXPECT_EQ(kernels_for({flipped}), 2);
    const auto rv = rep.to_vector<float>(), pv = part.to_vector<float>(),
               fv = flipped.to_vector<float>();
    for (int64_t i = 0; i < 3; i++)
      for (int64_t c = 0; c < C; c++)
        for (int64_t l = 0; l < L; l++)
          ASSERT_NEAR(rv[(i * C + c) * L + l], p[l * C + c] + 1, 1e-4);
    for (int64_t c = 0; c < C; c++) {
      for (int64_t l = 0; l < 30; l++) ASSERT_NEAR(pv[c * 30 + l], 2 * p[(l + 2) * C + c], 1e-4);
      for (int64_t l = 0; l < L; l++) ASSERT_NEAR(fv[c * L + l], p[(L - 1 - l) * C + c] - 1, 1e-4);
    }
  });
}

TEST(PermutedEpilogue, PaddedOperandAcrossMergedDimsKeepsTheProductApart) {
  // The NCHW view of an [H W, C] product plus an operand padded along W: in the product's space
  // H and W merge into L, which the padded operand's mask cannot follow. The product keeps a
  // buffer; the consumer reads it through the permute.
  const int64_t H = 5, W = 7, C = 11, K = 13;
  Tensor a = input({H * W, K}), w = input({C, K}), z = input({C, H, W - 1});
  const std::vector<double> p = plain(a, w);
  const auto zv = z.to_vector<float>();
  on_each_device([&] {
    Tensor y = a.matmul(w.t()).t().reshape({C, H, W}) + constant_pad_nd(z, {0, 1});
    EXPECT_EQ(kernels_for({y}), 2);
    // The same without the permute: the split alone is in the product's order, and still the
    // mask cannot follow the merge.
    Tensor zt = z.permute({1, 2, 0}).contiguous();
    zt.realize();
    Tensor pz = constant_pad_nd(zt, {0, 0, 0, 1});
    Tensor y2 = a.matmul(w.t()).reshape({H, W, C}) + pz;
    EXPECT_EQ(kernels_for({y2}), 2);
    const auto got = y.to_vector<float>(), got2 = y2.to_vector<float>();
    for (int64_t c = 0; c < C; c++)
      for (int64_t h = 0; h < H; h++)
        for (int64_t x = 0; x < W; x++) {
          const double pad = x < W - 1 ? zv[(c * H + h) * (W - 1) + x] : 0.0;
          ASSERT_NEAR(got[(c * H + h) * W + x], p[(h * W + x) * C + c] + pad, 1e-4);
          ASSERT_NEAR(got2[(h * W + x) * C + c], p[(h * W + x) * C + c] + pad, 1e-4);
        }
  });
}

}  // namespace

// Elementwise kernels that read an operand transposed (schedule/kernel.cpp, simplify's step 4:
// the operand's unit-stride axis walked in blocks of 16 just outside the last loop), with the
// power-of-two strides of their vectorised loop hidden from GCC (render_c.cpp) and float MAX in
// its vectorisable form (c_expr.cpp). Each case runs on the cpu device and is checked against
// values computed here on the host from the inputs' data (not against the interp device, which
// runs the same, already blocked, kernel): a residual add that reads a convolution's
// channels-last [H W, C] output into NCHW, at batch 1 and 2; channel counts that are not a
// multiple of the block; a padded transposed operand; concatenations whose pieces do and do not
// keep to whole blocks; NaN and signed zeros through a max chain.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "kernel_list.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::input;

// The names of the kernels that realizing `t` launches.
std::string kernel_names(const Tensor& t) {
  std::string names;
  for (const schedule::Kernel& k : test::kernels_of({t})) names += k.name() + " ";
  return names;
}

// relu(a as NCHW + b + p): a [N, H W, C] channels-last, b [C], p [N, C, H, W]; the ResNet
// residual block's end.
struct Residual {
  int64_t n, c, h, w;
  Tensor a = input({n, h*w, c}), b = input({c}), p = input({n, c, h, w});

  Tensor value() const {
    return (a.reshape({n, h, w, c}).permute({0, 3, 1, 2}) + b.reshape({c, 1, 1}) + p).relu();
  }
  std::vector<float> expected() const {
    const auto av = a.to_vector<float>(), bv = b.to_vector<float>(), pv = p.to_vector<float>();
    std::vector<float> y(static_cast<size_t>(n * c * h * w));
    for (int64_t i = 0; i < n; i++)
      for (int64_t ch = 0; ch < c; ch++)
        for (int64_t l = 0; l < h * w; l++) {
          const int64_t o = (i * c + ch) * h * w + l;
          const float v = av[(i * h * w + l) * c + ch] + bv[ch] + pv[o];
          y[o] = v > 0 ? v : 0;
        }
    return y;
  }
};

void expect_values(const Tensor& t, const std::vector<float>& want) {
  const std::vector<float> got = t.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); i++)
    if (std::fabs(got[i] - want[i]) > 1e-5f * (1 + std::fabs(want[i])) && bad++ < 3)
      ADD_FAILURE() << "element " << i << ": " << got[i] << ", want " << want[i];
}

TEST(TransposedReads, ResidualAddReadsChannelsLastInBlocksOfSixteen) {
  NoGradGuard no_grad;
  // 64 channels: blocks of 16 ([4, 16, H W]: H and W merge, both sides walk them in one
  // order); at batch 2 the batch stays the outer axis.
  for (const Residual& r : {Residual{1, 64, 7, 9}, Residual{2, 32, 5, 11}}) {
    const std::string names = kernel_names(r.value());
    const std::string want = r.n == 1 ? "E_4_16_63 " : "E_2_2_16_55 ";
    EXPECT_NE(names.find(want), std::string::npos) << names;
    expect_values(r.value(), r.expected());
  }
}

TEST(TransposedReads, ChannelsNotAMultipleOfTheBlockStayUnblocked) {
  NoGradGuard no_grad;
  // 24 and 40 channels: no whole blocks; 8 and 16: one block or less on the thread pool's axis.
  // The stride along the vector loop (8, 16 and 24, 40) is hidden or not; the values must not
  // care.
  for (const Residual& r : {Residual{1, 24, 6, 13}, Residual{1, 40, 3, 17}, Residual{1, 8, 9, 9},
                            Residual{1, 16, 4, 33}}) {
    const std::string names = kernel_names(r.value());
    EXPECT_NE(names.find("E_" + std::to_string(r.c) + "_"), std::string::npos) << names;
    expect_values(r.value(), r.expected());
  }
}

TEST(TransposedReads, PaddedTransposedOperand) {
  NoGradGuard no_grad;
  // The channels-last operand padded by 1 along H and 2 along W (masks along the outer and last
  // axes, none along the blocked channels), plus a broadcast row of W.
  const int64_t c = 32, h = 6, w = 10;
  Tensor a = input({h, w, c}), row = input({w + 4});
  Tensor y = pad(a.permute({2, 0, 1}), {2, 2, 1, 1}) * row + 1.0f;
  EXPECT_NE(kernel_names(y).find("E_2_8_16_14 "), std::string::npos) << kernel_names(y);
  const auto av = a.to_vector<float>(), rv = row.to_vector<float>();
  std::vector<float> want;
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t i = 0; i < h + 2; i++)
      for (int64_t j = 0; j < w + 4; j++) {
        const bool in = i >= 1 && i <= h && j >= 2 && j < w + 2;
        want.push_back((in ? av[((i - 1) * w + (j - 2)) * c + ch] : 0.0f) * rv[j] + 1.0f);
      }
  expect_values(y, want);
}

TEST(TransposedReads, ConcatenationsInWholeBlocksAndNot) {
  NoGradGuard no_grad;
  // SqueezeNet's Fire module: relu(cat(e1, e3) + bias) along the channels, one piece NCHW and one
  // channels-last. Pieces of 16 + 32 channels block (a switch over the blocks); 8 + 24 do not.
  for (int64_t c1 : {16, 8}) {
    const int64_t c3 = 48 - c1, h = 5, w = 12;
    Tensor e1 = input({c1, h, w}), e3 = input({h * w, c3}), bias = input({48});
    Tensor y =
        (cat({e1, e3.permute({1, 0}).reshape({c3, h, w})}, 0) + bias.reshape({48, 1, 1})).relu();
    const std::string names = kernel_names(y);
    EXPECT_EQ(names.find("E_3_16_60 ") != std::string::npos, c1 == 16) << names;
    const auto v1 = e1.to_vector<float>(), v3 = e3.to_vector<float>(), bv = bias.to_vector<float>();
    std::vector<float> want;
    for (int64_t ch = 0; ch < 48; ch++)
      for (int64_t l = 0; l < h * w; l++) {
        const float v = (ch < c1 ? v1[ch * h * w + l] : v3[l * c3 + ch - c1]) + bv[ch];
        want.push_back(v > 0 ? v : 0);
      }
    expect_values(y, want);
  }
}

TEST(TransposedReads, MaxChainKeepsNaNAndTheFirstOfTiedZeros) {
  NoGradGuard no_grad;
  // maximum(maximum(x, y), z) over a vector loop's worth and more: NaN wins from either side,
  // a tie gives the first operand (-0 against +0), else the larger.
  const float nan = std::nanf("");
  std::vector<float> x, y, z;
  for (int i = 0; i < 67; i++) {
    const float p[][3] = {{nan, 1, 2},       {1, nan, 2}, {1, 2, nan},  {-0.0f, 0.0f, -1},
                          {0.0f, -0.0f, -1}, {3, -2, 1},  {-5, -4, -6}, {nan, nan, 0}};
    const auto& q = p[i % 8];
    x.push_back(q[0]);
    y.push_back(q[1]);
    z.push_back(q[2]);
  }
  Tensor tx = from_vector(x), ty = from_vector(y), tz = from_vector(z);
  const std::vector<float> got = maximum(maximum(tx, ty), tz).relu().to_vector<float>();
  for (size_t i = 0; i < got.size(); i++) {
    const int k = static_cast<int>(i % 8);
    if (k <= 2 || k == 7) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
      continue;
    }
    const float want[] = {0, 0, 0, -0.0f, 0.0f, 3, 0};
    EXPECT_EQ(got[i], want[k]) << i;
    // relu is max(v, 0): a tie of -0 against +0 keeps v's sign.
    if (k == 3) {
      EXPECT_TRUE(std::signbit(got[i])) << i;
    }
    if (k == 4) {
      EXPECT_FALSE(std::signbit(got[i])) << i;
    }
  }
}

}  // namespace

// nn::init computes on the host (issue 17: no kernel per parameter shape at start-up). Its values
// are checked against the device expressions they replace, drawn from the same stream position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ember/ember.h"
#include "ember/host_values.h"

namespace {

using namespace ember;

int64_t ulps(float a, float b) {
  int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return std::abs(static_cast<int64_t>(x) - static_cast<int64_t>(y));  // same sign here
}

// A realized tensor (as a module's parameter is), filled with ones.
Tensor param(IntList shape, ScalarType t = kFloat32) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  Tensor p =
      from_vector(std::vector<double>(static_cast<size_t>(n), 1.0), shape).to(t).contiguous();
  p.realize();
  return p;
}

// The generated kernels contract u * scale + shift to one FMA where the target has one.
bool target_has_fma() { return kernel_target().find("FMA") != std::string::npos; }

TEST(Init, RandValuesAreRandsStream) {
  manual_seed(11);
  (void)rand({5});  // a draw before: the counter is part of the key
  const std::vector<float> host = rand_values(1000);
  const float after_host = rand({1}).item<float>();
  manual_seed(11);
  (void)rand({5});
  const std::vector<float> dev = rand({1000}).to_vector<float>();
  const float after_dev = rand({1}).item<float>();
  ASSERT_EQ(host.size(), dev.size());
  EXPECT_EQ(std::memcmp(host.data(), dev.data(), host.size() * sizeof(float)), 0);
  EXPECT_EQ(after_host, after_dev);  // the same number of draws
  EXPECT_THROW(rand_values(-1), ValueError);
}

TEST(Init, UniformIsTheDeviceExpression) {
  for (auto [low, high] : {std::pair{-0.3, 0.7}, std::pair{-0.125, 0.125}, std::pair{2.0, 5.5}}) {
    manual_seed(3);
    Tensor t = param({64, 24});
    nn::init::uniform_(t, low, high);
    manual_seed(3);
    const std::vector<float> dev = (rand({64, 24}) * (high - low) + low).to_vector<float>();
    const std::vector<float> host = t.to_vector<float>();
    ASSERT_EQ(host.size(), dev.size());
    int64_t worst = 0;
    for (size_t i = 0; i < host.size(); i++) {
      worst = std::max(worst, ulps(host[i], dev[i]));
      EXPECT_GE(host[i], low);
      EXPECT_LT(host[i], high);
    }
    // Bit-identical where the kernel fuses the multiply-add; one rounding apart otherwise.
    EXPECT_LE(worst, target_has_fma() ? 0 : 1) << low << " " << high;
  }
  manual_seed(3);
  Tensor d = param({300}, kFloat64);
  nn::init::uniform_(d, -1.0, 3.0);
  manual_seed(3);
  const std::vector<double> dd = (rand({300}, kFloat64) * 4.0 + -1.0).to_vector<double>();
  const std::vector<double> hd = d.to_vector<double>();
  for (size_t i = 0; i < hd.size(); i++)
    EXPECT_NEAR(hd[i], dd[i], target_has_fma() ? 0.0 : 1e-15) << i;
}

TEST(Init, ConstantAndZeros) {
  Tensor t = param({3, 5});
  nn::init::constant_(t, 0.1);
  for (float v : t.to_vector<float>()) EXPECT_EQ(v, 0.1f);
  nn::init::zeros_(t);
  for (float v : t.to_vector<float>()) EXPECT_EQ(v, 0.0f);
  Tensor i = param({4}, kInt64);  // not a float: the device path
  nn::init::constant_(i, 7);
  for (int64_t v : i.to_vector<int64_t>()) EXPECT_EQ(v, 7);
}

// (semi-)orthogonal with the gain, from as many draws as randn({m, n}, kFloat64).
TEST(Init, OrthogonalIsOrthogonalAndDrawsLikeRandn) {
  for (auto [rows, cols, gain] :
       {std::tuple{64, 8, 1.0}, std::tuple{4, 64, 0.01}, std::tuple{32, 32, std::sqrt(2.0)}}) {
    manual_seed(5);
    Tensor w = param({rows, cols});
    nn::init::orthogonal_(w, gain);
    const float next = rand({1}).item<float>();
    manual_seed(5);
    (void)randn({std::max(rows, cols), std::min(rows, cols)}, kFloat64);
    EXPECT_EQ(next, rand({1}).item<float>()) << "orthogonal_ draws what randn draws";
    const std::vector<float> v = w.to_vector<float>();
    // W W^T (wide) or W^T W (tall) is gain^2 I.
    const int64_t k = std::min(rows, cols), len = std::max(rows, cols);
    auto at = [&](int64_t vec, int64_t i) {
      return rows < cols ? static_cast<double>(v[vec * cols + i])
                         : static_cast<double>(v[i * cols + vec]);
    };
    for (int64_t a = 0; a < k; a++)
      for (int64_t b = 0; b < k; b++) {
        double d = 0;
        for (int64_t i = 0; i < len; i++) d += at(a, i) * at(b, i);
        EXPECT_NEAR(d, a == b ? gain * gain : 0.0, 1e-5 * gain * gain) << a << "," << b;
      }
  }
}

// A Haar-random orthogonal matrix (QR of a standard normal one): sqrt(n) times an entry is close
// to standard normal, so about 68.3% of them lie within one of zero (uniform draws instead of
// normal ones, or a wrong Box-Muller, would move this).
TEST(Init, OrthogonalEntriesAreSpreadLikeNormals) {
  manual_seed(9);
  Tensor w = param({256, 256});
  nn::init::orthogonal_(w);
  const std::vector<float> v = w.to_vector<float>();
  int64_t within = 0;
  double sum = 0;
  for (float x : v) {
    within += std::abs(x) * 16.0 < 1.0;
    sum += x;
  }
  EXPECT_NEAR(static_cast<double>(within) / static_cast<double>(v.size()), 0.6827, 0.01);
  EXPECT_LT(std::abs(sum), 64.0);  // 1^T Q 1 has a spread of about 1 per row: ~16 here
}

// Parameters and optimizer states start from constants: realized_clone fills those on the host,
// with the fill kernel's values, and computes anything else.
TEST(Init, RealizedCloneFillsConstantsOnTheHost) {
  reset_runtime_stats();
  const Tensor a = realized_clone(full({3, 4}, 0.1, kFloat32));
  const Tensor b = realized_clone(zeros({2, 3}, kInt64).permute({1, 0}));
  const Tensor c = realized_clone(full({}, -2.5, kFloat64).expand({5}));
  EXPECT_EQ(runtime_stats().kernels_compiled, 0);
  EXPECT_EQ(a.sizes(), (IntList{3, 4}));
  EXPECT_EQ(b.sizes(), (IntList{3, 2}));
  const Tensor dev = (full({3, 4}, 0.1, kFloat32) + zeros({3, 4})).contiguous();
  EXPECT_EQ(a.to_vector<float>(), dev.to_vector<float>());
  for (float v : a.to_vector<float>()) EXPECT_EQ(v, 0.1f);
  for (int64_t v : b.to_vector<int64_t>()) EXPECT_EQ(v, 0);
  for (double v : c.to_vector<double>()) EXPECT_EQ(v, -2.5);
  // A buffer of its own: writing one clone leaves another unchanged.
  Tensor a2 = realized_clone(full({3, 4}, 0.1, kFloat32));
  a2.add_(ones({3, 4}));
  a2.realize();
  EXPECT_EQ(a.to_vector<float>()[0], 0.1f);
  EXPECT_EQ(a2.to_vector<float>()[0], 1.1f);
  // Not a constant: computed.
  const Tensor d = realized_clone(arange(6, TensorOptions().dtype(kFloat32)) * 2.0);
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  EXPECT_FALSE(d.requires_grad());
}

}  // namespace

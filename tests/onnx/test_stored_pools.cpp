// A pooling node's output that several nodes read is stored once (src/onnx/run.cpp's
// stored_pools), not recomputed by each reader's kernel: ResNet's max pool after the stem feeds
// the first block's convolution and its residual add. The outputs against a max pool and 3x3
// convolution computed here in double, and the max operations in the kernels (DEBUG=3's fused
// ops) those of one pool, as when the pool has one reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>

#include "ember/context.h"
#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;

constexpr int64_t C = 8, S = 9, P = 5;  // channels, input side, pooled side (3x3, stride 2, pad 1)

std::vector<float> values(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// x -> MaxPool -> p -> Conv (3x3, pads 1) -> c; y = c + p when `residual`, else y = c.
std::string model(const std::vector<float>& w, bool residual) {
  ModelBuilder b(13);
  b.input({"x", kF32, {1, C, S, S}}).output({"y", kF32, {1, C, P, P}});
  b.initializer("w", w, {C, C, 3, 3});
  auto& pool = b.node("MaxPool", {"x"}, {"p"});
  ModelBuilder::attr_ints(pool, "kernel_shape", {3, 3});
  ModelBuilder::attr_ints(pool, "strides", {2, 2});
  ModelBuilder::attr_ints(pool, "pads", {1, 1, 1, 1});
  auto& conv = b.node("Conv", {"p", "w"}, {residual ? "c" : "y"});
  ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
  if (residual) b.node("Add", {"c", "p"}, {"y"});
  return b.bytes();
}

// The MAX operations of the kernels DEBUG=3 lists for one run of `m`.
int max_ops(eo::Model& m, const Tensor& x, std::vector<float>& out) {
  Context& ctx = Context::get();
  const int old = ctx.debug;
  ctx.debug = 3;
  testing::internal::CaptureStderr();
  out = m({x})[0].to_vector<float>();
  const std::string log = testing::internal::GetCapturedStderr();
  ctx.debug = old;
  int n = 0;
  for (size_t at = log.find("fused:"); at != std::string::npos; at = log.find("fused:", at + 1)) {
    const std::string line = log.substr(at, log.find('\n', at) - at);
    for (size_t i = line.find(" MAX"); i != std::string::npos; i = line.find(" MAX", i + 1)) n++;
  }
  return n;
}

TEST(OnnxStoredPools, APoolReadTwiceIsComputedOnce) {
  const std::vector<float> xv = values(C * S * S, 1), w = values(C * C * 9, 2);
  const Tensor x = from_vector<float>(xv, Shape{1, C, S, S});
  std::vector<double> pooled(C * P * P, -std::numeric_limits<double>::infinity());
  for (int64_t c = 0; c < C; c++)
    for (int64_t i = 0; i < P; i++)
      for (int64_t j = 0; j < P; j++)
        for (int64_t r = 2 * i - 1; r <= 2 * i + 1; r++)
          for (int64_t q = 2 * j - 1; q <= 2 * j + 1; q++)
            if (r >= 0 && r < S && q >= 0 && q < S)
              pooled[(c * P + i) * P + j] =
                  std::max(pooled[(c * P + i) * P + j], double(xv[(c * S + r) * S + q]));
  std::vector<float> once, twice;
  eo::Model single = eo::load_from_bytes(model(w, false));
  eo::Model both = eo::load_from_bytes(model(w, true));
  const int single_max = max_ops(single, x, once), both_max = max_ops(both, x, twice);
  EXPECT_GT(single_max, 0);
  EXPECT_EQ(both_max, single_max);
  for (int64_t o = 0; o < C; o++)
    for (int64_t l = 0; l < P * P; l++) {
      double c = 0;
      for (int64_t i = 0; i < C; i++)
        for (int64_t k = 0; k < 9; k++) {
          const int64_t r = l / P + k / 3 - 1, q = l % P + k % 3 - 1;
          if (r >= 0 && r < P && q >= 0 && q < P)
            c += double(w[(o * C + i) * 9 + k]) * pooled[(i * P + r) * P + q];
        }
      EXPECT_NEAR(once[o * P * P + l], c, 1e-5) << o << "," << l;
      EXPECT_NEAR(twice[o * P * P + l], c + pooled[o * P * P + l], 1e-5) << o << "," << l;
    }
}

}  // namespace

// Load-time folding of BatchNormalization into the Conv before it (src/onnx/fold.cpp): the folded
// model's outputs against a direct convolution and the spec's BatchNormalization formula computed
// here in double, and the cases that must not fold (an output read elsewhere, statistics a caller
// may replace, training mode).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ember/ember.h"
#include "ember/onnx/model.h"
#include "model_builder.h"

namespace {

using namespace ember;
using namespace onnx_test;
namespace eo = ember::onnx;

constexpr int64_t N = 2, Cin = 4, H = 5, W = 6, K = 3;

std::vector<float> random_values(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

struct ConvBn {
  int64_t cout = 6, group = 1, stride = 1;
  bool bias = true;
  float eps = 1e-3f;
  std::vector<float> x, w, b, scale, shift, mean, var;
  int64_t oh() const { return (H + 2 - K) / stride + 1; }
  int64_t ow() const { return (W + 2 - K) / stride + 1; }

  void fill(unsigned seed = 0) {
    const auto c = static_cast<size_t>(cout);
    x = random_values(static_cast<size_t>(N * Cin * H * W), -1, 1, 1);
    w = random_values(c * static_cast<size_t>(Cin / group * K * K), -1, 1, 2);
    b = random_values(c, -1, 1, seed + 3);
    scale = random_values(c, 0.5f, 2, seed + 4);
    shift = random_values(c, -1, 1, seed + 5);
    mean = random_values(c, -0.5f, 0.5f, seed + 6);
    var = random_values(c, 0.1f, 3, seed + 7);
  }

  // Conv (pads 1) then BatchNormalization; `conv_out` also a graph output when asked.
  ModelBuilder model(bool conv_out = false, bool stats_are_inputs = false) const {
    ModelBuilder b(14);
    b.input({"x", kF32, {N, Cin, H, W}}).output({"y", kF32, {N, cout, oh(), ow()}});
    if (conv_out) b.output({"c", kF32, {N, cout, oh(), ow()}});
    if (stats_are_inputs) b.input({"scale", kF32, {cout}});
    b.initializer("w", w, {cout, Cin / group, K, K});
    add(b, "", "w");
    return b;
  }

  // The initializers (but the weights `w_name`) and nodes of x -> Conv -> BatchNormalization ->
  // y, each name prefixed by `p` but x's and the weights'.
  void add(ModelBuilder& b, const std::string& p, const std::string& w_name) const {
    if (bias) b.initializer(p + "b", this->b, {cout});
    b.initializer(p + "scale", scale, {cout});
    b.initializer(p + "shift", shift, {cout});
    b.initializer(p + "mean", mean, {cout});
    b.initializer(p + "var", var, {cout});
    auto& conv = bias ? b.node("Conv", {"x", w_name, p + "b"}, {p + "c"})
                      : b.node("Conv", {"x", w_name}, {p + "c"});
    ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(conv, "strides", {stride, stride});
    ModelBuilder::attr_int(conv, "group", group);
    auto& bn = b.node("BatchNormalization",
                      {p + "c", p + "scale", p + "shift", p + "mean", p + "var"}, {p + "y"});
    auto* e = bn.add_attribute();
    e->set_name("epsilon");
    e->set_type(::onnx::AttributeProto::FLOAT);
    e->set_f(eps);
  }

  // The convolution (before_bn) or the spec's y = (x - mean) / sqrt(var + eps) * scale + B.
  std::vector<double> reference(bool before_bn, const std::vector<float>& sc) const {
    const int64_t cg = Cin / group, og = cout / group;
    std::vector<double> y;
    for (int64_t n = 0; n < N; n++)
      for (int64_t o = 0; o < cout; o++)
        for (int64_t i = 0; i < oh(); i++)
          for (int64_t j = 0; j < ow(); j++) {
            double s = bias ? b[static_cast<size_t>(o)] : 0.0;
            for (int64_t c = 0; c < cg; c++)
              for (int64_t ki = 0; ki < K; ki++)
                for (int64_t kj = 0; kj < K; kj++) {
                  const int64_t r = i * stride + ki - 1, q = j * stride + kj - 1;
                  if (r < 0 || r >= H || q < 0 || q >= W) continue;
                  const int64_t ci = o / og * cg + c;
                  s += static_cast<double>(
                           x[static_cast<size_t>(((n * Cin + ci) * H + r) * W + q)]) *
                       w[static_cast<size_t>(((o * cg + c) * K + ki) * K + kj)];
                }
            const auto u = static_cast<size_t>(o);
            y.push_back(before_bn
                            ? s
                            : (s - mean[u]) / std::sqrt(static_cast<double>(var[u]) + eps) * sc[u] +
                                  shift[u]);
          }
    return y;
  }
};

void expect_close(const Tensor& got, const std::vector<double>& want) {
  const auto g = got.to_vector<float>();
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); i++)
    EXPECT_NEAR(g[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "element " << i;
}

Tensor input(const ConvBn& t) { return from_vector<float>(t.x, Shape{N, Cin, H, W}); }

TEST(OnnxFold, BatchNormFoldsIntoTheConv) {
  ConvBn t;
  t.fill();
  eo::Model m = eo::load_from_bytes(t.model().bytes());
  ASSERT_EQ(m.nodes().size(), 1u);
  EXPECT_EQ(m.nodes()[0].op_type, "Conv");
  EXPECT_EQ(m.nodes()[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(m.op_counts().size(), 2u);  // the file's ops
  expect_close(m({input(t)})[0], t.reference(false, t.scale));
}

TEST(OnnxFold, ConvWithoutBiasGroupsAndStride) {
  ConvBn t;
  t.bias = false;
  t.group = 2;
  t.stride = 2;
  t.fill();
  eo::Model m = eo::load_from_bytes(t.model().bytes());
  ASSERT_EQ(m.nodes().size(), 1u);
  ASSERT_EQ(m.nodes()[0].inputs.size(), 3u);  // the folded bias
  expect_close(m({input(t)})[0], t.reference(false, t.scale));
}

TEST(OnnxFold, ConvOutputReadElsewhereDoesNotFold) {
  ConvBn t;
  t.fill();
  eo::Model m = eo::load_from_bytes(t.model(true).bytes());
  EXPECT_EQ(m.nodes().size(), 2u);
  auto out = m({input(t)});
  expect_close(out[0], t.reference(false, t.scale));
  expect_close(out[1], t.reference(true, t.scale));
}

// A graph input with an initializer's name takes the initializer as its default only.
TEST(OnnxFold, StatisticsACallerMayReplaceDoNotFold) {
  ConvBn t;
  t.fill();
  eo::Model m = eo::load_from_bytes(t.model(false, true).bytes());
  EXPECT_EQ(m.nodes().size(), 2u);
  expect_close(m.run({{"x", input(t)}})[0].second, t.reference(false, t.scale));
  std::vector<float> other(t.scale.size(), 3.0f);
  auto out = m.run({{"x", input(t)}, {"scale", from_vector<float>(other)}});
  expect_close(out[0].second, t.reference(false, other));
}

// Weights of 4 KiB or more: the loader takes their bytes from the message without a copy, and
// folding rewrites them in place when the Conv is their only reader.
TEST(OnnxFold, LargeWeightsFoldInPlace) {
  ConvBn t;
  t.cout = 32;  // 32 x 4 x 3 x 3 floats: 4608 bytes
  t.fill();
  eo::Model m = eo::load_from_bytes(t.model().bytes());
  ASSERT_EQ(m.nodes().size(), 1u);
  expect_close(m({input(t)})[0], t.reference(false, t.scale));
}

// Two Conv + BatchNormalization pairs read the same weights: each pair folds its own statistics
// into a copy, and the weights that an Identity also outputs keep their values.
TEST(OnnxFold, SharedWeightsFoldIntoCopies) {
  ConvBn t1;
  t1.cout = 32;
  t1.fill();
  ConvBn t2 = t1;
  t2.fill(10);  // other statistics and bias, the same weights and input
  ModelBuilder b(14);
  b.input({"x", kF32, {N, Cin, H, W}})
      .output({"p1_y", kF32, {N, t1.cout, t1.oh(), t1.ow()}})
      .output({"p2_y", kF32, {N, t2.cout, t2.oh(), t2.ow()}})
      .output({"w_out", kF32, {t1.cout, Cin, K, K}});
  b.initializer("w", t1.w, {t1.cout, Cin, K, K});
  t1.add(b, "p1_", "w");
  t2.add(b, "p2_", "w");
  b.node("Identity", {"w"}, {"w_out"});
  eo::Model m = eo::load_from_bytes(b.bytes());
  EXPECT_EQ(m.nodes().size(), 3u);  // both pairs folded
  auto out = m({input(t1)});
  ASSERT_EQ(out.size(), 3u);
  expect_close(out[0], t1.reference(false, t1.scale));
  expect_close(out[1], t2.reference(false, t2.scale));
  EXPECT_EQ(out[2].to_vector<float>(), t1.w);
}

TEST(OnnxFold, TrainingModeDoesNotFold) {
  ConvBn t;
  t.fill();
  ModelBuilder b = t.model();
  auto* bn = b.proto().mutable_graph()->mutable_node(1);
  ModelBuilder::attr_int(*bn, "training_mode", 1);
  EXPECT_EQ(eo::load_from_bytes(b.bytes()).nodes().size(), 2u);
}

}  // namespace

// What libtorch cannot check for the layers of ember/nn and the ops under them: dropout's masks
// (ember's generator is not libtorch's) by their structure and statistics, seeded reproducibility,
// the modules' errors, train()/eval(), Module::to, and a checkpoint round trip of a CNN's state
// dict (BatchNorm2d's buffers included). Values against libtorch: tests/parity/parity_modules.cpp
// and parity_training.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "ember/ember.h"

namespace {

using namespace ember;

// Dropout at p: every element is 0 or x / (1 - p), the gradient is the same mask times
// 1 / (1 - p), and the kept fraction lies within 5 standard deviations of 1 - p.
TEST(Dropout, MaskScaleGradientAndRate) {
  manual_seed(3);
  const double p = 0.3;
  const int64_t n = 20000;
  Tensor x = (rand({n}) + 1).realize();  // in [1, 2): never 0
  x.requires_grad_(true);
  Tensor y = dropout(x, p, true);
  y.sum().backward();
  const auto xv = x.to_vector<float>(), yv = y.to_vector<float>(), gv = x.grad().to_vector<float>();
  const float scale = static_cast<float>(1 / (1 - p));
  int64_t kept = 0;
  for (size_t i = 0; i < xv.size(); i++) {
    if (yv[i] == 0) {
      EXPECT_EQ(gv[i], 0.0f) << i;
    } else {
      kept++;
      EXPECT_FLOAT_EQ(yv[i], xv[i] * scale) << i;
      EXPECT_FLOAT_EQ(gv[i], scale) << i;
    }
  }
  const double sd = std::sqrt(n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(kept), n * (1 - p), 5 * sd);
}

TEST(Dropout, SeededRunsRepeatAndDrawsDiffer) {
  Tensor x = ones({64});
  manual_seed(11);
  auto a = dropout(x, 0.5, true).to_vector<float>();
  auto b = dropout(x, 0.5, true).to_vector<float>();
  manual_seed(11);
  EXPECT_EQ(dropout(x, 0.5, true).to_vector<float>(), a);
  EXPECT_NE(a, b);  // the second draw continues the stream (2^-64 odds of a clash)
}

TEST(Dropout, IdentityAndEdgesAndErrors) {
  Tensor x = randn({5});
  EXPECT_TRUE(dropout(x, 0.4, false).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true).is_same(x));
  EXPECT_EQ(dropout(x, 1.0, true).abs().sum().item<float>(), 0.0f);
  EXPECT_THROW(dropout(x, 1.5, true), ValueError);
  EXPECT_THROW(dropout(x, -0.1, false), ValueError);
  EXPECT_THROW(dropout(ones({3}, kInt64), 0.5, true), DTypeError);
  EXPECT_THROW(nn::Dropout(2.0), ValueError);
}

TEST(Dropout, ModuleFollowsTrainAndEval) {
  nn::Dropout d(0.5);
  Tensor x = ones({256});
  EXPECT_GT((d(x) == 0).to(kInt64).sum().item<int64_t>(), 0);
  d->eval();
  EXPECT_TRUE(d(x).is_same(x));
}

// Attention's dropout acts on the weights: with p = 1 every weight is dropped.
TEST(Attention, DropoutAndErrors) {
  Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 2});
  EXPECT_EQ(scaled_dot_product_attention(q, k, v, {}, 1.0).abs().sum().item<float>(), 0.0f);
  EXPECT_THROW(scaled_dot_product_attention(q, k, v, ones({3, 5}, kBool), 0.0, true), ValueError);
  EXPECT_THROW(scaled_dot_product_attention(q, randn({2, 5, 3}), v), ShapeError);
  EXPECT_THROW(scaled_dot_product_attention(q, k, randn({2, 4, 2})), ShapeError);
}

TEST(Activations, ErrorsAndDtypes) {
  EXPECT_THROW(gelu(randn({2}), "exact"), ValueError);
  EXPECT_THROW(silu(ones({2}, kInt64)), DTypeError);
  EXPECT_EQ(leaky_relu(randn({2}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(softplus(randn({2})).dtype(), kFloat32);
}

TEST(Modules, OptionsAndErrors) {
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), ValueError);
  EXPECT_THROW(nn::Conv2d(0, 4, 3), ValueError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 4, {3, 3, 3})), ValueError);
  EXPECT_THROW(nn::GroupNorm(4, 6), ValueError);
  EXPECT_THROW(nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)), ValueError);
  nn::BatchNorm2d bn(3);
  EXPECT_THROW(bn(randn({2, 3, 4})), ValueError);
  nn::Conv2d c(nn::Conv2dOptions(2, 3, {3, 1}).stride(2).bias(false));
  EXPECT_EQ(c->weight.shape(), (Shape{3, 2, 3, 1}));
  EXPECT_FALSE(c->bias.defined());
  EXPECT_EQ(c(randn({1, 2, 7, 4})).shape(), (Shape{1, 3, 3, 2}));
  // Default initialisation within libtorch's bounds: 1 / sqrt(fan in).
  const float bound = 1 / std::sqrt(6.0f);
  EXPECT_LE(c->weight.abs().max().item<float>(), bound);
}

TEST(Modules, ContainersNameAndFind) {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  list->push_back(nn::Linear(3, 1));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_THROW((*list)[5], IndexError);
  EXPECT_THROW(list->ptr<nn::LinearImpl>(1), ValueError);
  std::vector<std::string> names;
  for (auto& [n, t] : list->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  nn::ModuleDict dict;
  dict->insert("a", nn::Linear(1, 1));
  EXPECT_THROW(dict->insert("a", nn::ReLU()), ValueError);
  EXPECT_THROW(dict->insert("b.c", nn::ReLU()), ValueError);
  EXPECT_THROW((*dict)["zz"], ValueError);
  dict->update({{"a", nn::ReLU().ptr()}, {"b", nn::Tanh().ptr()}});
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(dict->parameters().empty());  // "a" now holds the ReLU
  EXPECT_TRUE(dict->contains("b"));
}

TEST(Modules, TrainAndEvalReachChildren) {
  nn::Sequential net(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::Dropout(0.5));
  net->eval();
  for (auto& [n, c] : net->named_children()) EXPECT_FALSE(c->is_training()) << n;
  net->train();
  for (auto& [n, c] : net->named_children()) EXPECT_TRUE(c->is_training()) << n;
}

// A small CNN's state dict (parameters, then the buffers, num_batches_tracked a 0-d int64)
// survives a safetensors round trip.
TEST(Modules, CnnCheckpointRoundTrip) {
  auto make = [](uint64_t seed) {
    manual_seed(seed);
    return nn::Sequential(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::ReLU(), nn::Flatten(),
                          nn::Linear(8, 3));
  };
  nn::Sequential a = make(1), b = make(2);
  a->forward(randn({4, 1, 4, 4}));  // a training step moves the running statistics
  const auto path =
      (std::filesystem::temp_directory_path() / "ember_cnn_ckpt.safetensors").string();
  save(a, path);
  load(b, path);
  std::filesystem::remove(path);
  auto sa = a->named_buffers(), sb = b->named_buffers();
  ASSERT_EQ(sa.size(), 3u);
  EXPECT_EQ(sa[2].first, "1.num_batches_tracked");
  EXPECT_EQ(sb[2].second.item<int64_t>(), 1);
  EXPECT_EQ(sb[0].second.to_vector<float>(), sa[0].second.to_vector<float>());
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); i++)
    EXPECT_EQ(pb[i].to_vector<float>(), pa[i].to_vector<float>());
}

// An optimizer step lands BatchNorm's pending running statistics in its schedule: they are
// buffers again after every step (a chain of pending updates would grow with every step, each
// holding its batch's forward graph).
TEST(Modules, OptimizerStepRealizesRunningStatistics) {
  manual_seed(5);
  nn::Sequential net(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::Flatten(), nn::Linear(8, 1));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  auto bn = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(net->named_children()[1].second);
  ASSERT_TRUE(bn);
  for (int step = 0; step < 3; step++) {
    Tensor loss = net->forward(randn({4, 1, 4, 4})).square().mean();
    EXPECT_FALSE(bn->running_mean.is_realized());  // pending until the step
    opt.zero_grad();
    loss.backward();
    opt.step();
    EXPECT_TRUE(bn->running_mean.is_realized()) << step;
    EXPECT_TRUE(bn->running_var.is_realized()) << step;
    EXPECT_TRUE(bn->num_batches_tracked.is_realized()) << step;
  }
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 3);
}

// Module::to(kFloat64) converts the floating state of the whole tree in place: the modules'
// members, the names and requires_grad follow, gradients are converted, num_batches_tracked
// stays int64, values are kept exactly, a pending running statistic is kept, an optimizer built
// afterwards steps the new tensors; a pending in-place update and a non-floating dtype too.
TEST(Modules, ToConvertsTheTreeInPlace) {
  manual_seed(7);
  nn::Sequential net(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2), nn::Flatten(), nn::Linear(8, 1));
  auto conv = std::dynamic_pointer_cast<nn::Conv2dImpl>(net->named_children()[0].second);
  auto bn = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(net->named_children()[1].second);
  ASSERT_TRUE(conv && bn);
  net->forward(randn({4, 1, 4, 4})).sum().backward();
  const auto names = net->named_parameters();
  const std::vector<float> w32 = conv->weight.to_vector<float>();
  const std::vector<float> g32 = conv->weight.grad().to_vector<float>();
  const std::vector<float> mean32 = bn->running_mean.to_vector<float>();
  net->to(kFloat64);
  EXPECT_EQ(conv->weight.dtype(), kFloat64);
  EXPECT_TRUE(conv->weight.requires_grad());
  EXPECT_EQ(conv->weight.grad().dtype(), kFloat64);
  EXPECT_EQ(bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  const std::vector<double> w64 = conv->weight.to_vector<double>();
  const std::vector<double> g64 = conv->weight.grad().to_vector<double>();
  const std::vector<double> mean64 = bn->running_mean.to_vector<double>();
  ASSERT_EQ(w64.size(), w32.size());
  for (size_t i = 0; i < w32.size(); i++) {
    EXPECT_EQ(w64[i], static_cast<double>(w32[i]));
    EXPECT_EQ(g64[i], static_cast<double>(g32[i]));
  }
  for (size_t i = 0; i < mean32.size(); i++) EXPECT_EQ(mean64[i], static_cast<double>(mean32[i]));
  auto after = net->named_parameters();
  ASSERT_EQ(after.size(), names.size());
  for (size_t i = 0; i < after.size(); i++) {
    EXPECT_EQ(after[i].first, names[i].first);
    EXPECT_EQ(after[i].second.dtype(), kFloat64) << after[i].first;
    EXPECT_TRUE(after[i].second.requires_grad()) << after[i].first;
  }
  // The optimizer built afterwards steps the converted tensors (the modules' members).
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.5));
  opt.zero_grad();
  Tensor y = net->forward(randn({4, 1, 4, 4}, kFloat64));
  EXPECT_EQ(y.dtype(), kFloat64);
  y.sum().backward();
  const std::vector<double> grad = conv->weight.grad().to_vector<double>();
  opt.step();
  const std::vector<double> stepped = conv->weight.to_vector<double>();
  for (size_t i = 0; i < w64.size(); i++) EXPECT_DOUBLE_EQ(stepped[i], w64[i] - 0.5 * grad[i]);
  EXPECT_THROW(net->to(kInt32), DTypeError);
  EXPECT_EQ(conv->weight.dtype(), kFloat64);  // nothing converted

  // set_data drops a pending in-place update of the tensor it replaces.
  Tensor t = ones({3});
  t.realize();
  t.add_(1);
  t.set_data(zeros({2}, kFloat64));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 0}));
  EXPECT_THROW(Tensor().set_data(t), ValueError);
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_THROW(leaf.set_data(ones({2}, kInt64)), DTypeError);
}

}  // namespace

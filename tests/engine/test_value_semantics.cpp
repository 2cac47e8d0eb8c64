// Lazy values are values: an in-place update (a realized add_/copy_, an optimizer step, a
// checkpoint load) changes the tensor it is applied to, never a lazy value built from it earlier,
// whenever that value is realized. And a realized value that requires grad keeps its graph, so
// reading it (item(), realize) does not cut it out of a later backward pass. Expected values are
// hand-computed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "ember/ember.h"

namespace {

using namespace ember;

Tensor realized(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  Tensor t = from_vector(v, IntList{n});
  t.realize();
  return t;
}

TEST(ValueSemantics, ReaderRealizedAfterAnUpdateSeesTheOldValue) {
  Tensor x = realized({1, 2, 3});
  Tensor before = x * 2;
  Tensor alias = x.detach();  // a value too: keeps {1, 2, 3}
  x.add_(ones({3}));
  x.realize();
  Tensor between = x * 10;
  x.mul_(Scalar(3.0));
  x.realize();
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(between.to_vector<float>(), (std::vector<float>{20, 30, 40}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{6, 9, 12}));
  // Built after the updates: reads the current data.
  EXPECT_EQ((x + 1).to_vector<float>(), (std::vector<float>{7, 10, 13}));
}

// The public buffer calls that nn, optim and io use instead of the graph (Tensor::node()).
TEST(ValueSemantics, BufferCallsFollowTheBuffer) {
  Tensor a = arange(6, kFloat32).reshape({2, 3}).clone();
  a.realize();
  ASSERT_TRUE(a.is_realized());
  const float* p = static_cast<const float*>(a.data_ptr());
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  const void* id = a.storage_id();
  ASSERT_NE(id, nullptr);
  Tensor alias = a;
  EXPECT_EQ(alias.storage_id(), id);
  Tensor view = a.t();  // a view of a's buffer is not a buffer of its own, even realized
  view.realize();
  EXPECT_FALSE(view.is_realized());
  EXPECT_EQ(view.storage_id(), nullptr);
  EXPECT_THROW(view.data_ptr(), ValueError);
  EXPECT_NE(a.contiguous().clone().realize().storage_id(), id);
  {
    NoGradGuard g;
    a.mul_(2);  // pending: no buffer until realized, then the same one
  }
  EXPECT_FALSE(a.is_realized());
  EXPECT_THROW(a.data_ptr(), ValueError);
  a.realize();
  EXPECT_EQ(a.storage_id(), id);
  Tensor before = a + 1;  // lazy, reads the buffer as it is now
  overwrite_in_place({a}, [&] { static_cast<float*>(a.data_ptr())[0] = 7; });
  EXPECT_EQ(a.storage_id(), id);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{7, 2, 4, 6, 8, 10}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{1, 3, 5, 7, 9, 11}));
  EXPECT_THROW(overwrite_in_place({view}, [] {}), ValueError);
}

TEST(ValueSemantics, NoCopyWhenNothingElseReadsTheOldData) {
  Tensor x = realized({1, 2, 3});
  reset_runtime_stats();
  for (int i = 0; i < 3; i++) {
    x.add_(ones({3}));
    x.realize();
  }
  EXPECT_EQ(runtime_stats().buffers_preserved, 0);
  Tensor keep = x * 1;
  x.add_(ones({3}));
  x.realize();
  EXPECT_EQ(runtime_stats().buffers_preserved, 1);
  EXPECT_EQ(keep.to_vector<float>(), (std::vector<float>{4, 5, 6}));
}

TEST(ValueSemantics, ClipGradNormReadAfterTheStep) {
  // The norm returned by clip_grad_norm_ is the norm before clipping, whenever it is read.
  Tensor w = realized({3, 4});
  w.set_requires_grad(true);
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  Tensor loss = (w * w).sum() * 0.5;  // grad = w = {3, 4}, norm 5
  loss.backward();
  Tensor norm = nn::utils::clip_grad_norm_({w}, 1.0);
  opt.step();  // w -= 0.1 * {0.6, 0.8}
  EXPECT_NEAR(norm.item<double>(), 5.0, 1e-6);
  EXPECT_NEAR(loss.item<double>(), 12.5, 1e-5);  // the loss at the old weights
  const auto v = w.to_vector<float>();
  EXPECT_NEAR(v[0], 2.94, 1e-6);
  EXPECT_NEAR(v[1], 3.92, 1e-6);
}

TEST(ValueSemantics, LazyForwardBuiltBeforeALoadKeepsTheOldWeights) {
  nn::Linear a(2, 1), b(2, 1);
  {
    NoGradGuard g;
    a->weight.copy_(from_vector(std::vector<float>{1, 1}, IntList{1, 2}));
    a->bias.zero_();
    b->weight.copy_(from_vector(std::vector<float>{5, 7}, IntList{1, 2}));
    b->bias.fill_(1.0);
    realize({a->weight, a->bias, b->weight, b->bias});
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / "ember_value_semantics.safetensors").string();
  save(*b, path);
  Tensor x = from_vector(std::vector<float>{1, 2}, IntList{1, 2});
  Tensor y_old = a->forward(x);
  load(*a, path);
  std::remove(path.c_str());
  EXPECT_NEAR(y_old.item<double>(), 3.0, 1e-6);
  EXPECT_NEAR(a->forward(x).item<double>(), 20.0, 1e-6);
}

TEST(ValueSemantics, BackwardAfterReadingTheLoss) {
  Tensor w = realized({1, 2, 3});
  w.set_requires_grad(true);
  Tensor loss = (w * w).sum();
  EXPECT_NEAR(loss.item<double>(), 14.0, 1e-6);  // realizes the loss
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(ValueSemantics, GradientFlowsThroughARealizedIntermediate) {
  Tensor w = realized({1, 2});
  w.set_requires_grad(true);
  Tensor h = w * 3;
  h.realize();                  // e.g. read for logging
  Tensor loss = (h * h).sum();  // d/dw = 2 * 3w * 3 = 18 w
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{18, 36}));
  // Gradients with respect to the realized intermediate itself, built before and after.
  Tensor g = realized({2, 5});
  g.set_requires_grad(true);
  Tensor m = g * g;
  Tensor early = m.sum();  // built on m's lazy graph
  m.realize();
  Tensor late = (m * 2).sum();  // built on m's buffer
  const auto d = autograd::grad({early + late}, {m});
  EXPECT_EQ(d[0].to_vector<float>(), (std::vector<float>{3, 3}));
}

// backward() computes a one-element output (the loss) in the gradients' schedule, so reading it
// after an optimizer step runs no kernel; it keeps its graph, so every gradient through it, from
// a value built on it before or after backward(), stays right (no freed graph, no lost part).
TEST(ValueSemantics, BackwardComputesTheLossAndKeepsItsGraph) {
  Tensor w = realized({1, 2, 3});
  w.set_requires_grad(true);
  Tensor loss = (w * w).sum();
  Tensor early = loss * 3;  // built on the lazy loss: d/dw = 6 w
  loss.backward();          // 2 w
  EXPECT_TRUE(loss.is_realized());
  const int64_t before = runtime_stats().kernels_launched;
  EXPECT_EQ(loss.item<float>(), 14.0f);
  EXPECT_EQ(runtime_stats().kernels_launched - before, 0) << "the loss was computed again";
  EXPECT_EQ(loss.detach().item<float>(), 14.0f);
  Tensor late = loss * 5;  // built on the realized loss: 10 w
  early.backward();
  late.backward();
  loss.backward();  // a second backward of one loss accumulates, as with retain_graph
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{20, 40, 60}));  // (2+6+10+2) w
  EXPECT_EQ(autograd::grad({loss}, {w})[0].to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // An update of w after backward(): the loss keeps its value.
  {
    NoGradGuard ng;
    w.sub_(w.grad());
    w.realize();
  }
  EXPECT_EQ(loss.item<float>(), 14.0f);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{-19, -38, -57}));
}

}  // namespace

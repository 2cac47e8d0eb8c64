// The Tensor frontend links and runs on its own: this program links ember_tensor only (no nn,
// optim or io), realizes, reads and differentiates tensors and replays a jit. A dependency of the
// frontend on a layer above it would fail to link here.
#include <gtest/gtest.h>

#include <vector>

#include "ember/autograd.h"
#include "ember/jit.h"
#include "ember/tensor.h"

namespace ember {
namespace {

TEST(TensorAlone, RealizesReadsAndDifferentiates) {
  Tensor a = from_vector(std::vector<float>{1, 2, 3, 4}).reshape({2, 2}).requires_grad_(true);
  Tensor b = from_vector(std::vector<float>{10, 20, 30, 40}).reshape({2, 2});
  Tensor y = (a + b) * a;
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{11, 44, 99, 176}));
  EXPECT_EQ(y.sum().item<float>(), 330.0f);
  y.sum().backward();  // d/da (a + b) * a = 2a + b
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{12, 24, 36, 48}));
}

TEST(TensorAlone, JitReplaysTheEngineLaunches) {
  Jit f([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * in[0] + 1.0}; });
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) {
    Tensor x = from_vector(std::vector<float>{v, -v});
    EXPECT_EQ(f({x})[0].to_vector<float>(), (std::vector<float>{v * v + 1, v * v + 1}));
  }
  EXPECT_GE(f.replays(), 1);
}

}  // namespace
}  // namespace ember

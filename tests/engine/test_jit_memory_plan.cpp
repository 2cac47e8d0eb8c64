// ember::jit's memory plan (tensor/jit_memory_plan.h): intermediates whose lives do not overlap
// share memory in a replay, and the replays still equal eager execution (checked against the
// same function run eagerly, and against host loops in double).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

constexpr int64_t kRows = 256, kWidth = 64, kLayers = 6;

Tensor weight() {
  std::vector<float> w(kWidth * kWidth);
  for (size_t i = 0; i < w.size(); i++) w[i] = float((i * 7) % 19) * 0.01f - 0.09f;
  Tensor t = from_vector(w, IntList{kWidth, kWidth});
  t.realize();
  return t;
}

Tensor input(int call) {
  std::vector<float> x(kRows * kWidth);
  for (size_t i = 0; i < x.size(); i++) x[i] = float((i * 13 + call) % 29) * 0.1f - 1.4f;
  Tensor t = from_vector(x, IntList{kRows, kWidth});
  t.realize();
  return t;
}

// Calls 1..calls of f on new inputs equal the body run eagerly, bit for bit.
template <class Body>
void expect_replays_equal_eager(Jit& f, const Body& body, int calls) {
  for (int call = 1; call <= calls; call++) {
    Tensor x = input(call);
    std::vector<float> got = f({x})[0].to_vector<float>();
    const Tensor eager = body({x})[0];
    std::vector<float> want = eager.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_FLOAT_EQ(got[i], want[i]) << call << " " << i;
  }
}

// tanh(h @ W), kLayers times, on the host in double.
std::vector<double> host_chain(const Tensor& x, const Tensor& w) {
  auto xv = x.to_vector<float>(), wv = w.to_vector<float>();
  std::vector<double> h(xv.begin(), xv.end()), next(h.size());
  for (int l = 0; l < kLayers; l++) {
    for (int64_t i = 0; i < kRows; i++)
      for (int64_t j = 0; j < kWidth; j++) {
        double s = 0;
        for (int64_t k = 0; k < kWidth; k++) s += h[i * kWidth + k] * wv[k * kWidth + j];
        next[i * kWidth + j] = std::tanh(s);
      }
    h.swap(next);
  }
  return h;
}

// An MLP's forward pass: each product's output is materialised, read by the next product and
// dead after it, so two buffers hold all the intermediates.
TEST(JitMemoryPlan, AChainOfProductsSharesTwoBuffers) {
  const Tensor w = weight();
  auto body = [&w](const std::vector<Tensor>& in) {
    Tensor h = in[0];
    for (int l = 0; l < kLayers; l++) h = h.matmul(w).tanh();
    return std::vector<Tensor>{h};
  };
  auto f = jit(body);
  for (int call = 1; call <= 5; call++) {
    Tensor x = input(call);
    std::vector<float> got = f({x})[0].to_vector<float>();
    const Tensor eager = body({x})[0];
    std::vector<float> want = eager.to_vector<float>();
    std::vector<double> host = host_chain(x, w);
    ASSERT_EQ(got.size(), host.size());
    for (size_t i = 0; i < got.size(); i++) {
      ASSERT_FLOAT_EQ(got[i], want[i]) << "call " << call << " " << i;
      ASSERT_NEAR(got[i], host[i], 1e-4) << "call " << call << " " << i;
    }
  }
  EXPECT_EQ(f.replays(), 3);
  EXPECT_EQ(f.captured_launches(), kLayers);
  // kLayers - 1 intermediates (the last product writes the output, a new buffer per call): one
  // buffer each would take 5 x 64 KiB.
  const int64_t one = kRows * kWidth * 4;
  EXPECT_EQ(f.planned_bytes(), 2 * one);
}

// A value read again long after it was made (a skip connection) keeps its buffer to its last
// use, while the products between share theirs.
TEST(JitMemoryPlan, AValueReadLaterKeepsItsBuffer) {
  const Tensor w = weight();
  auto body = [&w](const std::vector<Tensor>& in) {
    Tensor skip = in[0].matmul(w).tanh();
    Tensor h = skip;
    for (int l = 0; l < 4; l++) h = h.matmul(w).tanh();
    return std::vector<Tensor>{h.matmul(w) - skip * 3};
  };
  auto f = jit(body);
  expect_replays_equal_eager(f, body, 5);
  EXPECT_EQ(f.replays(), 3);
  // skip, and two buffers that the four products between take in turn.
  EXPECT_EQ(f.planned_bytes(), 3 * kRows * kWidth * 4);
}

Tensor weight(int64_t rows, int64_t cols, int salt) {
  std::vector<float> w(rows * cols);
  for (size_t i = 0; i < w.size(); i++) w[i] = float((i * 7 + salt) % 19) * 0.01f - 0.09f;
  Tensor t = from_vector(w, IntList{rows, cols});
  t.realize();
  return t;
}

// Two values alive together, then one of twice their size alone: offsets in one block put the
// large one where the two were (3 units at most live); buffers shared whole cannot (the large
// one's buffer holds one of the two, the other and the value between them take two more: 4).
TEST(JitMemoryPlan, IntermediatesShareOneBlockByOffset) {
  const Tensor w1 = weight(kWidth, kWidth, 1), w2 = weight(kWidth, kWidth, 2),
               w3 = weight(kWidth, kWidth, 3), wide = weight(kWidth, 2 * kWidth, 4),
               narrow = weight(2 * kWidth, kWidth, 5);
  auto body = [&](const std::vector<Tensor>& in) {
    Tensor h1 = in[0].matmul(w1).tanh(), h2 = in[0].matmul(w2).tanh();
    Tensor g = (h1 + h2).matmul(w3).tanh();
    Tensor big = g.matmul(wide).tanh();
    return std::vector<Tensor>{big.matmul(narrow)};
  };
  auto f = jit(body);
  expect_replays_equal_eager(f, body, 4);
  EXPECT_EQ(f.replays(), 2);
  EXPECT_EQ(f.captured_launches(), 5);
  EXPECT_EQ(f.planned_bytes(), 3 * kRows * kWidth * 4);
}

}  // namespace

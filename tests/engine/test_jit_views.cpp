// ember::jit with inputs passed as views of buffers (x.t(), a slice, a reshape): the captured
// kernels read the caller's buffer in place, through the view (no copy per call), and a replay
// equals eager execution: the values are checked against host loops and against the same
// function run eagerly on twin tensors. Each jitted function runs 5 or more times: call 1 runs
// eagerly, call 2 captures, later calls replay.
#include <gtest/gtest.h>

#include "ember/ember.h"

namespace {

using namespace ember;
using V = std::vector<float>;

std::vector<Tensor> one(const Tensor& t) { return {t}; }

Tensor realized(const V& v, IntList shape) {
  Tensor t = from_vector(v, shape);
  t.realize();
  return t;
}

// (n x k) @ (k x m) on the host, a given as its transpose (k x n, row-major).
V host_matmul_at(const V& at, const V& b, int64_t n, int64_t k, int64_t m) {
  V out(static_cast<size_t>(n * m), 0.0f);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = 0;
      for (int64_t r = 0; r < k; r++) s += double(at[r * n + i]) * b[r * m + j];
      out[i * m + j] = static_cast<float>(s);
    }
  return out;
}

// A transposed operand, new on every call: the replay reads each new buffer through the view,
// with one kernel and no copy.
TEST(JitViews, TransposedInputIsReadInPlace) {
  const int64_t n = 3, k = 5, m = 4;
  auto f = jit([](const std::vector<Tensor>& in) { return one(in[0].matmul(in[1])); });
  for (int call = 1; call <= 6; call++) {
    V at(k * n), b(k * m);
    for (size_t i = 0; i < at.size(); i++) at[i] = float((i * 7 + call) % 11) - 5;
    for (size_t i = 0; i < b.size(); i++) b[i] = float((i * 3 + 2 * call) % 7) - 3;
    Tensor a = realized(at, {k, n}).t(), bb = realized(b, {k, m});
    const int64_t launched = runtime_stats().kernels_launched;
    Tensor got = f({a, bb})[0];
    // A replay launches its captured kernel and nothing else (a copy of the view would be a
    // second launch).
    if (call >= 3) {
      EXPECT_EQ(runtime_stats().kernels_launched - launched, 1) << "call " << call;
    }
    EXPECT_EQ(got.to_vector<float>(), host_matmul_at(at, b, n, k, m)) << "call " << call;
  }
  EXPECT_EQ(f.replays(), 4);
  EXPECT_EQ(f.captured_launches(), 1);  // the product alone
}

// The buffer under the view updated in place between calls: the replay reads the new data.
TEST(JitViews, BufferUnderTheViewUpdatedBetweenCalls) {
  Tensor w = realized({1, 2, 3, 4, 5, 6}, {2, 3});
  auto f = jit([](const std::vector<Tensor>& in) { return one(in[0] * 10); });
  for (int call = 1; call <= 5; call++) {
    w.add_(ones({2, 3}));
    Tensor got = f({w.t()})[0];
    V want;
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 2; i++) want.push_back(10.0f * float(i * 3 + j + 1 + call));
    EXPECT_EQ(got.to_vector<float>(), want) << "call " << call;
  }
  EXPECT_EQ(f.replays(), 3);
}

// Another view of the same shape (a slice instead of a transpose, a buffer instead of a view):
// the kernels index the buffer differently, so the call captures again; values stay right.
TEST(JitViews, AnotherViewCapturesAgain) {
  V sq = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wide = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  Tensor m = realized(sq, {3, 3}), w = realized(wide, {3, 4});
  auto f = jit([](const std::vector<Tensor>& in) { return one(in[0] + 0); });
  const V transposed = {1, 4, 7, 2, 5, 8, 3, 6, 9}, sliced = {2, 3, 4, 6, 7, 8, 10, 11, 12};
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 3; i++) EXPECT_EQ(f({m.t()})[0].to_vector<float>(), transposed) << i;
    for (int i = 0; i < 3; i++) EXPECT_EQ(f({w.narrow(1, 1, 3)})[0].to_vector<float>(), sliced);
    for (int i = 0; i < 3; i++) EXPECT_EQ(f({m})[0].to_vector<float>(), sq) << i;
  }
}

// The function writes in place into the tensor that a view input reads (an external, and
// another input): the view, made before the call, keeps the data it was made on, as in eager.
TEST(JitViews, ViewOfATensorTheFunctionWrites) {
  auto body = [](Tensor& w) {
    return [&w](const std::vector<Tensor>& in) {
      w.add_(ones({2, 3}));
      return one(in[0] * 10 + w.t());
    };
  };
  Tensor w = realized({1, 2, 3, 4, 5, 6}, {2, 3}), we = realized({1, 2, 3, 4, 5, 6}, {2, 3});
  auto f = jit(body(w));
  auto eager = body(we);
  for (int call = 1; call <= 5; call++) {
    Tensor got = f({w.t()})[0], want = eager({we.t()})[0];
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << "call " << call;
    EXPECT_EQ(w.to_vector<float>(), we.to_vector<float>()) << "call " << call;
  }
  EXPECT_EQ(f.replays(), 3);

  auto g_body = [](const std::vector<Tensor>& in) {
    Tensor a = in[0];
    a.mul_(2);
    return one(in[1] + 0);
  };
  Tensor z = realized({1, 2, 3, 4}, {2, 2}), ze = realized({1, 2, 3, 4}, {2, 2});
  auto g = jit(g_body);
  for (int call = 1; call <= 5; call++) {
    Tensor got = g({z, z.t()})[0], want = g_body({ze, ze.t()})[0];
    EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>()) << "call " << call;
    EXPECT_EQ(z.to_vector<float>(), ze.to_vector<float>()) << "call " << call;
  }
  EXPECT_EQ(g.replays(), 3);
}

// A view input returned as it is: the caller gets its own tensor back, as from eager.
TEST(JitViews, ViewInputReturnedAsItIs) {
  Tensor m = realized({1, 2, 3, 4, 5, 6}, {2, 3});
  auto f = jit([](const std::vector<Tensor>& in) { return std::vector{in[0], in[0] * 2}; });
  for (int call = 1; call <= 5; call++) {
    Tensor v = m.t();
    auto out = f({v});
    EXPECT_TRUE(out[0].is_same(v)) << call;
    EXPECT_EQ(out[1].to_vector<float>(), V({2, 8, 4, 10, 6, 12})) << call;
  }
}

}  // namespace

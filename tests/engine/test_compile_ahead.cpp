// ember::compile_ahead (issue 17): a computation traced on throwaway tensors compiles its kernels
// without launching any, and the real computation on other buffers then compiles nothing and
// computes the right values; another thread's jit capture does not record the compile-only
// realizes. ScopedGenerator: draws for throwaway tensors leave the global generator alone.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "ember/ember.h"
#include "ember/host_values.h"

namespace {

using namespace ember;

constexpr int64_t kRows = 37, kIn = 11, kOut = 13;  // shapes no other test here compiles

Tensor leaf(const std::vector<float>& v, IntList shape) {
  Tensor t = from_vector(v, shape);
  t.set_requires_grad(true);
  return t;
}

std::vector<float> data(size_t n, double phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<float>(std::sin(0.61 * i + phase));
  return v;
}

// One SGD step on loss = mean(tanh(x w + b)^2); returns the loss.
Tensor sgd_step(Tensor& w, Tensor& b, const Tensor& x) {
  const Tensor y = (x.matmul(w) + b).tanh();
  const Tensor loss = (y * y).mean();
  const std::vector<Tensor> g = autograd::grad({loss}, {w, b});
  {
    NoGradGuard ng;
    w.sub_(g[0] * 0.5);
    b.sub_(g[1] * 0.5);
  }
  const Tensor l = loss.detach();
  realize({w, b, l});
  return l;
}

// The same step in double on the host: the new w and b, and the loss.
struct HostStep {
  std::vector<double> w, b;
  double loss = 0;
};
HostStep host_step(const std::vector<float>& w, const std::vector<float>& b,
                   const std::vector<float>& x) {
  HostStep r{{w.begin(), w.end()}, {b.begin(), b.end()}, 0};
  std::vector<double> gw(w.size(), 0), gb(b.size(), 0);
  const double n = kRows * kOut;
  for (int64_t i = 0; i < kRows; i++)
    for (int64_t j = 0; j < kOut; j++) {
      double z = b[j];
      for (int64_t k = 0; k < kIn; k++) z += double(x[i * kIn + k]) * w[k * kOut + j];
      const double y = std::tanh(z);
      r.loss += y * y / n;
      const double dz = 2 * y / n * (1 - y * y);
      gb[j] += dz;
      for (int64_t k = 0; k < kIn; k++) gw[k * kOut + j] += dz * x[i * kIn + k];
    }
  for (size_t i = 0; i < gw.size(); i++) r.w[i] -= 0.5 * gw[i];
  for (size_t j = 0; j < gb.size(); j++) r.b[j] -= 0.5 * gb[j];
  return r;
}

void expect_near_all(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << "element " << i;
}

TEST(CompileAhead, TheRealStepThenCompilesNothing) {
  // Throwaway tensors of the real shapes: their values never matter.
  Tensor w0 = leaf(std::vector<float>(kIn * kOut, 0.f), {kIn, kOut});
  Tensor b0 = leaf(std::vector<float>(kOut, 0.f), {kOut});
  const Tensor x0 = from_vector(std::vector<float>(kRows * kIn, 0.f), IntList{kRows, kIn});
  const RuntimeStats s0 = runtime_stats();
  const CompileAheadStats ahead = compile_ahead([&] { sgd_step(w0, b0, x0); });
  const RuntimeStats s1 = runtime_stats();
  EXPECT_GT(ahead.kernels, 0);
  EXPECT_EQ(s1.kernels_compiled - s0.kernels_compiled, ahead.kernels);
  EXPECT_EQ(s1.kernels_compiled_ahead - s0.kernels_compiled_ahead, ahead.kernels);
  EXPECT_EQ(s1.kernels_launched, s0.kernels_launched);  // nothing ran

  const std::vector<float> wv = data(kIn * kOut, 0.3), bv = data(kOut, 1.1),
                           xv = data(kRows * kIn, 2.0);
  Tensor w = leaf(wv, {kIn, kOut}), b = leaf(bv, {kOut});
  const Tensor x = from_vector(xv, IntList{kRows, kIn});
  const Tensor loss = sgd_step(w, b, x);
  const RuntimeStats s2 = runtime_stats();
  EXPECT_EQ(s2.kernels_compiled, s1.kernels_compiled);  // all found compiled
  EXPECT_GT(s2.kernels_launched, s1.kernels_launched);
  const HostStep want = host_step(wv, bv, xv);
  expect_near_all(w.to_vector<float>(), want.w);
  expect_near_all(b.to_vector<float>(), want.b);
  EXPECT_NEAR(loss.item<float>(), want.loss, 1e-6);
}

TEST(CompileAhead, AnErrorInsideCompilesNothing) {
  constexpr int64_t n = 29;
  const Tensor t0 = from_vector(std::vector<float>(n, 0.f));
  EXPECT_THROW(compile_ahead([&] {
                 (t0.exp() * 3.0 + 1.0).realize();
                 throw ValueError("stop");
               }),
               ValueError);
  // The scope is over: this thread launches again, and the kernel compiles now.
  const RuntimeStats s0 = runtime_stats();
  const std::vector<float> v = data(n, 0.2);
  const std::vector<float> got = (from_vector(v).exp() * 3.0 + 1.0).to_vector<float>();
  EXPECT_EQ(runtime_stats().kernels_compiled - s0.kernels_compiled, 1);
  for (int64_t i = 0; i < n; i++) EXPECT_NEAR(got[i], std::exp(double(v[i])) * 3 + 1, 1e-5);
}

TEST(CompileAhead, AnotherThreadsCaptureDoesNotRecordIt) {
  // This thread captures and replays a jitted function while another compiles ahead (with
  // throwaway tensors of other shapes) over and over; the capture must hold this thread's
  // launches only, and the replays the right values.
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * 2.0 + 1.0).tanh().sum()};
  };
  Jit reference = jit(fn);
  const Tensor probe = from_vector(data(23, 0.0));
  for (int i = 0; i < 3; i++) (void)reference({probe});
  ASSERT_GT(reference.captured_launches(), 0);

  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::thread other([&] {
    for (int r = 0; !stop.load() || r < 2; r++) {
      Tensor w0 = leaf(std::vector<float>(kIn * (kOut + r % 5), 0.f), {kIn, kOut + r % 5});
      Tensor b0 = leaf(std::vector<float>(kOut + r % 5, 0.f), {kOut + r % 5});
      const Tensor x0 =
          from_vector(std::vector<float>((kRows + r) * kIn, 0.f), IntList{kRows + r, kIn});
      compile_ahead([&] { sgd_step(w0, b0, x0); });
      rounds++;
    }
  });
  for (int k = 0; k < 20 || rounds.load() < 2; k++) {  // overlapping the other thread's rounds
    Jit f = jit(fn);
    for (int i = 0; i < 4; i++) {
      const std::vector<float> v = data(23, 0.1 * (k + i));
      const float got = f({from_vector(v)})[0].item<float>();
      double want = 0;
      for (float e : v) want += std::tanh(2.0 * e + 1.0);
      ASSERT_NEAR(got, want, 1e-4) << "round " << k << " call " << i;
    }
    ASSERT_EQ(f.captured_launches(), reference.captured_launches()) << "round " << k;
  }
  stop = true;
  other.join();
  EXPECT_GE(rounds.load(), 2);
}

TEST(ScopedGenerator, LeavesTheGlobalGeneratorAlone) {
  manual_seed(9);
  const std::vector<float> first = rand_values(5);
  manual_seed(9);
  std::vector<float> scoped;
  {
    ScopedGenerator g(123);
    (void)rand_values(100);
    scoped = rand_values(3);
    (void)rand({7}).realize();  // a graph draw too
  }
  EXPECT_EQ(rand_values(5), first);  // as if the scope had never drawn
  // The scoped draws are the stream of manual_seed(123).
  manual_seed(123);
  (void)rand_values(100);
  EXPECT_EQ(rand_values(3), scoped);
}

}  // namespace

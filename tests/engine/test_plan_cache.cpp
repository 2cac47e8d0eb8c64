// The plan cache (engine/plan_cache.h): a repeated realize of one graph on other buffers runs the
// stored plan, and graphs that differ in anything the schedule depends on never share one. Each
// pair of graphs below differs in exactly one such property (a constant, a dtype, a broadcast
// operand against a full one, a view, an in-place target, a target that the graph also reads, the
// device) and is realized one after the other; the values are checked against hand-computed ones
// or the interp device, and the counters show that the second was (or was not) a hit.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>

#include "ember/ember.h"
#include "engine/plan_cache.h"
#include "engine/realize.h"

namespace {

using namespace ember;

Tensor realized(std::vector<float> v) {
  Tensor t = from_vector(v, IntList{static_cast<int64_t>(v.size())});
  t.realize();
  return t;
}

std::vector<float> iota(int64_t n, float start, float step) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[static_cast<size_t>(i)] = start + step * static_cast<float>(i);
  return v;
}

// Values of transcendental kernels against the C library's (float32 forward tolerance).
void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], 1e-6 + 1e-5 * std::fabs(want[i])) << "element " << i;
}

// Starts each test with an empty cache and counts its hits and misses.
class PlanCache : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::clear_plan_cache();
    Context::get().plan_cache = true;
    Context::get().device = "cpu";
  }
  void TearDown() override {
    Context::get().plan_cache = true;
    Context::get().device = "cpu";
    Context::get().debug = 0;
  }
  int64_t hits() const { return runtime_stats().plan_cache_hits - hits0_; }
  int64_t misses() const { return runtime_stats().plan_cache_misses - misses0_; }
  void restart_counts() {
    hits0_ = runtime_stats().plan_cache_hits;
    misses0_ = runtime_stats().plan_cache_misses;
  }

 private:
  int64_t hits0_ = runtime_stats().plan_cache_hits, misses0_ = runtime_stats().plan_cache_misses;
};

TEST_F(PlanCache, SameGraphOnNewBuffersRunsThePlanIntoANewOutput) {
  Tensor a = realized({1, 2, 3}), b = realized({4, 5, 6});
  Tensor c1 = (a * b + 1).realize();
  restart_counts();
  Tensor a2 = realized({2, 2, 2}), b2 = realized({1, 2, 3});
  Tensor c2 = (a2 * b2 + 1).realize();
  EXPECT_EQ(hits(), 1);
  EXPECT_EQ(misses(), 0);
  EXPECT_EQ(c2.to_vector<float>(), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(c1.to_vector<float>(), (std::vector<float>{5, 11, 19}));  // not overwritten
  EXPECT_NE(c1.storage_id(), c2.storage_id());
}

TEST_F(PlanCache, ADifferentConstantIsADifferentPlan) {
  Tensor a = realized({1, 2, 3});
  EXPECT_EQ((a * 3 + 1).to_vector<float>(), (std::vector<float>{4, 7, 10}));
  restart_counts();
  Tensor a2 = realized({1, 2, 3});
  EXPECT_EQ((a2 * 3 + 2).to_vector<float>(), (std::vector<float>{5, 8, 11}));
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(misses(), 1);
  // Constants that differ only in the last bit of a float32.
  const float one_up = std::nextafter(1.0f, 2.0f);
  Tensor a3 = realized({1, 2, 3});
  std::vector<float> want{1 * one_up, 2 * one_up, 3 * one_up};
  EXPECT_EQ((a3 * Scalar(static_cast<double>(one_up))).to_vector<float>(), want);
  EXPECT_EQ((a3 * 1.0).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(hits(), 0);
}

TEST_F(PlanCache, ADifferentDtypeIsADifferentPlan) {
  Tensor f = realized({1.5f, -2.5f, 3.25f});
  EXPECT_EQ((f * 2).to_vector<float>(), (std::vector<float>{3, -5, 6.5f}));
  restart_counts();
  Tensor i = from_vector(std::vector<int32_t>{7, -8, 9}, IntList{3});
  i.realize();
  Tensor r = (i * 2).realize();
  EXPECT_EQ(r.dtype(), kInt32);
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{14, -16, 18}));
  Tensor d = from_vector(std::vector<double>{0.1, 0.2, 0.3}, IntList{3});
  d.realize();
  EXPECT_EQ((d * 2).to_vector<double>(), (std::vector<double>{0.2, 0.4, 0.6}));
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(misses(), 2);
  // Only a cast's dtype differs (the buffers are the same float32 ones).
  Tensor f2 = realized({1.5f, -2.5f, 3.25f});
  Tensor as_double = (f2.to(kFloat64) * 2).realize();
  Tensor as_int = (f2.to(kInt32) * 2).realize();
  EXPECT_EQ(as_double.to_vector<double>(), (std::vector<double>{3, -5, 6.5}));
  EXPECT_EQ(as_int.to_vector<int32_t>(), (std::vector<int32_t>{2, -4, 6}));  // toward zero
}

// Buffers of one size and dtype, read with different shapes: only the shape tells them apart.
TEST_F(PlanCache, AShapeIsPartOfTheKey) {
  Tensor x = from_vector(iota(6, 0, 1), IntList{2, 3});
  x.realize();
  EXPECT_EQ(x.sum({0}, true).to_vector<float>(), (std::vector<float>{3, 5, 7}));
  restart_counts();
  Tensor y = from_vector(iota(6, 0, 1), IntList{3, 2});
  y.realize();
  EXPECT_EQ(y.sum({0}, true).to_vector<float>(), (std::vector<float>{6, 9}));
  EXPECT_EQ(hits(), 0);
}

// Same shapes, an op's argument differs: which axis is flipped.
TEST_F(PlanCache, AnOpArgumentIsPartOfTheKey) {
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4}, IntList{2, 2});
  x.realize();
  EXPECT_EQ((x.flip({0}) * 2).to_vector<float>(), (std::vector<float>{6, 8, 2, 4}));
  restart_counts();
  Tensor y = from_vector(std::vector<float>{1, 2, 3, 4}, IntList{2, 2});
  y.realize();
  EXPECT_EQ((y.flip({1}) * 2).to_vector<float>(), (std::vector<float>{4, 2, 8, 6}));
  EXPECT_EQ(hits(), 0);
}

// Which value an op reads: (a * b) + a against (a * b) + b.
TEST_F(PlanCache, WhichSourceAnOpReadsIsPartOfTheKey) {
  Tensor a = realized({1, 2}), b = realized({10, 20});
  EXPECT_EQ((a * b + a).to_vector<float>(), (std::vector<float>{11, 42}));
  restart_counts();
  Tensor a2 = realized({1, 2}), b2 = realized({10, 20});
  EXPECT_EQ((a2 * b2 + b2).to_vector<float>(), (std::vector<float>{20, 60}));
  EXPECT_EQ(hits(), 0);
  // The same computation written with the operands swapped is the same plan.
  Tensor a3 = realized({3, 4}), b3 = realized({5, 6});
  EXPECT_EQ((b3 * a3 + b3).to_vector<float>(), (std::vector<float>{20, 30}));
}

TEST_F(PlanCache, ABroadcastOperandIsNotAFullOne) {
  Tensor m = from_vector(iota(6, 0, 1), IntList{2, 3});
  Tensor row = from_vector(std::vector<float>{10, 20, 30}, IntList{1, 3});
  realize({m, row});
  EXPECT_EQ((m + row.expand({2, 3})).to_vector<float>(),
            (std::vector<float>{10, 21, 32, 13, 24, 35}));
  Tensor m2 = from_vector(iota(6, 0, 1), IntList{2, 3});
  Tensor full = from_vector(std::vector<float>{10, 20, 30, 40, 50, 60}, IntList{2, 3});
  realize({m2, full});
  restart_counts();
  EXPECT_EQ((m2 + full).to_vector<float>(), (std::vector<float>{10, 21, 32, 43, 54, 65}));
  EXPECT_EQ(hits(), 0);
}

TEST_F(PlanCache, ATransposedViewIsNotTheBuffer) {
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4}, IntList{2, 2});
  x.realize();
  EXPECT_EQ((x.t() * 2).to_vector<float>(), (std::vector<float>{2, 6, 4, 8}));
  restart_counts();
  Tensor y = from_vector(std::vector<float>{1, 2, 3, 4}, IntList{2, 2});
  y.realize();
  EXPECT_EQ((y * 2).to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ((y.t() * 2).to_vector<float>(), (std::vector<float>{2, 6, 4, 8}));
  EXPECT_EQ(misses(), 1);
  EXPECT_EQ(hits(), 1);
}

// Out of place, then in place, then out of place again: each writes only where it should.
TEST_F(PlanCache, AnInPlaceTargetIsNotANewBuffer) {
  Tensor a = realized({1, 2, 3}), b = realized({10, 20, 30});
  Tensor c = (a + b).realize();
  restart_counts();
  Tensor a2 = realized({1, 2, 3}), b2 = realized({10, 20, 30});
  a2.add_(b2);
  a2.realize();
  EXPECT_EQ(a2.to_vector<float>(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(misses(), 1);
  // The in-place plan on another target writes that target, not the first one.
  Tensor a3 = realized({5, 5, 5}), b3 = realized({1, 1, 1});
  a3.add_(b3);
  a3.realize();
  EXPECT_EQ(a3.to_vector<float>(), (std::vector<float>{6, 6, 6}));
  EXPECT_EQ(a2.to_vector<float>(), (std::vector<float>{11, 22, 33}));
  // The out-of-place plan writes a new buffer, not the last target.
  Tensor c2 = (a3 + b3).realize();
  EXPECT_EQ(c2.to_vector<float>(), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ(a3.to_vector<float>(), (std::vector<float>{6, 6, 6}));
  EXPECT_NE(c2.storage_id(), a3.storage_id());
  EXPECT_EQ(hits(), 2);
}

// A target that the graph also reads, at other indices (a reversal): the schedule must not write
// it while reading it. A plan for a target that the graph does not read writes it directly.
TEST_F(PlanCache, ATargetTheGraphReadsIsNotAnotherBuffer) {
  const int64_t n = 100;  // longer than any vector, so a direct write would clobber its input
  std::vector<float> up = iota(n, 0, 1), down = iota(n, n - 1, -1);
  for (int order = 0; order < 2; order++) {
    engine::clear_plan_cache();
    for (int i = 0; i < 4; i++) {
      const bool aliased = (i + order) % 2 == 0;
      Tensor a = realized(up);
      Tensor b = realized(up);
      a.copy_((aliased ? a : b).flip({0}));
      a.realize();
      EXPECT_EQ(a.to_vector<float>(), down) << "order " << order << " call " << i;
      EXPECT_EQ(b.to_vector<float>(), up);
    }
  }
}

// One value into two targets (the second gets a copy after the kernels).
TEST_F(PlanCache, OneValueIntoTwoTargetsOnOtherTargets) {
  for (int i = 0; i < 3; i++) {
    Tensor x = realized({1, 2, 3});
    Tensor s = realized({0, 0, 0}), t = realized({9, 9, 9});
    Tensor v = x * static_cast<double>(i + 2);
    s.copy_(v);
    t.copy_(v);
    realize({s, t});
    const float k = static_cast<float>(i + 2);
    EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{k, 2 * k, 3 * k}));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{k, 2 * k, 3 * k}));
  }
  // And both roots into one target, then into two again.
  Tensor x = realized({1, 2, 3});
  Tensor s = realized({0, 0, 0});
  Tensor v = x * 5.0;
  s.copy_(v);
  realize({s, s});
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{5, 10, 15}));
}

// x @ w (hand-computed in double) for row-major x [n, k] and w [k, m].
std::vector<double> product(const std::vector<float>& x, const std::vector<float>& w, int64_t n,
                            int64_t k, int64_t m) {
  std::vector<double> out(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t l = 0; l < k; l++)
        out[static_cast<size_t>(i * m + j)] +=
            double(x[static_cast<size_t>(i * k + l)]) * w[static_cast<size_t>(l * m + j)];
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << what << " at " << i;
}

// The study's "stale weights" class: an eager product on weights that are updated in place between
// calls (a realized in-place op, then an optimizer step). Every call after the first takes its plan
// from the cache, and each reads the weights' values of that moment.
TEST_F(PlanCache, AProductHitReadsWeightsUpdatedInPlace) {
  Tensor x = from_vector(iota(4 * 6, -1, 0.125f), IntList{4, 6});
  Tensor w = from_vector(iota(6 * 5, 0.5f, -0.0625f), IntList{6, 5});
  realize({x, w});
  for (int call = 0; call < 4; call++) {
    restart_counts();
    Tensor out = x.matmul(w).realize();
    EXPECT_EQ(hits(), call == 0 ? 0 : 1) << "call " << call;
    expect_near(out.to_vector<float>(),
                product(x.to_vector<float>(), w.to_vector<float>(), 4, 6, 5),
                "call " + std::to_string(call));
    w.mul_(-1.5);  // in place, on the buffer the plan reads
    w.realize();
  }
  // Through nn::Linear and SGD (the optimizer writes its parameters in place), batch 4 as in a
  // rollout; the forward is checked against the parameters' values after each step.
  manual_seed(3);
  nn::Linear lin(6, 5);
  optim::SGD opt({lin->weight, lin->bias}, optim::SGDOptions(0.5));
  for (int step = 0; step < 4; step++) {
    Tensor out;
    {
      NoGradGuard no_grad;
      restart_counts();
      out = lin->forward(x).realize();
      EXPECT_EQ(hits(), step == 0 ? 0 : 1) << "step " << step;
    }
    std::vector<double> want =
        product(x.to_vector<float>(), lin->weight.t().to_vector<float>(), 4, 6, 5);
    const std::vector<float> b = lin->bias.to_vector<float>();
    for (size_t i = 0; i < want.size(); i++) want[i] += b[i % 5];
    expect_near(out.to_vector<float>(), want, "step " + std::to_string(step));
    opt.zero_grad();
    (lin->forward(x) * lin->forward(x)).sum().backward();
    opt.step();
  }
}

// A batch-4 product and products that differ from it in one property the kernel depends on: the
// right operand's layout (a transposed view of a buffer of the same size), the row count, the
// dtype. None takes the first one's plan, and each is right.
TEST_F(PlanCache, AProductOfAnotherLayoutShapeOrDtypeIsAnotherPlan) {
  const std::vector<float> xv = iota(4 * 8, -2, 0.125f), wv = iota(8 * 8, 1, -0.03125f);
  Tensor x = from_vector(xv, IntList{4, 8}), w = from_vector(wv, IntList{8, 8});
  realize({x, w});
  restart_counts();
  Tensor out = x.matmul(w).realize();
  EXPECT_EQ(misses(), 1);
  expect_near(out.to_vector<float>(), product(xv, wv, 4, 8, 8), "x @ w");

  restart_counts();
  Tensor w2 = from_vector(wv, IntList{8, 8});
  w2.realize();
  Tensor out_t = x.matmul(w2.t()).realize();
  EXPECT_EQ(hits(), 0);
  expect_near(out_t.to_vector<float>(),
              product(xv, w2.t().contiguous().to_vector<float>(), 4, 8, 8), "x @ w.t()");

  restart_counts();
  const std::vector<float> x5v = iota(5 * 8, 0.5f, 0.0625f);
  Tensor x5 = from_vector(x5v, IntList{5, 8});
  x5.realize();
  Tensor out5 = x5.matmul(w).realize();
  EXPECT_EQ(hits(), 0);
  expect_near(out5.to_vector<float>(), product(x5v, wv, 5, 8, 8), "5 rows");

  Tensor xd = x.to(kFloat64).realize(), wd = w.to(kFloat64).realize();
  restart_counts();
  Tensor outd = xd.matmul(wd).realize();
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(outd.dtype(), kFloat64);
  const std::vector<double> want = product(xv, wv, 4, 8, 8), got = outd.to_vector<double>();
  for (size_t i = 0; i < want.size(); i++) ASSERT_NEAR(got[i], want[i], 1e-12) << i;

  // And the first product again, on new buffers: a hit, into a new output.
  Tensor x2 = from_vector(x5v, IntList{5, 8}).narrow(0, 1, 4).contiguous().realize();
  Tensor w3 = from_vector(wv, IntList{8, 8}).realize();
  restart_counts();
  Tensor out2 = x2.matmul(w3).realize();
  EXPECT_EQ(hits(), 1);
  expect_near(out2.to_vector<float>(),
              product(std::vector<float>(x5v.begin() + 8, x5v.end()), wv, 4, 8, 8), "new buffers");
  expect_near(out.to_vector<float>(), product(xv, wv, 4, 8, 8), "the first output, unchanged");
}

TEST_F(PlanCache, RandomOpsDrawNewNumbersOnAHit) {
  Tensor r1 = randn({256}).realize();
  restart_counts();
  Tensor r2 = randn({256}).realize();
  EXPECT_EQ(hits(), 1);
  EXPECT_NE(r1.to_vector<float>(), r2.to_vector<float>());
  double mean = 0;
  for (float v : r2.to_vector<float>()) mean += v / 256.0;
  EXPECT_LT(std::fabs(mean), 0.5);
}

TEST_F(PlanCache, TheDeviceIsPartOfTheKey) {
  Tensor a = realized({1, 2, 3});
  EXPECT_EQ((a * 4 - 1).to_vector<float>(), (std::vector<float>{3, 7, 11}));
  restart_counts();
  Context::get().device = "interp";
  Tensor b = realized({2, 3, 4});
  EXPECT_EQ((b * 4 - 1).to_vector<float>(), (std::vector<float>{7, 11, 15}));
  EXPECT_EQ(misses(), 1);
  EXPECT_EQ(hits(), 0);
}

// The rollout's layer, tanh(x W^T + b) at batch 4, on new inputs each call (hits), against the
// interp device.
TEST_F(PlanCache, RepeatedLayerMatchesTheInterpreter) {
  manual_seed(3);
  NoGradGuard no_grad;
  nn::Linear lin(16, 8);
  for (int i = 0; i < 4; i++) {
    Tensor x = randn({4, 16});
    x.realize();
    Context::get().device = "cpu";
    Tensor y = lin->forward(x).tanh().realize();
    Context::get().device = "interp";
    Tensor want = lin->forward(x).tanh().realize();
    Context::get().device = "cpu";
    auto got = y.to_vector<float>(), ref = want.to_vector<float>();
    ASSERT_EQ(got.size(), ref.size());
    for (size_t j = 0; j < got.size(); j++) EXPECT_NEAR(got[j], ref[j], 1e-5) << j;
  }
  EXPECT_GE(hits(), 6);  // the cpu and the interp plans, 3 hits each (and the inputs')
}

// A realized value that requires grad keeps its graph on a hit too: backward goes through it.
TEST_F(PlanCache, AHitKeepsTheGraphForAutograd) {
  Tensor w = realized({1, 2, 3}).requires_grad_(true);
  for (int i = 0; i < 2; i++) {
    Tensor x = realized({2, 4, 6});
    Tensor y = (x * w).sum();
    y.realize();
    EXPECT_EQ(y.item<float>(), 28.0f);
    w.mutable_grad() = Tensor();
    y.backward();
    EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  }
  EXPECT_GE(hits(), 1);
}

// Deferred launches (the jit's warm-up): programs may not be built until the scope ends, so no
// plan is kept there; the values are those of plain realizes, and a plan made before is used.
TEST_F(PlanCache, DeferredRealizesKeepNoPlan) {
  Tensor a = realized({1, 2}), b = realized({3, 4});
  Tensor c, d;
  {
    engine::DeferLaunches defer;
    c = (a * 9 + 1).realize();
    d = (b * 9 + 1).realize();
    defer.finish();
  }
  EXPECT_EQ(misses(), 2);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{10, 19}));
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{28, 37}));
  EXPECT_EQ(engine::plan_cache_size().first, 0u);
  Tensor e = (a * 9 + 1).realize();  // stored now
  restart_counts();
  {
    engine::DeferLaunches defer;
    Tensor f = (b * 9 + 1).realize();
    defer.finish();
    EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{28, 37}));
  }
  EXPECT_EQ(hits(), 1);
}

// A thread's last plan is tried before the cache (plan_cache.h): a repeated call hits it, a
// different graph in between replaces it, and a cleared cache forgets it (on every thread).
TEST_F(PlanCache, TheLastPlanIsForgottenWhenTheCacheIsCleared) {
  const std::vector<float> xv = iota(4 * 8, -2, 0.125f), wv = iota(8 * 8, 1, -0.03125f);
  Tensor x = from_vector(xv, IntList{4, 8}), w = from_vector(wv, IntList{8, 8});
  realize({x, w});
  restart_counts();
  for (int call = 0; call < 3; call++) {
    Tensor out = x.matmul(w).realize();
    expect_near(out.to_vector<float>(), product(xv, wv, 4, 8, 8), "call " + std::to_string(call));
  }
  EXPECT_EQ(misses(), 1);
  EXPECT_EQ(hits(), 2);
  // Another thread's cleared cache: this thread's next call schedules again, and is right.
  std::thread([] { engine::clear_plan_cache(); }).join();
  EXPECT_EQ(engine::plan_cache_size().first, 0u);
  restart_counts();
  Tensor out = x.matmul(w).realize();
  EXPECT_EQ(misses(), 1);
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(engine::plan_cache_size().first, 1u);
  expect_near(out.to_vector<float>(), product(xv, wv, 4, 8, 8), "after the clear");
  // Square products: after a @ b (distinct buffers, now the last plan), c @ c differs only in
  // reading one buffer twice, which is part of the whole key that the last plan is compared by.
  const std::vector<float> av = iota(8 * 8, -1, 0.03125f);
  Tensor a = from_vector(av, IntList{8, 8}), b = from_vector(wv, IntList{8, 8});
  realize({a, b});
  Tensor ab = a.matmul(b).realize();
  expect_near(ab.to_vector<float>(), product(av, wv, 8, 8, 8), "a @ b");
  restart_counts();
  Tensor aa = a.matmul(a).realize();
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(misses(), 1);
  expect_near(aa.to_vector<float>(), product(av, av, 8, 8, 8), "a @ a");
  restart_counts();
  Tensor ba = b.matmul(a).realize();  // a @ b's key on other buffers: a hit from the cache
  EXPECT_EQ(hits(), 1);
  expect_near(ba.to_vector<float>(), product(wv, av, 8, 8, 8), "b @ a");
}

TEST_F(PlanCache, OffSchedulesEveryRealize) {
  Context::get().plan_cache = false;
  Tensor a = realized({1, 2});
  for (int i = 0; i < 3; i++) EXPECT_EQ((a * 6).to_vector<float>(), (std::vector<float>{6, 12}));
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(misses(), 0);
}

TEST_F(PlanCache, IsBounded) {
  Context::get().device = "interp";  // no compiler: many distinct kernels stay cheap
  Tensor a = realized({1, 2});
  for (size_t i = 0; i < engine::kMaxPlans + 40; i++)
    EXPECT_EQ((a + static_cast<double>(i)).to_vector<float>(),
              (std::vector<float>{1.0f + static_cast<float>(i), 2.0f + static_cast<float>(i)}));
  auto [plans, bytes] = engine::plan_cache_size();
  EXPECT_EQ(plans, engine::kMaxPlans);
  EXPECT_LE(bytes, engine::kMaxPlanBytes);
  // The most recent plans are the ones kept.
  restart_counts();
  (a + static_cast<double>(engine::kMaxPlans + 39)).realize();
  EXPECT_EQ(hits(), 1);
  (a + 0.0).realize();
  EXPECT_EQ(misses(), 1);
}

// The key walk does not index a node reached through its only reference (plan_cache.cpp): a graph
// whose intermediate a tensor still holds (two references) has the same key as the graph that
// dropped it, and runs its plan.
TEST_F(PlanCache, AnIntermediateHeldOrNotIsOnePlan) {
  Tensor a = realized({1, 2, 3}), b = realized({0.5f, 0.25f, -1});
  expect_near(((a * b).exp() + a).to_vector<float>(),
              {std::exp(0.5f) + 1, std::exp(0.5f) + 2, std::exp(-3.0f) + 3});
  restart_counts();
  Tensor a2 = realized({2, 0, -1}), b2 = realized({1, 3, 2});
  const Tensor ab = a2 * b2;  // held while the graph is realized
  expect_near((ab.exp() + a2).to_vector<float>(), {std::exp(2.0f) + 2, 1, std::exp(-2.0f) - 1});
  EXPECT_EQ(hits(), 1);
  EXPECT_EQ(misses(), 0);
  EXPECT_EQ(ab.to_vector<float>(), (std::vector<float>{2, 0, -2}));
}

// A node that two users share (a diamond: one node, two references from inside the graph) is one
// position of the key, so the diamond's plan serves only diamonds: the same shape of graph over two
// distinct leaves is another plan, and every value is right.
TEST_F(PlanCache, ASharedNodeAndTwoDistinctOnesAreTwoPlans) {
  auto diamond = [](const Tensor& x) { return ((x + 1).sin() + (x + 1).cos()).to_vector<float>(); };
  auto expected = [](std::vector<float> v) {
    for (auto& e : v) e = std::sin(e + 1) + std::cos(e + 1);
    return v;
  };
  expect_near(diamond(realized({0, 1, 2})), expected({0, 1, 2}));
  restart_counts();
  expect_near(diamond(realized({-1, 0.5f, 3})), expected({-1, 0.5f, 3}));
  EXPECT_EQ(hits(), 1);
  restart_counts();
  Tensor x = realized({0, 1, 2}), y = realized({3, 4, 5});
  expect_near(((x + 1).sin() + (y + 1).cos()).to_vector<float>(),
              {std::sin(1.0f) + std::cos(4.0f), std::sin(2.0f) + std::cos(5.0f),
               std::sin(3.0f) + std::cos(6.0f)});
  EXPECT_EQ(hits(), 0);
  EXPECT_EQ(misses(), 1);
}

// Two graphs in turn: a thread's last plan is matched by its tokens alone, and the other one is
// found in the cache by the key's hash (computed only then): every call after the first two hits.
TEST_F(PlanCache, TwoGraphsInTurnBothHit) {
  for (int i = 0; i < 4; i++) {
    const float v = static_cast<float>(i);
    Tensor a = realized({v, v + 1});
    EXPECT_EQ((a * 2).to_vector<float>(), (std::vector<float>{2 * v, 2 * v + 2}));
    expect_near((a - 5).exp().to_vector<float>(), {std::exp(v - 5), std::exp(v - 4)});
  }
  EXPECT_EQ(misses(), 2);
  EXPECT_EQ(hits(), 6);
}

TEST_F(PlanCache, DebugPrintsHitsAndMisses) {
  Tensor a = realized({1, 2});
  Tensor b = realized({3, 4});
  Context::get().debug = 1;
  testing::internal::CaptureStderr();
  (a * 7).realize();
  (b * 7).realize();
  const std::string out = testing::internal::GetCapturedStderr();
  Context::get().debug = 0;
  EXPECT_NE(out.find("plan cache miss"), std::string::npos) << out;
  EXPECT_NE(out.find("plan cache hit"), std::string::npos) << out;
}

}  // namespace

namespace {

// DEBUG=1 tells kernels the compiler built from those loaded from the on-disk cache; DEBUG=3 lists
// the ops each kernel fused.
TEST_F(PlanCache, DebugNamesDiskCacheLoadsAndFusedOps) {
  Tensor a = realized({1, 2}), b = realized({3, 4});
  Context::get().debug = 3;
  testing::internal::CaptureStderr();
  ((a * b + 1.5f).tanh() * 0.25f).realize();
  const std::string out = testing::internal::GetCapturedStderr();
  Context::get().debug = 0;
  EXPECT_NE(out.find("loaded from the disk cache"), std::string::npos) << out;
  EXPECT_NE(out.find("fused: MUL ADD TANH MUL"), std::string::npos) << out;
}

}  // namespace

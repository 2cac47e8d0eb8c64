// The heap allocations of a warm eager call (issue 11): a small product is latency-bound, and
// malloc/free were most of its overhead. This binary replaces operator new with one that counts the
// calling thread's allocations, and bounds the count per call of the study's batch-4 product and of
// the rollout's actor layer. At 7f886c8 the product made 48 allocations per call and the layer 72;
// after a0f0d97 (a storage's first reader needs no list) 3.1 and 6.0; since issue 40 (tensors and
// output storages in recycled blocks, the realize's result vector kept by the thread) 0.1 and 0.0,
// under bounds of 1 and 2 that the pre-issue-40 counts exceed. Values are checked too, against
// products computed here in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "ember/support/recycled_alloc.h"

#include "ember/ember.h"

namespace {
thread_local int64_t t_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  t_allocations++;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using namespace ember;

std::vector<float> values(int64_t n, int mod, float scale, float shift) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<float>(i % mod) * scale - shift;
  return v;
}

// out == x @ b (4x128 @ 128x128; b given transposed, as 128x128 row-major W, when b_t), computed
// here in double.
void expect_product(const Tensor& out, const std::vector<float>& xd, const std::vector<float>& bd,
                    bool b_t) {
  auto v = out.to_vector<float>();
  ASSERT_EQ(v.size(), 4u * 128u);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 128; j++) {
      double ref = 0;
      for (int k = 0; k < 128; k++)
        ref += double(xd[i * 128 + k]) * (b_t ? bd[j * 128 + k] : bd[k * 128 + j]);
      ASSERT_NEAR(v[i * 128 + j], ref, 1e-5 + 1e-5 * std::fabs(ref)) << i << "," << j;
    }
}

// Allocations per call of `call`, averaged over `n` calls after 5 warm-up calls (compile, caches).
template <class F>
double allocations_per_call(F&& call, int n = 50) {
  for (int i = 0; i < 5; i++) call();
  const int64_t before = t_allocations;
  for (int i = 0; i < n; i++) call();
  return static_cast<double>(t_allocations - before) / n;
}

TEST(EagerAllocations, CountingOperatorNewSeesTheLibrary) {
  const int64_t before = t_allocations;
  Tensor t = from_vector(std::vector<float>{1, 2, 3}, IntList{3}).realize();
  EXPECT_GT(t_allocations, before);  // else the bounds below could not fail
}

TEST(EagerAllocations, SmallProductStaysUnderItsBound) {
  Context::get().plan_cache = true;
  NoGradGuard no_grad;
  auto xd = values(4 * 128, 17, 0.01f, 0.08f), bd = values(128 * 128, 13, 0.01f, 0.06f);
  Tensor x = from_vector(xd, IntList{4, 128}), b = from_vector(bd, IntList{128, 128});
  realize({x, b});
  Tensor out;
  const int64_t hits = runtime_stats().plan_cache_hits;
  const double per_call = allocations_per_call([&] { out = x.matmul(b).realize(); });
  std::printf("x @ b: %.1f allocations per call\n", per_call);
  EXPECT_GE(runtime_stats().plan_cache_hits - hits, 50);  // warm calls: plans from the cache
  EXPECT_LE(per_call, 1.0);
  expect_product(out, xd, bd, false);
}

TEST(EagerAllocations, ActorLayerStaysUnderItsBound) {
  Context::get().plan_cache = true;
  NoGradGuard no_grad;
  manual_seed(0);
  nn::Linear lin(128, 128);
  auto xd = values(4 * 128, 17, 0.01f, 0.08f);
  Tensor x = from_vector(xd, IntList{4, 128}).realize();
  Tensor out;
  const double per_call = allocations_per_call([&] { out = lin->forward(x).tanh().realize(); });
  std::printf("tanh(linear(x)): %.1f allocations per call\n", per_call);
  EXPECT_LE(per_call, 2.0);
  auto w = lin->weight.to_vector<float>(), bias = lin->bias.to_vector<float>();
  auto v = out.to_vector<float>();
  ASSERT_EQ(v.size(), 4u * 128u);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 128; j++) {
      double ref = bias[j];
      for (int k = 0; k < 128; k++) ref += double(xd[i * 128 + k]) * w[j * 128 + k];
      ASSERT_NEAR(v[i * 128 + j], std::tanh(ref), 1e-5) << i << "," << j;
    }
}

// The same product replayed by ember::jit, with W in place and as a view (x @ W^T, nn::Linear's
// layout, which the jit used to copy on every call): a replay allocates its output and little
// else (4.0 allocations per call when this test was written: the input and output vectors, the
// output's storage and tensor; 2.0 since issue 40 recycles the storage's and the tensor's blocks).
TEST(EagerAllocations, JitReplayOfTheSmallProductStaysUnderItsBound) {
  NoGradGuard no_grad;
  auto xd = values(4 * 128, 17, 0.01f, 0.08f), bd = values(128 * 128, 13, 0.01f, 0.06f);
  Tensor x = from_vector(xd, IntList{4, 128}), b = from_vector(bd, IntList{128, 128});
  realize({x, b});
  Jit product = jit([](const std::vector<Tensor>& in) { return std::vector{in[0].matmul(in[1])}; });
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "x @ b.t()" : "x @ b");
    product.reset();
    const Tensor rhs = transposed ? b.t() : b;
    Tensor out;
    const int64_t replays = product.replays();
    const double per_call = allocations_per_call([&] { out = product({x, rhs})[0]; });
    std::printf("jit %s: %.1f allocations per call\n", transposed ? "x @ b.t()" : "x @ b",
                per_call);
    EXPECT_EQ(product.replays() - replays, 53);  // all 55 calls but the eager one and the capture
    EXPECT_LE(per_call, 2.5);
    expect_product(out, xd, bd, transposed);
  }
}

// support::RecycledAlloc: a dropped object's block is the next one made on the thread (no
// operator new), and a block dropped on another thread joins that thread's list, which its exit
// frees; objects stay whole throughout.
TEST(EagerAllocations, RecycledBlocksAreReusedOnTheirThreadAndFreedAtItsExit) {
  struct Item {
    int64_t v[5];
  };
  using Alloc = support::RecycledAlloc<Item>;
  auto a = std::allocate_shared<Item>(Alloc{}, Item{{1, 2, 3, 4, 5}});
  const void* block = a.get();
  a.reset();
  const int64_t before = t_allocations;
  auto b = std::allocate_shared<Item>(Alloc{}, Item{{6, 7, 8, 9, 10}});
  EXPECT_EQ(t_allocations, before);  // the dropped block, not a new one
  EXPECT_EQ(static_cast<const void*>(b.get()), block);
  EXPECT_EQ(b->v[4], 10);
  std::thread other([moved = std::move(b)]() mutable {
    EXPECT_EQ(moved->v[0], 6);
    moved.reset();  // joins this thread's list, freed as the thread exits
    auto c = std::allocate_shared<Item>(Alloc{}, Item{{11, 12, 13, 14, 15}});
    EXPECT_EQ(c->v[2], 13);
  });
  other.join();
  const int64_t joined = t_allocations;
  auto d = std::allocate_shared<Item>(Alloc{}, Item{{16, 17, 18, 19, 20}});
  EXPECT_EQ(t_allocations, joined + 1);  // this thread's list was empty: a new block
  EXPECT_EQ(d->v[1], 17);
}

}  // namespace

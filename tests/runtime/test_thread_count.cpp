// Kernel results do not depend on which thread ran which chunk: a kernel's work units write
// disjoint outputs, and a split reduce (split-K) sums its slices' partials in a fixed order, so the
// thread pool's dynamic claiming keeps every result bit for bit. Each case runs several times on
// 1, 2, 3 and 4 threads (the chunks land on different threads from run to run) and is compared
// word for word with its first run on that thread count and with the 1-thread run.
// A flat elementwise kernel that calls libm (expf, cosf) runs a range's last few elements with the
// scalar function, whose last bits may differ from the vector one's; its ranges are therefore cut
// only at multiples of 256 elements (codegen::outer_grain), so the scalar ones are the same
// elements on any thread count: the launch's last n mod (vector width) elements.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

Tensor input(IntList shape) {
  Tensor t = randn(shape);
  t.realize();
  return t;
}

// Builds and realizes f's graph; checks that kernels ran (no value reused from an earlier run).
std::vector<float> compute(const std::function<Tensor()>& f) {
  const int64_t before = runtime_stats().kernels_launched;
  std::vector<float> r = f().to_vector<float>();
  EXPECT_GT(runtime_stats().kernels_launched, before);
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ThreadCount, KernelResultsAreBitIdenticalOnAnyThreadCount) {
  manual_seed(5);
  const Tensor x = input({10000, 128}), g = input({10000, 128}), w = input({128, 128}),
               bias = input({128}), big = input({300, 2000}), flat = input({600001});
  struct Case {
    std::string name;
    std::function<Tensor()> f;
  };
  const std::vector<Case> cases = {
      // The weight gradient's layout: the reduce axis (10,000) is split across the threads.
      {"weight gradient (split-K)", [&] { return (matmul(x.t(), g) + bias) * 0.5; }},
      // Its bias gradient, a row sum of the same kernel (partials per slice, summed in order).
      {"weight and bias gradient (row sums)",
       [&] {
         return cat({matmul(g.t(), x).reshape({-1}), (g * 0.5).sum({0})}, 0);
       }},
      // A batch-10,000 layer: row blocks across the threads.
      {"layer", [&] { return (matmul(x, w) + bias).tanh(); }},
      // Reductions over either axis.
      {"sum over rows", [&] { return (big * big).sum({0}); }},
      {"sum over columns", [&] { return big.exp().sum({1}); }},
      // Large elementwise chains, cut into chunks of elements.
      {"elementwise arithmetic", [&] { return (big * 3.0 + 1.0) * big; }},
      {"elementwise sigmoid", [&] { return (big * 3.0 + 1.0).sigmoid(); }},
      {"elementwise libm, odd length", [&] { return (flat * 3.0).exp().cos() + flat.tanh(); }},
  };
  const int old = get_num_threads();
  std::vector<std::vector<float>> one_thread;
  for (int threads : {1, 2, 3, 4}) {
    set_num_threads(threads);
    for (const Case& c : cases) {
      const std::vector<float> first = compute(c.f);
      if (threads == 1) one_thread.push_back(first);
      EXPECT_TRUE(same_bits(one_thread[&c - cases.data()], first))
          << c.name << ": " << threads << " threads vs 1";
      for (int rep = 0; rep < 3; rep++)
        EXPECT_TRUE(same_bits(first, compute(c.f)))
            << c.name << ": " << threads << " threads, run " << rep + 1 << " vs run 0";
    }
  }
  set_num_threads(old);
}

}  // namespace

// Every plan one action away from the heuristic's (KernelPlan::neighbours) computes what the
// kernel means: for kernels from the fuzz helpers (random matrix products at odd sizes with fused
// epilogues, random graphs with reductions) and the training step's products, column sums and
// norms, the heuristic's plan and a seeded sample of its neighbours are rendered, compiled (one
// batch), run on the cpu device on random inputs and compared with the interp device.
// Tolerances as in test_fuzz.cpp: |cpu - ref| <= 1e-4 |ref| + 1e-5 scale (scale = max(1, the
// largest finite |ref| of the output)), NaN and infinities exactly. Runs under every ISA level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "codegen/kernel_plan.h"
#include "fuzz_graph.h"
#include "kernel_list.h"
#include "plan_run.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/target.h"

namespace {

using namespace ember;
using codegen::KernelPlan;
using schedule::Kernel;
using test::compare;
using test::random_buffer;
using test::run;

constexpr size_t kNeighboursPerKernel = 5;

bool floating_only(const Kernel& k) {
  for (const auto& b : k.buffers)
    if (!is_floating_point(b.dtype)) return false;
  return true;
}

// The kernels under test: products, reductions and their epilogues, floating point only (random
// integers would overflow where the fuzz graphs' own data does not).
std::vector<Kernel> kernels_under_test() {
  manual_seed(9);
  std::vector<Kernel> out;
  auto take = [&](const std::vector<Tensor>& ts, bool reduces_only) {
    for (Kernel& k : test::kernels_of(ts))
      if (floating_only(k) && (!reduces_only || !k.reduce_axes.empty())) out.push_back(k);
  };
  for (uint64_t seed = 1; seed <= 10; seed++) {
    std::vector<Tensor> ts;
    for (auto& v : fuzz::build_matmul(seed * 7919 + 1)) ts.push_back(v.t);
    take(ts, false);
  }
  for (uint64_t seed = 1; seed <= 16; seed++) {
    std::vector<Tensor> ts;
    for (auto& v : fuzz::build_graph(seed * 100003)) ts.push_back(v.t);
    take(ts, true);
  }
  Tensor x = randn({37, 128}), w = randn({127, 128}), b = randn({127}), dz = randn({1100, 37}),
         h = randn({1100, 13});
  take({(matmul(x, w.t()) + b).tanh()}, false);
  take({(matmul(randn({4, 128}), w.t()) + b).tanh()}, false);
  take({matmul(dz.t(), h), dz.sum({0})}, false);
  take({randn({2100, 129}).sum({0})}, false);
  take({(x * x).sum() + (b * b).sum()}, false);
  return out;
}

TEST(PlanNeighbours, EveryNeighbourMatchesInterp) {
  const codegen::Target& target = runtime::host_target();
  const std::vector<Kernel> kernels = kernels_under_test();
  ASSERT_GE(kernels.size(), 20u);
  std::mt19937_64 g(20240601);
  struct Case {
    const Kernel* k;
    std::vector<KernelPlan> plans;
    std::vector<std::shared_ptr<runtime::Program>> programs;
  };
  std::vector<Case> cases;
  std::vector<std::shared_ptr<runtime::Program>> all;
  std::set<codegen::PlanKind> kinds;
  for (const Kernel& k : kernels) {
    Case c{&k, {codegen::plan(k, target)}, {}};
    std::vector<codegen::Move> moves = c.plans[0].neighbours(k, target);
    std::shuffle(moves.begin(), moves.end(), g);
    for (size_t i = 0; i < moves.size() && i < kNeighboursPerKernel; i++)
      c.plans.push_back(moves[i].plan);
    for (const KernelPlan& p : c.plans) {
      ASSERT_EQ(p.illegal(k, target), "") << k.name() << " " << p.str();
      c.programs.push_back(runtime::prepare_cpu_program(k, p));
      all.push_back(c.programs.back());
      kinds.insert(p.kind());
    }
    cases.push_back(std::move(c));
  }
  // Every kind among the plans run.
  EXPECT_EQ(kinds.size(), 4u);
  std::printf("%zu kernels, %zu plans (the heuristic's and up to %zu neighbours each)\n",
              cases.size(), all.size(), kNeighboursPerKernel);
  runtime::cpu_device().build(all);
  for (const Case& c : cases) {
    std::vector<std::vector<uint64_t>> inputs;
    for (const auto& b : c.k->buffers) inputs.push_back(random_buffer(b, g));
    const auto ref = run(*runtime::get_device("interp").compile({c.k})[0], inputs);
    for (size_t i = 0; i < c.plans.size(); i++)
      compare(*c.k, run(*c.programs[i], inputs), ref, c.plans[i].str());
  }
}

}  // namespace

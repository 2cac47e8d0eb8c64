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
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/target.h"

namespace {

using namespace ember;
using codegen::KernelPlan;
using schedule::Kernel;

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

// Random host data of a floating buffer: multiples of 1/8 in [-2, 2].
std::vector<uint64_t> random_buffer(const schedule::KernelBuffer& b, std::mt19937_64& g) {
  std::vector<uint64_t> words(static_cast<size_t>(b.numel) + 1);
  std::uniform_int_distribution<int> d(-16, 16);
  for (int64_t i = 0; i < b.numel; i++) {
    const double v = d(g) / 8.0;
    if (b.dtype == kFloat32)
      reinterpret_cast<float*>(words.data())[i] = static_cast<float>(v);
    else
      reinterpret_cast<double*>(words.data())[i] = v;
  }
  return words;
}

// Runs `p` on copies of `inputs` (outputs too: a kernel may store part of its output only).
std::vector<std::vector<uint64_t>> run(const runtime::Program& p,
                                       std::vector<std::vector<uint64_t>> bufs) {
  std::vector<void*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  p.launch(ptrs.data());
  return bufs;
}

double element(const std::vector<uint64_t>& b, ScalarType t, int64_t i) {
  return t == kFloat32 ? reinterpret_cast<const float*>(b.data())[i]
                       : reinterpret_cast<const double*>(b.data())[i];
}

// Failures (at most a few reported) of `got` against `ref` in the kernel's output slots.
int compare(const Kernel& k, const std::vector<std::vector<uint64_t>>& got,
            const std::vector<std::vector<uint64_t>>& ref, const std::string& what) {
  int failures = 0;
  for (size_t o = 0; o < k.num_outputs(); o++) {
    const auto& b = k.buffers[o];
    double scale = 1;
    for (int64_t i = 0; i < b.numel; i++)
      if (std::isfinite(element(ref[o], b.dtype, i)))
        scale = std::max(scale, std::fabs(element(ref[o], b.dtype, i)));
    for (int64_t i = 0; i < b.numel; i++) {
      const double x = element(got[o], b.dtype, i), r = element(ref[o], b.dtype, i);
      const bool same = std::isnan(r)   ? std::isnan(x)
                        : std::isinf(r) ? x == r
                                        : std::fabs(x - r) <= 1e-4 * std::fabs(r) + 1e-5 * scale;
      if (!same && failures++ < 3)
        ADD_FAILURE() << k.name() << " as " << what << ": output " << o << "[" << i << "] " << x
                      << ", interp " << r;
    }
  }
  return failures;
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

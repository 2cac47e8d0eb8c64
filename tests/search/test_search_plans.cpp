// The schedule search's plans (issue 40): every plan the search explores, and every neighbour of
// the heuristic's plan, computes what the kernel means. For a 7x13 @ 13x5 product (with and
// without a bias + tanh epilogue), a row sum of a product of two 9x11 tensors and an elementwise
// kernel, each plan is written as text and read back (codegen/plan_text.h), rendered, compiled
// (one batch), run on random inputs and compared with the interp device. Also: the timer leaves
// the kernel's buffers as they were (an output that is also an input included), and the beam never
// keeps a plan it measured slower than the heuristic's (fake timings).
// Tolerances as in codegen/test_plan_neighbours.cpp: |cpu - ref| <= 1e-4 |ref| + 1e-5 scale.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "codegen/plan_text.h"
#include "kernel_list.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/cpu/target.h"
#include "search/beam_search.h"
#include "search/kernel_timer.h"

namespace {

using namespace ember;
using codegen::KernelPlan;
using schedule::Kernel;
using Buffers = std::vector<std::vector<float>>;

Buffers random_buffers(const Kernel& k, std::mt19937& g) {
  std::uniform_int_distribution<int> d(-16, 16);
  Buffers out;
  for (const auto& b : k.buffers) {
    EXPECT_EQ(b.dtype, kFloat32);
    std::vector<float> v(static_cast<size_t>(b.numel));
    for (float& x : v) x = static_cast<float>(d(g)) / 8;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<void*> pointers(Buffers& b) {
  std::vector<void*> p;
  for (auto& v : b) p.push_back(v.data());
  return p;
}

Buffers run(const runtime::Program& p, Buffers bufs) {
  p.launch(pointers(bufs).data());
  return bufs;
}

void expect_close(const Kernel& k, const Buffers& got, const Buffers& ref,
                  const std::string& what) {
  for (size_t o = 0; o < k.num_outputs(); o++) {
    double scale = 1;
    for (float r : ref[o]) scale = std::max(scale, std::fabs(double(r)));
    int failures = 0;
    for (size_t i = 0; i < ref[o].size(); i++) {
      const double x = got[o][i], r = ref[o][i];
      if (!(std::fabs(x - r) <= 1e-4 * std::fabs(r) + 1e-5 * scale) && failures++ < 3)
        ADD_FAILURE() << k.name() << " as " << what << ": output " << o << "[" << i << "] " << x
                      << ", interp " << r;
    }
  }
}

std::vector<Kernel> kernels_under_test() {
  manual_seed(40);
  std::vector<Kernel> out;
  Tensor a = randn({7, 13}), b = randn({13, 5}), bias = randn({5}), x = randn({9, 11}),
         y = randn({9, 11});
  for (Tensor* t : {&a, &b, &bias, &x, &y}) t->realize();  // buffers, not random-number kernels
  for (const auto& ts : std::vector<std::vector<Tensor>>{{matmul(a, b)},
                                                         {(matmul(a, b) + bias).tanh()},
                                                         {(x * y + 1).sum({1})},
                                                         {x.tanh() * y + x}})
    for (Kernel& k : test::kernels_of(ts)) out.push_back(std::move(k));
  return out;
}

TEST(SearchPlans, ExploredPlansAndNeighboursMatchInterp) {
  const codegen::Target& t = runtime::host_target();
  std::mt19937 g(7);
  const std::vector<Kernel> kernels = kernels_under_test();
  ASSERT_GE(kernels.size(), 4u);
  size_t total = 0, explored_total = 0;
  for (const Kernel& k : kernels) {
    Buffers inputs = random_buffers(k, g);
    // The plans: the search's (on these buffers: one timed run each), then every neighbour of
    // the heuristic's plan; each once.
    search::SearchOptions o;
    o.width = 2;
    o.margin = -1;  // every round "improves": the search goes as deep as max_rounds
    o.max_rounds = 2;
    search::TimerOptions to;
    to.warmup = 0;
    to.runs = 1;
    const search::SearchResult r =
        search::beam_search(k, t, search::kernel_timer(k, pointers(inputs), to), o);
    std::map<std::string, KernelPlan> plans;
    for (const KernelPlan& p : r.explored) plans.emplace(codegen::plan_text(p), p);
    explored_total += plans.size();
    for (const codegen::Move& m : codegen::plan(k, t).neighbours(k, t))
      plans.emplace(codegen::plan_text(m.plan), m.plan);
    EXPECT_GT(r.timed, 1) << k.name();
    std::vector<std::shared_ptr<runtime::Program>> programs;
    std::vector<std::string> names;
    for (const auto& [text, p] : plans) {
      const std::optional<KernelPlan> back = codegen::plan_from_text(text);
      ASSERT_TRUE(back) << text;
      EXPECT_EQ(codegen::plan_text(*back), text);
      EXPECT_EQ(back->str(), p.str());
      ASSERT_EQ(p.illegal(k, t), "") << k.name() << " " << p.str();
      programs.push_back(runtime::prepare_cpu_program(k, p));
      names.push_back(p.str());
    }
    runtime::cpu_device().build(programs);
    const Buffers ref = run(*runtime::get_device("interp").compile({&k})[0], inputs);
    for (size_t i = 0; i < programs.size(); i++)
      expect_close(k, run(*programs[i], inputs), ref, names[i]);
    total += programs.size();
  }
  std::printf("%zu kernels, %zu plans checked (%zu explored by the search)\n", kernels.size(),
              total, explored_total);
}

TEST(SearchPlans, PlanTextRefusesWhatItDidNotWrite) {
  for (const char* bad :
       {"", "tile", "tile 0 1 2", "dot 0 1 2 16 1 1 4 2", "loop 2 1 1 1 0 x", "loop 999999 1",
        "column_split 4 256 7", "tiles 0 1 2 16 1 1 0 0 0 8 0 0 0 0"})
    EXPECT_FALSE(codegen::plan_from_text(bad)) << bad;
}

// THREADS(0,1): a kernel the launcher splits across threads (300,000 elements, above
// kMinParallelWork) has the one-thread plan as a neighbour; it launches on one thread with the
// same units, so its values are the split launch's bit for bit; it reads back from text, and its
// own neighbours keep it (but one, which turns it off).
TEST(SearchPlans, OneThreadIsAMoveWithTheSameValues) {
  const codegen::Target& t = runtime::host_target();
  manual_seed(41);
  Tensor x = randn({600, 500}), y = randn({600, 500});
  x.realize();
  y.realize();
  const std::vector<Kernel> ks = test::kernels_of({x.tanh() * y + x});
  ASSERT_EQ(ks.size(), 1u);
  const Kernel& k = ks[0];
  const KernelPlan h = codegen::plan(k, t);
  ASSERT_TRUE(h.splits(k)) << k.name();
  std::optional<KernelPlan> one;
  for (const codegen::Move& m : h.neighbours(k, t))
    if (m.action.kind == codegen::ActionKind::Threads) one = m.plan;
  ASSERT_TRUE(one);
  EXPECT_EQ(one->threads, 1);
  EXPECT_FALSE(one->splits(k));
  EXPECT_NE(one->str().find("THREADS(0,1)"), std::string::npos) << one->str();
  const std::optional<KernelPlan> back = codegen::plan_from_text(codegen::plan_text(*one));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->threads, 1);
  int offs = 0;
  for (const codegen::Move& m : one->neighbours(k, t)) {
    if (m.action.kind == codegen::ActionKind::Threads) {
      offs++;
      EXPECT_EQ(m.plan.threads, 0);
    } else {
      EXPECT_EQ(m.plan.threads, 1) << m.action.str();
    }
  }
  EXPECT_EQ(offs, 1);
  auto split = runtime::prepare_cpu_program(k, h), alone = runtime::prepare_cpu_program(k, *one);
  runtime::cpu_device().build({split, alone});
  std::mt19937 g(12);
  const Buffers in = random_buffers(k, g);
  EXPECT_EQ(run(*alone, in), run(*split, in));
  // A kernel the launcher keeps on one thread anyway has no such move.
  for (const Kernel& small : kernels_under_test())
    for (const codegen::Move& m : codegen::plan(small, t).neighbours(small, t))
      EXPECT_NE(m.action.kind, codegen::ActionKind::Threads) << small.name();
}

// The launcher weighs a kernel's elements by their ALU work: a 3x3 tap sum over 64x40x40
// elements (below kMinParallelWork) splits, a scaling of the same elements does not.
TEST(SearchPlans, TapSumsSplitWhereAScalingOfAsManyElementsDoesNot) {
  const codegen::Target& t = runtime::host_target();
  Tensor x = randn({64, 42, 42});
  x.realize();
  Tensor taps;
  for (int i = 0; i < 9; i++) {
    Tensor v = x.narrow(1, i / 3, 40).narrow(2, i % 3, 40) * (0.5 + i);
    taps = i ? taps + v : v;
  }
  const std::vector<Kernel> sum = test::kernels_of({taps});
  const std::vector<Kernel> scale = test::kernels_of({x.narrow(1, 1, 40).narrow(2, 1, 40) * 2});
  ASSERT_EQ(sum.size(), 1u);
  ASSERT_EQ(scale.size(), 1u);
  EXPECT_TRUE(codegen::plan(sum[0], t).splits(sum[0])) << sum[0].name();
  EXPECT_FALSE(codegen::plan(scale[0], t).splits(scale[0])) << scale[0].name();
}

// The timer writes copies: the kernel's buffers hold what they held, also where the output buffer
// is read as an input (an in-place update).
TEST(SearchPlans, TimingLeavesTheBuffersAsTheyWere) {
  const codegen::Target& t = runtime::host_target();
  std::mt19937 g(11);
  for (const Kernel& k : kernels_under_test()) {
    Buffers bufs = random_buffers(k, g);
    std::vector<void*> ptrs = pointers(bufs);
    if (k.reduce_axes.empty() && k.buffers.size() >= 2 && k.buffers[1].numel == k.buffers[0].numel)
      ptrs[1] = ptrs[0];  // out = f(out, ...): the elementwise kernel in place
    std::vector<float> before[8];
    for (size_t i = 0; i < bufs.size(); i++) before[i] = bufs[i];
    search::SearchOptions o;
    o.max_rounds = 1;
    search::TimerOptions to;
    to.runs = 2;
    search::beam_search(k, t, search::kernel_timer(k, ptrs, to), o);
    for (size_t i = 0; i < bufs.size(); i++)
      EXPECT_EQ(bufs[i], before[i]) << k.name() << " buffer " << i;
  }
}

// Fake timings: the heuristic's plan takes 1 s; `faster` maps a plan (as text) to its time on the
// first and later measurements.
search::Measure fake(const KernelPlan& heuristic,
                     std::map<std::string, std::vector<double>> faster) {
  auto calls = std::make_shared<std::map<std::string, size_t>>();
  const std::string h = codegen::plan_text(heuristic);
  return [=](const std::vector<KernelPlan>& plans, double) {
    std::vector<double> out;
    for (const KernelPlan& p : plans) {
      const std::string s = codegen::plan_text(p);
      const size_t n = (*calls)[s]++;
      auto it = faster.find(s);
      out.push_back(s == h || it == faster.end() ? (s == h ? 1.0 : 2.0)
                                                 : it->second[std::min(n, it->second.size() - 1)]);
    }
    return out;
  };
}

TEST(SearchPlans, NeverKeepsAPlanSlowerThanTheHeuristic) {
  const codegen::Target& t = runtime::host_target();
  const Kernel k = kernels_under_test()[0];
  const KernelPlan h = codegen::plan(k, t);
  const std::vector<codegen::Move> moves = h.neighbours(k, t);
  ASSERT_GE(moves.size(), 2u);
  const std::string n0 = codegen::plan_text(moves[0].plan);
  search::SearchOptions o;
  // Every other plan slower: the heuristic's is kept.
  search::SearchResult r = search::beam_search(k, t, fake(h, {}), o);
  EXPECT_EQ(codegen::plan_text(r.best), codegen::plan_text(h));
  EXPECT_EQ(r.speedup(), 1.0);
  // A neighbour twice as fast, also when timed again: kept, at 2x.
  r = search::beam_search(k, t, fake(h, {{n0, {0.5}}}), o);
  EXPECT_EQ(codegen::plan_text(r.best), n0);
  EXPECT_DOUBLE_EQ(r.speedup(), 2.0);
  // Fast once, slow when confirmed: the heuristic's.
  r = search::beam_search(k, t, fake(h, {{n0, {0.5, 1.5}}}), o);
  EXPECT_EQ(codegen::plan_text(r.best), codegen::plan_text(h));
  // Within the margin (1% faster): not worth a change.
  r = search::beam_search(k, t, fake(h, {{n0, {0.99}}}), o);
  EXPECT_EQ(codegen::plan_text(r.best), codegen::plan_text(h));
  // A plan that cannot be built (infinite time) is never chosen.
  r = search::beam_search(
      k, t,
      [&](const std::vector<KernelPlan>& ps, double) {
        std::vector<double> s;
        for (const KernelPlan& p : ps)
          s.push_back(codegen::plan_text(p) == codegen::plan_text(h)
                          ? 1.0
                          : std::numeric_limits<double>::infinity());
        return s;
      },
      o);
  EXPECT_EQ(codegen::plan_text(r.best), codegen::plan_text(h));
}

TEST(SearchPlans, StopsAtTheTimeLimit) {
  const codegen::Target& t = runtime::host_target();
  const Kernel k = kernels_under_test()[0];
  search::SearchOptions o;
  o.seconds = 0;
  const search::SearchResult r = search::beam_search(
      k, t,
      [](const std::vector<KernelPlan>& ps, double) { return std::vector<double>(ps.size(), 1.0); },
      o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.timed, 1);  // the heuristic's plan only
}

}  // namespace

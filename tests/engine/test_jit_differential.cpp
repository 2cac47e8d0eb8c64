// Differential test of ember::jit (issue 12): seeded random programs, each run eagerly and under
// jit for 6 calls (call 1 eager, call 2 capture, then replays and recaptures), comparing the
// outputs and every side effect after each call: the caller's inputs, closure tensors, the
// parameter and its gradient.
//
// The programs mix pure ops, in-place ops on inputs and on closure tensors, realizes inside the
// function, aliased arguments (changing between calls), closure variables rebound between calls
// (the old tensor kept alive), repeated and pass-through outputs,
// nested jits, backward() with and without zero_grad and SGD steps. All values stay small
// integers (clamped; products of clamped factors), so every kernel is exact whatever the fusion
// and the comparison is bitwise. Shapes are fixed and the op set is small, so the set of
// distinct kernels is bounded (each is compiled once).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "ember/ember.h"

namespace {

using namespace ember;

enum StepKind {
  Pure,
  Neg,
  InPlaceInput,
  InPlaceClosure,
  CopyClosure,
  Realize,
  Nested,
  Backward,
  Step,
  NumKinds
};

struct StepSpec {
  StepKind kind;
  int a, b, op;
  bool zero_grad, step;
};

struct Program {
  std::vector<StepSpec> steps;
  std::vector<int> outs;                   // indices into the value list; may repeat
  std::vector<bool> alias_call;            // per call: pass the same tensor as both inputs
  std::vector<bool> lazy_input;            // per call: input 0 passed as a lazy value
  std::vector<bool> rebind_c0;             // per call: before it, c0 is rebound to a new tensor
  std::vector<std::vector<float>> c0_new;  // (the old one is kept alive elsewhere)
  std::vector<std::vector<float>> x0, x1;  // per call input data
  std::vector<float> c0, c1, p;
};

Program generate(uint32_t seed, int calls) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto vec = [&] {
    std::vector<float> v(4);
    for (auto& x : v) x = static_cast<float>(pick(9) - 4);
    return v;
  };
  Program pr;
  std::vector<bool> vec4 = {true, true, true, true};  // in0, in1, c0, c1; losses are 0-d
  int nsteps = 2 + pick(6);
  for (int i = 0; i < nsteps; i++) {
    const int nvals = static_cast<int>(vec4.size());
    StepSpec s{static_cast<StepKind>(pick(NumKinds)),
               pick(nvals),
               pick(nvals),
               pick(3),
               pick(2) == 0,
               pick(2) == 0};
    if (s.kind == Nested)  // the nested jit is always called with the same shape
      while (!vec4[s.a]) s.a = pick(nvals);
    if (s.kind == Pure) vec4.push_back(vec4[s.a] || vec4[s.b]);
    if (s.kind == Neg) vec4.push_back(vec4[s.a]);
    if (s.kind == Nested) vec4.push_back(true);
    if (s.kind == Backward) vec4.push_back(false);
    pr.steps.push_back(s);
  }
  const int nvals = static_cast<int>(vec4.size());
  int nouts = 1 + pick(3);
  for (int i = 0; i < nouts; i++) pr.outs.push_back(pick(nvals));
  const bool aliasing = pick(3) == 0, varying = pick(2) == 0;
  for (int c = 0; c < calls; c++) {
    pr.alias_call.push_back(aliasing && (!varying || pick(2) == 0));
    pr.lazy_input.push_back(pick(4) == 0);
    pr.x0.push_back(vec());
    pr.x1.push_back(vec());
  }
  pr.c0 = vec();
  pr.c1 = vec();
  pr.p = vec();
  // Rebinding is drawn from its own stream, so the programs above stay what they were.
  std::mt19937 rng2(seed ^ 0x9e3779b9u);
  for (int c = 0; c < calls; c++) {
    pr.rebind_c0.push_back(rng2() % 4 == 0);
    std::vector<float> v(4);
    for (auto& x : v) x = static_cast<float>(static_cast<int>(rng2() % 9) - 4);
    pr.c0_new.push_back(v);
  }
  return pr;
}

Tensor lim(const Tensor& t, double m) { return t.clamp(-m, m); }

// One instance of a program's world: closure tensors, a parameter with its optimizer, and the
// function (with its nested helper, jitted or not).
struct World {
  Tensor c0, c1, p;
  std::vector<Tensor> kept;  // tensors c0 held before it was rebound
  std::unique_ptr<optim::SGD> opt;
  Jit::Fn inner_fn, fn;
  std::unique_ptr<Jit> inner, outer;

  World(const Program& pr, bool use_jit) {
    c0 = from_vector(pr.c0);
    c1 = from_vector(pr.c1);
    p = from_vector(pr.p);
    realize({c0, c1});
    p.set_requires_grad(true);
    opt = std::make_unique<optim::SGD>(std::vector<Tensor>{p}, optim::SGDOptions(1.0));
    inner_fn = [this](const std::vector<Tensor>& in) {
      Tensor a = in[0];
      c1.add_(lim(a, 100));  // the nested function writes a closure tensor too
      return std::vector<Tensor>{lim(a * 2 + 1, 1000)};
    };
    if (use_jit) inner = std::make_unique<Jit>(inner_fn);
    fn = [this, &pr](const std::vector<Tensor>& in) {
      std::vector<Tensor> v = {in[0], in[1], c0, c1};
      for (const StepSpec& s : pr.steps) {
        Tensor& a = v[s.a];
        const Tensor& b = v[s.b];
        switch (s.kind) {
          case Pure:
            v.push_back(s.op == 0   ? lim(a + b, 1000)
                        : s.op == 1 ? lim(a - b, 1000)
                                    : lim(a, 30) * lim(b, 30));
            break;
          case Neg:
            v.push_back(-a);
            break;
          case InPlaceInput: {
            Tensor x = in[s.op % 2];
            x.add_(lim(b, 100));
            break;
          }
          case InPlaceClosure:
            (s.op % 2 ? c1 : c0).sub_(lim(b, 100));
            break;
          case CopyClosure:
            (s.op % 2 ? c1 : c0).copy_(lim(b, 100));
            break;
          case Realize:
            a.realize();
            break;
          case Nested:
            v.push_back(inner ? (*inner)({a})[0] : inner_fn({a})[0]);
            break;
          case Backward: {
            if (s.zero_grad) opt->zero_grad();
            Tensor loss = (p * lim(a, 8)).sum();
            loss.backward();
            if (s.step) opt->step();
            v.push_back(loss.detach());
            break;
          }
          case Step:
            opt->step();
            break;
          default:
            break;
        }
      }
      std::vector<Tensor> out;
      for (int i : pr.outs) out.push_back(v[i]);
      return out;
    };
    if (use_jit) outer = std::make_unique<Jit>(fn);
  }

  std::vector<Tensor> call(const std::vector<Tensor>& in) { return outer ? (*outer)(in) : fn(in); }
};

// Everything observable after a call, as numbers (NaN marks an undefined gradient).
std::vector<float> observe(const std::vector<Tensor>& outs, const std::vector<Tensor>& in,
                           const World& w) {
  std::vector<float> r;
  auto add = [&](const Tensor& t) {
    auto v = t.to_vector<float>();
    r.insert(r.end(), v.begin(), v.end());
  };
  for (auto& o : outs) add(o);
  for (size_t i = 1; i < outs.size(); i++)  // which outputs are one tensor
    for (size_t j = 0; j < i; j++) r.push_back(outs[i].is_same(outs[j]) ? 1.0f : 0.0f);
  for (auto& t : in) add(t);
  add(w.c0);
  add(w.c1);
  add(w.p);
  Tensor g = w.p.grad();
  if (g.defined())
    add(g);
  else
    r.push_back(std::nanf(""));
  return r;
}

std::string run_program(uint32_t seed, int calls) {
  Program pr = generate(seed, calls);
  World eager(pr, false), jitted(pr, true);
  for (int c = 0; c < calls; c++) {
    std::vector<float> seen[2];
    std::string err[2];
    for (int k = 0; k < 2; k++) {
      World& w = k ? jitted : eager;
      if (pr.rebind_c0[c]) {  // host code rebinds a variable the function reads
        w.kept.push_back(w.c0);
        w.c0 = from_vector(pr.c0_new[c]);
        w.c0.realize();
      }
      Tensor x0 = from_vector(pr.x0[c]), x1 = from_vector(pr.x1[c]);
      x0.realize();
      x1.realize();
      if (pr.lazy_input[c]) x0 = lim(x0, 1000);
      std::vector<Tensor> in =
          pr.alias_call[c] ? std::vector<Tensor>{x0, x0} : std::vector<Tensor>{x0, x1};
      try {
        auto outs = w.call(in);
        seen[k] = observe(outs, in, w);
      } catch (const Error& e) {
        err[k] = e.what();
      }
    }
    if (err[0] != err[1])
      return "call " + std::to_string(c + 1) + ": eager error '" + err[0] + "' vs jit error '" +
             err[1] + "'";
    if (!err[0].empty()) return "";  // both raised the same error: the program ends
    bool same = seen[0].size() == seen[1].size();
    for (size_t i = 0; same && i < seen[0].size(); i++)
      same = seen[0][i] == seen[1][i] || (std::isnan(seen[0][i]) && std::isnan(seen[1][i]));
    if (!same) {
      std::string m = "call " + std::to_string(c + 1) + ": eager [";
      for (float v : seen[0]) m += std::to_string(v) + " ";
      m += "] jit [";
      for (float v : seen[1]) m += std::to_string(v) + " ";
      return m + "]";
    }
  }
  return "";
}

// EMBER_JIT_DIFF_SEED=N runs one program and prints it (for debugging a reported seed).
TEST(JitDifferential, OneProgramFromEnvironment) {
  const char* e = std::getenv("EMBER_JIT_DIFF_SEED");
  if (!e) GTEST_SKIP() << "set EMBER_JIT_DIFF_SEED";
  const uint32_t seed = static_cast<uint32_t>(std::stoul(e));
  Program pr = generate(seed, 6);
  for (auto& s : pr.steps)
    std::printf("step kind %d a %d b %d op %d zero_grad %d step %d\n", s.kind, s.a, s.b, s.op,
                s.zero_grad, s.step);
  for (int o : pr.outs) std::printf("out %d\n", o);
  for (size_t c = 0; c < pr.alias_call.size(); c++)
    std::printf("call %zu alias %d lazy %d rebind c0 %d\n", c + 1, int(pr.alias_call[c]),
                int(pr.lazy_input[c]), int(pr.rebind_c0[c]));
  EXPECT_EQ(run_program(seed, 6), "");
}

void run_programs(const char* device, uint32_t first_seed, int programs) {
  const int calls = 6;
  auto& ctx = Context::get();
  const std::string saved = ctx.device;
  ctx.device = device;
  auto before = runtime_stats();
  auto t0 = std::chrono::steady_clock::now();
  int failures = 0;
  for (int i = 0; i < programs && failures < 5; i++) {
    const uint32_t seed = first_seed + static_cast<uint32_t>(i);
    std::string m = run_program(seed, calls);
    if (!m.empty()) {
      ADD_FAILURE() << "program seed " << seed << " on " << device << ": " << m;
      failures++;
    }
  }
  ctx.device = saved;
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %d programs x %d calls in %.1f s; %lld kernels compiled\n", device, programs,
              calls, dt,
              static_cast<long long>(runtime_stats().kernels_compiled - before.kernels_compiled));
}

// The reference interpreter runs every kernel without compiling it, so the programs' graphs may
// fuse in any way: thousands of programs.
TEST(JitDifferential, RandomProgramsMatchEagerOnInterp) { run_programs("interp", 1000, 2000); }

// Generated C: every distinct fused kernel is compiled once (~60 ms), so fewer programs.
TEST(JitDifferential, RandomProgramsMatchEagerOnCpu) { run_programs("cpu", 1000, 100); }

}  // namespace

// The C++ side of bench/python_overhead.py (issue 45): the calls that the Python bench makes
// through ember's Python package, made here in C++ with the same shapes and protocol, so that
// the difference is the binding's cost per call:
//   "a + b (4x4)"               (a + b).realize() on two 4x4 float32 tensors;
//   "actor forward batch 4, jit" the study's actor (8 -> 128 x4, tanh -> 2) under ember::jit,
//                                replayed on a [4, 8] input, under NoGradGuard;
//   "ppo step batch B, jit"     the step `ember train` runs (rl::PpoLearner::step_fn, jitted) on
//                                one minibatch of B transitions, its metrics read on the host
//                                (bench/study/learner_step.h, as study_ember_step).
// Each case: warm-up calls, then `rounds` rounds of `calls` calls; prints one JSON line per case
// with the median over rounds of the microseconds per call.
// Usage: bench_python_pairs [--rounds R] [--calls N] [--step-calls N] [--batch B]. Not a test.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "ember/support/clock.h"
#include "ppo_like_step.h"
#include "study/learner_step.h"

using namespace ember;

namespace {

struct Args {
  long rounds = 30, calls = 200, step_calls = 3, batch = 10000;
};

Args parse(int argc, char** argv) {
  Args a;
  const std::map<std::string, long*> options = {{"--rounds", &a.rounds},
                                                {"--calls", &a.calls},
                                                {"--step-calls", &a.step_calls},
                                                {"--batch", &a.batch}};
  for (int i = 1; i < argc; i += 2) {
    const auto o = options.find(argv[i]);
    const long v = i + 1 < argc ? std::atol(argv[i + 1]) : 0;
    if (o == options.end() || v < 1) {
      std::fprintf(stderr, "usage: %s [--rounds R] [--calls N] [--step-calls N] [--batch B]\n",
                   argv[0]);
      std::exit(2);
    }
    *o->second = v;
  }
  return a;
}

// Median over rounds of the microseconds per call (after 10 warm-up calls).
double median_us(const std::function<void()>& fn, long rounds, long calls) {
  for (int i = 0; i < 10; ++i) fn();
  std::vector<double> per_call;
  for (long r = 0; r < rounds; ++r) {
    const double t0 = support::now_seconds();
    for (long i = 0; i < calls; ++i) fn();
    per_call.push_back((support::now_seconds() - t0) / calls * 1e6);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

void print(const std::string& name, double us) {
  std::printf("%s\n", nlohmann::json{{"case", name}, {"us_per_call", us}}.dump().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  manual_seed(0);
  {
    Tensor a = ones({4, 4}), b = ones({4, 4});
    realize({a, b});
    print("a + b (4x4)", median_us([&] { (a + b).realize(); }, args.rounds, args.calls));
  }
  {
    nn::Sequential net = ppo_like::mlp(2);
    Tensor x = randn({4, 8});
    x.realize();
    NoGradGuard no_grad;
    Jit forward(
        [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{net->forward(in[0])}; });
    print("actor forward batch 4, jit", median_us([&] { forward({x}); }, args.rounds, args.calls));
  }
  {
    const study::LearnerStep step(args.batch);
    print("ppo step batch " + std::to_string(args.batch) + ", jit",
          median_us([&] { step.one(); }, args.rounds, args.step_calls));
  }
  return 0;
}

// Replay overhead of ember::jit (issue 4): per-call time of the batch-4 actor forward and of the
// batch-10,000 PPO-style training step, eager vs jit replay, next to the kernels' own summed time.
// Overhead = a profiled replay's wall time - its kernels' time; target < 5 us per call + 1 us per
// kernel.
// Prints medians over repeated calls. Not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "ember/ember.h"
#include "ember/support/clock.h"
#include "ppo_like_step.h"

using namespace ember;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  double eager, replay, kernels, overhead;
  int64_t launches;
};

// Median seconds per call of eager(), of the jit replay, of the replay's kernels alone, and of a
// profiled replay's time outside its kernels.
Row measure(Jit& j, const std::function<std::vector<Tensor>()>& eager,
            const std::function<std::vector<Tensor>()>& replay, int reps) {
  for (int i = 0; i < 3; i++) realize(eager());
  for (int i = 0; i < 3; i++) replay();
  std::vector<double> te, tr, tk, to;
  for (int i = 0; i < reps; i++) {
    double t0 = ember::support::now_seconds();
    auto o = eager();
    realize(o);
    te.push_back(ember::support::now_seconds() - t0);
  }
  for (int i = 0; i < reps; i++) {
    double t0 = ember::support::now_seconds();
    replay();
    tr.push_back(ember::support::now_seconds() - t0);
  }
  // Overhead is paired within one call: a profiled replay's wall time less its own kernels'
  // summed time. Separate medians of a plain and a profiled replay differ by the guest's swings
  // (up to 2x on a 60 ms step), which read as milliseconds of "overhead" that are not there.
  Context::get().profile_kernels = true;
  for (int i = 0; i < reps; i++) {
    double k0 = runtime_stats().kernel_seconds;
    double t0 = ember::support::now_seconds();
    replay();
    double wall = ember::support::now_seconds() - t0;
    double kernels = runtime_stats().kernel_seconds - k0;
    tk.push_back(kernels);
    to.push_back(wall - kernels);
  }
  Context::get().profile_kernels = false;
  return {median(te), median(tr), median(tk), median(to), j.captured_launches()};
}

void print(const char* name, const Row& r) {
  std::printf(
      "%-28s eager %9.1f us | jit replay %9.1f us | kernels %9.1f us (%lld launches) | "
      "replay overhead %7.2f us = %.2f us/launch\n",
      name, r.eager * 1e6, r.replay * 1e6, r.kernels * 1e6, static_cast<long long>(r.launches),
      r.overhead * 1e6, r.overhead * 1e6 / std::max<int64_t>(1, r.launches));
}

}  // namespace

int main() {
  std::printf("threads: %d\n", get_num_threads());
  manual_seed(0);
  ppo_like::Step step;
  {
    Tensor x = randn({4, 8});
    x.realize();
    Jit j([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{step.actor->forward(in[0])};
    });
    auto r = measure(
        j, [&] { return std::vector<Tensor>{step.actor->forward(x)}; }, [&] { return j({x}); },
        2000);
    print("actor forward, batch 4", r);
  }
  {
    const int64_t B = 10000;
    Tensor obs = randn({B, 8}), act = randn({B, 2}), adv = randn({B}), ret = randn({B});
    realize({obs, act, adv, ret});
    Jit j([&](const std::vector<Tensor>& in) { return step(in); });
    auto r = measure(
        j,
        [&] {
          return step({obs, act, adv, ret});
        },
        [&] {
          return j({obs, act, adv, ret});
        },
        10);
    print("training step, batch 10000", r);
  }
  return 0;
}

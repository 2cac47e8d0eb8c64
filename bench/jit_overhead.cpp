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

using namespace ember;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

nn::Sequential mlp(int64_t out) {
  nn::Sequential s;
  s->push_back(nn::Linear(8, 128));
  for (int i = 0; i < 3; i++) {
    s->push_back(nn::Tanh());
    s->push_back(nn::Linear(128, 128));
  }
  s->push_back(nn::Tanh());
  s->push_back(nn::Linear(128, out));
  return s;
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
  auto actor = mlp(2);
  {
    Tensor x = randn({4, 8});
    x.realize();
    Jit j(
        [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{actor->forward(in[0])}; });
    auto r = measure(
        j, [&] { return std::vector<Tensor>{actor->forward(x)}; }, [&] { return j({x}); }, 2000);
    print("actor forward, batch 4", r);
  }
  {
    auto critic = mlp(1);
    std::vector<Tensor> params = actor->parameters();
    for (auto& p : critic->parameters()) params.push_back(p);
    optim::Adam opt(params, optim::AdamOptions(1e-4));
    const int64_t B = 10000;
    Tensor obs = randn({B, 8}), act = randn({B, 2}), adv = randn({B}), ret = randn({B});
    Tensor logstd = zeros({2});
    realize({obs, act, adv, ret, logstd});
    auto step = [&](const std::vector<Tensor>& in) {
      opt.zero_grad();
      Tensor mean = actor->forward(in[0]);
      Tensor logp = (-((in[1] - mean) / logstd.exp()).square() * 0.5 - logstd).sum({1});
      Tensor ratio = logp.exp();
      Tensor pg = -(ratio * in[2]).minimum(ratio.clamp(0.8, 1.2) * in[2]).mean();
      Tensor v = critic->forward(in[0]).squeeze(1);
      Tensor loss = pg + (v - in[3]).square().mean() * 0.5;
      loss.backward();
      nn::utils::clip_grad_norm_(params, 0.5);
      opt.step();
      return std::vector<Tensor>{loss.detach()};
    };
    Jit j(step);
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

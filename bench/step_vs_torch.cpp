// The batch-10,000 PPO-style training step of ppo_like_step.h (actor and critic MLPs
// 8 -> 4x128 tanh -> 2 / 1, Gaussian log-probability, clipped surrogate, value loss, backward,
// clip_grad_norm_ 0.5, Adam) in ember (jit replay) and in libtorch, in one process, at the same
// thread count (ember's pool size; libtorch's intra-op threads are set to match). Rounds alternate
// the two (each round: 2 warm-up steps, then `reps` timed steps) so that drift on a shared machine
// hits both; the table gives the medians over all timed steps and their ratio, in wall time and in
// process CPU time (all threads, spin-waiting included: on a shared machine wall time also shows
// the queue for the cores). Not a test.
//
// Debian's libtorch runs its products on OpenBLAS, whose own thread pool comes on top of
// libtorch's intra-op threads: at 2 threads, both pools on 2 cores, the step took 2.3x as long as
// with OpenBLAS held to 1 thread (Zen 4, 276 against 120 ms), and at "1 thread" OpenBLAS still
// used both cores. So libtorch runs in both splits of the thread count, its intra-op threads with
// OpenBLAS at 1 and OpenBLAS's with intra-op at 1 (one of them at 1 thread), and the faster one is
// the reference.
// Usage: bench_step_vs_torch [rounds [reps]]   (defaults 3 and 5)
#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "ember/support/clock.h"
#include "ppo_like_step.h"

namespace {

double process_cpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr int64_t kBatch = 10000;

torch::nn::Sequential torch_mlp(int64_t out) {
  return ppo_like::mlp<torch::nn::Sequential, torch::nn::Linear, torch::nn::Tanh>(out);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  const int threads = ember::get_num_threads();
  // OpenBLAS's thread count, when libtorch's BLAS is OpenBLAS (looked up, not linked).
  using SetThreads = void (*)(int);
  auto openblas_threads =
      reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  struct Split {
    std::string name;
    int intra, blas;  // blas 0: left as it is
    std::vector<double> wall = {}, cpu = {};
  };
  std::vector<Split> splits;
  if (!openblas_threads) {
    splits.push_back({"libtorch (eager)", threads, 0});
  } else {
    splits.push_back({"libtorch, OpenBLAS 1", threads, 1});
    if (threads > 1) splits.push_back({"libtorch, intra-op 1", 1, threads});
  }

  // ember: the step captured once by ember::jit, then replayed.
  ember::manual_seed(0);
  ppo_like::Step ppo;
  ember::Tensor obs = ember::randn({kBatch, 8}), act = ember::randn({kBatch, 2}),
                adv = ember::randn({kBatch}), ret = ember::randn({kBatch});
  ember::realize({obs, act, adv, ret});
  ember::Jit step([&](const std::vector<ember::Tensor>& in) { return ppo(in); });

  // libtorch: the same step, eager (as PyTorch runs it).
  torch::manual_seed(0);
  auto t_actor = torch_mlp(2), t_critic = torch_mlp(1);
  std::vector<torch::Tensor> t_params = t_actor->parameters();
  for (auto& p : t_critic->parameters()) t_params.push_back(p);
  torch::optim::Adam t_opt(t_params, torch::optim::AdamOptions(1e-4));
  torch::Tensor t_obs = torch::randn({kBatch, 8}), t_act = torch::randn({kBatch, 2}),
                t_adv = torch::randn({kBatch}), t_ret = torch::randn({kBatch});
  torch::Tensor t_logstd = torch::zeros({2});
  auto t_step = [&] {
    t_opt.zero_grad();
    torch::Tensor mean = t_actor->forward(t_obs);
    torch::Tensor logp = (-((t_act - mean) / t_logstd.exp()).square() * 0.5 - t_logstd).sum({1});
    torch::Tensor ratio = logp.exp();
    torch::Tensor pg = -torch::minimum(ratio * t_adv, ratio.clamp(0.8, 1.2) * t_adv).mean();
    torch::Tensor v = t_critic->forward(t_obs).squeeze(1);
    torch::Tensor loss = pg + (v - t_ret).square().mean() * 0.5;
    loss.backward();
    torch::nn::utils::clip_grad_norm_(t_params, 0.5);
    t_opt.step();
    return loss.item<float>();
  };

  // Idle threads of the previous library (OpenBLAS's spin ~0.1 s after a call) park first, or they
  // take the next one's cores.
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(150)); };
  std::vector<double> te, ce;
  for (int r = 0; r < rounds; r++) {
    settle();
    for (int i = 0; i < 2; i++) step({obs, act, adv, ret})[0].item<float>();
    for (int i = 0; i < reps; i++) {
      double t0 = ember::support::now_seconds(), c0 = process_cpu();
      step({obs, act, adv, ret})[0].item<float>();
      te.push_back(ember::support::now_seconds() - t0);
      ce.push_back(process_cpu() - c0);
    }
    for (Split& sp : splits) {
      torch::set_num_threads(sp.intra);
      if (sp.blas) openblas_threads(sp.blas);
      settle();
      for (int i = 0; i < 2; i++) t_step();
      for (int i = 0; i < reps; i++) {
        double t0 = ember::support::now_seconds(), c0 = process_cpu();
        t_step();
        sp.wall.push_back(ember::support::now_seconds() - t0);
        sp.cpu.push_back(process_cpu() - c0);
      }
    }
  }
  const double e = median(te), e_cpu = median(ce);
  const Split* best = &splits[0];
  for (const Split& sp : splits)
    if (median(sp.wall) < median(best->wall)) best = &sp;
  const double t = median(best->wall), t_cpu = median(best->cpu);
  std::printf(
      "training step, batch %lld, %d threads (medians of %d steps each, alternating rounds)\n",
      static_cast<long long>(kBatch), threads, rounds * reps);
  std::printf("                     wall ms    cpu ms\n");
  std::printf("  ember (jit replay) %9.2f %9.2f   %lld launches\n", e * 1e3, e_cpu * 1e3,
              static_cast<long long>(step.captured_launches()));
  for (const Split& sp : splits)
    std::printf("  %-20s %7.2f %9.2f   %d intra-op, %s OpenBLAS threads%s\n", sp.name.c_str(),
                median(sp.wall) * 1e3, median(sp.cpu) * 1e3, sp.intra,
                sp.blas ? std::to_string(sp.blas).c_str() : "default",
                &sp == best ? " (the reference)" : "");
  std::printf("  ember / libtorch   %9.2fx %8.2fx\n", e / t, e_cpu / t_cpu);
  return 0;
}

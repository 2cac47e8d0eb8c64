// Eager overhead of small products (issue 11): a whole eager call of the rollout's actor layer,
// `tanh(Linear(128, 128)(x))` on a batch of 4 under NoGradGuard, and of the study's
// `(4x128) @ (128x128)`, against oneDNN's dnnl_sgemm of the same product, in one process.
// The calls alternate in rounds (ember with the plan cache, ember without it, oneDNN), so a burst
// of load from other processes hits all of them; the table gives each one's median over all calls
// and the median of the per-round ratios to oneDNN. "graph only" builds the lazy product without
// realizing it (the frontend's share); "kernel alone" is the launch (the engine's timer).
// Usage: bench_eager_small [rounds [calls-per-round]] (defaults 30 and 200). Not a test.
// `bench_eager_small --loop N` makes N eager `x @ b` calls and nothing else (to run under a
// profiler: perf record -g, valgrind --tool=callgrind); `--loop-linear N` the same with
// `tanh(Linear(x))`, `--loop-jit N` with `x @ b` replayed by ember::jit.
// The jit rows are the same calls through ember::jit (replays: no graph built, no plan looked up),
// as the rollout runs its actor.
#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/support/clock.h"
#include "engine/realize.h"

using namespace ember;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  template <class U>
  bool operator==(const Aligned64<U>&) const {
    return true;
  }
};

struct Variant {
  const char* name;
  std::function<void()> call;
  bool plan_cache = true;
  std::vector<double> all = {};
};

}  // namespace

int main(int argc, char** argv) {
  const bool loop = argc > 2 && std::string(argv[1]) == "--loop";
  const bool loop_linear = argc > 2 && std::string(argv[1]) == "--loop-linear";
  const bool loop_jit = argc > 2 && std::string(argv[1]) == "--loop-jit";
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 200;
  const int threads = get_num_threads();
  omp_set_num_threads(threads);
  manual_seed(0);
  NoGradGuard no_grad;
  nn::Linear lin(128, 128);
  // oneDNN's operands 64-byte aligned, as ember's buffers are: with the general allocator their
  // alignment (and oneDNN's time, by up to ~20%) shifted with unrelated allocations in the process.
  std::vector<float, Aligned64<float>> xd(4 * 128), bd(128 * 128), cd(4 * 128);
  for (size_t i = 0; i < xd.size(); i++) xd[i] = static_cast<float>(i % 17) * 0.01f - 0.08f;
  for (size_t i = 0; i < bd.size(); i++) bd[i] = static_cast<float>(i % 13) * 0.01f - 0.06f;
  Tensor x = from_blob(xd.data(), {4, 128}, kFloat32);
  Tensor b = from_blob(bd.data(), {128, 128}, kFloat32);
  realize({x, b});
  Tensor out;
  Jit jit_matmul =
      jit([](const std::vector<Tensor>& in) { return std::vector{in[0].matmul(in[1])}; });
  Jit jit_linear =
      jit([&](const std::vector<Tensor>& in) { return std::vector{lin->forward(in[0]).tanh()}; });
  if (loop_jit) {
    for (int i = 0, n = std::atoi(argv[2]); i < n; i++) out = jit_matmul({x, b})[0];
    return 0;
  }
  if (loop) {
    for (int i = 0, n = std::atoi(argv[2]); i < n; i++) out = x.matmul(b).realize();
    return 0;
  }
  if (loop_linear) {
    for (int i = 0, n = std::atoi(argv[2]); i < n; i++) out = lin->forward(x).tanh().realize();
    return 0;
  }
  std::vector<Variant> vs;
  vs.push_back(
      {"ember tanh(linear(x)), plan cache", [&] { out = lin->forward(x).tanh().realize(); }});
  vs.push_back({"ember tanh(linear(x)), no plan cache",
                [&] { out = lin->forward(x).tanh().realize(); }, false});
  vs.push_back({"ember tanh(linear(x)), jit replay", [&] { out = jit_linear({x})[0]; }});
  vs.push_back({"ember x @ b, plan cache", [&] { out = x.matmul(b).realize(); }});
  vs.push_back({"ember x @ b, jit replay", [&] { out = jit_matmul({x, b})[0]; }});
  vs.push_back({"ember x @ b, no plan cache", [&] { out = x.matmul(b).realize(); }, false});
  // The frontend alone: the lazy graph built and dropped, nothing realized.
  vs.push_back({"  x @ b graph only (not realized)", [&] { Tensor t = x.matmul(b); }});
  // The engine alone: one held lazy graph realized again and again (plan lookup, a new output
  // buffer, the launch), no graph built or dropped.
  const Tensor held = x.matmul(b);
  const std::vector<engine::Root> held_roots{{held.node(), nullptr}};
  std::vector<engine::StorageRef> held_out;
  vs.push_back(
      {"  x @ b engine only (held graph)", [&] { held_out = engine::realize(held_roots, {}); }});
  vs.push_back({"oneDNN sgemm x @ b", [&] {
                  dnnl_sgemm('N', 'N', 4, 128, 128, 1.0f, xd.data(), 128, bd.data(), 128, 0.0f,
                             cd.data(), 128);
                }});
  const size_t ref = vs.size() - 1;
  for (auto& v : vs) {  // warm-up: compile, fill the caches
    Context::get().plan_cache = v.plan_cache;
    for (int i = 0; i < 20; i++) v.call();
  }
  std::vector<std::vector<double>> ratios(vs.size());
  for (int r = 0; r < rounds; r++) {
    std::vector<double> med(vs.size());
    for (size_t i = 0; i < vs.size(); i++) {
      Context::get().plan_cache = vs[i].plan_cache;
      std::vector<double> t;
      for (int c = 0; c < calls; c++) {
        const double t0 = ember::support::now_seconds();
        vs[i].call();
        t.push_back(ember::support::now_seconds() - t0);
      }
      med[i] = median(t);
      vs[i].all.insert(vs[i].all.end(), t.begin(), t.end());
    }
    for (size_t i = 0; i < vs.size(); i++) ratios[i].push_back(med[i] / med[ref]);
  }
  Context::get().plan_cache = true;
  // The kernels alone (the engine's per-launch timer).
  auto kernel_us = [&](const std::function<void()>& call) {
    Context::get().profile_kernels = true;
    std::vector<double> kt;
    for (int i = 0; i < calls; i++) {
      const double k0 = runtime_stats().kernel_seconds;
      call();
      kt.push_back(runtime_stats().kernel_seconds - k0);
    }
    Context::get().profile_kernels = false;
    return median(kt) * 1e6;
  };
  const double k_linear = kernel_us(vs[0].call), k_matmul = kernel_us(vs[3].call);
  std::ifstream la("/proc/loadavg");
  std::string load;
  std::getline(la, load);
  std::printf("threads %d, target %s\nload average: %s\n", threads, kernel_target().c_str(),
              load.c_str());
  std::printf("%-40s %12s %14s\n", "call (batch 4, float32)", "median us", "/ oneDNN");
  for (size_t i = 0; i < vs.size(); i++)
    std::printf("%-40s %12.2f %13.2fx\n", vs[i].name, median(vs[i].all) * 1e6, median(ratios[i]));
  std::printf("%-40s %12.2f\n", "  kernel alone: tanh(linear(x))", k_linear);
  std::printf("%-40s %12.2f\n", "  kernel alone: x @ b", k_matmul);
  return 0;
}

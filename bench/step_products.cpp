// The training step's products at batch 10,000 with their fused epilogues (issue 11), each kernel
// alone against the bare product of the same shape, in one process: a layer's forward
// tanh(x W^T + b), the first layer's (K = 8), the input gradient (dz W) (1 - h^2), which reads
// the saved activation h in its epilogue, and the weight gradient dz^T h with the bias gradient
// (dz's column sums) in the same kernel; plain passes over memory (x + 1, tanh(x), x (1 - h^2))
// for scale. The epilogue's (or the fused sums') cost is the ratio to the bare product. Then the
// value head's weight gradient (a column sum, with the bias's sum beside it) and its forward
// (h . w), against the copy pass.
//
// Each round launches every kernel (the compiled program the engine ran, on the engine's buffers)
// 2 + 9 times in turn and keeps the median of the 9; the table gives the median over rounds and
// the median of the per-round ratios to the reference named. Time is wall time, or with "cpu" the
// calling thread's CPU time (use it at 1 thread on a loaded machine: descheduled time does not
// count, so the ratios stay steady where wall times swing 2x). With "cold", a pass over 64 MiB
// before each timed launch leaves the operands in L3 only, as in the step; each cold launch is
// paired with a warm one (timed right after a launch of the same kernel), and the last column is
// the median of the per-round ratios cold / warm: the cost of the L2 misses alone, which the
// others' load moves far less than the times themselves.
// Usage: bench_step_products [threads [rounds [rows [cpu,cold]]]]   (defaults 2, 9, 10000)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/support/clock.h"
#include "engine/realize.h"
#include "host_data.h"

namespace {

using namespace ember;

double thread_cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Case {
  std::string name;
  int ref;  // index of the case its ratio is taken to (itself for a reference)
  engine::Launch launch;
  std::vector<void*> slots;
};

// The one kernel that realizing f()'s tensors together launches.
Case capture(const std::string& name, int ref, const std::function<std::vector<Tensor>()>& f) {
  engine::LaunchLog log;
  {
    engine::RecordLaunches record(log);
    realize(f());
  }
  const std::vector<engine::Launch>& launches = log.launches;
  if (launches.size() != 1 || !launches[0].program) {
    std::fprintf(stderr, "%s: expected one kernel, got %zu launches\n", name.c_str(),
                 launches.size());
    std::exit(1);
  }
  Case c{name, ref, launches[0], {}};
  for (auto& s : c.launch.buffers) c.slots.push_back(s->data());
  return c;
}
Case capture(const std::string& name, int ref, const std::function<Tensor()>& f) {
  return capture(name, ref, std::function<std::vector<Tensor>()>([&] { return std::vector{f()}; }));
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  const int64_t n = argc > 3 ? std::atoll(argv[3]) : 10000;
  const bool cpu = argc > 4 && std::strstr(argv[4], "cpu") != nullptr;
  // "cold": before each timed launch, a pass over 64 MiB evicts the operands from L2 (they stay
  // in L3), as in the training step, where each kernel's inputs were written kernels earlier.
  const bool cold = argc > 4 && std::strstr(argv[4], "cold") != nullptr;
  if (threads < 1 || rounds < 1 || n < 1) {
    std::fprintf(stderr, "usage: %s [threads [rounds [rows [cpu]]]]\n", argv[0]);
    return 2;
  }
  set_num_threads(threads);
  auto xd = host_data(n * 128, 1), wd = host_data(128 * 128, 2), bd = host_data(128, 3),
       hd = host_data(n * 128, 4), sd = host_data(n * 8, 5), w8 = host_data(128 * 8, 6);
  Tensor x = from_blob(xd.data(), {n, 128}, kFloat32),
         w = from_blob(wd.data(), {128, 128}, kFloat32), b = from_blob(bd.data(), {128}, kFloat32),
         h = from_blob(hd.data(), {n, 128}, kFloat32), s = from_blob(sd.data(), {n, 8}, kFloat32),
         w1 = from_blob(w8.data(), {128, 8}, kFloat32);
  realize({x, w, b, h, s, w1});
  std::vector<Case> cs;
  cs.push_back(capture("x @ W^T (bare)", 0, [&] { return x.matmul(w.t()); }));
  cs.push_back(capture("tanh(x @ W^T + b)", 0, [&] { return (x.matmul(w.t()) + b).tanh(); }));
  cs.push_back(capture("dz @ W (bare)", 2, [&] { return x.matmul(w); }));
  cs.push_back(capture("(dz @ W) (1 - h^2)", 2, [&] { return x.matmul(w) * (1 - h * h); }));
  cs.push_back(capture("x + 1 (copy)", 4, [&] { return x + 1; }));
  cs.push_back(capture("tanh(x)", 4, [&] { return x.tanh(); }));
  cs.push_back(capture("x (1 - h^2)", 4, [&] { return x * (1 - h * h); }));
  cs.push_back(
      capture("tanh(s @ W1^T + b), K = 8", 4, [&] { return (s.matmul(w1.t()) + b).tanh(); }));
  // The weight gradient as autograd produces it: dz^T h with the bias gradient (dz's column sums)
  // fused into the same kernel.
  const int wg = static_cast<int>(cs.size());
  cs.push_back(capture("dz^T h (bare)", wg, [&] { return std::vector<Tensor>{x.t().matmul(h)}; }));
  cs.push_back(capture("dz^T h, sum(dz, 0)", wg, [&] {
    return std::vector<Tensor>{x.t().matmul(h), x.sum({0})};
  }));
  // The value head's kernels: its weight gradient dv^T h with the bias's sum(dv) (a column sum),
  // and its forward h . w (a matrix-vector product).
  auto dvd = host_data(n, 7);
  Tensor dv = from_blob(dvd.data(), {n, 1}, kFloat32), wv = from_blob(bd.data(), {128}, kFloat32);
  realize({dv, wv});
  cs.push_back(capture("dv^T h, sum(dv) (col sums)", 4, [&] {
    return std::vector<Tensor>{(h * dv).sum({0}), dv.sum({0})};
  }));
  cs.push_back(capture("h . w (matrix-vector)", 4, [&] { return (h * wv).sum({1}); }));
  Tensor big = ember::zeros({int64_t{1} << 23}).realize();
  Case flush = capture("flush", 0, [&] { return big + 1; });
  auto now = [&] { return cpu ? thread_cpu_seconds() : support::now_seconds(); };
  std::vector<std::vector<double>> t(cs.size()), tw(cs.size());
  for (int r = 0; r < rounds; r++)
    for (auto& c : cs) {
      for (int i = 0; i < 2; i++) c.launch.program->launch(c.slots.data());
      std::vector<double> v, w;
      for (int i = 0; i < 9; i++) {
        if (cold) {
          c.launch.program->launch(c.slots.data());
          double t0 = now();
          c.launch.program->launch(c.slots.data());
          w.push_back((now() - t0) * 1e3);
          flush.launch.program->launch(flush.slots.data());
        }
        double t0 = now();
        c.launch.program->launch(c.slots.data());
        v.push_back((now() - t0) * 1e3);
      }
      t[&c - cs.data()].push_back(median(v));
      if (cold) tw[&c - cs.data()].push_back(median(w));
    }
  std::ifstream la("/proc/loadavg");
  std::string load;
  std::getline(la, load);
  std::printf("== %lld rows, %d threads, %s time, %s caches, ISA %s; load average %s\n",
              static_cast<long long>(n), threads, cpu ? "thread CPU" : "wall",
              cold ? "cold" : "warm", std::getenv("EMBER_ISA") ? std::getenv("EMBER_ISA") : "best",
              load.c_str());
  std::printf("%-28s %10s %10s  %-28s%s\n", "kernel", "ms", "ratio", "to",
              cold ? "   warm ms  cold/warm" : "");
  for (size_t i = 0; i < cs.size(); i++) {
    std::vector<double> ratio, penalty;
    for (int r = 0; r < rounds; r++) {
      ratio.push_back(t[i][r] / t[cs[i].ref][r]);
      if (cold) penalty.push_back(t[i][r] / tw[i][r]);
    }
    std::printf("%-28s %10.3f %9.2fx  %-28s", cs[i].name.c_str(), median(t[i]), median(ratio),
                cs[cs[i].ref].name.c_str());
    if (cold) std::printf(" %9.3f %9.2fx", median(tw[i]), median(penalty));
    std::printf("\n");
  }
  return 0;
}

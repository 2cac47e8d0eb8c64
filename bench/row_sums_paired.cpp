// A weight gradient with its bias gradient (schedule/fuse_row_sums.h), paired in one process:
// dW = dZ^T X (10000x128 each) and db = dZ summed over the batch, realized together (one kernel:
// db is a row sum of dW's) against realized apart (two kernels, two passes over dZ), and dW
// alone. Each round times a batch of each in turn (median of `reps`), cycling through 8 input
// pairs (80 MB) so that operands come from memory as in a training step; the table gives each
// form's median over rounds and the median of the per-round ratios to the two-kernel form.
// Usage: bench_row_sums_paired [threads [rounds [reps]]]   (defaults 2, 9, 11)
#include <ember/ember.h>
#include <ember/support/clock.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double now_ms() { return ember::support::now_seconds() * 1e3; }

}  // namespace

int main(int argc, char** argv) {
  using namespace ember;
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 9;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 11;
  set_num_threads(threads);
  manual_seed(1);
  std::vector<Tensor> gs, xs;
  for (int i = 0; i < 8; i++) {
    gs.push_back(randn({10000, 128}));
    xs.push_back(randn({10000, 128}));
  }
  realize(gs);
  realize(xs);
  int next = 0;
  const std::vector<std::pair<const char*, std::function<void(const Tensor&, const Tensor&)>>>
      forms = {
          {"dW and db apart",
           [](const Tensor& g, const Tensor& x) {
             matmul(g.t(), x).realize();
             g.sum({0}).realize();
           }},
          {"dW and db together",
           [](const Tensor& g, const Tensor& x) {
             realize({matmul(g.t(), x), g.sum({0})});
           }},
          {"dW alone", [](const Tensor& g, const Tensor& x) { matmul(g.t(), x).realize(); }},
      };
  std::vector<std::vector<double>> ms(forms.size()), ratio(forms.size());
  for (int r = 0; r < rounds; r++) {
    std::vector<double> round(forms.size());
    for (size_t f = 0; f < forms.size(); f++) {
      std::vector<double> t;
      for (int i = 0; i < reps + 2; i++) {
        const Tensor& g = gs[next % 8];
        const Tensor& x = xs[next++ % 8];
        const double t0 = now_ms();
        forms[f].second(g, x);
        if (i >= 2) t.push_back(now_ms() - t0);
      }
      round[f] = median(t);
      ms[f].push_back(round[f]);
    }
    for (size_t f = 0; f < forms.size(); f++) ratio[f].push_back(round[f] / round[0]);
  }
  std::printf("%d threads, %d rounds of %d calls\n%-22s %10s %12s\n", threads, rounds, reps, "form",
              "ms", "vs apart");
  for (size_t f = 0; f < forms.size(); f++)
    std::printf("%-22s %10.3f %11.2fx\n", forms[f].first, median(ms[f]), median(ratio[f]));
  return 0;
}

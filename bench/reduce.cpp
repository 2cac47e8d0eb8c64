// The training step's reductions over a non-innermost axis (bias and weight gradients at batch
// 10,000) and its matrix-vector product, ember against libtorch in one process: rounds alternate
// the two so that drift on a shared machine hits both; medians of all timed calls and their ratio.
// ember's time is a whole realize() of a fresh lazy expression of realized inputs. Not a test.
// Usage: bench_reduce [rounds [reps]]   (defaults 3 and 20)
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ember/ember.h"
#include "ember/support/clock.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  const char* name;
  std::function<void()> ember, torch;
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  const int threads = ember::get_num_threads();
  torch::set_num_threads(threads);
  const int64_t n = 10000, d = 128;
  auto er = [](ember::IntList s) {
    ember::Tensor t = ember::randn(s);
    t.realize();
    return t;
  };
  ember::Tensor ex = er({n, d}), eg = er({n}), eb = er({d}), ex8 = er({n, 8}), eg2 = er({n, 2});
  torch::Tensor tx = torch::randn({n, d}), tg = torch::randn({n}), tb = torch::randn({d}),
                tx8 = torch::randn({n, 8}), tg2 = torch::randn({n, 2});
  std::vector<Case> cases = {
      {"sum over rows (10000x128).sum(0)", [&] { ex.sum({0}).realize(); },
       [&] { (void)tx.sum({0}); }},
      {"fused tanh(x+b) * g column sum",
       [&] {
         ((ex + eb).tanh() * eg.reshape({n, 1})).sum({0}).realize();
       },
       [&] {
         (void)((tx + tb).tanh() * tg.reshape({n, 1})).sum({0});
       }},
      {"(8x10000)@(10000x128) x.t()@g", [&] { ember::matmul(ex8.t(), ex).realize(); },
       [&] { (void)torch::matmul(tx8.t(), tx); }},
      {"(2x10000)@(10000x128) g.t()@x", [&] { ember::matmul(eg2.t(), ex).realize(); },
       [&] { (void)torch::matmul(tg2.t(), tx); }},
      {"matvec tanh(x+b)@w (value head)", [&] { ((ex + eb).tanh() * eb).sum({1}).realize(); },
       [&] { (void)torch::matmul((tx + tb).tanh(), tb); }},
  };
  std::printf("reductions, %d threads (medians of %d calls each, alternating rounds)\n", threads,
              rounds * reps);
  std::printf("  %-36s %10s %10s %8s\n", "case", "ember us", "torch us", "ratio");
  for (auto& c : cases) {
    std::vector<double> te, tt;
    for (int r = 0; r < rounds; r++) {
      for (int w = 0; w < 2; w++) c.ember(), c.torch();
      for (int i = 0; i < reps; i++) {
        double t0 = ember::support::now_seconds();
        c.ember();
        te.push_back(ember::support::now_seconds() - t0);
      }
      for (int i = 0; i < reps; i++) {
        double t0 = ember::support::now_seconds();
        c.torch();
        tt.push_back(ember::support::now_seconds() - t0);
      }
    }
    double a = median(te) * 1e6, b = median(tt) * 1e6;
    std::printf("  %-36s %10.1f %10.1f %7.2fx\n", c.name, a, b, a / b);
  }
  return 0;
}

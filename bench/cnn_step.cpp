// A CNN training step in ember and in libtorch, in one process: the LeNet-style model of
// examples/digits (examples/digits/lenet.h: two 3x3 convolutions with batch norm, ReLU and 2x2 max
// pooling, two linear layers) on random 8x8 single-channel images, forward, cross-entropy,
// backward and an Adam step (lr 2e-3), at batch 64 and 256. ember runs eager (as the example) and
// as an ember::jit replay of the same step; libtorch runs eager at ember's thread count (intra-op
// threads, OpenBLAS held to 1 as in step_vs_torch.cpp). Rounds alternate the implementations
// (each round: 2 warm-up steps, then `reps` timed steps) so that drift on a shared machine hits
// all; the table gives the medians over the timed steps and the ratio ember / libtorch. PyTorch
// from Python is paired with this program process by process in bench/cnn_step.py (`make
// bench-cnn`). Not a test.
// Usage: bench_cnn_step [rounds [reps]] [--json]   (defaults 3 and 10; --json: one line per batch)
#include <torch/torch.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../examples/digits/lenet.h"
#include "ember/ember.h"
#include "ember/support/clock.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

torch::nn::Sequential torch_lenet() {
  namespace tnn = torch::nn;
  return tnn::Sequential(tnn::Conv2d(tnn::Conv2dOptions(1, 16, 3).padding(1)), tnn::BatchNorm2d(16),
                         tnn::ReLU(), tnn::MaxPool2d(2),
                         tnn::Conv2d(tnn::Conv2dOptions(16, 32, 3).padding(1)),
                         tnn::BatchNorm2d(32), tnn::ReLU(), tnn::MaxPool2d(2), tnn::Flatten(),
                         tnn::Linear(128, 64), tnn::ReLU(), tnn::Linear(64, 10));
}

// The class of each image: i mod 10 (every class present in every batch).
std::vector<int64_t> classes(int64_t batch) {
  std::vector<int64_t> y(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; i++) y[static_cast<size_t>(i)] = i % 10;
  return y;
}

struct Timed {
  std::string name;
  std::function<float()> step;  // one training step; returns the loss
  std::vector<double> ms = {};
};

// Alternating rounds over the implementations; fills each one's step times.
void run_rounds(std::vector<Timed>& impls, int rounds, int reps) {
  for (int r = 0; r < rounds; r++)
    for (Timed& t : impls) {
      // Idle threads of the previous library (OpenBLAS's spin ~0.1 s) park first.
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
      for (int i = 0; i < 2; i++) t.step();
      for (int i = 0; i < reps; i++) {
        const double t0 = ember::support::now_seconds();
        t.step();
        t.ms.push_back((ember::support::now_seconds() - t0) * 1e3);
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  std::vector<int> counts;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "--json") == 0)
      json = true;
    else
      counts.push_back(std::max(1, std::atoi(argv[i])));
  }
  const int rounds = counts.size() > 0 ? counts[0] : 3, reps = counts.size() > 1 ? counts[1] : 10;
  const int threads = ember::get_num_threads();
  torch::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto blas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    blas(1);

  for (int64_t batch : {64, 256}) {
    const std::vector<int64_t> y_host = classes(batch);
    ember::manual_seed(0);
    ember::nn::Sequential net = digits::lenet(), net_jit = digits::lenet();
    ember::optim::Adam opt(net->parameters(), ember::optim::AdamOptions(2e-3));
    ember::optim::Adam opt_jit(net_jit->parameters(), ember::optim::AdamOptions(2e-3));
    ember::Tensor x = ember::randn({batch, 1, 8, 8}), y = ember::from_vector(y_host);
    ember::realize({x, y});
    auto ember_step = [](ember::nn::Sequential& m, ember::optim::Adam& o, const ember::Tensor& xb,
                         const ember::Tensor& yb) {
      ember::Tensor loss = ember::nn::functional::cross_entropy(m->forward(xb), yb);
      o.zero_grad();
      loss.backward();
      o.step();
      return loss;
    };
    ember::Jit jit([&](const std::vector<ember::Tensor>& in) {
      return std::vector<ember::Tensor>{ember_step(net_jit, opt_jit, in[0], in[1])};
    });

    torch::manual_seed(0);
    torch::nn::Sequential t_net = torch_lenet();
    torch::optim::Adam t_opt(t_net->parameters(), torch::optim::AdamOptions(2e-3));
    torch::Tensor t_x = torch::randn({batch, 1, 8, 8});
    torch::Tensor t_y = torch::tensor(y_host, torch::kInt64);

    std::vector<Timed> impls;
    impls.push_back({"ember (eager)", [&] { return ember_step(net, opt, x, y).item<float>(); }});
    impls.push_back({"ember (jit replay)", [&] { return jit({x, y})[0].item<float>(); }});
    impls.push_back({"libtorch (eager)", [&] {
                       t_opt.zero_grad();
                       torch::Tensor loss =
                           torch::nn::functional::cross_entropy(t_net->forward(t_x), t_y);
                       loss.backward();
                       t_opt.step();
                       return loss.item<float>();
                     }});
    run_rounds(impls, rounds, reps);
    const double e = median(impls[0].ms), ej = median(impls[1].ms), t = median(impls[2].ms);
    if (json) {
      std::printf(
          "{\"kind\": \"cnn_step\", \"batch\": %lld, \"threads\": %d, \"steps\": %d, "
          "\"ember_ms\": %.6f, \"ember_jit_ms\": %.6f, \"libtorch_ms\": %.6f}\n",
          static_cast<long long>(batch), threads, rounds * reps, e, ej, t);
      continue;
    }
    std::printf(
        "CNN training step (examples/digits LeNet, Adam), batch %lld, %d threads (medians "
        "of %d steps each, alternating rounds)\n",
        static_cast<long long>(batch), threads, rounds * reps);
    for (const Timed& i : impls) std::printf("  %-20s %9.3f ms\n", i.name.c_str(), median(i.ms));
    std::printf("  ember / libtorch     %9.2fx eager, %.2fx jit replay\n", e / t, ej / t);
  }
  return 0;
}

// A LeNet-style CNN trained on scikit-learn's 8x8 handwritten digits (export_digits.py writes them
// as .npy): two 3x3 convolutions with batch norm, ReLU and 2x2 max pooling, then two linear
// layers, trained with Adam on the cross-entropy. Prints the test accuracy and the training time.
//
//   digits DATA_DIR [--epochs N] [--min-accuracy A]
//
// --min-accuracy makes the exit status 1 when the test accuracy ends below A (the CI run's check).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

#include "../guarded_main.h"
#include "ember/ember.h"
#include "ember/io/npy.h"
#include "lenet.h"

using namespace ember;

namespace {

struct Data {
  std::vector<float> x;    // [N, 1, 8, 8] row-major
  std::vector<int64_t> y;  // [N]
  int64_t n() const { return static_cast<int64_t>(y.size()); }
};

// Reads SPLIT_x.npy (float32 [N, 1, 8, 8]) and SPLIT_y.npy (int64 [N], classes 0..9).
Data load(const std::string& dir, const std::string& split) {
  const Tensor x = load_npy(dir + "/" + split + "_x.npy"),
               y = load_npy(dir + "/" + split + "_y.npy");
  if (x.dtype() != kFloat32 || y.dtype() != kInt64 || x.dim() != 4 || y.dim() != 1 ||
      x.shape() != std::vector<int64_t>{y.size(0), 1, 8, 8})
    throw ValueError("digits: " + dir + "/" + split +
                     "_{x,y}.npy are not float32 [N, 1, 8, 8] and int64 [N] "
                     "(examples/digits/export_digits.py writes them)");
  return {x.to_vector<float>(), y.to_vector<int64_t>()};
}

struct Args {
  std::string dir;
  int epochs = 30;
  double min_accuracy = 0;
};

// DATA_DIR [--epochs N] [--min-accuracy A]; ValueError for anything else.
Args parse(int argc, char** argv) {
  const std::string usage = "usage: digits DATA_DIR [--epochs N] [--min-accuracy A]";
  if (argc < 2 || argv[1][0] == '-') throw ValueError(usage);
  Args a{argv[1]};
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || (flag != "--epochs" && flag != "--min-accuracy")) throw ValueError(usage);
    size_t used = 0;
    const std::string value = argv[i + 1];
    try {
      if (flag == "--epochs")
        a.epochs = std::stoi(value, &used);
      else
        a.min_accuracy = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || a.epochs < 1)
      throw ValueError("digits: " + flag + " takes a number (a positive count of epochs), got '" +
                       value + "'");
  }
  return a;
}

// The rows `idx` of the data as a batch.
std::pair<Tensor, Tensor> batch(const Data& d, const int64_t* idx, int64_t b) {
  std::vector<float> x(static_cast<size_t>(b * 64));
  std::vector<int64_t> y(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; i++) {
    std::copy_n(d.x.begin() + idx[i] * 64, 64, x.begin() + i * 64);
    y[static_cast<size_t>(i)] = d.y[static_cast<size_t>(idx[i])];
  }
  return {from_vector(x, IntList{b, 1, 8, 8}), from_vector(y)};
}

double accuracy(nn::Sequential& net, const Data& d) {
  NoGradGuard no_grad;
  net->eval();
  std::vector<int64_t> all(static_cast<size_t>(d.n()));
  std::iota(all.begin(), all.end(), 0);
  auto [x, y] = batch(d, all.data(), d.n());
  const auto hit = (net->forward(x).argmax(1) == y).to(kInt64).sum().item<int64_t>();
  net->train();
  return static_cast<double>(hit) / static_cast<double>(d.n());
}

int run(const Args& args) {
  const int epochs = args.epochs;
  const Data train = load(args.dir, "train"), test = load(args.dir, "test");
  manual_seed(0);
  nn::Sequential net = digits::lenet();
  optim::Adam opt(net->parameters(), optim::AdamOptions(2e-3));
  const int64_t b = 32, steps = train.n() / b;  // full batches only: one shape, one compile
  std::vector<int64_t> order(static_cast<size_t>(train.n()));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(0);
  const auto start = std::chrono::steady_clock::now();
  for (int e = 0; e < epochs; e++) {
    std::shuffle(order.begin(), order.end(), rng);
    double total = 0;
    for (int64_t s = 0; s < steps; s++) {
      auto [x, y] = batch(train, order.data() + s * b, b);
      Tensor loss = nn::functional::cross_entropy(net->forward(x), y);
      opt.zero_grad();
      loss.backward();
      opt.step();
      total += loss.item<float>();
    }
    std::printf("epoch %2d  loss %.4f\n", e + 1, total / static_cast<double>(steps));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double acc = accuracy(net, test);
  std::printf("test accuracy %.2f%% (%lld images), training %.1f s for %d epochs\n", acc * 100,
              static_cast<long long>(test.n()), seconds, epochs);
  if (acc >= args.min_accuracy) return 0;
  std::fprintf(stderr, "digits: test accuracy %.2f%% is below the required %.2f%%\n", acc * 100,
               args.min_accuracy * 100);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  return examples::guarded_main([&] { return run(parse(argc, argv)); });
}

// A two-layer transformer encoder (Vaswani et al. 2017, with the normalisation before each
// sub-layer, PyTorch's norm_first) learns to sort: the input is a sequence of kLength digits
// 0..kVocab-1 and the output at position i is the i-th smallest of them, one classification per
// position. Training runs on fresh seeded random sequences until at least the goal share of a
// held-out set of sequences is sorted exactly right (or --max-steps). Prints the loss and the
// held-out accuracy along the way and the training time.
//
//   attention [--max-steps N] [--goal A] [--min-loss-drop F]
//
// The exit status is 1 when the held-out accuracy ends below --goal (default 0.99; 0: no goal,
// train all of --max-steps), or, with --min-loss-drop F, when the mean loss of the last 100 steps
// is not below F times that of the first 100 (the CI run's check of a falling loss at reduced
// size).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "../guarded_main.h"
#include "ember/ember.h"

using namespace ember;

namespace {

constexpr int64_t kLength = 8, kVocab = 10, kModel = 32, kHeads = 4, kFeedForward = 64;
constexpr int64_t kBatch = 64, kHeldOut = 1000, kEvery = 100;

// One encoder layer under PyTorch's TransformerEncoderLayer names (self_attn, linear1, linear2,
// norm1, norm2), with norm_first: x + attn(norm1(x)), then x + linear2(relu(linear1(norm2(x)))).
class EncoderLayerImpl : public nn::Module {
 public:
  EncoderLayerImpl()
      : self_attn(register_module(
            "self_attn", nn::MultiheadAttention(
                             nn::MultiheadAttentionOptions(kModel, kHeads).batch_first(true)))),
        linear1(register_module("linear1", nn::Linear(kModel, kFeedForward))),
        linear2(register_module("linear2", nn::Linear(kFeedForward, kModel))),
        norm1(register_module("norm1", nn::LayerNorm(std::vector<int64_t>{kModel}))),
        norm2(register_module("norm2", nn::LayerNorm(std::vector<int64_t>{kModel}))) {}
  Tensor forward(const Tensor& x) const {
    Tensor h = norm1->forward(x);
    Tensor y = x + std::get<0>(self_attn->forward(h, h, h, {}, /*need_weights=*/false));
    return y + linear2->forward(linear1->forward(norm2->forward(y)).relu());
  }
  nn::MultiheadAttention self_attn;
  nn::Linear linear1, linear2;
  nn::LayerNorm norm1, norm2;
};
EMBER_MODULE(EncoderLayer);

// Token and position embeddings, two encoder layers, a final norm and a linear read-out:
// tokens [B, kLength] int64 -> logits [B, kLength, kVocab].
class SorterImpl : public nn::Module {
 public:
  SorterImpl()
      : tokens(register_module("tokens", nn::Embedding(kVocab, kModel))),
        positions(register_module("positions", nn::Embedding(kLength, kModel))),
        layer0(register_module("layer0", EncoderLayer())),
        layer1(register_module("layer1", EncoderLayer())),
        norm(register_module("norm", nn::LayerNorm(std::vector<int64_t>{kModel}))),
        head(register_module("head", nn::Linear(kModel, kVocab))) {}
  Tensor forward(const Tensor& x) const {
    Tensor h = tokens->forward(x) + positions->weight;  // [B, L, d] + [L, d]
    h = layer1->forward(layer0->forward(h));
    return head->forward(norm->forward(h));
  }
  nn::Embedding tokens, positions;
  EncoderLayer layer0, layer1;
  nn::LayerNorm norm;
  nn::Linear head;
};
EMBER_MODULE(Sorter);

// `n` random sequences and their sorted versions, as int64 [n, kLength] tensors.
std::pair<Tensor, Tensor> sequences(std::mt19937_64& rng, int64_t n) {
  std::uniform_int_distribution<int64_t> digit(0, kVocab - 1);
  std::vector<int64_t> x(static_cast<size_t>(n * kLength)), y(x.size());
  for (int64_t i = 0; i < n; i++) {
    auto row = x.begin() + i * kLength, sorted = y.begin() + i * kLength;
    std::generate(row, row + kLength, [&] { return digit(rng); });
    std::partial_sort_copy(row, row + kLength, sorted, sorted + kLength);
  }
  return {from_vector(x, IntList{n, kLength}), from_vector(y, IntList{n, kLength})};
}

Tensor loss_of(const Sorter& net, const Tensor& x, const Tensor& y) {
  return nn::functional::cross_entropy(net->forward(x).reshape({-1, kVocab}), y.reshape({-1}));
}

// The share of the sequences whose every position is right.
double exact_accuracy(Sorter& net, const Tensor& x, const Tensor& y) {
  NoGradGuard no_grad;
  net->eval();
  Tensor right = (net->forward(x).argmax(-1) == y).to(kInt64).sum({1}) == kLength;
  const auto hits = right.to(kInt64).sum().item<int64_t>();
  net->train();
  return static_cast<double>(hits) / static_cast<double>(x.size(0));
}

struct Args {
  int64_t max_steps = 20000;
  double goal = 0.99, min_loss_drop = 0;
};

Args parse(int argc, char** argv) {
  const std::string usage = "usage: attention [--max-steps N] [--goal A] [--min-loss-drop F]";
  Args a;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw ValueError(usage);
    const std::string value = argv[i + 1];
    size_t used = 0;
    try {
      if (flag == "--max-steps")
        a.max_steps = std::stoll(value, &used);
      else if (flag == "--goal")
        a.goal = std::stod(value, &used);
      else if (flag == "--min-loss-drop")
        a.min_loss_drop = std::stod(value, &used);
      else
        throw ValueError(usage);
    } catch (const std::logic_error&) {
      used = 0;
    }
    if (used != value.size() || a.max_steps < kEvery)
      throw ValueError("attention: " + flag + " takes a number (--max-steps at least " +
                       std::to_string(kEvery) + "), got '" + value + "'");
  }
  return a;
}

int run(const Args& args) {
  manual_seed(0);
  Sorter net;
  optim::Adam opt(net->parameters(), optim::AdamOptions(2e-3));
  std::mt19937_64 train_rng(1), held_out_rng(2);
  const auto [test_x, test_y] = sequences(held_out_rng, kHeldOut);
  const auto start = std::chrono::steady_clock::now();
  double first_loss = -1, last_loss = 0, loss_sum = 0, accuracy = 0;
  int64_t step = 0;
  bool solved = false;  // a goal of 0: run all of max_steps
  while (step < args.max_steps && !solved) {
    auto [x, y] = sequences(train_rng, kBatch);
    Tensor loss = loss_of(net, x, y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_sum += loss.item<float>();
    if (++step % kEvery) continue;
    last_loss = loss_sum / kEvery;
    if (first_loss < 0) first_loss = last_loss;
    loss_sum = 0;
    accuracy = exact_accuracy(net, test_x, test_y);
    solved = args.goal > 0 && accuracy >= args.goal;
    std::printf("step %5lld  loss %.4f  held-out exactly sorted %.2f%%\n",
                static_cast<long long>(step), last_loss, accuracy * 100);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "held-out accuracy %.2f%% (%lld sequences of %lld digits sorted exactly), training "
      "%.1f s for %lld steps of %lld\n",
      accuracy * 100, static_cast<long long>(kHeldOut), static_cast<long long>(kLength), seconds,
      static_cast<long long>(step), static_cast<long long>(kBatch));
  if (args.min_loss_drop > 0 && !(last_loss < args.min_loss_drop * first_loss)) {
    std::fprintf(stderr, "attention: the loss went from %.4f to %.4f (required: below %.4f)\n",
                 first_loss, last_loss, args.min_loss_drop * first_loss);
    return 1;
  }
  if (accuracy >= args.goal) return 0;
  std::fprintf(stderr, "attention: held-out accuracy %.2f%% is below the goal %.2f%%\n",
               accuracy * 100, args.goal * 100);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  return examples::guarded_main([&] { return run(parse(argc, argv)); });
}

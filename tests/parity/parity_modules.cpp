// Parity: the nn modules of convolutional networks (Conv2d, ConvTranspose2d, BatchNorm2d,
// LayerNorm, GroupNorm, Embedding, Dropout, the pools, the activations, Flatten) and the
// containers (ModuleList, ModuleDict) against libtorch's modules of the same options. Each check
// copies ember's state dict into the libtorch module by name (so the names must be libtorch's),
// runs both on the same input, backpropagates sum(out * cotangent) and compares the output, the
// input's gradient, every parameter's gradient and every buffer. Every case runs in float32 and,
// with both modules converted by to(kFloat64) first, in float64.
#include <torch/torch.h>

#include <map>
#include <optional>

#include "ember/ember.h"
#include "module_state.h"
#include "parity.h"

namespace {

using parity::Host;
using parity::Shape;
namespace enn = ember::nn;
namespace tnn = torch::nn;
using parity::copy_state;
using parity::ember_state;
using parity::expect_same;
using parity::to_torch;
using parity::torch_state;

constexpr parity::Tol kTol{1e-5, 1e-3};  // norms and transcendental activations included

// Runs both modules on the same input (seeded normal values, or `indices` for an int64 input),
// checks the forward, the backward and the state after it.
// The dtype of the running case (the suite's parameter).
bool g_float64 = false;

template <class E, class T>
void check(E& e, T& t, const Shape& in, uint64_t seed, std::optional<Host> indices = {}) {
  if (g_float64) parity::to_float64(*e, *t);
  copy_state(*e, *t);
  if (::testing::Test::HasFatalFailure()) return;
  parity::EmberB eb(seed, true);
  parity::TorchB tb(seed, true);
  ember::Tensor ex;
  torch::Tensor tx;
  if (indices) {
    std::vector<double> v(indices->i.begin(), indices->i.end());
    ex = eb.from_host(v, indices->shape, eb.i64);
    tx = tb.from_host(v, indices->shape, tb.i64);
  } else {
    ex = eb.randn(in, g_float64 ? eb.f64 : eb.f32);
    tx = tb.randn(in, g_float64 ? tb.f64 : tb.f32);
  }
  ember::Tensor ey = e->forward(ex);
  torch::Tensor ty = t->forward(tx);
  parity::Gen g(seed + 1);
  Shape ys = ey.shape();
  auto cot = g.normal(parity::numel(ys));
  (ey * eb.from_host(cot, ys, ey.dtype())).sum().backward();
  (ty * tb.from_host(cot, ys, ty.scalar_type())).sum().backward();
  expect_same(ey, ty, "output", kTol);
  if (!indices) expect_same(ex.grad(), tx.grad(), "input gradient", {1e-4, 1e-3});
  auto ts = torch_state(*t);
  for (auto& [n, et] : ember_state(*e)) {
    expect_same(et, ts[n], "state " + n, kTol);
    if (et.requires_grad()) expect_same(et.grad(), ts[n].grad(), "gradient of " + n, {1e-4, 1e-3});
  }
}

uint64_t seed() {
  return parity::seed_of(::testing::UnitTest::GetInstance()->current_test_info()->name());
}

class Modules : public ::testing::TestWithParam<bool> {  // true: float64
 protected:
  void SetUp() override { g_float64 = GetParam(); }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Dtypes, Modules, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "float64" : "float32"; });

TEST_P(Modules, conv2d) {
  enn::Conv2d e(enn::Conv2dOptions(3, 4, {3, 2}).stride({2, 1}).padding(1).dilation({1, 2}));
  tnn::Conv2d t(tnn::Conv2dOptions(3, 4, {3, 2}).stride({2, 1}).padding(1).dilation({1, 2}));
  check(e, t, {2, 3, 7, 6}, seed());
}

TEST_P(Modules, conv2d_depthwise_without_bias) {
  enn::Conv2d e(enn::Conv2dOptions(3, 6, 3).groups(3).bias(false).padding(2));
  tnn::Conv2d t(tnn::Conv2dOptions(3, 6, 3).groups(3).bias(false).padding(2));
  check(e, t, {1, 3, 5, 5}, seed());
}

TEST_P(Modules, conv_transpose2d) {
  enn::ConvTranspose2d e(
      enn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1));
  tnn::ConvTranspose2d t(
      tnn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1));
  check(e, t, {2, 4, 3, 4}, seed());
}

// Training mode twice (batch statistics; the running statistics and num_batches_tracked
// updated), then eval mode (the running statistics).
TEST_P(Modules, batch_norm2d_train_then_eval) {
  enn::BatchNorm2d e(enn::BatchNorm2dOptions(3).momentum(0.2));
  tnn::BatchNorm2d t(tnn::BatchNorm2dOptions(3).momentum(0.2));
  check(e, t, {4, 3, 2, 3}, seed());
  check(e, t, {2, 3, 3, 1}, seed() + 1);
  EXPECT_EQ(e->num_batches_tracked.item<int64_t>(), 2);
  e->eval();
  t->eval();
  check(e, t, {2, 3, 2, 2}, seed() + 2);
  EXPECT_EQ(e->num_batches_tracked.item<int64_t>(), 2);
}

TEST_P(Modules, batch_norm2d_cumulative_average_and_untracked) {
  enn::BatchNorm2d e(enn::BatchNorm2dOptions(2).momentum(std::nullopt).eps(1e-3));
  tnn::BatchNorm2d t(tnn::BatchNorm2dOptions(2).momentum(c10::nullopt).eps(1e-3));
  for (uint64_t i = 0; i < 3; i++) check(e, t, {3, 2, 2, 2}, seed() + i);
  enn::BatchNorm2d eu(enn::BatchNorm2dOptions(2).track_running_stats(false).affine(false));
  tnn::BatchNorm2d tu(tnn::BatchNorm2dOptions(2).track_running_stats(false).affine(false));
  eu->eval();
  tu->eval();
  check(eu, tu, {3, 2, 2, 2}, seed());
}

TEST_P(Modules, layer_norm_and_group_norm) {
  enn::LayerNorm el(enn::LayerNormOptions({4, 5}).eps(1e-4));
  tnn::LayerNorm tl(tnn::LayerNormOptions({4, 5}).eps(1e-4));
  check(el, tl, {2, 3, 4, 5}, seed());
  enn::GroupNorm eg(enn::GroupNormOptions(2, 6));
  tnn::GroupNorm tg(tnn::GroupNormOptions(2, 6));
  check(eg, tg, {2, 6, 3, 2}, seed());
}

TEST_P(Modules, embedding_with_padding_idx) {
  enn::Embedding e(enn::EmbeddingOptions(7, 3).padding_idx(-2));
  tnn::Embedding t(tnn::EmbeddingOptions(7, 3).padding_idx(-2));
  EXPECT_EQ(e->weight.select(0, 5).abs().sum().item<float>(), 0.0f);  // the padding row
  check(e, t, {}, seed(), Host{{2, 3}, ember::kInt64, {}, {5, 0, 5, 6, 1, 0}});
}

TEST_P(Modules, pools_and_flatten) {
  enn::MaxPool2d em(enn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
  tnn::MaxPool2d tm(tnn::MaxPool2dOptions(3).stride(2).padding(1).ceil_mode(true));
  check(em, tm, {2, 2, 6, 7}, seed());
  enn::AvgPool2d ea(
      enn::AvgPool2dOptions({3, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
  tnn::AvgPool2d ta(
      tnn::AvgPool2dOptions({3, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
  check(ea, ta, {2, 2, 6, 7}, seed());
  enn::AdaptiveAvgPool2d ead(enn::AdaptiveAvgPool2dOptions({3, 2}));
  tnn::AdaptiveAvgPool2d tad(tnn::AdaptiveAvgPool2dOptions({3, 2}));
  check(ead, tad, {2, 2, 7, 5}, seed());
  enn::Flatten ef;
  tnn::Flatten tf;
  check(ef, tf, {2, 3, 2, 2}, seed());
}

TEST_P(Modules, activations_and_dropout_in_eval) {
  enn::GELU eg(enn::GELUOptions().approximate("tanh"));
  tnn::GELU tg(tnn::GELUOptions().approximate("tanh"));
  check(eg, tg, {3, 5}, seed());
  enn::GELU eg2;
  tnn::GELU tg2;
  check(eg2, tg2, {3, 5}, seed());
  enn::SiLU es;
  tnn::SiLU ts;
  check(es, ts, {3, 5}, seed());
  enn::Sigmoid esg;
  tnn::Sigmoid tsg;
  check(esg, tsg, {3, 5}, seed());
  enn::LeakyReLU el(enn::LeakyReLUOptions().negative_slope(0.2));
  tnn::LeakyReLU tl(tnn::LeakyReLUOptions().negative_slope(0.2));
  check(el, tl, {3, 5}, seed());
  enn::Dropout ed(0.3);
  tnn::Dropout td(0.3);
  ed->eval();
  td->eval();
  check(ed, td, {3, 5}, seed());
}

// Containers: the state dict's names ("blocks.0.weight", "heads.cls.bias", ...) and order of
// iteration follow libtorch's; a model built from them trains the same.
namespace {
struct EmberNet : enn::Module {
  EmberNet() {
    blocks = register_module(
        "blocks", enn::ModuleList(enn::Conv2d(enn::Conv2dOptions(2, 4, 3)), enn::BatchNorm2d(4)));
    heads = register_module("heads", enn::ModuleDict());
    heads->insert("cls", enn::Conv2d(enn::Conv2dOptions(4, 3, 1)));
    heads->insert("norm", enn::GroupNorm(1, 3));
  }
  ember::Tensor forward(const ember::Tensor& x) {
    ember::Tensor h = blocks->ptr<enn::Conv2dImpl>(0)->forward(x);
    h = blocks->ptr<enn::BatchNorm2dImpl>(1)->forward(h).relu();
    h = heads->ptr<enn::Conv2dImpl>("cls")->forward(h);
    return heads->ptr<enn::GroupNormImpl>("norm")->forward(h);
  }
  enn::ModuleList blocks;
  enn::ModuleDict heads;
};
struct TorchNet : tnn::Module {
  TorchNet() {
    blocks = register_module(
        "blocks", tnn::ModuleList(tnn::Conv2d(tnn::Conv2dOptions(2, 4, 3)), tnn::BatchNorm2d(4)));
    heads = register_module("heads", tnn::ModuleDict());
    std::vector<std::pair<std::string, std::shared_ptr<tnn::Module>>> m = {
        {"cls", tnn::Conv2d(tnn::Conv2dOptions(4, 3, 1)).ptr()},
        {"norm", tnn::GroupNorm(1, 3).ptr()}};
    heads->update(m);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = blocks->ptr<tnn::Conv2dImpl>(0)->forward(x);
    h = blocks->ptr<tnn::BatchNorm2dImpl>(1)->forward(h).relu();
    h = heads->operator[]("cls")->as<tnn::Conv2d>()->forward(h);
    return heads->operator[]("norm")->as<tnn::GroupNorm>()->forward(h);
  }
  tnn::ModuleList blocks;
  tnn::ModuleDict heads;
};
}  // namespace

TEST_P(Modules, module_list_and_dict_names) {
  auto e = std::make_shared<EmberNet>();
  auto t = std::make_shared<TorchNet>();
  EXPECT_EQ(e->heads->keys(), (std::vector<std::string>{"cls", "norm"}));
  check(e, t, {2, 2, 5, 5}, seed());
}

// Parity: nn::MultiheadAttention against libtorch's torch::nn::MultiheadAttention of the same
// options. Each case copies ember's state dict into the libtorch module by name (so the names
// must be libtorch's), runs both on the same inputs and masks, backpropagates sum(out * c1) +
// sum(weights * c2) and compares the output, the attention weights, the gradients of query, key
// and value and of every parameter. Every case runs in float32 and, with both modules converted
// by to(kFloat64) first, in float64.
//
// libtorch 1.13's C++ module is sequence-first and adds a bool attn_mask as 0/1 instead of
// masking (PyTorch's Python module and ember mask where it is true): the libtorch side gets the
// inputs transposed for batch_first and a bool attn_mask as the equivalent floating mask (-inf
// where true). Its attn_mask is [L, S] only; the [N * num_heads, L, S] layout is checked
// against the per-head weights it must zero.
#include <torch/torch.h>

#include <limits>
#include <map>

#include "../support/error_message.h"
#include "ember/ember.h"
#include "module_state.h"
#include "parity.h"

namespace {

using parity::Host;
using parity::Shape;
namespace enn = ember::nn;
namespace tnn = torch::nn;

constexpr parity::Tol kTol{1e-5, 1e-3}, kGradTol{1e-4, 1e-3};

std::vector<double> values(const ember::Tensor& t) { return t.to_vector<double>(); }

struct Case {
  Case(Shape q, Shape k, Shape v) : query(std::move(q)), key(std::move(k)), value(std::move(v)) {}
  Shape query, key, value;  // in ember's layout (batch-first when the options say so)
  std::optional<Host> key_padding_mask, attn_mask;
  bool need_weights = true, average_attn_weights = true;
};

// The dtype of the running case (the suite's parameter).
bool g_float64 = false;

ember::Tensor ember_of(const Host& h) {
  std::vector<double> v = h.f;
  for (int64_t i : h.i) v.push_back(static_cast<double>(i));
  const bool floating = h.dtype != ember::kBool && h.dtype != ember::kInt64;
  return parity::EmberB(0, false).from_host(v, h.shape,
                                            floating && g_float64 ? ember::kFloat64 : h.dtype);
}

// libtorch's masks: bool key_padding_mask as it is, a bool attn_mask as -inf where true.
torch::Tensor torch_of(const Host& h, bool attn_mask) {
  parity::TorchB tb(0, false);
  if (h.dtype != ember::kBool) return tb.from_host(h.f, h.shape, g_float64 ? tb.f64 : tb.f32);
  std::vector<double> v(h.i.begin(), h.i.end());
  if (!attn_mask) return tb.from_host(v, h.shape, tb.b8);
  for (auto& x : v) x = x != 0 ? -std::numeric_limits<double>::infinity() : 0.0;
  return tb.from_host(v, h.shape, g_float64 ? tb.f64 : tb.f32);
}

void check(enn::MultiheadAttention& e, tnn::MultiheadAttention& t, const Case& c, uint64_t seed) {
  if (g_float64) parity::to_float64(*e, *t);
  parity::copy_state(*e, *t);
  if (::testing::Test::HasFatalFailure()) return;
  const bool bf = e->options.batch_first();
  parity::EmberB eb(seed, true);
  parity::TorchB tb(seed, true);
  const auto edt = g_float64 ? eb.f64 : eb.f32;
  const auto tdt = g_float64 ? tb.f64 : tb.f32;
  ember::Tensor eq = eb.randn(c.query, edt), ek = eb.randn(c.key, edt), ev = eb.randn(c.value, edt);
  torch::Tensor tq = tb.randn(c.query, tdt), tk = tb.randn(c.key, tdt), tv = tb.randn(c.value, tdt);
  auto seq_first = [&](const torch::Tensor& x) { return bf ? x.transpose(0, 1) : x; };
  ember::Tensor ekpm = c.key_padding_mask ? ember_of(*c.key_padding_mask) : ember::Tensor();
  ember::Tensor eam = c.attn_mask ? ember_of(*c.attn_mask) : ember::Tensor();
  torch::Tensor tkpm = c.key_padding_mask ? torch_of(*c.key_padding_mask, false) : torch::Tensor();
  torch::Tensor tam = c.attn_mask ? torch_of(*c.attn_mask, true) : torch::Tensor();
  auto [ey, ew] = e->forward(eq, ek, ev, ekpm, c.need_weights, eam, c.average_attn_weights);
  auto [ty, tw] = t->forward(seq_first(tq), seq_first(tk), seq_first(tv), tkpm, c.need_weights, tam,
                             c.average_attn_weights);
  ty = seq_first(ty);
  parity::Gen g(seed + 1);
  const auto cy = g.normal(ey.numel());
  ember::Tensor eloss = (ey * eb.from_host(cy, ey.shape(), edt)).sum();
  torch::Tensor tloss = (ty * tb.from_host(cy, ey.shape(), tdt)).sum();
  if (c.need_weights) {
    auto cw = g.normal(ew.numel());
    eloss = eloss + (ew * eb.from_host(cw, ew.shape(), edt)).sum();
    tloss = tloss + (tw * tb.from_host(cw, ew.shape(), tdt)).sum();
  }
  eloss.backward();
  tloss.backward();
  parity::expect_same(ey, ty, "output", kTol);
  parity::expect_same(ew, tw, "attention weights", kTol);
  parity::expect_same(eq.grad(), tq.grad(), "query gradient", kGradTol);
  parity::expect_same(ek.grad(), tk.grad(), "key gradient", kGradTol);
  parity::expect_same(ev.grad(), tv.grad(), "value gradient", kGradTol);
  auto ts = parity::torch_state(*t);
  for (auto& [n, et] : parity::ember_state(*e))
    parity::expect_same(et.grad(), ts[n].grad(), "gradient of " + n, kGradTol);
}

uint64_t seed() {
  return parity::seed_of(::testing::UnitTest::GetInstance()->current_test_info()->name());
}

// A bool mask of `shape` with the listed flat positions true.
Host bool_mask(Shape shape, std::vector<int64_t> on) {
  Host h{shape, ember::kBool, {}, std::vector<int64_t>(static_cast<size_t>(parity::numel(shape)))};
  for (int64_t i : on) h.i[static_cast<size_t>(i)] = 1;
  return h;
}

class MultiheadAttention : public ::testing::TestWithParam<bool> {  // true: float64
 protected:
  void SetUp() override { g_float64 = GetParam(); }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Dtypes, MultiheadAttention, ::testing::Values(false, true),
                         [](const auto& i) { return i.param ? "float64" : "float32"; });

TEST_P(MultiheadAttention, self_attention_packed_projection) {
  enn::MultiheadAttention e(8, 2);
  tnn::MultiheadAttention t(8, 2);
  EXPECT_EQ(e->in_proj_weight.shape(), (Shape{24, 8}));
  EXPECT_EQ(e->in_proj_bias.abs().sum().item<float>(), 0.0f);  // libtorch's initial zeros
  EXPECT_EQ(e->out_proj->bias.abs().sum().item<float>(), 0.0f);
  // xavier_uniform_: |w| <= sqrt(6 / (8 + 24)).
  EXPECT_LE(e->in_proj_weight.abs().max().item<float>(), std::sqrt(6.0f / 32.0f));
  check(e, t, Case({5, 3, 8}, {5, 3, 8}, {5, 3, 8}), seed());
}

// Key and value of another width (the separate q/k/v projection weights; libtorch 1.13's C++
// module needs kdim == vdim), no biases, batch_first, padded keys, a floating attn_mask, per-head
// weights.
TEST_P(MultiheadAttention, cross_attention_kdim_vdim_batch_first_masks) {
  enn::MultiheadAttention e(
      enn::MultiheadAttentionOptions(8, 4).kdim(6).vdim(6).bias(false).batch_first(true));
  tnn::MultiheadAttention t(tnn::MultiheadAttentionOptions(8, 4).kdim(6).vdim(6).bias(false));
  parity::Gen g(seed() + 7);
  Case c({2, 4, 8}, {2, 7, 6}, {2, 7, 6});
  c.key_padding_mask = bool_mask({2, 7}, {5, 6, 13});  // the first batch's last two keys
  c.attn_mask = Host{{4, 7}, ember::kFloat32, g.normal(28), {}};
  c.average_attn_weights = false;
  check(e, t, c, seed());
}

// A causal bool attn_mask (true above the diagonal: not allowed), one head, one batch element,
// without the weights.
TEST_P(MultiheadAttention, causal_bool_mask_one_head_batch_one_no_weights) {
  enn::MultiheadAttention e(6, 1);
  tnn::MultiheadAttention t(6, 1);
  Case c({5, 1, 6}, {5, 1, 6}, {5, 1, 6});
  std::vector<int64_t> above;
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = i + 1; j < 5; j++) above.push_back(i * 5 + j);
  c.attn_mask = bool_mask({5, 5}, above);
  c.need_weights = false;
  check(e, t, c, seed());
  auto [y, w] = e->forward(ember::randn({5, 1, 6}), ember::randn({5, 1, 6}),
                           ember::randn({5, 1, 6}), {}, false);
  EXPECT_FALSE(w.defined());
}

// Odd sizes: embed_dim 6 over 3 heads (head size 2), a bool key_padding_mask, dropout configured
// but the module in eval mode (no dropout, as libtorch's).
TEST_P(MultiheadAttention, odd_sizes_eval_mode_dropout_off) {
  enn::MultiheadAttention e(enn::MultiheadAttentionOptions(6, 3).dropout(0.5));
  tnn::MultiheadAttention t(tnn::MultiheadAttentionOptions(6, 3).dropout(0.5));
  e->eval();
  t->eval();
  Case c({3, 2, 6}, {4, 2, 6}, {4, 2, 6});
  c.key_padding_mask = bool_mask({2, 4}, {0, 7});
  check(e, t, c, seed());
}

// The [N * num_heads, L, S] attn_mask: row n * num_heads + h masks head h of batch element n,
// where its per-head weights must be zero (and nowhere else), and the rows still sum to 1.
TEST_P(MultiheadAttention, per_head_attn_mask_layout) {
  enn::MultiheadAttention e(4, 2);
  const auto dt = g_float64 ? ember::kFloat64 : ember::kFloat32;
  e->to(dt);
  const int64_t N = 2, H = 2, L = 3, S = 4;
  std::vector<int64_t> on;
  for (int64_t r = 0; r < N * H; r++) on.push_back(r * L * S + r);  // key r of query 0
  Host mask = bool_mask({N * H, L, S}, on);
  auto [y, w] = e->forward(ember::randn({L, N, 4}, dt), ember::randn({S, N, 4}, dt),
                           ember::randn({S, N, 4}, dt), {}, true, ember_of(mask), false);
  ASSERT_EQ(w.shape(), (Shape{N, H, L, S}));
  ASSERT_EQ(w.dtype(), dt);
  std::vector<double> wv = values(w);
  for (size_t i = 0; i < wv.size(); i++) EXPECT_EQ(wv[i] == 0.0, mask.i[i] != 0) << "weight " << i;
  std::vector<double> sums = values(w.sum({-1}));
  for (double s : sums) EXPECT_NEAR(s, 1.0, 1e-6);
}

TEST_P(MultiheadAttention, bad_options_and_shapes) {
  EXPECT_THROW(enn::MultiheadAttention(6, 4), ember::ValueError);
  EXPECT_THROW(enn::MultiheadAttention(enn::MultiheadAttentionOptions(4, 2).dropout(1.0)),
               ember::ValueError);
  enn::MultiheadAttention e(4, 2);
  auto x = ember::randn({3, 2, 4});
  EXPECT_THROW(e->forward(x, ember::randn({3, 2, 5}), x), ember::ShapeError);
  EXPECT_THROW(e->forward(x, ember::randn({3, 1, 4}), ember::randn({3, 1, 4})), ember::ShapeError);
  EXPECT_THROW(e->forward(ember::randn({2, 4}), x, x), ember::ShapeError);
  EXPECT_THROW(e->forward(x, x, x, ember::zeros({2, 4}, ember::kBool)), ember::ShapeError);
  EXPECT_THROW(e->forward(x, x, x, {}, true, ember::zeros({3, 4}, ember::kBool)),
               ember::ShapeError);
  EXPECT_THROW(e->forward(x, x, x, ember::zeros({2, 3}, ember::kInt64)), ember::DTypeError);
  EXPECT_THROW(e->to(ember::kInt64), ember::DTypeError);
  std::string m = ember_test::message_of<ember::ShapeError>([&] {
    e->forward(x, ember::randn({3, 2, 5}), x);
  });
  EXPECT_NE(m.find("[L, N, E], [S, N, kdim], [S, N, vdim]"), std::string::npos) << m;
}

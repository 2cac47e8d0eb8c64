// Parity: what training a CNN or a transformer needs beyond parity_conv_pool.cpp's cases — the
// activations (gelu, silu, softplus, leaky_relu), convolution and pooling edge cases (padding
// beyond the kernel, groups equal to channels, batch 1, ceil_mode's partial last window, float64),
// adaptive average pooling, the normalisations in float64, embedding and one_hot, the losses
// (cross_entropy with class indices, weights, ignore_index and label smoothing; nll_loss) and
// scaled dot-product attention (against libtorch's composition), forward and backward.
#include "parity_grad.h"
#include "parity_ops.h"

#define TR .tol = parity::kTranscendental
using parity::Shape;
namespace ops = parity::ops;

// ---- activations ------------------------------------------------------------------------------
template <class B, class T>
std::vector<T> activations(B& b, const T& x) {
  return std::vector{ops::gelu(b, x, std::string("none")),
                     ops::gelu(b, x, std::string("tanh")),
                     ops::silu(b, x),
                     ops::softplus(b, x, 1.0, 20.0),
                     ops::softplus(b, x, 2.0, 3.0),
                     ops::leaky_relu(b, x, 0.01),
                     ops::leaky_relu(b, x, 0.2),
                     x.sigmoid()};
}
BACKWARD_CASE(GradActivation, float32, TR) { return activations(b, b.randn({4, 9}) * 3); }
BACKWARD_CASE(GradActivation, float64, TR) { return activations(b, b.randn({3, 7}, b.f64) * 3); }
// Zero (leaky_relu's gradient there is the slope, softplus's 1/2, sigmoid's 1/4), both sides of
// softplus's threshold, and the tails of gelu.
BACKWARD_CASE(GradActivation, edges, TR) {
  return activations(b,
                     b.values({0.0, 1e-8, -1e-8, 1.4, 1.6, 19.5, 20.5, 30, -30, -6, 6, -12}, {12}));
}

// ---- convolution edge cases -------------------------------------------------------------------
BACKWARD_CASE(GradConv, conv2d_padding_beyond_kernel_batch1) {
  auto x = b.dyadic({1, 3, 4, 5}), w = b.dyadic({2, 3, 2, 3});
  return std::vector{
      ops::conv2d(b, x, w, b.randn({2}), Shape{1}, Shape{3, 4}, Shape{1}, int64_t{1}),
      ops::conv2d(b, x, w, typename B::T{}, Shape{2, 3}, Shape{4}, Shape{2}, int64_t{1})};
}
// groups == channels (depthwise), with one and two filters per channel.
BACKWARD_CASE(GradConv, conv2d_depthwise_f64) {
  auto x = b.randn({1, 3, 6, 5}, b.f64);
  auto w = b.randn({6, 1, 3, 3}, b.f64), w1 = b.randn({3, 1, 2, 2}, b.f64);
  return std::vector{
      ops::conv2d(b, x, w, b.randn({6}, b.f64), Shape{1}, Shape{1}, Shape{1}, int64_t{3}),
      ops::conv2d(b, x, w1, typename B::T{}, Shape{2}, Shape{0}, Shape{2}, int64_t{3})};
}
BACKWARD_CASE(GradConv, conv1d_f64) {
  auto x = b.randn({2, 4, 11}, b.f64), w = b.randn({6, 2, 3}, b.f64);
  return std::vector{
      ops::conv1d(b, x, w, b.randn({6}, b.f64), Shape{2}, Shape{4}, Shape{1}, int64_t{2}),
      ops::conv1d(b, x, w.narrow(1, 0, 1).narrow(0, 0, 4), typename B::T{}, Shape{1}, Shape{1},
                  Shape{3}, int64_t{4})};
}
BACKWARD_CASE(GradConv, conv_transpose2d_groups_f64) {
  auto x = b.randn({1, 4, 3, 3}, b.f64), w = b.randn({4, 2, 3, 3}, b.f64);
  return std::vector{ops::conv_transpose2d(b, x, w, b.randn({4}, b.f64), Shape{2}, Shape{1},
                                           Shape{1}, int64_t{2}, Shape{1}),
                     ops::conv_transpose2d(b, x, w, typename B::T{}, Shape{1, 2}, Shape{0},
                                           Shape{0}, int64_t{2}, Shape{2})};
}

// ---- pooling ----------------------------------------------------------------------------------
// ceil_mode: 7 rows in windows of 2 (stride 2) make 4 windows, the last one row; with padding 1
// the last window starts inside the input and holds its last row only.
BACKWARD_CASE(GradPool, ceil_mode_partial_last_window_f64) {
  auto x = b.randn({1, 2, 7, 5}, b.f64);
  return std::vector{ops::max_pool2d(b, x, Shape{2}, Shape{2}, Shape{0}, Shape{1}, true),
                     ops::max_pool2d(b, x, Shape{3, 2}, Shape{2}, Shape{1}, Shape{1}, true),
                     ops::avg_pool2d(b, x, Shape{2}, Shape{2}, Shape{0}, true, true),
                     ops::avg_pool2d(b, x, Shape{3, 2}, Shape{2}, Shape{1}, true, false),
                     ops::avg_pool2d(b, x, Shape{3, 2}, Shape{2}, Shape{1}, true, true)};
}
BACKWARD_CASE(GradPool, ceil_mode_partial_last_window_batch1) {
  auto x = b.randn({1, 3, 5, 9});
  return std::vector{ops::max_pool2d(b, x, Shape{2, 4}, Shape{2, 3}, Shape{1, 2}, Shape{1}, true),
                     ops::avg_pool2d(b, x, Shape{2, 4}, Shape{2, 3}, Shape{1, 2}, true, false)};
}
// Sizes that divide, that do not (overlapping windows), a global pool, an output larger than
// the input, and an unbatched input.
BACKWARD_CASE(GradPool, adaptive_avg_pool2d) {
  auto x = b.randn({2, 3, 7, 5});
  return std::vector{
      ops::adaptive_avg_pool2d(b, x, Shape{3, 2}), ops::adaptive_avg_pool2d(b, x, Shape{1, 1}),
      ops::adaptive_avg_pool2d(b, x, Shape{7, 5}), ops::adaptive_avg_pool2d(b, x, Shape{4, 8}),
      ops::adaptive_avg_pool2d(b, b.randn({3, 6, 4}), Shape{3, 2})};
}
BACKWARD_CASE(GradPool, adaptive_avg_pool_f64) {
  auto x = b.randn({2, 3, 10}, b.f64);
  return std::vector{ops::adaptive_avg_pool1d(b, x, Shape{4}),
                     ops::adaptive_avg_pool2d(b, b.randn({1, 2, 5, 6}, b.f64), Shape{2, 4})};
}

// ---- normalisation in float64 -----------------------------------------------------------------
BACKWARD_CASE(GradNorm, batch_norm_f64, TR) {
  auto x = b.randn({2, 3, 4, 3}, b.f64), w = b.randn({3}, b.f64), bias = b.randn({3}, b.f64);
  auto rm = b.randn({3}, b.f64).detach(), rv = b.rand({3}, 0.5, 2, b.f64).detach();
  return std::vector{
      ops::batch_norm(b, x, w, bias, typename B::T{}, typename B::T{}, true, 0.1, 1e-5),
      ops::batch_norm(b, x, w, bias, rm, rv, false, 0.1, 1e-5)};
}
PARITY_CASE(Norm, batch_norm_running_stats_f64_batch1, TR, .grad = false) {
  auto x = b.randn({1, 3, 5, 2}, b.f64), rm = b.randn({3}, b.f64), rv = b.rand({3}, 0.5, 2, b.f64);
  b.realize(rm);
  b.realize(rv);
  auto y = ops::batch_norm(b, x, typename B::T{}, typename B::T{}, rm, rv, true, 0.2, 1e-5);
  return std::vector{y, rm, rv};
}
BACKWARD_CASE(GradNorm, layer_and_group_norm_f64, TR) {
  auto x = b.randn({2, 4, 3, 5}, b.f64);
  return std::vector{
      ops::layer_norm(b, x, Shape{3, 5}, b.randn({3, 5}, b.f64), b.randn({3, 5}, b.f64), 1e-5),
      ops::group_norm(b, x, int64_t{2}, b.randn({4}, b.f64), b.randn({4}, b.f64), 1e-5),
      ops::group_norm(b, x, int64_t{4}, typename B::T{}, typename B::T{}, 1e-5)};
}

// ---- embedding, one_hot -----------------------------------------------------------------------
// Repeated indices accumulate their rows' gradients; padding_idx's row gets none.
BACKWARD_CASE(GradEmbedding, repeated_indices_and_padding) {
  auto w = b.randn({6, 4});
  auto i = b.values({1, 5, 1, 0, 5, 5}, {2, 3}, b.i64);
  return std::vector{ops::embedding(b, w, i, int64_t{-1}),
                     ops::embedding(b, w, b.values({2, 3, 2, 4}, {4}, b.i64), int64_t{2})};
}
BACKWARD_CASE(GradEmbedding, float64_int32_indices) {
  auto w = b.randn({5, 3}, b.f64);
  return ops::embedding(b, w, b.values({4, 0, 4}, {3, 1}, b.i32), int64_t{-1});
}
PARITY_REJECTS(Embedding, index_out_of_range) {
  return ops::embedding(b, b.randn({4, 2}), b.values({1, 4}, {2}, b.i64), int64_t{-1});
}
PARITY_CASE(Embedding, one_hot) {
  auto i = b.values({3, 0, 1, 3, 2, 0}, {2, 3}, b.i64);
  return std::vector{ops::one_hot(b, i, int64_t{-1}), ops::one_hot(b, i, int64_t{6})};
}
PARITY_REJECTS(Embedding, one_hot_value_too_large) {
  return ops::one_hot(b, b.values({3, 0}, {2}, b.i64), int64_t{3});
}

// ---- losses -----------------------------------------------------------------------------------
// libtorch has no gradient for the class weights: they are detached (their leaves get none).
BACKWARD_CASE(GradLoss, cross_entropy_options, TR) {
  auto x = b.randn({6, 4}) * 2;
  auto t = b.values({0, 3, 1, 3, 2, 3}, {6}, b.i64);
  auto w = b.rand({4}, 0.5, 2).detach();
  using A = ops::LossArgs;
  auto none = typename B::T{};
  return std::vector{ops::cross_entropy(b, x, t, none, A{}),
                     ops::cross_entropy(b, x, t, none, A{"sum"}),
                     ops::cross_entropy(b, x, t, none, A{"none"}),
                     ops::cross_entropy(b, x, t, none, A{"mean", -100, 0.1}),
                     ops::cross_entropy(b, x, t, none, A{"none", -100, 0.2}),
                     ops::cross_entropy(b, x, t, w, A{"mean", -100, 0.15}),
                     ops::cross_entropy(b, x, t, w, A{"sum", -100, 0.15}),
                     ops::cross_entropy(b, x, t, none, A{"mean", 3, 0.1}),
                     ops::cross_entropy(b, x, t, w, A{"mean", 3, 0.0}),
                     ops::cross_entropy(b, x, t, w, A{"none", 1, 0.3})};
}
// [N, C, d] inputs with [N, d] targets, and an unbatched [C] input with a 0-d target.
BACKWARD_CASE(GradLoss, cross_entropy_spatial_and_unbatched_f64, TR) {
  auto x = b.randn({2, 3, 4}, b.f64);
  auto t = b.values({0, 2, 1, 1, 2, 2, 0, 1}, {2, 4}, b.i64);
  auto u = b.randn({5}, b.f64);
  auto ut = b.values({3}, Shape{}, b.i64);
  using A = ops::LossArgs;
  auto none = typename B::T{};
  return std::vector{ops::cross_entropy(b, x, t, none, A{"mean", -100, 0.1}),
                     ops::cross_entropy(b, x, t, none, A{"none"}),
                     ops::cross_entropy(b, u, ut, none, A{"mean", -100, 0.2}),
                     ops::cross_entropy(b, u, ut, none, A{"none"})};
}
BACKWARD_CASE(GradLoss, nll_loss, TR) {
  auto x = b.randn({5, 3}).log_softmax(1);
  auto t = b.values({2, 0, 1, 2, 2}, {5}, b.i64);
  auto w = b.rand({3}, 0.5, 2).detach();
  using A = ops::LossArgs;
  auto none = typename B::T{};
  return std::vector{ops::nll_loss(b, x, t, none, A{}), ops::nll_loss(b, x, t, w, A{}),
                     ops::nll_loss(b, x, t, w, A{"sum"}),
                     ops::nll_loss(b, x, t, none, A{"none", 2}),
                     ops::nll_loss(b, x, t, w, A{"mean", 0})};
}
PARITY_REJECTS(Loss, cross_entropy_target_out_of_range) {
  return ops::cross_entropy(b, b.randn({2, 3}), b.values({1, 3}, {2}, b.i64), typename B::T{},
                            ops::LossArgs{});
}

// ---- scaled dot-product attention -------------------------------------------------------------
BACKWARD_CASE(GradAttention, plain_causal_and_scaled, TR) {
  auto q = b.randn({2, 3, 5, 8}), k = b.randn({2, 3, 7, 8}), v = b.randn({2, 3, 7, 6});
  auto q5 = b.randn({2, 5, 4}), k5 = b.randn({2, 5, 4}), v5 = b.randn({2, 5, 3});
  auto none = typename B::T{};
  return std::vector{ops::scaled_dot_product_attention(b, q, k, v, none, false),
                     ops::scaled_dot_product_attention(b, q5, k5, v5, none, true),
                     ops::scaled_dot_product_attention(b, q, k, v, none, true, 0.3)};
}
// A bool mask (every row keeps key 0) and an additive float mask, broadcast over the batch.
BACKWARD_CASE(GradAttention, masks_f64, TR) {
  auto q = b.randn({2, 4, 6}, b.f64), k = b.randn({2, 5, 6}, b.f64), v = b.randn({2, 5, 3}, b.f64);
  auto keep = b.randbool({4, 5}).logical_or(b.arange(5) == 0);
  auto add = b.randn({4, 5}, b.f64).detach();
  return std::vector{ops::scaled_dot_product_attention(b, q, k, v, keep, false),
                     ops::scaled_dot_product_attention(b, q, k, v, add, false)};
}

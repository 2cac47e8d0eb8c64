// ember/nn/attention.h — MultiheadAttention (libtorch's module: options, the state dict's names
// in_proj_weight, in_proj_bias, out_proj.weight and out_proj.bias (q_proj_weight, k_proj_weight
// and v_proj_weight when kdim or vdim differ from embed_dim), initialisation, forward's arguments
// and results; batch_first as PyTorch's Python module). Vaswani et al., "Attention is all you
// need", 2017, section 3.2.2: for each of num_heads heads h, with D = embed_dim / num_heads,
//   head_h = softmax((Q Wq_h^T + bq_h) (K Wk_h^T + bk_h)^T / sqrt(D) + M) (V Wv_h^T + bv_h),
//   output = concat(head_1, ..., head_H) Wo^T + bo,
// as a composition (gradients by composition). The masks M follow PyTorch's
// torch.nn.MultiheadAttention: a bool mask is true where attending is NOT allowed (the opposite
// of scaled_dot_product_attention's); a floating mask is added to the scores. A query that may
// attend to no key gets NaN, as PyTorch. libtorch's add_bias_kv and add_zero_attn are not offered.
#pragma once
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/modules.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  /// Dropout on the attention weights in training mode.
  EMBER_ARG(double, dropout) = 0.0;
  /// Biases of the input and output projections.
  EMBER_ARG(bool, bias) = true;
  /// The key's and the value's feature sizes.
  EMBER_ARG(int64_t, kdim);
  EMBER_ARG(int64_t, vdim);
  /// Inputs and output as [N, L, E] instead of [L, N, E] (PyTorch's Python module; libtorch's C++
  /// module has sequence-first only).
  EMBER_ARG(bool, batch_first) = false;
};

/// Shapes (E = embed_dim; sequence-first, or with the first two dims swapped when batch_first):
///   query [L, N, E], key [S, N, kdim], value [S, N, vdim], floating;
///   key_padding_mask [N, S]: bool (true: the key is padding) or floating (added);
///   attn_mask [L, S] or [N * num_heads, L, S]: bool (true: not allowed) or floating (added);
///   returns the output [L, N, E] and, when need_weights, the attention weights (after dropout,
///   as libtorch) [N, L, S] averaged over the heads, or [N, num_heads, L, S] without
///   average_attn_weights; without need_weights an undefined tensor.
/// Parameters: in_proj_weight [3E, E] (xavier_uniform_), or q_proj_weight [E, E], k_proj_weight
/// [E, kdim] and v_proj_weight [E, vdim] when kdim or vdim differ from E; in_proj_bias [3E]
/// (zeros) with bias; the child out_proj, a Linear(E, E) with its bias zeroed.
/// Errors: ValueError for non-positive sizes, embed_dim not divisible by num_heads or dropout
/// outside [0, 1); ShapeError for inputs or masks of other shapes; DTypeError for non-floating
/// inputs or masks that are neither bool nor floating.
class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(MultiheadAttentionOptions options);
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {},
                                     bool average_attn_weights = true) const;
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  Linear out_proj{nullptr};
};
EMBER_MODULE(MultiheadAttention);

}  // namespace ember::nn

// MultiheadAttention (include/ember/nn/attention.h).
#include "ember/nn/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "ember/dropout.h"
#include "ember/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/support/shape_str.h"

namespace ember::nn {

namespace {

std::string shape(const Tensor& t) { return support::shape_str(t.sizes()); }

// Applies a mask to scores [N, H, L, S]: a bool mask puts -inf where it is true (not allowed), a
// floating one is added. `mask` broadcasts to the scores' shape.
Tensor apply_mask(const Tensor& scores, const Tensor& mask, const char* name) {
  if (mask.dtype() == kBool) return where(mask, -std::numeric_limits<double>::infinity(), scores);
  if (!mask.is_floating_point())
    throw DTypeError(std::string("MultiheadAttention: ") + name +
                     " must be bool or floating, got " + dtype_name(mask.dtype()));
  return scores + mask;
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(MultiheadAttentionOptions o)
    : options(std::move(o)) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  if (E <= 0 || H <= 0 || options.kdim() <= 0 || options.vdim() <= 0 || E % H)
    throw ValueError("MultiheadAttention: embed_dim " + std::to_string(E) +
                     " must be a positive multiple of num_heads " + std::to_string(H) +
                     ", and kdim and vdim positive");
  if (!(options.dropout() >= 0 && options.dropout() < 1))
    throw ValueError("MultiheadAttention: dropout must be in [0, 1), got " +
                     std::to_string(options.dropout()));
  if (options.kdim() == E && options.vdim() == E) {
    in_proj_weight = register_parameter("in_proj_weight", zeros({3 * E, E}));
    init::xavier_uniform_(in_proj_weight);
  } else {
    q_proj_weight = register_parameter("q_proj_weight", zeros({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", zeros({E, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", zeros({E, options.vdim()}));
    for (Tensor* w : {&q_proj_weight, &k_proj_weight, &v_proj_weight}) init::xavier_uniform_(*w);
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * E}));
  out_proj = register_module("out_proj", Linear(E, E, options.bias()));
  if (options.bias()) init::zeros_(out_proj->bias);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) const {
  const int64_t E = options.embed_dim(), H = options.num_heads(), D = E / H;
  for (const Tensor* t : {&query, &key, &value})
    if (!t->is_floating_point())
      throw DTypeError(std::string("MultiheadAttention: expected floating inputs, got ") +
                       dtype_name(t->dtype()));
  // Batch first from here on: q [N, L, E], k [N, S, kdim], v [N, S, vdim].
  const bool bf = options.batch_first();
  Tensor q = bf ? query : query.transpose(0, 1), k = bf ? key : key.transpose(0, 1),
         v = bf ? value : value.transpose(0, 1);
  if (query.dim() != 3 || key.dim() != 3 || value.dim() != 3 || q.size(2) != E ||
      k.size(2) != options.kdim() || v.size(2) != options.vdim() || k.size(0) != q.size(0) ||
      v.size(0) != q.size(0) || k.size(1) != v.size(1))
    throw ShapeError(
        "MultiheadAttention: query " + shape(query) + ", key " + shape(key) + " and value " +
        shape(value) + " do not pair as " +
        (bf ? "[N, L, E], [N, S, kdim], [N, S, vdim]" : "[L, N, E], [S, N, kdim], [S, N, vdim]") +
        " with E = " + std::to_string(E) + ", kdim = " + std::to_string(options.kdim()) +
        ", vdim = " + std::to_string(options.vdim()));
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  if (key_padding_mask.defined() && key_padding_mask.shape() != std::vector<int64_t>{N, S})
    throw ShapeError("MultiheadAttention: key_padding_mask must be [N, S] = [" + std::to_string(N) +
                     ", " + std::to_string(S) + "], got " + shape(key_padding_mask));
  const bool mask2 = attn_mask.defined() && attn_mask.shape() == std::vector<int64_t>{L, S};
  if (attn_mask.defined() && !mask2 && attn_mask.shape() != std::vector<int64_t>{N * H, L, S})
    throw ShapeError("MultiheadAttention: attn_mask must be [L, S] or [N * num_heads, L, S] = [" +
                     std::to_string(N * H) + ", " + std::to_string(L) + ", " + std::to_string(S) +
                     "], got " + shape(attn_mask));

  // The projections: rows [i E, (i + 1) E) of the packed weight and bias for q, k, v (i = 0, 1, 2).
  auto project = [&](const Tensor& x, int64_t i, const Tensor& separate, int64_t len) {
    Tensor w = in_proj_weight.defined() ? in_proj_weight.narrow(0, i * E, E) : separate;
    Tensor b = in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor();
    return linear(x, w, b).reshape({N, len, H, D}).transpose(1, 2);  // [N, H, len, D]
  };
  // libtorch scales the projected query before the product.
  Tensor qh = project(q, 0, q_proj_weight, L) * (1 / std::sqrt(static_cast<double>(D)));
  Tensor kh = project(k, 1, k_proj_weight, S), vh = project(v, 2, v_proj_weight, S);
  Tensor scores = qh.matmul(kh.transpose(-1, -2));  // [N, H, L, S]
  if (attn_mask.defined())
    scores = apply_mask(scores, mask2 ? attn_mask : attn_mask.reshape({N, H, L, S}), "attn_mask");
  if (key_padding_mask.defined())
    scores = apply_mask(scores, key_padding_mask.reshape({N, 1, 1, S}), "key_padding_mask");
  Tensor weights = dropout(scores.softmax(-1), options.dropout(), is_training());
  Tensor out = out_proj->forward(weights.matmul(vh).transpose(1, 2).reshape({N, L, E}));
  if (!bf) out = out.transpose(0, 1);
  if (!need_weights) return {out, Tensor()};
  return {out, average_attn_weights ? weights.mean({1}) : weights};
}

}  // namespace ember::nn

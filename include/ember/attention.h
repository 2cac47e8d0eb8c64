// ember/attention.h — scaled dot-product attention (PyTorch 2's
// torch::scaled_dot_product_attention: name, argument order, semantics; Vaswani et al.,
// "Attention is all you need", 2017, equation 1):
//   attention(Q, K, V) = softmax(Q K^T * scale + M) V,   scale = 1 / sqrt(E) unless given,
// as a composition of the batched matrix product, softmax and dropout (gradients by
// composition). M is 0 where a query may attend to a key and -inf elsewhere: a bool attn_mask
// is true where attending is allowed; a floating attn_mask is added as it is; is_causal allows
// key j for query i when j <= i (the lower triangle of [L, S] from the top-left corner).
// A query that may attend to no key gets NaN (as PyTorch's math path). dropout_p > 0 applies
// dropout (ember/dropout.h) to the attention weights, whether or not a module is training.
//
// Shapes: query [..., L, E], key [..., S, E], value [..., S, Ev] (batch dims broadcast),
// attn_mask broadcastable to [..., L, S]; result [..., L, Ev] in the query's dtype.
// Errors: ShapeError for shapes that do not pair; ValueError for attn_mask with is_causal (as
// PyTorch), or dropout_p outside [0, 1]; DTypeError for non-floating operands.
#pragma once
#include <optional>

#include "ember/tensor.h"

namespace ember {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace ember

// Scaled dot-product attention as softmax(Q K^T scale + M) V (include/ember/attention.h).
#include "ember/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "ember/dropout.h"
#include "ember/support/shape_str.h"

namespace ember {

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2 || q.size(-1) != k.size(-1) ||
      k.size(-2) != v.size(-2))
    throw ShapeError("scaled_dot_product_attention: query " + support::shape_str(q.sizes()) +
                     ", key " + support::shape_str(k.sizes()) + " and value " +
                     support::shape_str(v.sizes()) +
                     " do not pair as [..., L, E], [..., S, E], [..., S, Ev]");
  for (const Tensor* t : {&q, &k, &v})
    if (!t->is_floating_point())
      throw DTypeError(
          std::string("scaled_dot_product_attention: expected floating operands, got ") +
          dtype_name(t->dtype()));
  if (attn_mask.defined() && is_causal)
    throw ValueError("scaled_dot_product_attention: attn_mask and is_causal are exclusive");
  const double s = scale.value_or(1 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor scores = q.matmul(k.transpose(-1, -2)) * s;  // [..., L, S]
  const double inf = std::numeric_limits<double>::infinity();
  if (is_causal) {
    Tensor allowed = arange(k.size(-2)) <= arange(q.size(-2)).unsqueeze(-1);  // j <= i
    scores = where(allowed, scores, -inf);
  } else if (attn_mask.defined()) {
    scores = attn_mask.dtype() == kBool ? where(attn_mask, scores, -inf) : scores + attn_mask;
  }
  Tensor weights = dropout(scores.softmax(-1), dropout_p, dropout_p > 0);
  return weights.matmul(v).to(q.dtype());
}

}  // namespace ember

#include "ember/nn/functional.h"

namespace ember::nn::functional {

namespace {
Tensor reduce(const Tensor& l, const std::string& reduction) {
  if (reduction == "mean") return l.mean();
  if (reduction == "sum") return l.sum();
  if (reduction == "none") return l;
  throw ValueError("unknown reduction '" + reduction + "' (expected mean, sum or none)");
}
}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  return reduce((input - target).square(), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                      double beta) {
  Tensor d = (input - target).abs();
  Tensor l = beta > 0 ? where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta) : d;
  return reduce(l, reduction);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const std::string& reduction) {
  if (logits.dim() != 2 || target.dim() != 1 || target.size(0) != logits.size(0))
    throw ShapeError("cross_entropy: expected logits [N, C] and target [N], got " +
                     std::to_string(logits.dim()) + "-d logits and " +
                     std::to_string(target.dim()) + "-d target");
  if (target.dtype() != kInt64)
    throw DTypeError("cross_entropy: target must be int64 class indices");
  Tensor picked = logits.log_softmax(1).gather(1, target.unsqueeze(1)).squeeze(1);
  return reduce(-picked, reduction);
}

}  // namespace ember::nn::functional

// ember/nn/functional.h — losses (torch::nn::functional names; reduction "mean" | "sum" | "none").
#pragma once
#include <string>

#include "ember/tensor.h"

namespace ember::nn::functional {

/// mean((input - target)^2). Shapes broadcast; ShapeError otherwise.
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
/// Huber-like loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (PyTorch, beta = 1).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const std::string& reduction = "mean", double beta = 1.0);

/// The options of nll_loss (libtorch's F::NLLLossFuncOptions): per-class weights [C] (undefined:
/// all 1), a target value whose terms count for nothing, and the reduction.
struct NLLLossFuncOptions {
  NLLLossFuncOptions& weight(Tensor w) { return weight_ = std::move(w), *this; }
  NLLLossFuncOptions& ignore_index(int64_t i) { return ignore_index_ = i, *this; }
  NLLLossFuncOptions& reduction(std::string r) { return reduction_ = std::move(r), *this; }
  Tensor weight_;
  int64_t ignore_index_ = -100;
  std::string reduction_ = "mean";
};

/// The options of cross_entropy (libtorch's F::CrossEntropyFuncOptions): those of nll_loss and
/// label_smoothing in [0, 1].
struct CrossEntropyFuncOptions {
  CrossEntropyFuncOptions& weight(Tensor w) { return weight_ = std::move(w), *this; }
  CrossEntropyFuncOptions& ignore_index(int64_t i) { return ignore_index_ = i, *this; }
  CrossEntropyFuncOptions& reduction(std::string r) { return reduction_ = std::move(r), *this; }
  CrossEntropyFuncOptions& label_smoothing(double s) { return label_smoothing_ = s, *this; }
  Tensor weight_;
  int64_t ignore_index_ = -100;
  std::string reduction_ = "mean";
  double label_smoothing_ = 0.0;
};

/// Negative log-likelihood of class indices (PyTorch's nll_loss): input [N, C, d...] (or [C])
/// log-probabilities, target [N, d...] (or []) int64 class indices in [0, C) or ignore_index.
/// Term n: -weight[t_n] input[n, t_n] (0 where t_n = ignore_index); "mean" divides the sum by
/// the sum of the terms' weights (NaN when every target is ignored, as PyTorch), "none" returns
/// the terms [N, d...]. ShapeError for shapes that do not pair, DTypeError for a non-int64
/// target, IndexError for a target outside [0, C) (read from the data), ValueError for an unknown
/// reduction.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});

/// nll_loss of log_softmax(input) over the class dim (dim 1, or 0 for an input [C]). With label
/// smoothing e over C classes the loss is (1 - e) nll + (e / C) smooth, where smooth_n =
/// -sum_c weight[c] log p[n, c] (0 at ignored targets) and "mean" divides its sum by the same
/// weight sum as nll_loss (PyTorch's cross_entropy_loss_label_smoothing). Errors as nll_loss,
/// and ValueError for label_smoothing outside [0, 1].
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options = {});
/// cross_entropy with a reduction alone.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::string& reduction);

/// The options of binary_cross_entropy (libtorch's F::BinaryCrossEntropyFuncOptions): a weight
/// broadcast to the input (undefined: all 1) and the reduction.
struct BinaryCrossEntropyFuncOptions {
  BinaryCrossEntropyFuncOptions& weight(Tensor w) { return weight_ = std::move(w), *this; }
  BinaryCrossEntropyFuncOptions& reduction(std::string r) {
    return reduction_ = std::move(r), *this;
  }
  Tensor weight_;
  std::string reduction_ = "mean";
};

/// The options of binary_cross_entropy_with_logits (libtorch's
/// F::BinaryCrossEntropyWithLogitsFuncOptions): those above and pos_weight, the positive terms'
/// weight, broadcast to the input along its last dim (undefined: all 1).
struct BinaryCrossEntropyWithLogitsFuncOptions {
  BinaryCrossEntropyWithLogitsFuncOptions& weight(Tensor w) {
    return weight_ = std::move(w), *this;
  }
  BinaryCrossEntropyWithLogitsFuncOptions& reduction(std::string r) {
    return reduction_ = std::move(r), *this;
  }
  BinaryCrossEntropyWithLogitsFuncOptions& pos_weight(Tensor w) {
    return pos_weight_ = std::move(w), *this;
  }
  Tensor weight_, pos_weight_;
  std::string reduction_ = "mean";
};

/// PyTorch's binary_cross_entropy: input probabilities in [0, 1] and target of the same shape
/// (floating), term -weight (t max(log x, -100) + (1 - t) max(log(1 - x), -100)) (PyTorch clamps
/// the logs at -100 so that x = 0 or 1 gives a finite loss), then reduced. ShapeError for a
/// target of another shape or a weight that does not broadcast; ValueError for input values
/// outside [0, 1] (read from the data, as PyTorch) or an unknown reduction; DTypeError for
/// non-floating operands.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});

/// PyTorch's binary_cross_entropy_with_logits, binary_cross_entropy of sigmoid(input) computed
/// stably: with l = 1 + (pos_weight - 1) t (1 without pos_weight), the term is
/// weight ((1 - t) x + l (log(1 + exp(-|x|)) + max(-x, 0))), then reduced. Errors as
/// binary_cross_entropy (no range check: any logit is valid).
Tensor binary_cross_entropy_with_logits(
    const Tensor& input, const Tensor& target,
    const BinaryCrossEntropyWithLogitsFuncOptions& options = {});

}  // namespace ember::nn::functional

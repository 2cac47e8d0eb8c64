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

}  // namespace ember::nn::functional

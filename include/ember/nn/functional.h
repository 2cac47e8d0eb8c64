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
/// logits [N, C] float, target [N] int64 class indices -> -mean(log_softmax(logits)[i, target_i]).
Tensor cross_entropy(const Tensor& logits, const Tensor& target,
                     const std::string& reduction = "mean");

}  // namespace ember::nn::functional

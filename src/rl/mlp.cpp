#include "ember/rl/mlp.h"

#include <string>

#include "ember/grad_mode.h"
#include "ember/nn/init.h"

namespace ember::rl {

MlpImpl::MlpImpl(const MlpOptions& options) : options_(options) {
  if (options.in < 1 || options.out < 1 || options.hidden < 1 || options.layers < 1)
    throw ValueError("Mlp: in, out, hidden and layers must be >= 1 (got in " +
                     std::to_string(options.in) + ", out " + std::to_string(options.out) +
                     ", hidden " + std::to_string(options.hidden) + ", layers " +
                     std::to_string(options.layers) + ")");
  int64_t width = options.in;
  for (int64_t i = 0; i <= options.layers; ++i) {
    const bool last = i == options.layers;
    const int64_t out = last ? options.out : options.hidden;
    nn::Linear l(width, out);
    nn::init::orthogonal_(l->weight, last ? options.output_gain : options.hidden_gain);
    nn::init::zeros_(l->bias);
    linears_.push_back(register_module(std::to_string(i), l));
    width = out;
  }
}

Tensor MlpImpl::forward(const Tensor& x) const {
  std::vector<Tensor> unused;
  return forward(x, unused);
}

Tensor MlpImpl::forward(const Tensor& x, std::vector<Tensor>& inputs) const {
  inputs.clear();
  Tensor h = x;
  for (size_t i = 0; i < linears_.size(); ++i) {
    inputs.push_back(h);
    h = linears_[i]->forward(h);
    // Materialise the activation (see the header): the next matmul then reads it instead of
    // recomputing tanh per output column.
    if (i + 1 < linears_.size()) h = h.tanh().contiguous();
  }
  return h;
}

std::vector<Tensor> MlpImpl::backward(const std::vector<Tensor>& inputs,
                                      const Tensor& grad_out) const {
  if (inputs.size() != linears_.size())
    throw ValueError("Mlp::backward: expected " + std::to_string(linears_.size()) +
                     " layer inputs, got " + std::to_string(inputs.size()));
  NoGradGuard no_grad;
  std::vector<Tensor> grads(2 * linears_.size());
  Tensor dy = grad_out.contiguous();  // dL/d(output pre-activation) = dL/d(output)
  for (size_t k = linears_.size(); k-- > 0;) {
    const Tensor& x = inputs[k];
    grads[2 * k] = dy.t().matmul(x);  // dW = dy^T x   [out, in]
    grads[2 * k + 1] = dy.sum({0});   // db = sum over rows
    if (k == 0) break;
    // x = tanh(y_prev): dL/dy_prev = (dy W) * (1 - x^2).
    Tensor g = dy.matmul(linears_[k]->weight);
    dy = (g * (1.0 - x.square())).contiguous();
  }
  return grads;
}

}  // namespace ember::rl

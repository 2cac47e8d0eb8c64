#include "ember/rl/mlp.h"

#include <string>

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
  Tensor h = x;
  for (size_t i = 0; i < linears_.size(); ++i) {
    h = linears_[i]->forward(h);
    // Materialise the activation (see the header): the next matmul then reads it instead of
    // recomputing tanh per output column.
    if (i + 1 < linears_.size()) h = h.tanh().contiguous();
  }
  return h;
}

}  // namespace ember::rl

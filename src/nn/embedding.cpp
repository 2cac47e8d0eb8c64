// Embedding (include/ember/nn/embedding.h).
#include "ember/nn/embedding.h"

#include <string>

#include "ember/grad_mode.h"
#include "ember/indexing.h"
#include "ember/nn/init.h"

namespace ember::nn {

EmbeddingImpl::EmbeddingImpl(EmbeddingOptions o) : options(std::move(o)) {
  const int64_t n = options.num_embeddings(), d = options.embedding_dim();
  if (n <= 0 || d <= 0)
    throw ValueError("Embedding: num_embeddings and embedding_dim must be positive, got " +
                     std::to_string(n) + " and " + std::to_string(d));
  if (auto p = options.padding_idx()) {
    if (*p < -n || *p >= n)
      throw ValueError("Embedding: padding_idx " + std::to_string(*p) + " is outside [-" +
                       std::to_string(n) + ", " + std::to_string(n) + ")");
    options.padding_idx(*p < 0 ? *p + n : *p);
  }
  weight = register_parameter("weight", zeros({n, d}));
  init::normal_(weight);
  if (auto p = options.padding_idx()) {
    NoGradGuard no_grad;
    weight.copy_(where(arange(n).unsqueeze(1) != *p, weight, Scalar(0)));
    weight.realize();
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  return embedding(weight, indices, options.padding_idx().value_or(-1));
}

}  // namespace ember::nn

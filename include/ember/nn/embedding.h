// ember/nn/embedding.h — Embedding (libtorch's module: options, the parameter "weight",
// initialisation N(0, 1) with the padding row zeroed). The lookup is ember::embedding
// (ember/indexing.h: shapes and errors).
#pragma once
#include <optional>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  /// The row that gets no gradient (and starts at zero); negative counts from the end.
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
};

/// indices (int64 or int32, any shape) -> [*indices.shape, embedding_dim]. ValueError for
/// non-positive sizes or a padding_idx outside [-num_embeddings, num_embeddings).
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(EmbeddingOptions options);
  Tensor forward(const Tensor& indices) const;
  EmbeddingOptions options;
  Tensor weight;  // [num_embeddings, embedding_dim]
};
EMBER_MODULE(Embedding);

}  // namespace ember::nn

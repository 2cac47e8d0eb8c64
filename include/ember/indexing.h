// ember/indexing.h — selecting and scattering along a dim by int64 indices (libtorch's
// torch::index_select, Tensor::scatter, scatter_add, scatter_reduce, torch::embedding,
// torch::one_hot: names, argument orders, semantics). Tensor::gather is in ember/tensor.h.
//
// Compositions: an index is compared with arange(size) (a one-hot mask over the dim) and the mask
// selects or sums; no new primitive. Cost: index elements x dim size per selected row, so
// selecting from a long dim (a large vocabulary) is slow; the values are exact.
//
// Indices must lie in [0, size) of the dim they index (IndexError otherwise; read eagerly, as
// gather does). scatter: index.size(d) <= src.size(d) for every d and <= self.size(d) for
// d != dim (ShapeError otherwise); out = self with out[..., index[i], ...] = src[i] along dim
// (index and src positions beyond index's shape are unused). A position named by several indices
// gets one of their values (libtorch leaves which undefined; ember sums them, which is one of
// them only when they are equal). scatter_add adds every src value at its index;
// scatter_reduce combines self's value with all src values at an index by "sum", "prod", "amax"
// or "amin" (include_self = true).
#pragma once
#include <string>

#include "ember/tensor.h"

namespace ember {

/// The slices of `self` at `index` (1-d int64) along dim: dim's size becomes index.numel().
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
/// reduce: "sum", "prod", "amax" or "amin" (ValueError otherwise).
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce);

/// The rows of weight [num_embeddings, embedding_dim] at indices (int64 or int32, any shape):
/// [*indices.shape, embedding_dim] (index_select along dim 0). The row at padding_idx gets no
/// gradient (a negative padding_idx names none, as aten's). IndexError for an index outside
/// [0, num_embeddings); ShapeError for a weight that is not 2-d; DTypeError for other index types.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
/// int64 [*self.shape, num_classes] with 1 at each value of self (int64) and 0 elsewhere;
/// num_classes = -1 takes max(self) + 1 (read from the data). ValueError for a negative value, a
/// value >= num_classes, or an empty self without num_classes; DTypeError for a non-int64 self.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

}  // namespace ember

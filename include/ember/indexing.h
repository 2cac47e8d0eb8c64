// ember/indexing.h — selecting and scattering along a dim by int64 indices (libtorch's
// torch::index_select, Tensor::scatter, scatter_add, scatter_reduce: names, argument orders,
// semantics). Tensor::gather is in ember/tensor.h.
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

}  // namespace ember

// ember/shape_ops.h — ops that repeat or mask elements by position (libtorch's torch::tile,
// torch::tril, torch::triu: names, argument orders, semantics), and Einstein summation
// (torch::einsum). Views, masks and the matrix product; no new primitive.
#pragma once
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// self repeated reps[i] times along each dim (reps shorter than the rank counts from the last
/// dim; longer adds leading dims). ValueError for a negative repeat.
Tensor tile(const Tensor& self, IntList reps);
/// The lower (tril) or upper (triu) triangle of the last two dims, from `diagonal` (0: the main
/// diagonal, > 0 above it, < 0 below); the rest zero. ShapeError for fewer than 2 dims.
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
/// Einstein summation over letters a-z, A-Z, with "..." for broadcast dims and an optional
/// "->output" (default: the letters that appear once, in alphabetical order, after "...").
/// Operands are contracted pairwise, left to right, each pair as one batched matrix product.
/// ValueError for a malformed equation, ShapeError for sizes that disagree.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ember

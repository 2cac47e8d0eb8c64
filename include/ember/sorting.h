// ember/sorting.h — top-k and sorting along a dim (libtorch's torch::topk, torch::sort,
// torch::argsort: names, argument orders, semantics), and the cumulative sum (torch::cumsum).
//
// Compositions: each element's rank along the dim is the number of elements ahead of it (larger,
// or equal with a smaller index: a stable order); output position r then takes the element of
// rank r through a one-hot mask. NaN sorts above every number (as libtorch). Cost: size^2
// comparisons per sorted row, fine for the short rows of top-k and small sorts; the values are
// exact. Gradients flow to the selected elements.
// cumsum adds shifted copies in ceil(log2 size) steps (Hillis & Steele, "Data parallel
// algorithms", CACM 1986), each materialised once; integers and bools sum as int64.
// Errors: IndexError for a bad dim, ValueError for k outside [0, size].
#pragma once
#include <tuple>

#include "ember/tensor.h"

namespace ember {

/// (values, indices) of the k largest (or smallest) elements along dim, in order when sorted
/// (always sorted here; libtorch's sorted = false allows any order). Ties: the lower index first.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// (values, indices) sorted along dim, ascending unless descending; stable.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
/// Running sums along dim.
Tensor cumsum(const Tensor& self, int64_t dim);

}  // namespace ember

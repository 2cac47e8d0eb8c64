// topk / sort by ranks, cumsum by log-step shifted sums (include/ember/sorting.h).
#include "ember/sorting.h"

#include <string>

#include "tensor/tensor_impl.h"

namespace ember {

namespace {

// Elements in the order wanted: a before b when a > b (largest) or a < b; NaN first (largest) or
// last. Ties keep the index order.
Tensor ahead(const Tensor& a, const Tensor& b, bool largest) {
  if (!a.is_floating_point()) return largest ? a > b : a < b;
  Tensor an = a != a, bn = b != b;
  Tensor cmp = largest ? (a > b).logical_or(an.logical_and(bn.logical_not()))
                       : (a < b).logical_or(bn.logical_and(an.logical_not()));
  return cmp;
}
Tensor same(const Tensor& a, const Tensor& b) {
  if (!a.is_floating_point()) return a == b;
  return (a == b).logical_or((a != a).logical_and(b != b));
}

// The first k of x [..., n] in order: (values, indices) [..., k].
std::tuple<Tensor, Tensor> ranked(const Tensor& x, int64_t k, bool largest) {
  const int64_t n = x.size(-1);
  Tensor xi = x.detach().unsqueeze(-1), xj = x.detach().unsqueeze(-2);  // [..., n, 1], [..., 1, n]
  Tensor i = arange(n).unsqueeze(-1), j = arange(n);
  // rank_i = #{j : x_j ahead of x_i, or equal with j < i}
  Tensor before = ahead(xj, xi, largest).logical_or(same(xj, xi).logical_and(j < i));
  Tensor rank = before.to(kInt64).sum({-1});                   // [..., n]
  Tensor sel = rank.unsqueeze(-2) == arange(k).unsqueeze(-1);  // [..., k, n]
  Tensor values = where(sel, x.unsqueeze(-2), Scalar(0)).sum({-1}, false, x.dtype());
  Tensor indices = where(sel, j, Scalar(0)).sum({-1});
  return {values, indices};
}

}  // namespace

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
  const int64_t d = detail::wrap_dim(dim, self.dim(), "topk");
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self.transpose(d, -1);
  if (k < 0 || k > x.size(-1))
    throw ValueError("topk: k " + std::to_string(k) + " is out of range for a dim of size " +
                     std::to_string(x.size(-1)));
  auto [v, i] = ranked(x, k, largest);
  if (self.dim() == 0) return {v.reshape({}), i.reshape({})};
  return {v.transpose(d, -1), i.transpose(d, -1)};
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  const int64_t d = detail::wrap_dim(dim, self.dim(), "sort");
  return topk(self, self.dim() == 0 ? 1 : self.size(d), d, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return std::get<1>(sort(self, dim, descending));
}

Tensor cumsum(const Tensor& self, int64_t dim) {
  const int64_t d = detail::wrap_dim(dim, self.dim(), "cumsum");
  Tensor x = self.is_floating_point() ? self : self.to(kInt64);
  if (x.dim() == 0) return x;
  const int64_t n = x.size(d);
  for (int64_t shift = 1; shift < n; shift *= 2) {
    // x[i] += x[i - shift]: the dim shifted right by `shift`, zeros in front.
    IntList p(2 * static_cast<size_t>(x.dim() - d), 0);
    p[p.size() - 2] = shift;
    p[p.size() - 1] = -shift;
    x = (x + constant_pad_nd(x, p)).contiguous();
  }
  return x;
}

}  // namespace ember

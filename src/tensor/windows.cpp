// Sliding windows from views: windows that do not overlap (size <= step) are the dim viewed as
// [count, step] and cut to `size`; overlapping ones repeat the dim's elements `r` times in one
// copy, view the copy as rows of length S + 1 — row j then starts at element j (the repeat of
// S elements shifts each row by one) — and take every step-th column: no gather, no mask.
#include <numeric>
#include <string>

#include "ember/convolution.h"
#include "tensor/windows.h"

namespace ember {

namespace {

// Windows along the last dim: [..., S] -> [..., O, size].
Tensor windows_last(const Tensor& x, int64_t size, int64_t step) {
  const int64_t S = x.size(-1);
  const int64_t O = (S - size) / step + 1;
  Shape lead(x.sizes().begin(), x.sizes().end() - 1);
  auto with = [&](std::initializer_list<int64_t> tail) {
    Shape s = lead;
    s.insert(s.end(), tail);
    return s;
  };
  if (size <= step) {  // disjoint windows: a view
    Tensor y = O * step >= S ? constant_pad_nd(x, {0, O * step - S}) : x.narrow(-1, 0, O * step);
    return y.reshape(with({O, step})).narrow(-1, 0, size);
  }
  // r copies of the row, viewed as `size` rows of S + 1: row j, column c is x[(j + c) mod S],
  // which is x[j + c] for the columns c = o * step used (j + o * step <= S - 1).
  const int64_t need = size * (S + 1), r = (need + S - 1) / S;
  Tensor rep = x.unsqueeze(-2).expand(with({r, S})).contiguous().reshape(with({r * S}));
  Tensor rows = rep.narrow(-1, 0, need).reshape(with({size, S + 1}));
  Tensor cols = rows.slice(-1, 0, (O - 1) * step + 1, step);  // [..., size, O]
  return cols.transpose(-1, -2);
}

}  // namespace

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  if (t.dim() == 0) {
    if (size > 1 || size < 0)
      throw ShapeError("unfold: size " + std::to_string(size) + " of a 0-d tensor");
    return t.unsqueeze(0);
  }
  const int64_t d = dim < 0 ? dim + t.dim() : dim;
  if (d < 0 || d >= t.dim())
    throw IndexError("unfold: dim " + std::to_string(dim) + " out of range for " +
                     std::to_string(t.dim()) + " dims");
  if (step <= 0) throw ValueError("unfold: step must be positive, got " + std::to_string(step));
  if (size < 0 || size > t.size(d))
    throw ShapeError("unfold: size " + std::to_string(size) + " exceeds dim " + std::to_string(d) +
                     "'s size " + std::to_string(t.size(d)));
  if (size == 0) throw ValueError("unfold: size must be positive");
  Tensor w = windows_last(t.transpose(d, -1), size, step);  // [..., O, size] with d's slot last
  // Back to t's order: O where d was, the window last.
  std::vector<int64_t> order(static_cast<size_t>(w.dim()));
  std::iota(order.begin(), order.end(), 0);
  const int64_t last = t.dim() - 1;
  std::swap(order[d], order[last]);  // undo the transpose on the leading dims (O sits at `last`)
  return w.permute(order);
}

namespace detail {

IntList per_dim(const IntList& v, size_t n, const char* what, int64_t min_value) {
  IntList r = v.size() == 1 ? IntList(n, v[0]) : v;
  if (r.size() != n)
    throw ValueError(std::string(what) + " needs 1 or " + std::to_string(n) + " values, got " +
                     std::to_string(v.size()));
  for (int64_t x : r)
    if (x < min_value)
      throw ValueError(std::string(what) + " must be >= " + std::to_string(min_value) + ", got " +
                       std::to_string(x));
  return r;
}

Tensor spatial_windows(const Tensor& x, const IntList& kernel, const IntList& stride,
                       const IntList& dilation) {
  const int64_t n = static_cast<int64_t>(kernel.size()), first = x.dim() - n;
  Tensor w = x;
  for (int64_t i = 0; i < n; i++) {
    const int64_t span = dilation[i] * (kernel[i] - 1) + 1, S = x.size(first + i);
    if (span > S)
      throw ShapeError("a window of " + std::to_string(span) + " elements (kernel " +
                       std::to_string(kernel[i]) + ", dilation " + std::to_string(dilation[i]) +
                       ") does not fit a dim of " + std::to_string(S));
    w = unfold(w, first + i, span, stride[i]);  // appends the window dim
    if (dilation[i] > 1) w = w.slice(-1, 0, span, dilation[i]);
  }
  return w;
}

}  // namespace detail
}  // namespace ember

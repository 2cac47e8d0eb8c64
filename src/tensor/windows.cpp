// Sliding windows from views. Windows that do not overlap (size <= step) are the dim viewed as
// [count, step] and cut to `size`. Overlapping windows with step 1 repeat the dim's elements `r`
// times in one copy and view the copy as rows of length S + 1: row j then starts at element j
// (each repeat of S elements shifts the next row by one), so column o of row j is x[o + j]. Other
// steps and dilations are reduced to those two cases first, so that the copy holds about
// size * S / step elements, not size * S:
//   - only elements at multiples of g = gcd(step, dilation) are read: take them (a strided view);
//   - step s > 1, dilation 1: element o s + j is x2[o + q, r] for j = q s + r with the dim viewed
//     as x2 [S / s, s]: windows of ceil(size / s) with step 1 along x2's first dim;
//   - step 1, dilation d > 1: element o + j d, with o = p d + t, is x2[p + j, t] for the dim viewed
//     as x2 [S / d, d]: windows of `size` with step 1 along x2's first dim, then (p, t) -> o.
// Anything else (coprime step and dilation both above 1) takes the undilated windows of the
// span and keeps every dilation-th element.
#include <numeric>
#include <string>

#include "ember/convolution.h"
#include "tensor/windows.h"

namespace ember {

namespace {

Shape with_tail(const Tensor& x, int64_t drop, std::initializer_list<int64_t> tail) {
  Shape s(x.sizes().begin(), x.sizes().end() - drop);
  s.insert(s.end(), tail);
  return s;
}

// x's last dim padded (zeros) or cut to n elements.
Tensor fit_last(const Tensor& x, int64_t n) {
  const int64_t S = x.size(-1);
  return n >= S ? constant_pad_nd(x, {0, n - S}) : x.narrow(-1, 0, n);
}

// Windows along the last dim: [..., S] -> [..., O, size], element [o, j] = x[o step + j dil].
Tensor windows_last(const Tensor& x, int64_t size, int64_t step, int64_t dil) {
  const int64_t S = x.size(-1), span = dil * (size - 1) + 1;
  const int64_t O = (S - span) / step + 1;
  if (size == 1) return x.slice(-1, 0, (O - 1) * step + 1, step).unsqueeze(-1);
  const int64_t g = std::gcd(step, dil);
  if (g > 1) return windows_last(x.slice(-1, 0, S, g), size, step / g, dil / g);
  if (dil == 1 && size <= step)  // disjoint windows: a view
    return fit_last(x, O * step).reshape(with_tail(x, 1, {O, step})).narrow(-1, 0, size);
  if (dil == 1 && step == 1) {
    const int64_t need = size * (S + 1), r = (need + S - 1) / S;
    Tensor rep = x.unsqueeze(-2).expand(with_tail(x, 1, {r, S})).contiguous();
    Tensor rows = rep.reshape(with_tail(x, 1, {r * S})).narrow(-1, 0, need);
    return rows.reshape(with_tail(x, 1, {size, S + 1})).narrow(-1, 0, O).transpose(-1, -2);
  }
  if (dil == 1) {  // step > 1: phases of the step
    const int64_t q = (size + step - 1) / step, m = O - 1 + q;
    Tensor x2 = fit_last(x, m * step).reshape(with_tail(x, 1, {m, step}));
    Tensor w = windows_last(x2.transpose(-1, -2), q, 1, 1);  // [..., step, O, q]
    const int64_t r = w.dim();
    std::vector<int64_t> order(static_cast<size_t>(r));
    std::iota(order.begin(), order.end(), 0);
    order[r - 3] = r - 2, order[r - 2] = r - 1, order[r - 1] = r - 3;  // [..., O, q, step]
    return w.permute(order).reshape(with_tail(x, 1, {O, q * step})).narrow(-1, 0, size);
  }
  if (step == 1) {  // dilation > 1: phases of the dilation
    const int64_t p = (O + dil - 1) / dil, m = p - 1 + size;
    Tensor x2 = fit_last(x, m * dil).reshape(with_tail(x, 1, {m, dil}));
    Tensor w = windows_last(x2.transpose(-1, -2), size, 1, 1);  // [..., dil, p, size]
    return w.transpose(-3, -2).reshape(with_tail(x, 1, {p * dil, size})).narrow(-2, 0, O);
  }
  return windows_last(x, span, step, 1).slice(-1, 0, span, dil);
}

}  // namespace

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step) {
  return unfold(t, dim, size, step, 1);
}

Tensor unfold(const Tensor& t, int64_t dim, int64_t size, int64_t step, int64_t dilation) {
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
  if (dilation <= 0)
    throw ValueError("unfold: dilation must be positive, got " + std::to_string(dilation));
  if (size <= 0) throw ValueError("unfold: size must be positive, got " + std::to_string(size));
  if (t.size(d) == 0 || size - 1 > (t.size(d) - 1) / dilation)  // span dilation (size - 1) + 1
    throw ShapeError("unfold: a window of " + std::to_string(size) + " (dilation " +
                     std::to_string(dilation) + ") exceeds dim " + std::to_string(d) + "'s size " +
                     std::to_string(t.size(d)));
  Tensor w = windows_last(t.transpose(d, -1), size, step, dilation);  // d's slot last
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
    w = unfold(w, first + i, kernel[i], stride[i], dilation[i]);  // appends the window dim
  }
  return w;
}

}  // namespace detail
}  // namespace ember

// Pooling as reductions over the windows of the padded input, adaptive pooling as products with
// window matrices (include/ember/pooling.h).
#include "ember/pooling.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "ember/support/shape_str.h"
#include "tensor/windows.h"

namespace ember {

namespace {

struct Geometry {
  IntList kernel, stride, padding, dilation, extra;  // extra: ceil_mode's right padding
  Shape out;                                         // pooled sizes
};

Geometry geometry(const Tensor& x, int64_t n, IntList kernel, IntList stride, IntList padding,
                  IntList dilation, bool ceil_mode, const char* name) {
  const size_t ns = static_cast<size_t>(n);
  if (x.dim() != n + 1 && x.dim() != n + 2)
    throw ShapeError(std::string(name) + ": expected a " + std::to_string(n + 1) + "-d or " +
                     std::to_string(n + 2) + "-d input, got " + support::shape_str(x.sizes()));
  Geometry g;
  g.kernel = detail::per_dim(kernel, ns, name, 1);
  g.stride = stride.empty() ? g.kernel : detail::per_dim(stride, ns, name, 1);
  g.padding = detail::per_dim(padding, ns, name, 0);
  g.dilation = detail::per_dim(dilation, ns, name, 1);
  for (size_t i = 0; i < ns; i++) {
    if (g.padding[i] > g.kernel[i] / 2)
      throw ValueError(std::string(name) + ": padding " + std::to_string(g.padding[i]) +
                       " must be at most half the kernel size " + std::to_string(g.kernel[i]));
    const int64_t S = x.size(x.dim() - n + static_cast<int64_t>(i));
    const int64_t span = g.dilation[i] * (g.kernel[i] - 1) + 1, s = g.stride[i];
    const int64_t room = S + 2 * g.padding[i] - span;
    if (room < 0)
      throw ShapeError(std::string(name) + ": a window of " + std::to_string(span) +
                       " does not fit the padded size " + std::to_string(S + 2 * g.padding[i]));
    int64_t O = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
    if (ceil_mode && (O - 1) * s >= S + g.padding[i]) O--;
    g.out.push_back(O);
    g.extra.push_back(std::max<int64_t>(0, (O - 1) * s + span - (S + 2 * g.padding[i])));
  }
  return g;
}

// (before, after) pairs from the last dim for the pooled dims.
IntList pads(const Geometry& g, bool with_extra) {
  IntList p;
  for (size_t i = g.kernel.size(); i-- > 0;) {
    p.push_back(g.padding[i]);
    p.push_back(g.padding[i] + (with_extra ? g.extra[i] : 0));
  }
  return p;
}

std::vector<int64_t> last_dims(const Tensor& t, int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = t.dim() - n; i < t.dim(); i++) d.push_back(i);
  return d;
}

Scalar lowest(ScalarType t) {
  if (is_floating_point(t)) return -std::numeric_limits<double>::infinity();
  if (is_unsigned(t)) return 0;
  return t == kInt64 ? std::numeric_limits<int64_t>::min()
                     : -(int64_t{1} << (element_size(t) * 8 - 1));
}

// At most this many taps take the strided-view path of max_pool (one ALU op per tap and output).
constexpr int64_t kMaxTaps = 64;

// The maximum over the taps of the window, each tap a strided view of the padded input: one
// elementwise kernel, where the windows would take several copies of the input per strided dim.
// A tap's view of a strided dim splits it into [O, stride], which only a contiguous buffer whose
// size covers O strides from the last tap's start expresses: where a strided dim is padded (or
// too short for that), the padded input is copied once first. Taps combine in window order.
Tensor tap_max(const Tensor& x, int64_t n, const Geometry& g) {
  const int64_t first = x.dim() - n;
  IntList before_after;  // constant_pad_nd's (before, after) pairs from the last dim
  bool copy = false;
  for (size_t i = g.kernel.size(); i-- > 0;) {
    const int64_t S = x.size(first + static_cast<int64_t>(i)), p = g.padding[i];
    const int64_t reach = g.dilation[i] * (g.kernel[i] - 1) + g.stride[i] * g.out[i];
    const int64_t after = std::max(p + g.extra[i], reach - S - p);
    copy = copy || (g.stride[i] > 1 && p + after > 0);
    before_after.insert(before_after.end(), {p, after});
  }
  Tensor xp = constant_pad_nd(x, before_after, lowest(x.dtype()));
  if (copy) xp = xp.contiguous();
  Tensor out;
  std::vector<int64_t> tap(static_cast<size_t>(n), 0);
  for (;;) {
    Tensor v = xp;
    for (size_t i = 0; i < tap.size(); i++) {
      const int64_t start = tap[i] * g.dilation[i];
      v = v.slice(first + static_cast<int64_t>(i), start, start + g.out[i] * g.stride[i],
                  g.stride[i]);
    }
    out = out.defined() ? out.maximum(v) : v;
    size_t i = tap.size();  // the next tap, last dim fastest
    while (i-- > 0 && ++tap[i] == g.kernel[i]) tap[i] = 0;
    if (i == static_cast<size_t>(-1)) return out;
  }
}

Tensor max_pool(const Tensor& x, int64_t n, IntList k, IntList s, IntList p, IntList d, bool ceil,
                const char* name) {
  Geometry g = geometry(x, n, k, s, p, d, ceil, name);
  // Without a gradient, strided views; with one, the reduce over window copies, whose gradient
  // rule (RMAX's, ties share) differs from a chain of maximum's.
  const int64_t taps =
      std::accumulate(g.kernel.begin(), g.kernel.end(), int64_t{1}, std::multiplies<int64_t>());
  if (!x.requires_grad() && taps <= kMaxTaps) return tap_max(x, n, g);
  Tensor w = detail::spatial_windows(constant_pad_nd(x, pads(g, true), lowest(x.dtype())), g.kernel,
                                     g.stride, g.dilation);
  return w.amax(last_dims(w, n));
}

Tensor avg_pool(const Tensor& x, int64_t n, IntList k, IntList s, IntList p, bool ceil,
                bool count_include_pad, const char* name) {
  Geometry g = geometry(x, n, k, s, p, {1}, ceil, name);
  Tensor xf = x.is_floating_point() ? x : x.to(kDefaultFloat);
  Tensor w =
      detail::spatial_windows(constant_pad_nd(xf, pads(g, true)), g.kernel, g.stride, g.dilation);
  Tensor sum = w.sum(last_dims(w, n));
  // The divisor per output position: the window's elements inside the padded input (or inside
  // the input alone), never those of ceil_mode's extra padding.
  Shape plane(x.sizes().end() - n, x.sizes().end());
  Tensor mask = ones(plane, xf.dtype());
  IntList extra;
  for (size_t i = g.kernel.size(); i-- > 0;) extra.insert(extra.end(), {0, g.extra[i]});
  mask = count_include_pad ? constant_pad_nd(constant_pad_nd(mask, pads(g, false), 1), extra)
                           : constant_pad_nd(mask, pads(g, true));
  Tensor mw = detail::spatial_windows(mask, g.kernel, g.stride, g.dilation);
  return sum / mw.sum(last_dims(mw, n));
}

}  // namespace

// max_poolNd and avg_poolNd for N = 1, 2, 3: the shared pools over N spatial dims.
#define EMBER_POOL(n)                                                                          \
  Tensor max_pool##n##d(const Tensor& x, IntList k, IntList s, IntList p, IntList d, bool c) { \
    return max_pool(x, n, k, s, p, d, c, "max_pool" #n "d");                                   \
  }                                                                                            \
  Tensor avg_pool##n##d(const Tensor& x, IntList k, IntList s, IntList p, bool c, bool inc) {  \
    return avg_pool(x, n, k, s, p, c, inc, "avg_pool" #n "d");                                 \
  }
EMBER_POOL(1)
EMBER_POOL(2)
EMBER_POOL(3)
#undef EMBER_POOL

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, IntList k, IntList s, IntList p,
                                                   IntList d, bool c) {
  Geometry g = geometry(x, 2, k, s, p, d, c, "max_pool2d_with_indices");
  Tensor w = detail::spatial_windows(constant_pad_nd(x, pads(g, true), lowest(x.dtype())), g.kernel,
                                     g.stride, g.dilation);
  Shape flat(w.sizes().begin(), w.sizes().end() - 2);
  flat.push_back(g.kernel[0] * g.kernel[1]);
  Tensor wf = w.reshape(flat);
  Tensor at = wf.argmax(-1, true);  // first maximum in the window
  // The input position of every window element: the windows of the plane's flat indices.
  const int64_t H = x.size(-2), W = x.size(-1);
  Tensor pos = constant_pad_nd(arange(H * W).reshape({H, W}), pads(g, true), -1);
  Tensor pw = detail::spatial_windows(pos, g.kernel, g.stride, g.dilation)
                  .reshape({g.out[0], g.out[1], g.kernel[0] * g.kernel[1]});
  Tensor hit = arange(g.kernel[0] * g.kernel[1]) == at;
  Tensor index = where(hit, pw, zeros({}, kInt64)).sum({-1});
  return {wf.amax({-1}), index};
}

namespace {

// The mask [S, O] whose column i marks PyTorch's adaptive window i, and the window sizes [O].
std::pair<Tensor, Tensor> adaptive_windows(int64_t S, int64_t O, ScalarType t) {
  std::vector<int64_t> m(static_cast<size_t>(S * O), 0);
  std::vector<double> count(static_cast<size_t>(O));
  for (int64_t i = 0; i < O; i++) {
    const int64_t lo = i * S / O, hi = ((i + 1) * S + O - 1) / O;
    for (int64_t j = lo; j < hi; j++) m[static_cast<size_t>(j * O + i)] = 1;
    count[static_cast<size_t>(i)] = static_cast<double>(hi - lo);
  }
  return {from_vector(m, Shape{S, O}) != 0, from_vector(count, Shape{O}).to(t)};
}

Tensor adaptive_avg_pool(const Tensor& x, int64_t n, IntList output_size, const char* name) {
  if (x.dim() != n + 1 && x.dim() != n + 2)
    throw ShapeError(std::string(name) + ": expected a " + std::to_string(n + 1) + "-d or " +
                     std::to_string(n + 2) + "-d input, got " + support::shape_str(x.sizes()));
  if (!x.is_floating_point())
    throw DTypeError(std::string(name) + ": expected a floating input, got " +
                     dtype_name(x.dtype()));
  const IntList out = detail::per_dim(output_size, static_cast<size_t>(n), name, 1);
  Tensor y = x;
  // Pool the last dim, then rotate it to the front of the pooled dims; n rotations restore order.
  for (int64_t i = n - 1; i >= 0; i--) {
    const int64_t S = y.size(-1), O = out[static_cast<size_t>(i)];
    if (S == 0)
      throw ShapeError(std::string(name) + ": empty spatial dim in input " +
                       support::shape_str(x.sizes()));
    auto [mask, count] = adaptive_windows(S, O, x.dtype());
    // A select, not a product with the 0/1 matrix: an inf or NaN stays in its own windows.
    y = where(mask, y.unsqueeze(-1), Scalar(0)).sum({-2}) / count;
    std::vector<int64_t> order;
    for (int64_t d = 0; d < y.dim() - n; d++) order.push_back(d);
    order.push_back(y.dim() - 1);
    for (int64_t d = y.dim() - n; d < y.dim() - 1; d++) order.push_back(d);
    y = y.permute(order);
  }
  return y;
}

}  // namespace

Tensor adaptive_avg_pool1d(const Tensor& x, IntList o) {
  return adaptive_avg_pool(x, 1, o, "adaptive_avg_pool1d");
}
Tensor adaptive_avg_pool2d(const Tensor& x, IntList o) {
  return adaptive_avg_pool(x, 2, o, "adaptive_avg_pool2d");
}

}  // namespace ember

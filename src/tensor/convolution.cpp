// Convolutions as im2col + the tiled matrix product; transposed convolutions as convolutions of
// the zero-stuffed input (include/ember/convolution.h).
#include "ember/convolution.h"

#include <numeric>
#include <string>

#include "ember/support/shape_str.h"
#include "tensor/windows.h"

namespace ember {

namespace {

std::string str(const DimVector& s) { return support::shape_str(s); }

// input [N, C, *S] (padded already), weight [OC, C / groups, *k] -> [N, OC, *O].
Tensor correlate(const Tensor& x, const Tensor& w, const IntList& stride, const IntList& dilation,
                 int64_t groups) {
  const int64_t n = w.dim() - 2, N = x.size(0), C = x.size(1), OC = w.size(0);
  const int64_t Cg = C / groups, OCg = OC / groups;
  IntList kernel(w.sizes().begin() + 2, w.sizes().end());
  Tensor win = detail::spatial_windows(x, kernel, stride, dilation);  // [N, C, *O, *k]
  Shape out_spatial(win.sizes().begin() + 2, win.sizes().begin() + 2 + n);
  const int64_t L =
      std::accumulate(out_spatial.begin(), out_spatial.end(), int64_t{1}, std::multiplies<>());
  const int64_t K = std::accumulate(kernel.begin(), kernel.end(), int64_t{1}, std::multiplies<>());
  // [N, C, *O, *k] -> [N, G, Cg, *O, *k] -> [N, G, *O, Cg, *k] -> im2col [N, G, L, Cg * K].
  Shape split = {N, groups, Cg};
  split.insert(split.end(), win.sizes().begin() + 2, win.sizes().end());
  std::vector<int64_t> order = {0, 1};
  for (int64_t i = 0; i < n; i++) order.push_back(3 + i);
  order.push_back(2);
  for (int64_t i = 0; i < n; i++) order.push_back(3 + n + i);
  Tensor cols = win.reshape(split).permute(order).reshape({N, groups, L, Cg * K});
  Tensor wm = w.reshape({groups, OCg, Cg * K});  // [G, OCg, Cg K]
  Tensor y = cols.matmul(wm.transpose(-1, -2));  // [N, G, L, OCg]
  Shape out = {N, OC};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  return y.permute({0, 1, 3, 2}).reshape(out);
}

// Inserts s - 1 zeros between the elements of each of the last n dims.
Tensor stuff_zeros(const Tensor& x, const IntList& stride) {
  const int64_t n = static_cast<int64_t>(stride.size()), first = x.dim() - n;
  Tensor y = x;
  for (int64_t i = 0; i < n; i++) {
    const int64_t s = stride[i], d = first + i, S = y.size(d);
    if (s == 1 || S == 0) continue;
    Tensor u = y.unsqueeze(d + 1);  // [.., S, 1, ..]
    IntList p(2 * static_cast<size_t>(u.dim() - d - 1), 0);
    // constant_pad_nd lists (before, after) from the last dim: dim d + 1 is (dims after it) back.
    p[2 * static_cast<size_t>(u.dim() - d - 2) + 1] = s - 1;
    Shape merged = y.shape();
    merged[d] = S * s;
    y = constant_pad_nd(u, p).reshape(merged).narrow(d, 0, (S - 1) * s + 1);
  }
  return y;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride,
                   IntList padding, IntList dilation, bool transposed, IntList output_padding,
                   int64_t groups) {
  const int64_t n = weight.dim() - 2;
  if (n < 1)
    throw ShapeError("convolution: weight must have at least 3 dims, got " + str(weight.sizes()));
  const bool batched = input.dim() == n + 2;
  if (!batched && input.dim() != n + 1)
    throw ShapeError("convolution: expected a " + std::to_string(n + 1) + "-d or " +
                     std::to_string(n + 2) + "-d input for weight " + str(weight.sizes()) +
                     ", got " + str(input.sizes()));
  const size_t ns = static_cast<size_t>(n);
  stride = detail::per_dim(stride, ns, "convolution: stride", 1);
  padding = detail::per_dim(padding, ns, "convolution: padding", 0);
  dilation = detail::per_dim(dilation, ns, "convolution: dilation", 1);
  output_padding = detail::per_dim(output_padding, ns, "convolution: output_padding", 0);
  if (groups < 1)
    throw ValueError("convolution: groups must be positive, got " + std::to_string(groups));
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t C = x.size(1);
  const int64_t w_in = transposed ? weight.size(0) : weight.size(1) * groups;
  if (C % groups || weight.size(0) % groups || C != w_in)
    throw ShapeError("convolution: input " + str(input.sizes()) + " with " + std::to_string(C) +
                     " channels does not match weight " + str(weight.sizes()) + " and groups " +
                     std::to_string(groups));
  Tensor w = weight;
  IntList pad_lo = padding, pad_hi = padding;
  if (transposed) {
    for (size_t i = 0; i < ns; i++)
      if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
        throw ValueError("convolution: output_padding must be smaller than stride or dilation");
    // [C_in, OCg, *k] -> [G, Cg, OCg, *k] -> [G, OCg, Cg, *k], flipped -> [OC, Cg, *k].
    const int64_t Cg = C / groups, OCg = weight.size(1);
    Shape g = {groups, Cg, OCg};
    g.insert(g.end(), weight.sizes().begin() + 2, weight.sizes().end());
    std::vector<int64_t> spatial(ns);
    std::iota(spatial.begin(), spatial.end(), 3);
    Shape flat = {groups * OCg, Cg};
    flat.insert(flat.end(), weight.sizes().begin() + 2, weight.sizes().end());
    w = weight.reshape(g).transpose(1, 2).flip(spatial).reshape(flat);
    x = stuff_zeros(x, stride);
    for (size_t i = 0; i < ns; i++) {
      const int64_t edge = dilation[i] * (weight.size(2 + i) - 1);
      pad_lo[i] = edge - padding[i];
      pad_hi[i] = edge - padding[i] + output_padding[i];
    }
    stride = IntList(ns, 1);
  } else if (weight.size(0) % groups) {
    throw ShapeError("convolution: weight " + str(weight.sizes()) +
                     " has an output channel count not divisible by groups " +
                     std::to_string(groups));
  }
  IntList p;  // (before, after) from the last dim
  for (size_t i = ns; i-- > 0;) {
    p.push_back(pad_lo[i]);
    p.push_back(pad_hi[i]);
  }
  Tensor y = correlate(constant_pad_nd(x, p), w, stride, dilation, groups);
  if (bias.defined()) {
    if (bias.dim() != 1 || bias.size(0) != y.size(1))
      throw ShapeError("convolution: bias " + str(bias.sizes()) + " does not match " +
                       std::to_string(y.size(1)) + " output channels");
    Shape b = {y.size(1)};
    b.insert(b.end(), ns, 1);
    y = y + bias.reshape(b);
  }
  return batched ? y : y.squeeze(0);
}

#define EMBER_CONV(n)                                                                              \
  Tensor conv##n##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntList stride, \
                    IntList padding, IntList dilation, int64_t groups) {                           \
    if (weight.dim() != n + 2)                                                                     \
      throw ShapeError("conv" #n "d: weight must have " + std::to_string(n + 2) + " dims, got " +  \
                       str(weight.sizes()));                                                       \
    return convolution(input, weight, bias, stride, padding, dilation, false, {0}, groups);        \
  }                                                                                                \
  Tensor conv_transpose##n##d(const Tensor& input, const Tensor& weight, const Tensor& bias,       \
                              IntList stride, IntList padding, IntList output_padding,             \
                              int64_t groups, IntList dilation) {                                  \
    if (weight.dim() != n + 2)                                                                     \
      throw ShapeError("conv_transpose" #n "d: weight must have " + std::to_string(n + 2) +        \
                       " dims, got " + str(weight.sizes()));                                       \
    return convolution(input, weight, bias, stride, padding, dilation, true, output_padding,       \
                       groups);                                                                    \
  }
EMBER_CONV(1)
EMBER_CONV(2)
EMBER_CONV(3)
#undef EMBER_CONV

}  // namespace ember

// Convolution and pooling: Conv, ConvTranspose, MaxPool (with Indices), AveragePool, LpPool and
// their Global forms. ONNX's pads may differ at the two ends of a dim and auto_pad derives them
// (onnx/defs/nn/defs.cc); they are applied as an explicit pad before ember::convolution (unless
// equal at both ends: convolution's padding) or before the windows (ember::unfold) are taken.
#include <cmath>
#include <limits>

#include "common.h"
#include "ember/convolution.h"
#include "ember/pooling.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
namespace {

struct Spatial {
  IntList kernel, stride, dilation, begin, end;  // per spatial dim
};

// kernel from the attribute or the weight; strides, dilations, pads or auto_pad.
Spatial spatial(OpContext& c, const Tensor& x, IntList kernel, bool ceil_mode = false) {
  const size_t n = kernel.size();
  if (x.dim() != static_cast<int64_t>(n) + 2)
    throw ShapeError("input " + support::shape_str(x.sizes()) + " must be [N, C] plus " +
                     std::to_string(n) + " spatial dims");
  Spatial s;
  s.kernel = kernel;
  s.stride = c.attr_ints("strides", IntList(n, 1));
  s.dilation = c.attr_ints("dilations", IntList(n, 1));
  IntList pads = c.attr_ints("pads", IntList(2 * n, 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (s.stride.size() != n || s.dilation.size() != n || pads.size() != 2 * n)
    throw ShapeError("strides, dilations and pads must match " + std::to_string(n) +
                     " spatial dims");
  s.begin.assign(pads.begin(), pads.begin() + n);
  s.end.assign(pads.begin() + n, pads.end());
  for (size_t i = 0; i < n; i++) {
    if (s.stride[i] < 1 || s.dilation[i] < 1 || s.kernel[i] < 1)
      throw ValueError("kernel, strides and dilations must be positive");
    const int64_t S = x.size(2 + static_cast<int64_t>(i)),
                  span = s.dilation[i] * (s.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (S + s.stride[i] - 1) / s.stride[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s.stride[i] + span - S);
      const int64_t small = total / 2;
      s.begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      s.end[i] = total - s.begin[i];
    } else if (auto_pad == "VALID") {
      s.begin[i] = s.end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      throw ValueError("auto_pad '" + auto_pad +
                       "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    }
    if (ceil_mode) {  // output ceil((S + pads - span) / stride) + 1: pad the end to fit the last
                      // window
      const int64_t room = S + s.begin[i] + s.end[i] - span;
      const int64_t out = (room + s.stride[i] - 1) / s.stride[i] + 1;
      s.end[i] +=
          std::max<int64_t>(0, (out - 1) * s.stride[i] + span - (S + s.begin[i] + s.end[i]));
    }
  }
  return s;
}

// (before, after) pairs from the last dim, as constant_pad_nd takes them.
IntList torch_pads(const IntList& begin, const IntList& end) {
  IntList p;
  for (size_t i = begin.size(); i-- > 0;) p.insert(p.end(), {begin[i], end[i]});
  return p;
}

// [N, C, *S] -> [N, C, *O, *k]: windows of each spatial dim (a dilated window is cut from the
// span it covers).
Tensor windows(const Tensor& x, const Spatial& s) {
  Tensor w = x;
  for (size_t i = 0; i < s.kernel.size(); i++) {
    const int64_t span = s.dilation[i] * (s.kernel[i] - 1) + 1, d = 2 + static_cast<int64_t>(i);
    if (span > w.size(d))
      throw ShapeError("a window of " + std::to_string(span) + " does not fit a padded dim of " +
                       std::to_string(w.size(d)));
    w = unfold(w, d, s.kernel[i], s.stride[i], s.dilation[i]);
  }
  return w;
}

std::vector<int64_t> window_dims(const Tensor& w, size_t n) {
  std::vector<int64_t> d;
  for (int64_t i = w.dim() - static_cast<int64_t>(n); i < w.dim(); i++) d.push_back(i);
  return d;
}

IntList weight_kernel(OpContext& c, const Tensor& w) {
  IntList k(w.sizes().begin() + 2, w.sizes().end());
  return c.attr_ints("kernel_shape", k);
}

}  // namespace

std::vector<Tensor> conv(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  if (w.dim() < 3)
    throw ShapeError("weight " + support::shape_str(w.sizes()) + " needs at least 3 dims");
  const Spatial s = spatial(c, x, weight_kernel(c, w));
  const int64_t group = c.attr_int("group", 1);
  const Tensor b = c.has(2) ? c.in(2) : Tensor();
  // Equal ends: convolution's own padding, which its paths place where they read (a depthwise
  // one pads rows of the stride, no copy of a padded view split by the stride first).
  if (s.begin == s.end)
    return one(convolution(x, w, b, s.stride, s.begin, s.dilation, false, {0}, group));
  Tensor xp = constant_pad_nd(x, torch_pads(s.begin, s.end));
  return one(convolution(xp, w, b, s.stride, {0}, s.dilation, false, {0}, group));
}

std::vector<Tensor> conv_transpose(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  if (w.dim() < 3 || x.dim() != w.dim()) throw ShapeError("input and weight ranks do not match");
  const size_t n = static_cast<size_t>(w.dim() - 2);
  const IntList k = weight_kernel(c, w);
  IntList stride = c.attr_ints("strides", IntList(n, 1)),
          dil = c.attr_ints("dilations", IntList(n, 1));
  IntList op = c.attr_ints("output_padding", IntList(n, 0)),
          pads = c.attr_ints("pads", IntList(2 * n, 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  const int64_t group = c.attr_int("group", 1);
  IntList begin(pads.begin(), pads.begin() + n), end(pads.begin() + n, pads.end());
  const bool has_shape = c.has_attr("output_shape");
  IntList out_shape = has_shape ? c.attr_ints("output_shape") : IntList{};
  if (has_shape && out_shape.size() == n + 2)
    out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  for (size_t i = 0; i < n; i++) {
    const int64_t S = x.size(2 + static_cast<int64_t>(i)),
                  full = stride[i] * (S - 1) + op[i] + (k[i] - 1) * dil[i] + 1;
    int64_t total = -1;
    if (has_shape)
      total = full - out_shape.at(i);
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
      total = full - S * stride[i];
    if (total >= 0 || has_shape) {
      // Python's floor division: an output_shape larger than the full output (total < 0) adds
      // zeros at the end.
      const bool upper = auto_pad == "SAME_UPPER";
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      begin[i] = upper ? half : total - half;
      end[i] = total - begin[i];
    } else if (auto_pad == "VALID") {
      begin[i] = end[i] = 0;
    }
  }
  // The full transposed convolution, output_padding zeros at the end, then the pads cropped.
  Tensor y = convolution(x, w, Tensor(), stride, {0}, dil, true, {0}, group);
  IntList crop;
  for (size_t i = n; i-- > 0;) crop.insert(crop.end(), {-begin[i], op[i] - end[i]});
  y = constant_pad_nd(y, crop);
  if (c.has(2)) {
    Shape b(n + 1, 1);
    b[0] = c.in(2).numel();
    y = y + c.in(2).reshape(b);
  }
  return one(y);
}

namespace {

Scalar lowest(ScalarType t) {
  if (is_floating_point(t)) return -std::numeric_limits<double>::infinity();
  if (is_unsigned(t)) return 0;
  if (t == kInt64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (element_size(t) * 8 - 1));
}

}  // namespace

std::vector<Tensor> max_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  const Spatial s = spatial(c, x, c.attr_ints("kernel_shape"), ceil_mode);
  const size_t n = s.kernel.size();
  // At batch 1 a computed x (a Conv's bias and Relu) is stored first, by the product's epilogue
  // in NCHW, where the padded windows would compute it in the pad's copy, reading the product's
  // rows transposed: ResNet-18's stem, its product and bias, relu and pad of 64x112x112 took
  // 3.3 + 1.4-1.6 ms that way, 3.6 + 0.5 ms so (kernels timed alone, avx2). At batch > 1 the
  // product keeps its rows (the permute stays in its consumer), and storing x is one copy more.
  const Tensor xs = x.is_realized() || x.size(0) > 1 ? x : x.contiguous();
  const Tensor xp = constant_pad_nd(xs, torch_pads(s.begin, s.end), lowest(x.dtype()));
  if (!c.wants_output(1) && n <= 3) {
    // ember's pools over the padded input: the maximum of strided views, no window copies.
    c.ignore_attr({"storage_order"});
    auto pool = n == 1 ? max_pool1d : n == 2 ? max_pool2d : max_pool3d;
    return one(pool(xp, s.kernel, s.stride, {0}, s.dilation, false));
  }
  Tensor w = windows(xp, s);
  std::vector<Tensor> out = {w.amax(window_dims(w, n))};
  if (!c.wants_output(1)) {
    c.ignore_attr({"storage_order"});
    return out;
  }
  // Indices: the flat position of each window's first maximum in the whole input, row-major
  // (storage_order 0) or with the spatial dims in column-major order (1).
  const bool col_major = c.attr_int("storage_order", 0) != 0;
  Shape plane(x.sizes().begin() + 2, x.sizes().end());
  int64_t P = 1;
  for (auto d : plane) P *= d;
  Tensor pos = arange(P);
  if (col_major) {
    Shape rev(plane.rbegin(), plane.rend());
    std::vector<int64_t> perm(n);
    for (size_t i = 0; i < n; i++) perm[i] = static_cast<int64_t>(n - 1 - i);
    pos = pos.reshape(rev).permute(perm).contiguous();
  }
  Shape full_plane = {1, 1};
  full_plane.insert(full_plane.end(), plane.begin(), plane.end());
  Tensor pw = windows(constant_pad_nd(pos.reshape(full_plane), torch_pads(s.begin, s.end), -1), s);
  Shape flat(w.sizes().begin(), w.sizes().end() - static_cast<int64_t>(n));
  int64_t K = 1;
  for (auto k : s.kernel) K *= k;
  flat.push_back(K);
  Tensor at = w.reshape(flat).argmax(-1, true);
  Shape pflat(pw.sizes().begin(), pw.sizes().end() - static_cast<int64_t>(n));
  pflat.push_back(K);
  Tensor index = where(arange(K) == at, pw.reshape(pflat), Scalar(0)).sum({-1});
  Shape nc = {x.size(0), x.size(1)};
  nc.insert(nc.end(), n, 1);
  Tensor base = (arange(x.size(0) * x.size(1)) * P).reshape(nc);
  out.push_back(index + base);
  return out;
}

std::vector<Tensor> avg_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0,
             include = c.attr_int("count_include_pad", 0) != 0;
  const Spatial plain = spatial(c, x, c.attr_ints("kernel_shape"), false);
  const Spatial s = spatial(c, x, c.attr_ints("kernel_shape"), ceil_mode);
  const size_t n = s.kernel.size();
  Tensor w = windows(constant_pad_nd(x, torch_pads(s.begin, s.end)), s);
  Tensor sum = w.sum(window_dims(w, n));
  // Divisor: the window's input elements, plus its explicit padding with count_include_pad;
  // never ceil_mode's extra end padding.
  Shape plane = {1, 1};
  plane.insert(plane.end(), x.sizes().begin() + 2, x.sizes().end());
  Tensor mask = ones(plane, x.dtype());
  if (include) {
    mask = constant_pad_nd(mask, torch_pads(plain.begin, plain.end), 1);
    IntList zero(n, 0), extra(n);
    for (size_t i = 0; i < n; i++) extra[i] = s.end[i] - plain.end[i];
    mask = constant_pad_nd(mask, torch_pads(zero, extra));
  } else {
    mask = constant_pad_nd(mask, torch_pads(s.begin, s.end));
  }
  Tensor mw = windows(mask, s);
  return one(sum / mw.sum(window_dims(mw, n)));
}

std::vector<Tensor> lp_pool(OpContext& c) {
  const Tensor& x = c.in(0);
  const double p = static_cast<double>(c.attr_int("p", 2));
  const Spatial s = spatial(c, x, c.attr_ints("kernel_shape"));
  Tensor w = windows(constant_pad_nd(x, torch_pads(s.begin, s.end)), s);
  return one(w.abs().pow(p).sum(window_dims(w, s.kernel.size())).pow(1.0 / p));
}

namespace {

std::vector<int64_t> spatial_dims(const Tensor& x) {
  std::vector<int64_t> d;
  for (int64_t i = 2; i < x.dim(); i++) d.push_back(i);
  return d;
}

}  // namespace

std::vector<Tensor> global_avg(OpContext& c) {
  return one(c.in(0).mean(spatial_dims(c.in(0)), true));
}
std::vector<Tensor> global_max(OpContext& c) {
  return one(c.in(0).amax(spatial_dims(c.in(0)), true));
}
std::vector<Tensor> global_lp(OpContext& c) {
  const double p = static_cast<double>(c.attr_int("p", 2));
  return one(c.in(0).abs().pow(p).sum(spatial_dims(c.in(0)), true).pow(1.0 / p));
}

}  // namespace ember::onnx::ops

// Resize (opsets 10, 11, 13) and Upsample (7, 9). The interpolation is separable: along each dim
// every output element is a weighted sum of a few input elements, whose indices and weights
// depend only on sizes, so they are computed on the host, following the reference implementation
// of ONNX's backend tests (onnx/backend/test/case/node/resize.py: interpolate_1d_with_x and its
// neighbour choice on the edge-padded input). Nearest is an index_select (exact); linear and cubic
// multiply by the [out, in] interpolation matrix along the dim.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "ember/indexing.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
namespace {

struct Mode {
  std::string mode = "nearest", transform = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
};

// The source coordinate of output index x along a dim (input size n, scale s). As the reference,
// the transforms that use the output size take it unrounded, m = s n.
double source(const Mode& md, double x, double s, int64_t n, double roi_lo, double roi_hi) {
  const double m = s * static_cast<double>(n);
  const std::string& t = md.transform;
  if (t == "half_pixel") return (x + 0.5) / s - 0.5;
  if (t == "pytorch_half_pixel") return m > 1 ? (x + 0.5) / s - 0.5 : 0;
  if (t == "align_corners") return m == 1 ? 0 : x * static_cast<double>(n - 1) / (m - 1);
  if (t == "asymmetric") return x / s;
  // tf_half_pixel_for_nn: its name in opset 11's test data.
  if (t == "tf_half_pixel_for_nearest" || t == "tf_half_pixel_for_nn") return (x + 0.5) / s;
  if (t == "tf_crop_and_resize")
    return m > 1 ? roi_lo * (n - 1) + x * (roi_hi - roi_lo) * (n - 1) / (m - 1)
                 : 0.5 * (roi_lo + roi_hi) * (n - 1);
  throw UnsupportedError("coordinate_transformation_mode '" + t + "' is not supported");
}

std::vector<double> coefficients(const Mode& md, double r) {
  if (md.mode == "nearest") {
    if (r == 1) return {0, 1};
    const std::string& n = md.nearest;
    if (n == "round_prefer_floor") return {r <= 0.5 ? 1.0 : 0.0, r > 0.5 ? 1.0 : 0.0};
    if (n == "round_prefer_ceil") return {r < 0.5 ? 1.0 : 0.0, r >= 0.5 ? 1.0 : 0.0};
    if (n == "floor") return {1, 0};
    if (n == "ceil") return {0, 1};
    throw UnsupportedError("nearest_mode '" + n + "' is not supported");
  }
  if (md.mode == "linear") return {1 - r, r};
  if (md.mode == "cubic") {  // Keys' cubic convolution kernel with parameter a
    const double a = md.cubic_a;
    auto w = [a](double d) {
      d = std::abs(d);
      if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
      if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
      return 0.0;
    };
    return {w(r + 1), w(r), w(1 - r), w(2 - r)};
  }
  throw UnsupportedError("mode '" + md.mode + "' is not supported");
}

struct Taps {
  std::vector<std::vector<std::pair<int64_t, double>>> rows;  // per output index
  std::vector<bool> outside;                                  // tf_crop_and_resize: extrapolate
};

Taps taps(const Mode& md, int64_t n, int64_t m, double s, double roi_lo, double roi_hi) {
  Taps t;
  for (int64_t o = 0; o < m; o++) {
    const double x = source(md, static_cast<double>(o), s, n, roi_lo, roi_hi);
    const double xf = std::floor(x);
    const double r = x == xf ? 1.0 : x - xf;
    std::vector<double> c = coefficients(md, r);
    const int64_t k = static_cast<int64_t>(c.size()), pad = (k + 1) / 2;
    // The k indices of the edge-padded input (length n + 2 pad) nearest to x + pad, ties to the
    // lower one, in increasing order; padded index p reads input clamp(p - pad).
    std::vector<int64_t> cand(static_cast<size_t>(n + 2 * pad));
    for (int64_t p = 0; p < n + 2 * pad; p++) cand[p] = p;
    const double xp = x + pad;
    std::stable_sort(cand.begin(), cand.end(),
                     [xp](int64_t a, int64_t b) { return std::abs(xp - a) < std::abs(xp - b); });
    cand.resize(static_cast<size_t>(std::min<int64_t>(k, n + 2 * pad)));
    std::sort(cand.begin(), cand.end());
    std::vector<std::pair<int64_t, double>> row;
    double total = 0;
    for (int64_t j = 0; j < static_cast<int64_t>(cand.size()); j++) {
      const int64_t idx = cand[j] - pad;
      double w = c[j];
      if (md.exclude_outside && (idx < 0 || idx >= n)) w = 0;
      total += w;
      row.emplace_back(std::clamp<int64_t>(idx, 0, n - 1), w);
    }
    if (md.exclude_outside && total != 0)
      for (auto& [i, w] : row) w /= total;
    t.rows.push_back(row);
    t.outside.push_back(md.transform == "tf_crop_and_resize" && (x < 0 || x > n - 1));
  }
  return t;
}

// x resized along dim d to m elements.
Tensor resize_dim(const Tensor& x, int64_t d, int64_t m, double s, const Mode& md, double lo,
                  double hi) {
  const int64_t n = x.size(d);
  const Taps t = taps(md, n, m, s, lo, hi);
  const bool any_out = std::find(t.outside.begin(), t.outside.end(), true) != t.outside.end();
  Tensor y;
  if (md.mode == "nearest") {
    std::vector<int64_t> pick;
    for (const auto& row : t.rows) {
      int64_t at = row[0].first;
      for (const auto& [i, w] : row)
        if (w == 1) at = i;
      pick.push_back(at);
    }
    bool identity = m == n;
    for (int64_t o = 0; o < m && identity; o++) identity = pick[o] == o;
    if (identity && !any_out) return x;
    y = index_select(x, d, from_vector(pick, Shape{m}));
  } else {
    std::vector<double> w(static_cast<size_t>(m * n), 0.0);
    for (int64_t o = 0; o < m; o++)
      for (const auto& [i, c] : t.rows[o]) w[o * n + i] += c;
    bool identity = m == n;
    for (int64_t o = 0; o < m && identity; o++)
      for (int64_t i = 0; i < n && identity; i++) identity = w[o * n + i] == (o == i ? 1.0 : 0.0);
    if (identity && !any_out) return x;
    const ScalarType ft = x.is_floating_point() ? x.dtype() : kFloat32;
    Tensor mat = from_vector(w, Shape{m, n}).to(ft);
    y = x.to(ft).transpose(d, -1).matmul(mat.t()).transpose(d, -1);
  }
  if (any_out) {
    std::vector<uint8_t> out(t.outside.begin(), t.outside.end());
    Shape s(static_cast<size_t>(x.dim()), 1);
    s[d] = m;
    Tensor mask = from_vector(out, Shape{m}).to(kBool).reshape(s);
    y = where(mask, full({}, md.extrapolation, y.dtype()), y);
  }
  return y.to(x.dtype());
}

Tensor resize(const Tensor& x, const Mode& md, const std::vector<double>& scales,
              const std::vector<int64_t>& sizes, const std::vector<double>& roi) {
  const int64_t r = x.dim();
  Tensor y = x;
  for (int64_t d = 0; d < r; d++) {
    double s = scales.empty() ? 0 : scales[d];
    int64_t m = sizes.empty() ? static_cast<int64_t>(std::floor(x.size(d) * s)) : sizes[d];
    if (!sizes.empty()) s = static_cast<double>(m) / static_cast<double>(x.size(d));
    const double lo = roi.empty() ? 0 : roi[d], hi = roi.empty() ? 1 : roi[r + d];
    y = resize_dim(y, d, m, s, md, lo, hi);
  }
  return y;
}

}  // namespace

std::vector<Tensor> resize_op(OpContext& c) {
  const Tensor& x = c.in(0);
  Mode md;
  md.mode = c.attr_string("mode", "nearest");
  md.transform =
      c.attr_string("coordinate_transformation_mode", c.opset < 11 ? "asymmetric" : "half_pixel");
  md.nearest = c.attr_string("nearest_mode", c.opset < 11 ? "floor" : "round_prefer_floor");
  md.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
  md.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  md.extrapolation = c.attr_float("extrapolation_value", 0.0);
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  if (c.opset < 11) {
    scales = c.floats_of(1);
  } else {
    if (c.has(1) && c.in(1).numel()) roi = c.floats_of(1);
    if (c.has(2) && c.in(2).numel()) scales = c.floats_of(2);
    if (c.has(3) && c.in(3).numel()) sizes = c.ints_of(3);
  }
  const size_t r = static_cast<size_t>(x.dim());
  if ((scales.empty() == sizes.empty()) || (!scales.empty() && scales.size() != r) ||
      (!sizes.empty() && sizes.size() != r) || (!roi.empty() && roi.size() != 2 * r))
    throw ShapeError(
        "Resize needs scales or sizes (one per dim, exactly one of them) and roi of 2 per dim");
  return one(resize(x, md, scales, sizes, roi));
}

std::vector<Tensor> upsample(OpContext& c) {
  Mode md;
  md.mode = c.attr_string("mode", "nearest");
  if (md.mode == "bilinear") md.mode = "linear";
  md.transform = "asymmetric";
  md.nearest = "floor";
  const std::vector<double> scales = c.opset < 9 ? c.attr_floats("scales") : c.floats_of(1);
  if (static_cast<int64_t>(scales.size()) != c.in(0).dim())
    throw ShapeError("scales must have one entry per dim");
  return one(resize(c.in(0), md, scales, {}, {}));
}

}  // namespace ember::onnx::ops

// GridSample-16: X [N, C, H, W] sampled at the normalised points of grid [N, Ho, Wo, 2] (x, y in
// [-1, 1]) by nearest, bilinear or bicubic interpolation, with zeros, border or reflection
// padding. The specification follows PyTorch's grid_sample: points are unnormalised with or
// without align_corners, padding maps a coordinate (bicubic: each tap's coordinate) into the
// input, and taps outside it read 0. Each tap is a gather of the input's flattened planes.
#include <cmath>

#include "common.h"

namespace ember::onnx::ops {
namespace {

struct Sampler {
  Tensor x;  // [N, C, H * W]
  int64_t N, C, H, W, Ho, Wo;
  std::string padding;
  bool align;
};

Tensor unnormalize(const Tensor& g, int64_t size, bool align) {
  const double s = static_cast<double>(size);
  return align ? (g + 1) / 2 * (s - 1) : ((g + 1) * s - 1) / 2;
}

// PyTorch's reflect_coordinates: x reflected into [twice_low / 2, twice_high / 2].
Tensor reflect(const Tensor& x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  Tensor in = (x - lo).abs();
  Tensor flips = (in / span).floor();
  Tensor extra = in - flips * span;
  Tensor even = (flips - (flips / 2).floor() * 2) == 0;
  return where(even, extra + lo, (extra * -1 + span) + lo);
}

Tensor pad_coordinate(const Sampler& s, const Tensor& c, int64_t size) {
  const double hi = static_cast<double>(size - 1);
  if (s.padding == "border") return c.clamp(0.0, hi);
  if (s.padding == "reflection") {
    Tensor r =
        s.align ? reflect(c, 0, 2.0 * hi) : reflect(c, -1, 2.0 * static_cast<double>(size) - 1);
    return r.clamp(0.0, hi);
  }
  return c;
}

// The input at integer-valued coordinates ix, iy [N, Ho, Wo]; 0 outside the input.
Tensor tap(const Sampler& s, const Tensor& ix, const Tensor& iy) {
  Tensor inside = (ix >= 0)
                      .logical_and(ix < static_cast<double>(s.W))
                      .logical_and(iy >= 0)
                      .logical_and(iy < static_cast<double>(s.H));
  Tensor cx = ix.clamp(0.0, static_cast<double>(s.W - 1)).to(kInt64);
  Tensor cy = iy.clamp(0.0, static_cast<double>(s.H - 1)).to(kInt64);
  Tensor idx = (cy * s.W + cx).reshape({s.N, 1, s.Ho * s.Wo}).expand({s.N, s.C, s.Ho * s.Wo});
  Tensor v = s.x.gather(2, idx).reshape({s.N, s.C, s.Ho, s.Wo});
  return where(inside.unsqueeze(1), v, Scalar(0));
}

// Keys' cubic convolution weights for the taps at -1, 0, 1, 2 from t in [0, 1) (A = -0.75).
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double A = -0.75;
  auto near = [A](const Tensor& d) { return ((d * (A + 2) - (A + 3)) * d * d) + 1; };
  auto far = [A](const Tensor& d) { return ((d * A - 5 * A) * d + 8 * A) * d - 4 * A; };
  return {far(t + 1), near(t), near(1.0 - t), far(2.0 - t)};
}

}  // namespace

std::vector<Tensor> grid_sample(OpContext& c) {
  const Tensor& x = c.in(0);
  const Tensor& grid = c.in(1);
  if (x.dim() != 4 || grid.dim() != 4 || grid.size(-1) != 2)
    throw UnsupportedError("GridSample on other than 2-d images is not supported");
  Sampler s{x.reshape({x.size(0), x.size(1), -1}),
            x.size(0),
            x.size(1),
            x.size(2),
            x.size(3),
            grid.size(1),
            grid.size(2),
            c.attr_string("padding_mode", "zeros"),
            c.attr_int("align_corners", 0) != 0};
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    throw ValueError("padding_mode '" + s.padding + "' is not zeros, border or reflection");
  const std::string mode = c.attr_string("mode", "bilinear");
  Tensor gx = grid.select(-1, 0).to(x.dtype()), gy = grid.select(-1, 1).to(x.dtype());
  Tensor ix = unnormalize(gx, s.W, s.align), iy = unnormalize(gy, s.H, s.align);
  if (mode == "bicubic") {
    Tensor x0 = ix.floor(), y0 = iy.floor();
    auto wx = cubic_weights(ix - x0), wy = cubic_weights(iy - y0);
    Tensor out;
    for (int j = 0; j < 4; j++)
      for (int i = 0; i < 4; i++) {
        Tensor px = pad_coordinate(s, x0 + (i - 1), s.W), py = pad_coordinate(s, y0 + (j - 1), s.H);
        Tensor term = tap(s, px, py) * (wx[i] * wy[j]).unsqueeze(1);
        out = out.defined() ? out + term : term;
      }
    return one(out);
  }
  ix = pad_coordinate(s, ix, s.W);
  iy = pad_coordinate(s, iy, s.H);
  if (mode == "nearest") {
    // Round half to even (nearbyint), as PyTorch.
    auto nearest = [](const Tensor& v) {
      Tensor f = v.floor(), d = v - f;
      Tensor odd = (f - (f / 2).floor() * 2) != 0;
      return where((d > 0.5).logical_or((d == 0.5).logical_and(odd)), f + 1, f);
    };
    return one(tap(s, nearest(ix), nearest(iy)));
  }
  if (mode != "bilinear")
    throw ValueError("mode '" + mode + "' is not bilinear, nearest or bicubic");
  Tensor x0 = ix.floor(), y0 = iy.floor(), x1 = x0 + 1, y1 = y0 + 1;
  auto w = [](const Tensor& a) { return a.unsqueeze(1); };
  return one(tap(s, x0, y0) * w((x1 - ix) * (y1 - iy)) + tap(s, x1, y0) * w((ix - x0) * (y1 - iy)) +
             tap(s, x0, y1) * w((x1 - ix) * (iy - y0)) + tap(s, x1, y1) * w((ix - x0) * (iy - y0)));
}

}  // namespace ember::onnx::ops

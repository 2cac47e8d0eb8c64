// Linear quantisation on uint8 (ember's 8-bit type; int8 variants need a dtype ember lacks):
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv,
// ConvInteger. Rounding is half to even and results saturate to [0, 255], as the specification
// says; integer accumulation is int32.
#include "common.h"
#include "ember/convolution.h"
#include "ember/special_functions.h"

namespace ember::onnx::ops {
namespace {

void require_u8(const Tensor& t, const char* what) {
  if (t.dtype() != kUInt8)
    throw UnsupportedError(std::string(what) + " of " + dtype_name(t.dtype()) +
                           " is not supported (ember quantises to uint8 only)");
}

// A per-axis parameter [n] shaped to broadcast along `axis_dim` of a rank-r tensor (scalars as
// they are; the axis matters only for a 1-d parameter).
Tensor along(const Tensor& p, int64_t axis_dim, int64_t r) {
  if (p.dim() == 0 || p.numel() == 1) return p.reshape({});
  axis_dim = axis(axis_dim, r);
  Shape s(static_cast<size_t>(r), 1);
  s[axis_dim] = p.numel();
  return p.reshape(s);
}

Tensor saturate_u8(const Tensor& v) { return v.clamp(0, 255).to(kUInt8); }

}  // namespace

std::vector<Tensor> quantize(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = c.attr_int("axis", 1);
  if (c.has(2)) require_u8(c.in(2), "a zero point");
  const Tensor scale = along(c.in(1), a, x.dim());
  Tensor q = round(x.to(kFloat32) / scale);
  if (c.has(2)) q = q + along(c.in(2), a, x.dim()).to(kFloat32);
  return one(saturate_u8(q));
}

std::vector<Tensor> dequantize(OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.dtype() != kUInt8 && x.dtype() != kInt32) require_u8(x, "DequantizeLinear");
  const int64_t a = c.attr_int("axis", 1);
  Tensor v = x.to(kFloat32);
  if (c.has(2)) v = v - along(c.in(2), a, x.dim()).to(kFloat32);
  return one(v * along(c.in(1), a, x.dim()));
}

// scale = (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)).
std::vector<Tensor> dynamic_quantize(OpContext& c) {
  const Tensor& x = c.in(0);
  Tensor lo = x.min().clamp_max(0), hi = x.max().clamp_min(0);
  Tensor scale = (hi - lo) / 255;
  Tensor zp = saturate_u8(round((-lo) / scale));
  Tensor y = saturate_u8(round(x / scale) + zp.to(kFloat32));
  return {y, scale, zp};
}

namespace {

Tensor centred(const Tensor& v, const Tensor& zp, int64_t axis_dim) {
  require_u8(v, "a quantised input");
  return v.to(kInt32) - along(zp, axis_dim, v.dim()).to(kInt32);
}

}  // namespace

// (a - a_zp)(b - b_zp) a_scale b_scale / y_scale + y_zp, rounded and saturated.
std::vector<Tensor> qlinear_matmul(OpContext& c) {
  const Tensor& a = c.in(0);
  const Tensor& b = c.in(3);
  Tensor acc = centred(a, c.in(2), a.dim() - 2).matmul(centred(b, c.in(5), b.dim() - 1));
  Tensor scale = c.in(1).reshape({}) * along(c.in(4), b.dim() - 1, b.dim()) / c.in(6).reshape({});
  return one(saturate_u8(round(acc.to(kFloat32) * scale) + c.in(7).to(kFloat32).reshape({})));
}

namespace {

// The integer convolution: Conv's attributes, input and weight centred on their zero points.
Tensor conv_int(OpContext& c, const Tensor& x, const Tensor& w) {
  const size_t n = static_cast<size_t>(w.dim() - 2);
  IntList stride = c.attr_ints("strides", IntList(n, 1)),
          dil = c.attr_ints("dilations", IntList(n, 1));
  IntList pads = c.attr_ints("pads", IntList(2 * n, 0)), p;
  c.ignore_attr({"kernel_shape"});
  if (c.attr_string("auto_pad", "NOTSET") != "NOTSET")
    throw UnsupportedError("auto_pad on integer convolutions is not supported");
  for (size_t i = n; i-- > 0;) p.insert(p.end(), {pads[i], pads[i + n]});
  return convolution(constant_pad_nd(x, p), w, Tensor(), stride, {0}, dil, false, {0},
                     c.attr_int("group", 1));
}

}  // namespace

std::vector<Tensor> conv_integer(OpContext& c) {
  Tensor x = centred(c.in(0), c.has(2) ? c.in(2) : zeros({}, kUInt8), 1);
  Tensor w = centred(c.in(1), c.has(3) ? c.in(3) : zeros({}, kUInt8), 0);
  return one(conv_int(c, x, w).to(kInt32));
}

std::vector<Tensor> qlinear_conv(OpContext& c) {
  Tensor x = centred(c.in(0), c.in(2), 1), w = centred(c.in(3), c.in(5), 0);
  Tensor acc = conv_int(c, x, w).to(kInt32);
  const int64_t r = acc.dim();
  if (c.has(8)) acc = acc + along(c.in(8), 1, r);
  Tensor scale = c.in(1).reshape({}) * along(c.in(4), 1, r) / c.in(6).reshape({});
  return one(saturate_u8(round(acc.to(kFloat32) * scale) + c.in(7).to(kFloat32).reshape({})));
}

}  // namespace ember::onnx::ops

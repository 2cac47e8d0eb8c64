// Unary math and activations: Abs ... Tanh, the trigonometric and hyperbolic functions, Erf,
// Round/Ceil/Floor, IsNaN/IsInf, Relu and its relatives, Clip, Shrink, PRelu. Formulas are the
// ONNX operator specification's (onnx/defs/math/defs.cc, "Operators.md").
#include <cmath>
#include <limits>

#include "common.h"
#include "ember/activations.h"
#include "ember/special_functions.h"

namespace ember::onnx::ops {
namespace {

void legacy(OpContext& c) { c.ignore_attr({"consumed_inputs"}); }

// The input of a unary op (whose opsets before 6 carry the ignored `consumed_inputs`).
const Tensor& operand(OpContext& c) {
  legacy(c);
  return c.in(0);
}

// min(max(t, 0), 1) for a floating t: two maxima (min is one with the signs flipped), where
// clamp's selects, which keep libtorch's gradient at the bounds, take about fifteen ALU ops per
// element (HardSigmoid is every HardSwish and squeeze-excitation gate of MobileNetV3). NaN stays
// NaN and -0 stays -0 (MAX keeps its first operand on ties), as with clamp.
Tensor unit_clip(const Tensor& t) {
  if (!t.is_floating_point()) return t.clamp(0, 1);
  return t.maximum(zeros({}, t.dtype())).minimum(ones({}, t.dtype()));
}

}  // namespace

std::vector<Tensor> abs(OpContext& c) { return one(operand(c).abs()); }
std::vector<Tensor> neg(OpContext& c) { return one(operand(c).neg()); }
std::vector<Tensor> exp(OpContext& c) { return one(operand(c).exp()); }
std::vector<Tensor> log(OpContext& c) { return one(operand(c).log()); }
std::vector<Tensor> sqrt(OpContext& c) { return one(operand(c).sqrt()); }
std::vector<Tensor> sin(OpContext& c) { return one(operand(c).sin()); }
std::vector<Tensor> cos(OpContext& c) { return one(operand(c).cos()); }
std::vector<Tensor> tan(OpContext& c) { return one(ember::tan(operand(c))); }
std::vector<Tensor> asin(OpContext& c) { return one(ember::asin(operand(c))); }
std::vector<Tensor> acos(OpContext& c) { return one(ember::acos(operand(c))); }
std::vector<Tensor> atan(OpContext& c) { return one(ember::atan(operand(c))); }
std::vector<Tensor> sinh(OpContext& c) { return one(ember::sinh(operand(c))); }
std::vector<Tensor> cosh(OpContext& c) { return one(ember::cosh(operand(c))); }
std::vector<Tensor> asinh(OpContext& c) { return one(ember::asinh(operand(c))); }
std::vector<Tensor> acosh(OpContext& c) { return one(ember::acosh(operand(c))); }
std::vector<Tensor> atanh(OpContext& c) { return one(ember::atanh(operand(c))); }
std::vector<Tensor> tanh(OpContext& c) { return one(operand(c).tanh()); }
std::vector<Tensor> erf(OpContext& c) { return one(ember::erf(operand(c))); }
std::vector<Tensor> sigmoid(OpContext& c) { return one(operand(c).sigmoid()); }
std::vector<Tensor> relu(OpContext& c) { return one(operand(c).relu()); }
std::vector<Tensor> floor(OpContext& c) { return one(operand(c).floor()); }
std::vector<Tensor> ceil(OpContext& c) { return one(ember::ceil(operand(c))); }
std::vector<Tensor> round(OpContext& c) { return one(ember::round(operand(c))); }
std::vector<Tensor> reciprocal(OpContext& c) { return one(operand(c).reciprocal()); }
std::vector<Tensor> sign(OpContext& c) { return one(operand(c).sign()); }
std::vector<Tensor> is_nan(OpContext& c) {
  const Tensor& x = operand(c);
  return one(x != x);
}
std::vector<Tensor> softsign(OpContext& c) {
  const Tensor& x = operand(c);
  return one(x / (x.abs() + 1));
}
// softplus = log(1 + e^x): ember::softplus, whose threshold (x itself beyond 20) changes the
// result by less than e^-20.
std::vector<Tensor> softplus(OpContext& c) { return one(ember::softplus(operand(c))); }

std::vector<Tensor> is_inf(OpContext& c) {
  const Tensor& x = c.in(0);
  const bool pos = c.attr_int("detect_positive", 1) != 0,
             neg = c.attr_int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  Tensor r = zeros(x.shape(), kBool);
  if (pos) r = r.logical_or(x == inf);
  if (neg) r = r.logical_or(x == -inf);
  return one(r);
}

std::vector<Tensor> leaky_relu(OpContext& c) {
  legacy(c);
  return one(ember::leaky_relu(c.in(0), c.attr_float("alpha", 0.01)));
}

std::vector<Tensor> elu(OpContext& c) {
  legacy(c);
  const Tensor& x = c.in(0);
  const double a = c.attr_float("alpha", 1.0);
  return one(where(x < 0, (x.clamp_max(0).exp() - 1) * a, x));
}

std::vector<Tensor> selu(OpContext& c) {
  legacy(c);
  const Tensor& x = c.in(0);
  const double a = c.attr_float("alpha", 1.67326319217681884765625);
  const double g = c.attr_float("gamma", 1.05070102214813232421875);
  return one(where(x <= 0, (x.clamp_max(0).exp() - 1) * (a * g), x * g));
}

std::vector<Tensor> celu(OpContext& c) {
  const Tensor& x = c.in(0);
  const double a = c.attr_float("alpha", 1.0);
  return one(x.clamp_min(0) + (((x / a).exp() - 1) * a).clamp_max(0));
}

std::vector<Tensor> thresholded_relu(OpContext& c) {
  const Tensor& x = c.in(0);
  return one(where(x > c.attr_float("alpha", 1.0), x, Scalar(0)));
}

std::vector<Tensor> hard_sigmoid(OpContext& c) {
  legacy(c);
  const Tensor& x = c.in(0);
  return one(unit_clip(x * c.attr_float("alpha", 0.2) + c.attr_float("beta", 0.5)));
}

std::vector<Tensor> hard_swish(OpContext& c) {
  const Tensor& x = c.in(0);
  return one(x * unit_clip(x / 6 + 0.5));
}

// PRelu: slope broadcasts to x (unidirectionally from opset 7; before, a per-channel slope [C]
// of an [N, C, ...] input is aligned with dim 1).
std::vector<Tensor> prelu(OpContext& c) {
  legacy(c);
  const Tensor& x = c.in(0);
  Tensor s = c.in(1);
  if (c.opset < 7 && s.dim() == 1 && x.dim() > 2 && s.size(0) == x.size(1) &&
      s.size(0) != x.size(-1)) {
    Shape sh(static_cast<size_t>(x.dim() - 1), 1);
    sh[0] = s.size(0);
    s = s.reshape(sh);
  }
  return one(where(x < 0, x * s, x));
}

std::vector<Tensor> shrink(OpContext& c) {
  const Tensor& x = c.in(0);
  const double l = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
  Tensor xf = x.to(kFloat64);
  Tensor r = where(xf < -l, xf + bias, where(xf > l, xf - bias, zeros({}, kFloat64)));
  return one(r.to(x.dtype()));
}

// Clip: min/max attributes before opset 11, optional inputs after; absent bounds are open.
std::vector<Tensor> clip(OpContext& c) {
  legacy(c);
  const Tensor& x = c.in(0);
  if (c.opset < 11) {
    const double lo = c.attr_float("min", -std::numeric_limits<double>::infinity());
    const double hi = c.attr_float("max", std::numeric_limits<double>::infinity());
    return one(where(x < lo, full({}, lo, x.dtype()), where(x > hi, full({}, hi, x.dtype()), x)));
  }
  Tensor r = x;
  if (c.has(1)) r = where(r < c.in(1), c.in(1).to(x.dtype()), r);
  if (c.has(2)) r = where(r > c.in(2), c.in(2).to(x.dtype()), r);
  return one(r);
}

std::vector<Tensor> dropout(OpContext& c) {
  // Inference: the identity. Opset < 7 has is_test; 12+ has a training_mode input.
  c.ignore_attr({"is_test", "seed", "consumed_inputs"});
  const Tensor& x = c.in(0);
  double ratio = c.opset < 12 ? c.attr_float("ratio", 0.5) : 0.5;
  if (c.opset >= 12 && c.has(1)) ratio = c.floats_of(1).at(0);
  const bool training = c.opset >= 12 && c.has(2) && c.ints_of(2).at(0) != 0;
  if (training && ratio > 0)
    throw UnsupportedError("Dropout in training mode draws a random mask, which cannot match");
  std::vector<Tensor> out = {x};
  if (c.wants_output(1)) out.push_back(ones(x.shape(), c.opset >= 10 ? kBool : x.dtype()));
  return out;
}

}  // namespace ember::onnx::ops

// Normalisations: BatchNormalization (every version, inference and training mode),
// InstanceNormalization, LayerNormalization, LpNormalization, MeanVarianceNormalization, LRN.
#include <cmath>

#include "common.h"
#include "ember/convolution.h"
#include "ember/normalization.h"

namespace ember::onnx::ops {
namespace {

// [C, ...] statistics as [1, C, ...] (spatial = 0 of opsets < 9 has per-activation statistics,
// [C, D1, ...]; spatial = 1 per-channel [C]).
Tensor stat(const Tensor& v, const Tensor& x) {
  if (v.dim() == 1) {
    Shape s(static_cast<size_t>(x.dim()), 1);
    s[1] = v.size(0);
    return v.reshape(s);
  }
  return v.unsqueeze(0);
}

}  // namespace

std::vector<Tensor> batch_norm_op(OpContext& c) {
  c.ignore_attr({"is_test", "consumed_inputs", "spatial"});
  const Tensor& x = c.in(0);
  const double eps = c.attr_float("epsilon", 1e-5), momentum = c.attr_float("momentum", 0.9);
  const bool training = c.opset >= 14 && c.attr_int("training_mode", 0) != 0;
  const Tensor scale = stat(c.in(1), x), bias = stat(c.in(2), x);
  if (!training) {
    const Tensor mean = stat(c.in(3), x), var = stat(c.in(4), x);
    return one((x - mean) * (var + eps).rsqrt() * scale + bias);
  }
  // Training mode (opset 14+): batch statistics (biased variance) normalise; the running ones
  // are updated as momentum * running + (1 - momentum) * batch.
  std::vector<int64_t> dims = {0};
  for (int64_t i = 2; i < x.dim(); i++) dims.push_back(i);
  Tensor mean = x.mean(dims), var = x.var(dims, false);
  Tensor y = (x - stat(mean, x)) * (stat(var, x) + eps).rsqrt() * scale + bias;
  return {y, c.in(3) * momentum + mean * (1 - momentum), c.in(4) * momentum + var * (1 - momentum)};
}

std::vector<Tensor> instance_norm_op(OpContext& c) {
  return one(instance_norm(c.in(0), c.in(1), c.in(2), c.attr_float("epsilon", 1e-5)));
}

// LayerNormalization-17: over the dims from `axis` on; Scale and B broadcast; optional Mean and
// InvStdDev outputs (keeping the normalised dims as 1).
std::vector<Tensor> layer_norm_op(OpContext& c) {
  c.ignore_attr({"stash_type"});
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", -1), x.dim());
  const double eps = c.attr_float("epsilon", 1e-5);
  std::vector<int64_t> dims;
  for (int64_t i = a; i < x.dim(); i++) dims.push_back(i);
  Tensor mean = x.mean(dims, true), inv = (x.var(dims, false, true) + eps).rsqrt();
  Tensor y = (x - mean) * inv * c.in(1);
  if (c.has(2)) y = y + c.in(2);
  return {y, mean, inv};
}

std::vector<Tensor> lp_norm(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", -1), x.dim()), p = c.attr_int("p", 2);
  if (p == 1) return one(x / x.abs().sum({a}, true));
  if (p == 2) return one(x / x.square().sum({a}, true).sqrt());
  throw ValueError("p must be 1 or 2, got " + std::to_string(p));
}

std::vector<Tensor> mvn(OpContext& c) {
  const Tensor& x = c.in(0);
  const auto d = axes(c.attr_ints("axes", std::vector<int64_t>{0, 2, 3}), x.dim());
  // The function body of MeanVarianceNormalization-13: (X - E[X]) / sqrt(E[X^2] - E[X]^2 + 1e-9).
  Tensor mean = x.mean(d, true);
  Tensor var = x.square().mean(d, true) - mean.square();
  return one((x - mean) / (var + 1e-9).sqrt());
}

// LRN: x / (bias + alpha / size * sum of x^2 over channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)]) ^ beta.
std::vector<Tensor> lrn(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t size = c.attr_int("size");
  const double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75),
               bias = c.attr_float("bias", 1.0);
  if (x.dim() < 3) throw ShapeError("LRN takes [N, C, ...]");
  IntList p(2 * static_cast<size_t>(x.dim() - 1), 0);  // (before, after) of dim 1 last
  p[p.size() - 2] = (size - 1) / 2;
  p[p.size() - 1] = size / 2;
  Tensor sq = constant_pad_nd(x.square(), p);
  Tensor sum = unfold(sq, 1, size, 1).sum({-1});
  return one(x / (sum * (alpha / static_cast<double>(size)) + bias).pow(beta));
}

}  // namespace ember::onnx::ops

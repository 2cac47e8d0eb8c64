// Products and losses: MatMul, MatMulInteger, Gemm, Einsum; NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (onnx/defs/math/defs.cc: their function bodies define the semantics).
#include "common.h"
#include "ember/shape_ops.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
std::vector<Tensor> mat_mul(OpContext& c) {
  if (c.in(0).dtype() != c.in(1).dtype()) throw DTypeError("operands have different element types");
  return one(c.in(0).matmul(c.in(1)).to(c.in(0).dtype()));
}

// (A - a_zero_point) (B - b_zero_point) in int32; zero points are scalars or per row / column.
std::vector<Tensor> mat_mul_integer(OpContext& c) {
  auto centred = [&](size_t i, size_t zp, bool rows) {
    Tensor v = c.in(i).to(kInt32);
    if (!c.has(zp)) return v;
    Tensor z = c.in(zp).to(kInt32);
    if (z.numel() > 1 && rows) z = z.unsqueeze(-1);  // A's per-row zero points
    return v - z;
  };
  return one(centred(0, 2, true).matmul(centred(1, 3, false)).to(kInt32));
}

// Gemm: alpha A' B' + beta C with A' = A or A^T; C broadcasts (opset < 7: only with broadcast=1).
std::vector<Tensor> gemm(OpContext& c) {
  c.ignore_attr({"broadcast"});
  Tensor a = c.in(0), b = c.in(1);
  if (c.attr_int("transA", 0)) a = a.t();
  if (c.attr_int("transB", 0)) b = b.t();
  const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  Tensor y = a.matmul(b);
  if (alpha != 1.0) y = y * alpha;
  if (c.has(2) && beta != 0.0) y = y + (beta == 1.0 ? c.in(2) : c.in(2) * beta);
  return one(y.to(c.in(0).dtype()));
}

std::vector<Tensor> einsum_op(OpContext& c) {
  return one(einsum(c.attr_string("equation"), c.tensors()));
}

namespace {

// The per-element loss -input[n, target, d...] * weight[target] (0 at ignore_index) and the
// weights, from log-probabilities [N, C, d...] and targets [N, d...].
struct Picked {
  Tensor loss, weight;
};
Picked nll_terms(OpContext& c, const Tensor& input, const Tensor& target, const Tensor& w) {
  if (input.dim() < 2 || target.dim() != input.dim() - 1)
    throw ShapeError("input " + support::shape_str(input.sizes()) + " and target " +
                     support::shape_str(target.sizes()) +
                     " do not match ([N, C, ...] and [N, ...])");
  const int64_t C = input.size(1);
  Shape cls(static_cast<size_t>(input.dim()), 1);
  cls[1] = C;
  Tensor t = target.to(kInt64).unsqueeze(1);
  Tensor hit = t == arange(C).reshape(cls);
  if (c.has_attr("ignore_index")) hit = hit.logical_and(t != c.attr_int("ignore_index"));
  Tensor picked = where(hit, input, Scalar(0)).sum({1});
  Tensor weight = w.defined() ? where(hit, w.to(input.dtype()).reshape(cls), Scalar(0)).sum({1})
                              : hit.to(input.dtype()).sum({1});
  return {-picked * weight, weight};
}

Tensor reduced(const std::string& reduction, const Picked& p) {
  if (reduction == "none") return p.loss;
  if (reduction == "sum") return p.loss.sum();
  if (reduction == "mean") return p.loss.sum() / p.weight.sum();
  throw ValueError("reduction must be none, sum or mean, got '" + reduction + "'");
}

}  // namespace

std::vector<Tensor> nll_loss(OpContext& c) {
  const Tensor w = c.has(2) ? c.in(2) : Tensor();
  const Picked p = nll_terms(c, c.in(0), c.in(1), w);
  return one(reduced(c.attr_string("reduction", "mean"), p));
}

std::vector<Tensor> softmax_cross_entropy(OpContext& c) {
  const Tensor log_prob = c.in(0).log_softmax(1);
  const Tensor w = c.has(2) ? c.in(2) : Tensor();
  const Picked p = nll_terms(c, log_prob, c.in(1), w);
  std::vector<Tensor> out = {reduced(c.attr_string("reduction", "mean"), p)};
  if (c.wants_output(1)) out.push_back(log_prob);
  return out;
}

}  // namespace ember::onnx::ops

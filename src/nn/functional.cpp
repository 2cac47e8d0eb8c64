// Losses as compositions (include/ember/nn/functional.h has the formulas and their sources).
#include "ember/nn/functional.h"

#include "ember/jit.h"
#include "ember/support/shape_str.h"

namespace ember::nn::functional {

namespace {
Tensor reduce(const Tensor& l, const std::string& reduction) {
  if (reduction == "mean") return l.mean();
  if (reduction == "sum") return l.sum();
  if (reduction == "none") return l;
  throw ValueError("unknown reduction '" + reduction + "' (expected mean, sum or none)");
}

// The class dim's one-hot mask of the targets and each term's weight (0 where ignored), for
// input [N, C, d...] and target [N, d...] (an unbatched [C] and [] are made [1, C] and [1]).
struct Targets {
  Tensor hit;     // [N, C, d...] bool
  Tensor weight;  // [N, d...], input's dtype
  Tensor valid;   // [N, d...] bool: target != ignore_index
};

Targets targets(const Tensor& input, const Tensor& target, const Tensor& class_weight,
                int64_t ignore_index, const char* name) {
  const bool paired =
      input.dim() >= 2 ? target.dim() == input.dim() - 1 : input.dim() == 1 && target.dim() == 0;
  bool sizes = paired;
  for (int64_t d = 0; paired && d < target.dim(); d++)
    sizes = sizes && target.size(d) == input.size(d == 0 ? 0 : d + 1);
  if (!sizes)
    throw ShapeError(std::string(name) + ": input " + support::shape_str(input.sizes()) +
                     " and target " + support::shape_str(target.sizes()) +
                     " do not pair as [N, C, d...] and [N, d...]");
  if (target.dtype() != kInt64)
    throw DTypeError(std::string(name) + ": target must be int64 class indices, got " +
                     dtype_name(target.dtype()));
  const int64_t C = input.size(input.dim() >= 2 ? 1 : 0);
  if (class_weight.defined() && (class_weight.dim() != 1 || class_weight.size(0) != C))
    throw ShapeError(std::string(name) + ": weight must have shape [" + std::to_string(C) +
                     "], got " + support::shape_str(class_weight.sizes()));
  if (!jit_capturing())
    for (int64_t t : target.to_vector<int64_t>())
      if (t != ignore_index && (t < 0 || t >= C))
        throw IndexError(std::string(name) + ": target " + std::to_string(t) +
                         " is out of bounds for " + std::to_string(C) + " classes");
  Tensor t = input.dim() >= 2 ? target : target.unsqueeze(0);
  const int64_t rank = t.dim() + 1;
  Shape cls(static_cast<size_t>(rank), 1);
  cls[1] = C;
  Targets r;
  r.valid = t != ignore_index;
  r.hit = (t.unsqueeze(1) == arange(C).reshape(cls)).logical_and(r.valid.unsqueeze(1));
  r.weight = class_weight.defined()
                 ? where(r.hit, class_weight.to(input.dtype()).reshape(cls), Scalar(0)).sum({1})
                 : r.valid.to(input.dtype());
  return r;
}

// The per-term losses reduced; "mean" divides by the weight sum.
Tensor reduced(const Tensor& terms, const Tensor& weight, const std::string& reduction,
               bool unbatched) {
  if (reduction == "none") return unbatched ? terms.squeeze(0) : terms;
  if (reduction == "sum") return terms.sum();
  if (reduction == "mean") return terms.sum() / weight.sum();
  throw ValueError("unknown reduction '" + reduction + "' (expected mean, sum or none)");
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  return reduce((input - target).square(), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                      double beta) {
  Tensor d = (input - target).abs();
  Tensor l = beta > 0 ? where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta) : d;
  return reduce(l, reduction);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& o) {
  Targets t = targets(input, target, o.weight_, o.ignore_index_, "nll_loss");
  Tensor x = input.dim() >= 2 ? input : input.unsqueeze(0);
  Tensor terms = -where(t.hit, x, Scalar(0)).sum({1}) * t.weight;
  return reduced(terms, t.weight, o.reduction_, input.dim() < 2);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& o) {
  const double e = o.label_smoothing_;
  if (!(e >= 0 && e <= 1))
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(e));
  if (input.dim() == 0)
    throw ShapeError("cross_entropy: input must have a class dim, got a 0-d tensor");
  const int64_t class_dim = input.dim() >= 2 ? 1 : 0;
  Tensor logp = input.log_softmax(class_dim);
  Tensor nll = nll_loss(
      logp, target,
      NLLLossFuncOptions().weight(o.weight_).ignore_index(o.ignore_index_).reduction(o.reduction_));
  if (e == 0) return nll;
  Targets t = targets(input, target, o.weight_, o.ignore_index_, "cross_entropy");
  Tensor lp = input.dim() >= 2 ? logp : logp.unsqueeze(0);
  if (o.weight_.defined()) {
    Shape cls(static_cast<size_t>(lp.dim()), 1);
    cls[1] = lp.size(1);
    lp = lp * o.weight_.to(lp.dtype()).reshape(cls);
  }
  Tensor smooth = where(t.valid, -lp.sum({1}), Scalar(0));
  const double C = static_cast<double>(lp.size(1));
  return nll * (1 - e) + reduced(smooth, t.weight, o.reduction_, input.dim() < 2) * (e / C);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::string& reduction) {
  return cross_entropy(input, target, CrossEntropyFuncOptions().reduction(reduction));
}

namespace {

// The binary losses' shared checks: floating input and target of one shape.
void check_binary(const Tensor& input, const Tensor& target, const char* name) {
  if (!input.is_floating_point() || !target.is_floating_point())
    throw DTypeError(std::string(name) + ": input and target must be floating, got " +
                     dtype_name(input.dtype()) + " and " + dtype_name(target.dtype()));
  if (input.sizes() != target.sizes())
    throw ShapeError(std::string(name) + ": target " + support::shape_str(target.sizes()) +
                     " must have the input's shape " + support::shape_str(input.sizes()));
}

Tensor weighted(const Tensor& terms, const Tensor& weight) {
  return weight.defined() ? terms * weight.to(terms.dtype()) : terms;
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& o) {
  check_binary(input, target, "binary_cross_entropy");
  if (!jit_capturing() &&  // NaN is outside too, as PyTorch's check
      (input >= 0).logical_and(input <= 1).to(kInt64).sum().item<int64_t>() != input.numel())
    throw ValueError("binary_cross_entropy: all elements of input should be between 0 and 1");
  Tensor terms =
      -(target * input.log().clamp_min(-100) + (1 - target) * (1 - input).log().clamp_min(-100));
  return reduce(weighted(terms, o.weight_), o.reduction_);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& o) {
  check_binary(input, target, "binary_cross_entropy_with_logits");
  Tensor softplus_neg = (1 + (-input.abs()).exp()).log() + (-input).clamp_min(0);  // log(1 + e^-x)
  Tensor l =
      o.pos_weight_.defined() ? 1 + (o.pos_weight_.to(input.dtype()) - 1) * target : Tensor();
  Tensor terms = (1 - target) * input + (l.defined() ? l * softplus_neg : softplus_neg);
  return reduce(weighted(terms, o.weight_), o.reduction_);
}

}  // namespace ember::nn::functional

// The free functions of ember's composite op headers (convolution, pooling, normalization,
// indexing, sorting, padding, shape_ops, special_functions, activations, attention) and of its
// losses (nn/functional.h) under one name for both backends of a
// parity case: `parity::ops::conv2d(b, x, w, ...)` calls ember::conv2d or torch::conv2d. Where
// libtorch spells an op differently (a method, an options struct), the wrapper says how.
#pragma once
#include <torch/nn/functional.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "ember/ember.h"
#include "parity.h"

namespace parity::ops {

template <class B>
constexpr bool is_ember = std::is_same_v<B, EmberB>;

// Same name, same arguments on both sides.
#define PARITY_FREE_FN(name)                     \
  template <class B, class... A>                 \
  auto name(B&, A&&... a) {                      \
    if constexpr (is_ember<B>)                   \
      return ember::name(std::forward<A>(a)...); \
    else                                         \
      return torch::name(std::forward<A>(a)...); \
  }
PARITY_FREE_FN(conv1d)
PARITY_FREE_FN(conv2d)
PARITY_FREE_FN(conv3d)
PARITY_FREE_FN(conv_transpose1d)
PARITY_FREE_FN(conv_transpose2d)
PARITY_FREE_FN(conv_transpose3d)
PARITY_FREE_FN(max_pool1d)
PARITY_FREE_FN(max_pool2d)
PARITY_FREE_FN(max_pool3d)
PARITY_FREE_FN(max_pool2d_with_indices)
PARITY_FREE_FN(avg_pool1d)
PARITY_FREE_FN(avg_pool2d)
PARITY_FREE_FN(avg_pool3d)
PARITY_FREE_FN(layer_norm)
PARITY_FREE_FN(group_norm)
PARITY_FREE_FN(index_select)
PARITY_FREE_FN(scatter)
PARITY_FREE_FN(scatter_add)
PARITY_FREE_FN(scatter_reduce)
PARITY_FREE_FN(topk)
PARITY_FREE_FN(sort)
PARITY_FREE_FN(argsort)
PARITY_FREE_FN(cumsum)
PARITY_FREE_FN(tile)
PARITY_FREE_FN(tril)
PARITY_FREE_FN(triu)
PARITY_FREE_FN(einsum)
PARITY_FREE_FN(tan)
PARITY_FREE_FN(sinh)
PARITY_FREE_FN(cosh)
PARITY_FREE_FN(asinh)
PARITY_FREE_FN(acosh)
PARITY_FREE_FN(atanh)
PARITY_FREE_FN(atan)
PARITY_FREE_FN(asin)
PARITY_FREE_FN(acos)
PARITY_FREE_FN(erf)
PARITY_FREE_FN(ceil)
PARITY_FREE_FN(trunc)
PARITY_FREE_FN(round)
PARITY_FREE_FN(gelu)
PARITY_FREE_FN(silu)
PARITY_FREE_FN(softplus)
PARITY_FREE_FN(leaky_relu)
PARITY_FREE_FN(embedding)
PARITY_FREE_FN(one_hot)
PARITY_FREE_FN(adaptive_avg_pool1d)
PARITY_FREE_FN(adaptive_avg_pool2d)
#undef PARITY_FREE_FN

// torch: a Tensor method.
template <class B, class T>
T unfold(B&, const T& t, int64_t dim, int64_t size, int64_t step) {
  if constexpr (is_ember<B>)
    return ember::unfold(t, dim, size, step);
  else
    return t.unfold(dim, size, step);
}

// torch: a trailing cudnn_enabled flag.
template <class B, class T>
T batch_norm(B&, const T& x, const T& w, const T& bias, const T& rm, const T& rv, bool training,
             double momentum, double eps) {
  if constexpr (is_ember<B>)
    return ember::batch_norm(x, w, bias, rm, rv, training, momentum, eps);
  else
    return torch::batch_norm(x, w, bias, rm, rv, training, momentum, eps, false);
}

// torch: running statistics and use_input_stats (ember: input statistics only).
template <class B, class T>
T instance_norm(B&, const T& x, const T& w, const T& bias, double eps) {
  if constexpr (is_ember<B>)
    return ember::instance_norm(x, w, bias, eps);
  else
    return torch::instance_norm(x, w, bias, {}, {}, true, 0.1, eps, false);
}

// torch: F.pad with an options struct.
template <class B, class T>
T pad(B&, const T& x, Shape p, ember::PadMode mode) {
  if constexpr (is_ember<B>) {
    return ember::pad(x, p, mode);
  } else {
    namespace F = torch::nn::functional;
    auto o = F::PadFuncOptions(p);
    if (mode == ember::PadMode::Reflect) o.mode(torch::kReflect);
    if (mode == ember::PadMode::Replicate) o.mode(torch::kReplicate);
    if (mode == ember::PadMode::Circular) o.mode(torch::kCircular);
    return F::pad(x, o);
  }
}

// torch 1.13 has no scaled_dot_product_attention: its composition softmax(Q K^T scale + M) V,
// with M from a bool mask (true: attend), a float mask (added) or the causal lower triangle.
template <class B, class T>
T scaled_dot_product_attention(B&, const T& q, const T& k, const T& v, const T& mask,
                               bool is_causal, std::optional<double> scale = std::nullopt) {
  if constexpr (is_ember<B>) {
    return ember::scaled_dot_product_attention(q, k, v, mask, 0.0, is_causal, scale);
  } else {
    const double inf = std::numeric_limits<double>::infinity();
    auto s = torch::matmul(q, k.transpose(-1, -2)) *
             scale.value_or(1 / std::sqrt(static_cast<double>(q.size(-1))));
    if (is_causal)
      s = s.masked_fill(torch::ones({q.size(-2), k.size(-2)}, torch::kBool).tril().logical_not(),
                        -inf);
    else if (mask.defined())
      s = mask.scalar_type() == torch::kBool ? s.masked_fill(mask.logical_not(), -inf) : s + mask;
    return torch::matmul(s.softmax(-1), v);
  }
}

// The losses' options: ember's strings, libtorch's reduction enums.
struct LossArgs {
  std::string reduction = "mean";
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

inline torch::nn::functional::CrossEntropyFuncOptions::reduction_t torch_reduction(
    const std::string& r) {
  if (r == "none") return torch::kNone;
  if (r == "sum") return torch::kSum;
  return torch::kMean;
}

// Sets a's weight, ignore_index and reduction on ember's or libtorch's loss options o (libtorch's
// take the reduction as an enum, and a weight only when one is given).
template <class B, class O, class T>
O& set_loss_args(O& o, const T& weight, const LossArgs& a) {
  if (weight.defined()) o.weight(weight);
  o.ignore_index(a.ignore_index);
  if constexpr (is_ember<B>)
    o.reduction(a.reduction);
  else
    o.reduction(torch_reduction(a.reduction));
  return o;
}

template <class B, class T>
T cross_entropy(B&, const T& x, const T& target, const T& weight, const LossArgs& a) {
  if constexpr (is_ember<B>) {
    ember::nn::functional::CrossEntropyFuncOptions o;
    set_loss_args<B>(o, weight, a).label_smoothing(a.label_smoothing);
    return ember::nn::functional::cross_entropy(x, target, o);
  } else {
    torch::nn::functional::CrossEntropyFuncOptions o;
    set_loss_args<B>(o, weight, a).label_smoothing(a.label_smoothing);
    return torch::nn::functional::cross_entropy(x, target, o);
  }
}

template <class B, class T>
T nll_loss(B&, const T& x, const T& target, const T& weight, const LossArgs& a) {
  if constexpr (is_ember<B>) {
    ember::nn::functional::NLLLossFuncOptions o;
    return ember::nn::functional::nll_loss(x, target, set_loss_args<B>(o, weight, a));
  } else {
    torch::nn::functional::NLLLossFuncOptions o;
    return torch::nn::functional::nll_loss(x, target, set_loss_args<B>(o, weight, a));
  }
}

}  // namespace parity::ops

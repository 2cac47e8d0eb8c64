// Parity: masked_fill and the binary losses (binary_cross_entropy, binary_cross_entropy_with_logits
// with weight and pos_weight, every reduction) against libtorch, forward and backward, in float32
// and float64, and the inputs both reject.
#include "parity_grad.h"
#include "parity_ops.h"

#define TR .tol = parity::kTranscendental
using parity::Shape;
namespace ops = parity::ops;

namespace {

struct BceArgs {
  std::string reduction = "mean";
  bool logits = false;
};

// binary_cross_entropy(_with_logits) on either backend; undefined weights are left out.
template <class B, class T>
T bce(B&, const T& x, const T& t, const T& weight, const T& pos_weight, const BceArgs& a) {
  if constexpr (ops::is_ember<B>) {
    namespace F = ember::nn::functional;
    if (!a.logits)
      return F::binary_cross_entropy(
          x, t, F::BinaryCrossEntropyFuncOptions().weight(weight).reduction(a.reduction));
    return F::binary_cross_entropy_with_logits(x, t,
                                               F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                   .weight(weight)
                                                   .pos_weight(pos_weight)
                                                   .reduction(a.reduction));
  } else {
    namespace F = torch::nn::functional;
    auto r = ops::torch_reduction(a.reduction);
    if (!a.logits) {
      auto o = F::BinaryCrossEntropyFuncOptions().reduction(r);
      if (weight.defined()) o.weight(weight);
      return F::binary_cross_entropy(x, t, o);
    }
    auto o = F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(r);
    if (weight.defined()) o.weight(weight);
    if (pos_weight.defined()) o.pos_weight(pos_weight);
    return F::binary_cross_entropy_with_logits(x, t, o);
  }
}

}  // namespace

// Probabilities away from 0 and 1 (where libtorch's backward divides by max(x (1 - x), 1e-12)),
// soft targets, a weight broadcast over the rows.
BACKWARD_CASE(GradBinaryLoss, binary_cross_entropy, TR) {
  auto x = b.rand({4, 5}, 0.05, 0.95), t = b.rand({4, 5});
  auto w = b.rand({5}, 0.5, 2).detach();
  auto none = typename B::T{};
  return std::vector{bce(b, x, t, none, none, {}), bce(b, x, t, w, none, {"sum"}),
                     bce(b, x, t, w, none, {"none"})};
}

// Exact 0 and 1 probabilities: the logs clamp at -100 (finite losses); the forward only.
PARITY_CASE(BinaryLoss, binary_cross_entropy_saturated) {
  auto x = b.values({0, 1, 0, 1, 0.5}, {5}), t = b.values({0, 1, 1, 0, 1}, {5});
  auto none = typename B::T{};
  return std::vector{bce(b, x, t, none, none, {"none"}), bce(b, x, t, none, none, {})};
}

BACKWARD_CASE(GradBinaryLoss, binary_cross_entropy_f64, TR) {
  auto x = b.rand({3, 2, 3}, 0.05, 0.95, b.f64), t = b.rand({3, 2, 3}, 0, 1, b.f64);
  auto none = typename B::T{};
  return std::vector{bce(b, x, t, none, none, {}), bce(b, x, t, none, none, {"none"})};
}

// Large logits of both signs (the stable form), weight and pos_weight along the last dim.
BACKWARD_CASE(GradBinaryLoss, with_logits_weight_and_pos_weight, TR) {
  auto x = b.randn({4, 3}) * 8, t = b.rand({4, 3});
  auto w = b.rand({4, 1}, 0.5, 2).detach(), pw = b.rand({3}, 0.5, 3).detach();
  auto none = typename B::T{};
  BceArgs m{"mean", true}, s{"sum", true}, n{"none", true};
  return std::vector{bce(b, x, t, none, none, m), bce(b, x, t, w, none, s),
                     bce(b, x, t, none, pw, n), bce(b, x, t, w, pw, m)};
}

BACKWARD_CASE(GradBinaryLoss, with_logits_f64, TR) {
  auto x = b.randn({5}, b.f64) * 3, t = b.rand({5}, 0, 1, b.f64);
  auto pw = b.rand({5}, 0.5, 3, b.f64).detach();
  auto none = typename B::T{};
  return std::vector{bce(b, x, t, none, pw, {"mean", true}),
                     bce(b, x, t, none, none, {"none", true})};
}

PARITY_REJECTS(BinaryLoss, binary_cross_entropy_input_above_one) {
  auto none = typename B::T{};
  return bce(b, b.values({0.5, 1.5}, {2}), b.values({0, 1}, {2}), none, none, {});
}

PARITY_REJECTS(BinaryLoss, target_of_another_shape) {
  auto none = typename B::T{};
  return bce(b, b.randn({2, 3}), b.rand({3, 2}), none, none, {"mean", true});
}

// masked_fill: a mask broadcast over the rows, a mask that broadcasts the input, float64 and an
// integer input.
BACKWARD_CASE(GradMaskedFill, masked_fill) {
  auto x = b.randn({3, 4});
  auto row = b.values({1, 0, 0, 1}, {4}, b.b8), col = b.values({0, 1}, {2, 1, 1}, b.b8);
  auto x64 = b.randn({2, 3}, b.f64);
  auto m64 = b.values({1, 0, 1, 0, 0, 1}, {2, 3}, b.b8);
  return std::vector{x.masked_fill(row, -1.5), x.masked_fill(col, 0), x64.masked_fill(m64, 2.25)};
}

PARITY_CASE(MaskedFill, integer_input) {
  auto x = b.values({1, 2, 3, 4}, {2, 2}, b.i64);
  return x.masked_fill(b.values({0, 1, 1, 0}, {2, 2}, b.b8), -7);
}

PARITY_REJECTS(MaskedFill, float_mask) { return b.randn({2, 2}).masked_fill(b.randn({2, 2}), 1.0); }

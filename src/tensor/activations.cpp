// Activation functions as compositions (include/ember/activations.h has the formulas). Each branch
// of a `where` gets an input clamped to its own side, so the branch not taken stays finite and its
// zero gradient cannot become 0 * inf = NaN.
#include "ember/activations.h"

#include <cmath>
#include <numbers>

#include "ember/special_functions.h"

namespace ember {

namespace {

void floating_only(const Tensor& x, const char* name) {
  if (!x.is_floating_point())
    throw DTypeError(std::string(name) + ": expected a floating input, got " +
                     dtype_name(x.dtype()));
}

}  // namespace

Tensor gelu(const Tensor& x, const std::string& approximate) {
  floating_only(x, "gelu");
  if (approximate == "none") return x * 0.5 * (erf(x * (1 / std::numbers::sqrt2)) + 1);
  if (approximate == "tanh") {
    const double k = std::sqrt(2 / std::numbers::pi);
    return x * 0.5 * (((x + x * x.square() * 0.044715) * k).tanh() + 1);
  }
  throw ValueError("gelu: approximate must be 'none' or 'tanh', got '" + approximate + "'");
}

Tensor silu(const Tensor& x) {
  floating_only(x, "silu");
  return x * x.sigmoid();
}

Tensor softplus(const Tensor& x, const Scalar& beta, const Scalar& threshold) {
  floating_only(x, "softplus");
  // In float64 (rounded once to x's dtype): 1 + e^-z in float32 would round away most of a small
  // e^-z, which is all of the result for z << 0.
  const double b = beta.to_double();
  Tensor z = x.to(kFloat64) * b;
  Tensor pos = z.clamp_min(0), neg = z.clamp_max(0);
  // log(1 + e^z) on each side of 0: at z = 0 the second branch's gradient is 1/2 = sigmoid(0).
  Tensor soft = where(z > 0, pos + ((-pos).exp() + 1).log(), (neg.exp() + 1).log());
  return where(z > threshold.to_double(), x, (b == 1 ? soft : soft / b).to(x.dtype()));
}

Tensor leaky_relu(const Tensor& x, const Scalar& negative_slope) {
  floating_only(x, "leaky_relu");
  return where(x > 0, x, x * negative_slope);
}

}  // namespace ember

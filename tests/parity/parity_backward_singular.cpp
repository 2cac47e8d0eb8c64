// Backward parity at singular points (issue 13): for the ops with a gradient rule (and the
// composites users differentiate most), the boundary inputs -- zero spread, saturation, zero
// base, ties, +-inf, NaN -- against libtorch. Where libtorch defines a finite value, ember must
// give it; where libtorch gives inf or NaN, ember must give the same (parity.cpp treats NaN as
// equal to NaN and inf as equal to inf).
#include "parity_grad.h"

#define TR .tol = parity::kTranscendental

// ---- zero spread: std's 1 / (2 std) factor is masked where std == 0
// ------------------------------
BACKWARD_CASE(GradSingular, std_of_equal_values) { return b.values({2, 2, 2}, {3}).std(); }
BACKWARD_CASE(GradSingular, std_dim_one_row_constant) {
  return b.values({1, 1, 1, 0.5, -1, 2}, {2, 3}).std({1}, true, false);
}
BACKWARD_CASE(GradSingular, advantage_normalisation_of_equal_values) {
  auto x = b.values({0.25, 0.25, 0.25, 0.25}, {4});
  return (x - x.mean()) / (x.std() + 1e-8);
}
BACKWARD_CASE(GradSingular, var_of_equal_values) {
  auto x = b.values({-3, -3, -3, -3}, {2, 2});
  return std::vector{x.var(), x.var({0}, false, true)};
}

// ---- pow: zero base, zero exponent
// ---------------------------------------------------------------
BACKWARD_CASE(GradSingular, pow_zero_base_and_exponent, TR) {
  auto x = b.values({0, 0, 0, 0, 2, -1.5}, {6});
  auto y = b.values({0, 1, 2, 0.5, 0, 2}, {6});
  return x.pow(y);
}
BACKWARD_CASE(GradSingular, pow_zero_base_negative_exponent, TR) {
  return b.values({0, 0}, {2}).pow(b.values({-1, -2}, {2}));
}
BACKWARD_CASE(GradSingular, pow_scalar_exponent_at_zero, TR) {
  auto x = b.values({0, 0, 1}, {3});
  return std::vector{x.pow(2), x.pow(1), x.pow(0)};
}

// ---- square roots, logs and reciprocals at 0 and inf
// ---------------------------------------------
BACKWARD_CASE(GradSingular, sqrt_log_reciprocal_at_zero_and_inf, TR) {
  auto x = b.values({0, INFINITY, 1}, {3});
  return std::vector{x.sqrt(), x.log(), x.reciprocal()};
}

// ---- saturation
// -----------------------------------------------------------------------------------
BACKWARD_CASE(GradSingular, tanh_saturated, TR) {
  return b.values({-INFINITY, -40, -20, 20, 40, INFINITY}, {6}).tanh();
}
BACKWARD_CASE(GradSingular, sigmoid_saturated, TR) {
  return b.values({-INFINITY, -200, -100, -90, 90, 100, INFINITY}, {7}).sigmoid();
}
BACKWARD_CASE(GradSingular, exp_at_infinities, TR) {
  return b.values({-INFINITY, -200, 0, 100, INFINITY}, {5}).exp();
}
BACKWARD_CASE(GradSingular, sin_cos_at_large_arguments, TR) {
  auto x = b.values({0, 100, -1000}, {3});
  return std::vector{x.sin(), x.cos()};
}

// ---- kinks and ties
// -------------------------------------------------------------------------------
BACKWARD_CASE(GradSingular, relu_abs_at_zero) {
  auto x = b.values({0, -0.0, 1, -1}, {4});
  return std::vector{x.relu(), x.abs()};
}
BACKWARD_CASE(GradSingular, clamp_at_bounds) {
  return b.values({-1, -0.5, 0, 1, 2}, {5}).clamp(-1, 1);
}
BACKWARD_CASE(GradSingular, maximum_minimum_ties) {
  auto x = b.values({1, 2, 3, -0.0}, {4}), y = b.values({1, 0, 3, 0}, {4});
  return std::vector{b.maximum(x, y), b.minimum(x, y)};
}
BACKWARD_CASE(GradSingular, max_amax_ties) {
  auto x = b.values({5, 5, 1, 2, 2, 2}, {2, 3});
  return std::vector{x.max(), x.amax({1}), x.amin({0})};
}

// ---- prod with zeros
// ------------------------------------------------------------------------------
BACKWARD_CASE(GradSingular, prod_with_one_zero) {
  return b.values({2, 0, 3, 0.5, 1, 4}, {2, 3}).prod(1);
}
BACKWARD_CASE(GradSingular, prod_with_two_zeros) {
  auto x = b.values({0, 2, 0, 3}, {4});
  return x.prod();
}
BACKWARD_CASE(GradSingular, prod_all_of_one_zero) { return b.values({1.5, -2, 0}, {3}).prod(); }

// ---- division
// ------------------------------------------------------------------------------------
BACKWARD_CASE(GradSingular, div_by_zero_and_inf) {
  return b.values({1, 0, 2, 3}, {4}) / b.values({0, 0, INFINITY, 2}, {4});
}

// ---- softmax family with -inf entries
// --------------------------------------------------------------
BACKWARD_CASE(GradSingular, softmax_with_minus_inf, TR) {
  auto x = b.values({-INFINITY, 0, 1, -INFINITY, 2, 2}, {2, 3});
  return std::vector{x.softmax(1), x.log_softmax(1)};
}
BACKWARD_CASE(GradSingular, logsumexp_with_minus_inf, TR) {
  return b.values({-INFINITY, 0, 1, 2}, {2, 2}).logsumexp({1});
}

// ---- NaN inputs propagate
// -------------------------------------------------------------------------
BACKWARD_CASE(GradSingular, nan_inputs, TR) {
  auto x = b.values({NAN, 1}, {2});
  return std::vector{x.exp(), x.tanh(), x.sqrt(), x * 2, x.sigmoid()};
}

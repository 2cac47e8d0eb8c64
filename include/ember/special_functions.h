// ember/special_functions.h — elementwise functions composed from ember's primitives (exp, log,
// sqrt, sin, cos, floor, ...): no new primitive, so every one runs on every device, fuses with its
// neighbours and has a gradient by composition. Names and semantics are libtorch's (torch::erf,
// torch::atan, ...).
//
// Dtypes: floating inputs keep their dtype; integer and bool inputs are promoted to float32 (as
// libtorch does), except ceil/trunc/round, which are the identity on integers. Float32 inputs are
// evaluated in float64 and rounded once, so the compositions' cancellation does not show in
// float32 results (tests/parity/parity_special.cpp checks them against libtorch); erf is the
// exception: float32 inputs take a float32 formula (below), within 6.5 ulp of the float64 one.
//
// Formulas (any calculus text; Abramowitz & Stegun, Handbook of Mathematical Functions, chapters
// 4 and 7, where noted):
//   tan x = sin x / cos x; sinh x = (e^x - e^-x)/2 (its Taylor polynomial for |x| < 0.5);
//   cosh x = (e^x + e^-x)/2; asinh x = sign(x) log(|x| + sqrt(x^2 + 1)) (series near 0);
//   acosh x = log(x + sqrt(x^2 - 1)); atanh x = log((1 + x)/(1 - x))/2 (series near 0);
//   atan: atan x = pi/2 - atan(1/x) for |x| > 1 (A&S 4.4.8), then atan y = 2 atan(y / (1 +
//   sqrt(1 + y^2))) twice (the half-angle formula), so |y| <= tan(pi/16), and the series
//   y - y^3/3 + y^5/5 - ... (A&S 4.4.42) to y^23; asin x = atan(x / sqrt(1 - x^2)),
//   acos x = pi/2 - asin x;
//   erf: the series 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) (A&S 7.1.5) for |x| <= 3, and
//   1 - e^(-x^2)/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + 105/(16x^8)) (A&S 7.1.23)
//   beyond (absolute error below 1e-8 there). In float32: x P(x^2) / Q(x^2) for |x| <= 4, P and Q
//   of degree 5, least-squares fitted to erf(x)/x on [0, 4] (relative error 2.5e-8), clamped to
//   [-1, 1]; +-1 beyond (erfc 4 < 2e-8); NaN stays NaN.
//   round: to the nearest integer, halves to the even one (torch.round, IEEE rounding).
#pragma once
#include "ember/tensor.h"

namespace ember {

Tensor tan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
/// NaN for x < 1.
Tensor acosh(const Tensor& x);
/// +-inf at +-1, NaN beyond.
Tensor atanh(const Tensor& x);
Tensor atan(const Tensor& x);
/// NaN outside [-1, 1].
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor erf(const Tensor& x);
/// Smallest whole number >= x; the identity on integers. Gradient 0.
Tensor ceil(const Tensor& x);
/// x rounded toward zero; the identity on integers. Gradient 0.
Tensor trunc(const Tensor& x);
/// Nearest whole number, halves to even; the identity on integers. Gradient 0.
Tensor round(const Tensor& x);

}  // namespace ember

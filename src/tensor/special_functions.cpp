// Elementwise functions composed from the primitives (include/ember/special_functions.h has the
// formulas and their sources). Each branch of a `where` is fed an input clamped to the branch's
// own range, so that the branch not taken stays finite and its zero gradient cannot become
// 0 * inf = NaN. A value is used once where a sign or offset can be applied by multiplying
// (s * r + o rather than where(c, f(r), r)): the interp device evaluates a kernel's expression as
// a tree, where every use of a value recomputes it.
#include "ember/special_functions.h"

#include <cmath>
#include <functional>
#include <numbers>

namespace ember {

namespace {

// f evaluated in float64; the result in the input's floating dtype (float32 for integers/bools).
Tensor in_f64(const Tensor& x, const std::function<Tensor(const Tensor&)>& f) {
  const ScalarType out = x.is_floating_point() ? x.dtype() : kDefaultFloat;
  return f(x.to(kFloat64)).to(out);
}

// sum_k c[k] z^k by Horner's rule.
Tensor horner(const Tensor& z, const std::vector<double>& c) {
  Tensor r = full_like(z, c.back());
  for (size_t k = c.size() - 1; k-- > 0;) r = r * z + c[k];
  return r;
}

Tensor atan_f64(const Tensor& x) {
  Tensor a = x.abs();
  Tensor inv = a > 1;
  Tensor y = where(inv, where(inv, a, 1.0).reciprocal(), a);  // in [0, 1]
  for (int i = 0; i < 2; i++) y = y / ((y.square() + 1).sqrt() + 1);
  // atan y = y sum_k (-1)^k y^(2k) / (2k + 1), |y| <= tan(pi/16) ~ 0.199: to y^23 the next term is
  // below 1e-17.
  std::vector<double> c;
  for (int k = 0; k <= 11; k++) c.push_back((k % 2 ? -1.0 : 1.0) / (2 * k + 1));
  Tensor r = y * horner(y.square(), c) * 4.0;
  // r, or pi/2 - r for |x| > 1; negated for x < 0.
  Tensor sign = 1.0 - (x < 0).to(kFloat64) * 2, flip = inv.to(kFloat64);
  return r * (sign * (1.0 - flip * 2)) + sign * flip * (std::numbers::pi / 2);
}

// The coefficients of erf x = x sum_n c[n] (x^2)^n to n = last:
// c[n] = 2/sqrt(pi) (-1)^n / (n! (2n + 1)) (A&S 7.1.5).
std::vector<double> erf_series(int last) {
  const double k2 = 2 / std::sqrt(std::numbers::pi);
  std::vector<double> c;
  double fact = 1;
  for (int n = 0; n <= last; n++) {
    if (n) fact *= n;
    c.push_back((n % 2 ? -k2 : k2) / (fact * (2 * n + 1)));
  }
  return c;
}

Tensor erf_f64(const Tensor& x) {
  constexpr double kLimit = 3.0;
  // The series to n = 60: at |x| = 3 the terms fall below 1e-20 well before.
  Tensor xs = x.clamp(-kLimit, kLimit);
  Tensor series = xs * horner(xs.square(), erf_series(60));
  Tensor a = where(x.abs() > kLimit, x.abs(), kLimit);
  Tensor inv2 = (a.square() * 2).reciprocal();  // 1 / (2 x^2)
  Tensor tail =
      horner(inv2, {1, -1, 3, -15, 105}) * (-a.square()).exp() / (a * std::sqrt(std::numbers::pi));
  Tensor big = 1.0 - tail;
  return where(x.abs() <= kLimit, series, where(x < 0, -big, big));
}

// erf in float32, at float32's speed: x P(x^2) / Q(x^2) on |x| <= 4, degree 5 over 5, fitted by
// ember (least squares on Chebyshev nodes of [0, 4], reweighted to the largest relative error of
// erf(x)/x: 2.5e-8 in float64), the result clamped to [-1, 1]. erfc 4 < 2e-8 is below half an ulp
// of 1, so the clamp of x at 4 loses nothing. About 20 operations a value and no branch: the
// series-and-erfc form before (two polynomials, an exp, NaN-keeping clamps, both branches
// computed) took ~95, and GELU's erf was 10% of bert_mini's time. The rounding of P, Q and their
// quotient near 1 bound it at 6.5 ulp of the float64 erf (tests/codegen/test_erf.cpp).
// The clamps are comparisons and selects, which keep NaN (false against any bound): GCC 12 left
// the kernel scalar (2x the old time) with the four clamps as ir MAX, whose NaN test is an ||.
Tensor erf_f32(const Tensor& x) {
  auto clamp = [](const Tensor& v, double b) { return where(v > b, b, where(v < -b, -b, v)); };
  Tensor a = clamp(x, 4.0);
  Tensor t = a.square();
  Tensor p = horner(t, {1.1283791394428644, 0.19354266409905135, 0.053101423915852784,
                        0.0038832389000076715, 0.0002845631625734424, 1.986796536873614e-06});
  Tensor q = horner(t, {1.0, 0.5048552768154766, 0.11534900371568096, 0.015207042415084844,
                        0.0011855448731360723, 3.742017718521423e-05});
  return clamp(a * p / q, 1.0);
}

}  // namespace

Tensor tan(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) { return v.sin() / v.cos(); });
}

Tensor sinh(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) {
    Tensor s = v.clamp(-0.5, 0.5);
    Tensor small =
        s * horner(s.square(), {1, 1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800});
    return where(v.abs() < 0.5, small, (v.exp() - (-v).exp()) / 2);
  });
}

Tensor cosh(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) { return (v.exp() + (-v).exp()) / 2; });
}

Tensor asinh(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) {
    Tensor s = v.clamp(-0.1, 0.1);
    // asinh x = x - x^3/6 + 3x^5/40 - 15x^7/336 + 105x^9/3456 (the binomial series of
    // 1/sqrt(1 + x^2), integrated).
    Tensor small = s * horner(s.square(), {1, -1.0 / 6, 3.0 / 40, -15.0 / 336, 105.0 / 3456});
    Tensor a = where(v.abs() >= 0.1, v.abs(), 1.0);
    Tensor big = (a + (a.square() + 1).sqrt()).log();
    return where(v.abs() < 0.1, small, where(v < 0, -big, big));
  });
}

Tensor acosh(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) { return (v + (v.square() - 1).sqrt()).log(); });
}

Tensor atanh(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) {
    Tensor s = v.clamp(-0.1, 0.1);
    Tensor small = s * horner(s.square(), {1, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11});
    return where(v.abs() < 0.1, small, ((v + 1) / (1.0 - v)).log() / 2);
  });
}

Tensor atan(const Tensor& x) { return in_f64(x, atan_f64); }

Tensor asin(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) {
    Tensor r = atan_f64(v / (1.0 - v.square()).sqrt());
    return where(v.abs() > 1, full_like(v, std::nan("")), r);
  });
}

Tensor acos(const Tensor& x) {
  return in_f64(x, [](const Tensor& v) {
    Tensor r = std::numbers::pi / 2 - atan_f64(v / (1.0 - v.square()).sqrt());
    return where(v.abs() > 1, full_like(v, std::nan("")), r);
  });
}

Tensor erf(const Tensor& x) { return x.dtype() == kFloat32 ? erf_f32(x) : in_f64(x, erf_f64); }

Tensor ceil(const Tensor& x) {
  if (!x.is_floating_point()) return x;
  return -((-x).floor());
}

Tensor trunc(const Tensor& x) {
  if (!x.is_floating_point()) return x;
  return where(x < 0, ceil(x), x.floor());
}

Tensor round(const Tensor& x) {
  if (!x.is_floating_point()) return x;
  Tensor f = x.floor(), d = x - f;
  Tensor odd = (f - (f / 2).floor() * 2) != 0;
  Tensor up = (d > 0.5).logical_or((d == 0.5).logical_and(odd));
  return where(up, f + 1, f);
}

}  // namespace ember

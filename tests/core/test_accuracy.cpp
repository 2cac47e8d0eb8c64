// Accuracy table of the transcendental primitives (issue 13): the maximum error in ulps of exp,
// log, sin, cos, tanh, sqrt, reciprocal, pow and div, float32 and float64, over wide ranges that
// include large arguments, on the `cpu` device (generated C: glibc's libm, or libmvec's SIMD
// variants where GCC vectorises the loop) and on `interp`, against a long double reference
// (glibc's x86-64 long double functions: 64-bit significand, so their own error is ~2^-11 of a
// float64 ulp). The test prints the table and fails when an entry exceeds its limit: 4 ulp for
// the transcendentals (libmvec documents <= 4 ulp; float64 target of the issue), 0.5 ulp for the
// correctly rounded sqrt, reciprocal and division.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

// A sampling range: uniform in [lo, hi], or log-uniform magnitude in [lo, hi] (lo > 0) with a
// random sign when `signed_log`.
struct Range {
  double lo, hi;
  bool log = false, signed_log = false;
};

struct OpCase {
  const char* name;
  int arity;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<long double(long double, long double)> ref;
  std::vector<Range> f32_a, f64_a;  // first operand
  std::vector<Range> f32_b, f64_b;  // second operand (binary ops), one per range of a
  double limit;
};

constexpr int kSamples = 4000;  // per range

// The exact reciprocal, the reference of Tensor::reciprocal.
long double reciprocal_ref(long double x) { return 1 / x; }

// A one-operand case: x.*method against ref (glibc's long double expl, logl, ...).
OpCase unary(const char* name, Tensor (Tensor::*method)() const, long double (*ref)(long double),
             std::vector<Range> f32, std::vector<Range> f64, double limit) {
  return {name,
          1,
          [method](const Tensor& x, const Tensor&) { return (x.*method)(); },
          [ref](long double x, long double) { return ref(x); },
          std::move(f32),
          std::move(f64),
          {},
          {},
          limit};
}

std::vector<double> sample(const Range& r, std::mt19937_64& g, int n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v;
  for (int i = 0; i < n; i++) {
    double x = r.log ? std::exp(std::log(r.lo) + u(g) * (std::log(r.hi) - std::log(r.lo)))
                     : r.lo + u(g) * (r.hi - r.lo);
    if (r.signed_log && u(g) < 0.5) x = -x;
    v.push_back(x);
  }
  return v;
}

// Error of y in ulps of the exact value r in T's format (subnormal ulps below the normal range).
template <class T>
double ulp_error(T y, long double r) {
  using L = std::numeric_limits<T>;
  T rt = static_cast<T>(r);
  if (std::isnan(r)) return std::isnan(y) ? 0 : INFINITY;
  if (std::isinf(rt)) return y == rt ? 0 : INFINITY;  // overflows to the same infinity
  if (!std::isfinite(y)) return INFINITY;
  int e = r == 0 ? L::min_exponent - 1 : std::max(std::ilogb(r), L::min_exponent - 1);
  long double ulp = std::ldexp(1.0L, e - (L::digits - 1));
  return static_cast<double>(std::abs(static_cast<long double>(y) - r) / ulp);
}

struct Cell {
  double max_ulp = 0;
  double worst_a = 0, worst_b = 0;
};

template <class T>
Cell measure(const OpCase& c, const std::string& dev) {
  bool f32 = std::is_same_v<T, float>;
  const auto& ra = f32 ? c.f32_a : c.f64_a;
  const auto& rb = f32 ? c.f32_b : c.f64_b;
  std::mt19937_64 g(12345);
  std::vector<T> a, b;
  for (size_t i = 0; i < ra.size(); i++) {
    for (double x : sample(ra[i], g, kSamples)) a.push_back(static_cast<T>(x));
    if (c.arity == 2)
      for (double x : sample(rb.at(i), g, kSamples)) b.push_back(static_cast<T>(x));
  }
  DeviceGuard guard(dev);
  Tensor ta = from_vector<T>(a), tb = c.arity == 2 ? from_vector<T>(b) : ta;
  std::vector<T> y = c.op(ta, tb).template to_vector<T>();
  Cell cell;
  for (size_t i = 0; i < a.size(); i++) {
    long double r = c.ref(a[i], c.arity == 2 ? static_cast<long double>(b[i]) : 0.0L);
    double e = ulp_error<T>(y[i], r);
    if (!(e <= cell.max_ulp)) {
      cell.max_ulp = e;
      cell.worst_a = a[i];
      cell.worst_b = c.arity == 2 ? b[i] : 0;
    }
  }
  return cell;
}

std::vector<OpCase> cases() {
  using L = long double;
  auto U = [](double lo, double hi) { return Range{lo, hi}; };
  auto LG = [](double lo, double hi) { return Range{lo, hi, true}; };
  auto SLG = [](double lo, double hi) { return Range{lo, hi, true, true}; };
  // Trigonometric ranges: the primary interval, moderate, large and huge arguments.
  std::vector<Range> trig32 = {U(-3.2, 3.2), U(-1e3, 1e3), U(-1e6, 1e6), SLG(1e6, 1e38)};
  std::vector<Range> trig64 = {U(-3.2, 3.2), U(-1e3, 1e3), U(-1e6, 1e6), SLG(1e6, 1e300)};
  return {
      unary("exp", &Tensor::exp, expl, {U(-104, 89), U(-1, 1)}, {U(-746, 710), U(-1, 1)}, 4),
      unary("log", &Tensor::log, logl, {LG(1e-45, 3e38), U(0.5, 2)}, {LG(1e-320, 1e308), U(0.5, 2)},
            4),
      unary("sin", &Tensor::sin, sinl, trig32, trig64, 4),
      unary("cos", &Tensor::cos, cosl, trig32, trig64, 4),
      unary("tanh", &Tensor::tanh, tanhl, {U(-12, 12), U(-0.01, 0.01)},
            {U(-25, 25), U(-0.01, 0.01)}, 4),
      unary("sqrt", &Tensor::sqrt, sqrtl, {LG(1e-45, 3e38)}, {LG(1e-320, 1e308)}, 0.5),
      unary("reciprocal", &Tensor::reciprocal, reciprocal_ref, {SLG(1e-37, 1e37)},
            {SLG(1e-300, 1e300)}, 0.5),
      {"pow",
       2,
       [](const Tensor& x, const Tensor& y) { return x.pow(y); },
       [](L x, L y) { return std::pow(x, y); },
       {LG(1e-2, 1e2), U(0.5, 2), U(0, 1e4)},
       {LG(1e-3, 1e3), U(0.5, 2), U(0, 1e4)},
       {U(-15, 15), U(-100, 100), U(-3, 3)},
       {U(-50, 50), U(-900, 900), U(-40, 40)},
       4},
      {"div",
       2,
       [](const Tensor& x, const Tensor& y) { return x / y; },
       [](L x, L y) { return x / y; },
       {SLG(1e-18, 1e18)},
       {SLG(1e-150, 1e150)},
       {SLG(1e-18, 1e18)},
       {SLG(1e-150, 1e150)},
       0.5},
  };
}

TEST(Accuracy, TranscendentalUlpTable) {
  std::printf("max ulp error vs long double, %d samples per range\n", kSamples);
  std::printf("%-11s %14s %14s %14s %14s  limit\n", "op", "f32 cpu", "f32 interp", "f64 cpu",
              "f64 interp");
  for (const OpCase& c : cases()) {
    Cell cells[4] = {measure<float>(c, "cpu"), measure<float>(c, "interp"),
                     measure<double>(c, "cpu"), measure<double>(c, "interp")};
    std::printf("%-11s %14.3f %14.3f %14.3f %14.3f  %.1f\n", c.name, cells[0].max_ulp,
                cells[1].max_ulp, cells[2].max_ulp, cells[3].max_ulp, c.limit);
    const char* names[4] = {"f32 cpu", "f32 interp", "f64 cpu", "f64 interp"};
    for (int k = 0; k < 4; k++)
      EXPECT_LE(cells[k].max_ulp, c.limit)
          << c.name << " " << names[k] << ": worst at x = " << cells[k].worst_a
          << (c.arity == 2 ? ", y = " + std::to_string(cells[k].worst_b) : std::string());
  }
}

}  // namespace

#include "ember/nn/init.h"

#include <cmath>

#include "ember/grad_mode.h"
#include "ember/host_values.h"
#include "ember/jit.h"

namespace ember::nn::init {

namespace {

Tensor& write(Tensor& t, const Tensor& value) {
  NoGradGuard guard;
  t.copy_(value);
  t.realize();
  return t;
}

// The initialisers compute on the host from the generator's stream (rand_values): a kernel per
// parameter shape made most of a cold start's compile work. Host values are those of the device
// expression each one replaces; a jit capture keeps the device expression (its replays draw anew).
bool on_host(const Tensor& t) {
  return !jit_capturing() && (t.dtype() == kFloat32 || t.dtype() == kFloat64);
}

// Writes host values (t's dtype) into t: a buffer copy, no kernel.
template <typename T>
Tensor& write_values(Tensor& t, const std::vector<T>& values) {
  return write(t, from_vector<T>(values, t.sizes()));
}

// Host values of double precision written as t's dtype; the rounding to float32 is the cast
// kernel's ((float)x).
Tensor& write_doubles(Tensor& t, const std::vector<double>& values) {
  if (t.dtype() == kFloat64) return write_values(t, values);
  if (t.dtype() != kFloat32) return write(t, from_vector<double>(values, t.sizes()).to(t.dtype()));
  return write_values(t, std::vector<float>(values.begin(), values.end()));
}

int64_t fan_in(const Tensor& t) {
  if (t.dim() < 2)
    throw ValueError("fan in can not be computed for a tensor with fewer than 2 dimensions");
  int64_t f = t.size(1);
  for (int64_t i = 2; i < t.dim(); i++) f *= t.size(i);
  return f;
}

}  // namespace

Tensor& uniform_(Tensor& t, double low, double high) {
  if (!on_host(t)) return write(t, rand(t.sizes(), t.dtype()) * (high - low) + low);
  // The kernel's u * (high - low) + low: the generated C contracts it to one fused multiply-add
  // (GCC's default -ffp-contract=fast; a target without FMA rounds twice, <= 1 ulp apart).
  if (t.dtype() == kFloat32) {
    const std::vector<float> u = rand_values(t.numel());
    // A float32 constant in a kernel is the double rounded to float (ir::make_const).
    const auto scale = static_cast<float>(high - low), shift = static_cast<float>(low);
    std::vector<float> v(u.size());
    for (size_t i = 0; i < u.size(); i++) v[i] = std::fma(u[i], scale, shift);
    return write_values(t, v);
  }
  const std::vector<double> u = rand_values_f64(t.numel());  // rand's 53-bit float64 draws
  std::vector<double> v(u.size());
  for (size_t i = 0; i < u.size(); i++) v[i] = std::fma(u[i], high - low, low);
  return write_values(t, v);
}

Tensor& normal_(Tensor& t, double mean, double std) {
  // On the device: the kernel's vectorised log and cos (libmvec) differ from the host's by ulps.
  return write(t, randn(t.sizes(), t.dtype()) * std + mean);
}

Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }

Tensor& constant_(Tensor& t, double value) {
  if (!on_host(t)) return write(t, full({}, value, t.dtype()));
  if (t.dtype() == kFloat32)
    return write_values(
        t, std::vector<float>(static_cast<size_t>(t.numel()), static_cast<float>(value)));
  return write_values(t, std::vector<double>(static_cast<size_t>(t.numel()), value));
}

Tensor& kaiming_uniform_(Tensor& t, double a) {
  double gain = std::sqrt(2.0 / (1.0 + a * a));
  double bound = gain * std::sqrt(3.0 / static_cast<double>(fan_in(t)));
  return uniform_(t, -bound, bound);
}

Tensor& xavier_uniform_(Tensor& t, double gain) {
  const int64_t in = fan_in(t), out = t.size(0) * (in / t.size(1));
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform_(t, -bound, bound);
}

Tensor& orthogonal_(Tensor& t, double gain) {
  if (t.dim() < 2)
    throw ValueError("orthogonal_: only tensors with 2 or more dimensions are supported");
  int64_t rows = t.size(0), cols = t.numel() / rows;
  bool transpose = rows < cols;
  int64_t m = transpose ? cols : rows, n = transpose ? rows : cols;  // m >= n
  // A standard normal m x n on the host: randn's Box-Muller, in double, on the float32 draws of
  // rand({2, m, n}) (24 random bits each: ample for an initialiser, and the values every seeded
  // run has had; the stream advances as randn({m, n}) does).
  const std::vector<float> u = rand_values(2 * m * n);
  std::vector<double> a(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); i++) {
    const double u1 = 1.0 - static_cast<double>(u[i]), u2 = static_cast<double>(u[a.size() + i]);
    a[i] = std::sqrt(std::log(u1) * -2.0) * std::cos(u2 * (2 * M_PI));
  }
  // Householder QR of a (m x n, row-major): q gets the first n columns of Q.
  std::vector<double> r = a, q(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; i++) q[i * m + i] = 1.0;
  for (int64_t k = 0; k < n; k++) {
    double norm = 0;
    for (int64_t i = k; i < m; i++) norm += r[i * n + k] * r[i * n + k];
    norm = std::sqrt(norm);
    if (norm == 0) continue;
    double alpha = r[k * n + k] > 0 ? -norm : norm;
    std::vector<double> v(static_cast<size_t>(m), 0.0);
    for (int64_t i = k; i < m; i++) v[i] = r[i * n + k];
    v[k] -= alpha;
    double vv = 0;
    for (int64_t i = k; i < m; i++) vv += v[i] * v[i];
    if (vv == 0) continue;
    for (int64_t j = 0; j < n; j++) {  // r = (I - 2vv^T/vv) r
      double d = 0;
      for (int64_t i = k; i < m; i++) d += v[i] * r[i * n + j];
      for (int64_t i = k; i < m; i++) r[i * n + j] -= 2 * v[i] * d / vv;
    }
    for (int64_t i = 0; i < m; i++) {  // q = q (I - 2vv^T/vv)
      double d = 0;
      for (int64_t j = k; j < m; j++) d += q[i * m + j] * v[j];
      for (int64_t j = k; j < m; j++) q[i * m + j] -= 2 * d * v[j] / vv;
    }
  }
  // Make the decomposition unique: multiply column k by sign(R_kk).
  std::vector<double> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < m; i++)
    for (int64_t k = 0; k < n; k++) {
      double s = r[k * n + k] < 0 ? -1.0 : 1.0;
      double v = q[i * m + k] * s * gain;
      if (transpose)
        out[k * cols + i] = v;  // (n x m) result: rows = n
      else
        out[i * cols + k] = v;
    }
  return write_doubles(t, out);
}

}  // namespace ember::nn::init

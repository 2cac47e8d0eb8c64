#include "ember/nn/init.h"

#include <cmath>

#include "ember/grad_mode.h"

namespace ember::nn::init {

namespace {

Tensor& write(Tensor& t, const Tensor& value) {
  NoGradGuard guard;
  t.copy_(value);
  t.realize();
  return t;
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
  return write(t, rand(t.sizes(), t.dtype()) * (high - low) + low);
}

Tensor& normal_(Tensor& t, double mean, double std) {
  return write(t, randn(t.sizes(), t.dtype()) * std + mean);
}

Tensor& zeros_(Tensor& t) { return write(t, zeros({}, t.dtype())); }
Tensor& constant_(Tensor& t, double value) { return write(t, full({}, value, t.dtype())); }

Tensor& kaiming_uniform_(Tensor& t, double a) {
  double gain = std::sqrt(2.0 / (1.0 + a * a));
  double bound = gain * std::sqrt(3.0 / static_cast<double>(fan_in(t)));
  return uniform_(t, -bound, bound);
}

Tensor& orthogonal_(Tensor& t, double gain) {
  if (t.dim() < 2)
    throw ValueError("orthogonal_: only tensors with 2 or more dimensions are supported");
  int64_t rows = t.size(0), cols = t.numel() / rows;
  bool transpose = rows < cols;
  int64_t m = transpose ? cols : rows, n = transpose ? rows : cols;  // m >= n
  std::vector<double> a = randn({m, n}, kFloat64).to_vector<double>();
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
  return write(t, from_vector<double>(out, t.sizes()).to(t.dtype()));
}

}  // namespace ember::nn::init

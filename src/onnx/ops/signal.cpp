// Signal processing (opset 17): HannWindow, HammingWindow, BlackmanWindow, DFT, STFT,
// MelWeightMatrix. Complex values are a trailing dim of 2 (real, imaginary), as ONNX has them.
// The DFT is two real matrix products with the host-computed cosine and sine tables:
// X_k = sum_n x_n e^(-2 pi i k n / N) (the inverse: e^(+...) / N).
#include <cmath>
#include <numbers>

#include "../tensor_proto.h"
#include "common.h"
#include "ember/convolution.h"

namespace ember::onnx::ops {
namespace {

ScalarType output_type(OpContext& c) {
  return require_dtype(static_cast<int32_t>(c.attr_int("output_datatype", 1)), "output_datatype");
}

// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1 (symmetric).
std::vector<Tensor> window(OpContext& c, double a0, double a1, double a2) {
  const int64_t size = c.ints_of(0).at(0);
  const double N = static_cast<double>(c.attr_int("periodic", 1) ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; n++) {
    const double t = 2 * std::numbers::pi * static_cast<double>(n) / N;
    w[n] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return one(from_vector(w).to(output_type(c)));
}

}  // namespace

std::vector<Tensor> hann_window(OpContext& c) { return window(c, 0.5, 0.5, 0); }
std::vector<Tensor> hamming_window(OpContext& c) { return window(c, 25.0 / 46, 1 - 25.0 / 46, 0); }
std::vector<Tensor> blackman_window(OpContext& c) { return window(c, 0.42, 0.5, 0.08); }

namespace {

// x [..., N, 1 or 2] along the dim before the last -> [..., K, 2] (K = bins), with dft_length n.
Tensor dft_last(const Tensor& x, int64_t n, bool inverse, bool onesided) {
  const int64_t N = x.size(-2);
  Tensor v = x;
  if (n != N) {  // zero-pad or truncate the signal to n
    IntList p = {0, 0, 0, n - N};
    v = constant_pad_nd(v, p);
  }
  const int64_t K = onesided ? n / 2 + 1 : n;
  std::vector<double> cs(static_cast<size_t>(n * K)), sn(cs.size());
  for (int64_t i = 0; i < n; i++)
    for (int64_t k = 0; k < K; k++) {
      const double t =
          2 * std::numbers::pi * static_cast<double>((i * k) % n) / static_cast<double>(n);
      cs[i * K + k] = std::cos(t);
      sn[i * K + k] = (inverse ? 1.0 : -1.0) * std::sin(t);
    }
  const ScalarType ft = x.dtype();
  Tensor C = from_vector(cs, Shape{n, K}).to(ft), S = from_vector(sn, Shape{n, K}).to(ft);
  Tensor re = v.select(-1, 0);
  Tensor out_re = re.matmul(C), out_im = re.matmul(S);
  if (x.size(-1) == 2) {  // (a + ib)(c + is) = (ac - bs) + i(as + bc)
    Tensor im = v.select(-1, 1);
    out_re = out_re - im.matmul(S);
    out_im = out_im + im.matmul(C);
  }
  Tensor y = stack({out_re, out_im}, -1);
  return inverse ? y / static_cast<double>(n) : y;
}

}  // namespace

std::vector<Tensor> dft(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 1), x.dim() - 1);
  const bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  if (inverse && onesided) throw UnsupportedError("an inverse onesided DFT is not supported");
  const int64_t n = c.has(1) ? c.ints_of(1).at(0) : x.size(a);
  // The signal dim next to the complex dim, back afterwards.
  Tensor v = x.transpose(a, -2);
  return one(dft_last(v, n, inverse, onesided).transpose(a, -2));
}

std::vector<Tensor> stft(OpContext& c) {
  const Tensor& x = c.in(0);  // [batch, length, 1 or 2]
  const int64_t step = c.ints_of(1).at(0);
  const bool onesided = c.attr_int("onesided", 1) != 0;
  Tensor win = c.has(2) ? c.in(2) : Tensor();
  const int64_t len = c.has(3) ? c.ints_of(3).at(0) : win.size(0);
  Tensor frames = unfold(x, 1, len, step);  // [batch, frames, comp, len]
  frames = frames.transpose(-1, -2);        // [batch, frames, len, comp]
  if (win.defined()) frames = frames * win.reshape({len, 1});
  return one(dft_last(frames, len, false, onesided));
}

// The reference of ONNX's backend tests: mel bands spaced evenly on 2595 log10(1 + f / 700)
// between the edges, mapped to DFT bins ((dft_length + 1) f // sample_rate), triangles of peak 1.
std::vector<Tensor> mel_weight_matrix(OpContext& c) {
  const int64_t bins = c.ints_of(0).at(0), dft_length = c.ints_of(1).at(0),
                rate = c.ints_of(2).at(0);
  const double lo = c.floats_of(3).at(0), hi = c.floats_of(4).at(0);
  const int64_t spec = dft_length / 2 + 1;
  auto mel = [](double f) { return 2595 * std::log10(1 + f / 700); };
  const double step = (mel(hi) - mel(lo)) / static_cast<double>(bins + 2);
  std::vector<int64_t> f(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; i++) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + mel(lo)) / 2595) - 1);
    f[i] = static_cast<int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> w(static_cast<size_t>(spec * bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    if (j < 0 || j >= spec) throw ValueError("a mel band reaches past the spectrogram's bins");
    return w[j * bins + i];
  };
  for (int64_t i = 0; i < bins; i++) {
    const int64_t l = f[i], m = f[i + 1], r = f[i + 2];
    if (m == l)
      at(m, i) = 1;
    else
      for (int64_t j = l; j <= m; j++)
        at(j, i) = static_cast<double>(j - l) / static_cast<double>(m - l);
    for (int64_t j = m; j < r; j++)
      at(j, i) = static_cast<double>(r - j) / static_cast<double>(r - m);
  }
  return one(from_vector(w, Shape{spec, bins}).to(output_type(c)));
}

}  // namespace ember::onnx::ops

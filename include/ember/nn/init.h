// ember/nn/init.h — in-place initialisers (torch::nn::init names). They run without recording
// gradients and write into the tensor's buffer.
#pragma once
#include "ember/tensor.h"

namespace ember::nn::init {

/// A (semi-)orthogonal matrix times gain (Saxe et al. 2013), from the QR decomposition of a
/// standard normal matrix with the signs of R's diagonal folded in; tensor must have >= 2 dims
/// (trailing dims are flattened).
Tensor& orthogonal_(Tensor& t, double gain = 1.0);
/// U(-b, b) with b = gain * sqrt(3 / fan_in), gain = sqrt(2 / (1 + a^2)) (leaky_relu), as PyTorch.
Tensor& kaiming_uniform_(Tensor& t, double a = 0.0);
/// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio 2010, equation 16;
/// fan_out = size(0) times the trailing dims' sizes), as PyTorch; >= 2 dims (ValueError).
Tensor& xavier_uniform_(Tensor& t, double gain = 1.0);
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0);
Tensor& zeros_(Tensor& t);
Tensor& constant_(Tensor& t, double value);

}  // namespace ember::nn::init

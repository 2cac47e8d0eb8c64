// ember/activations.h — the activation functions of convolutional networks and transformers
// (libtorch's torch::gelu, torch::silu, torch::softplus, torch::leaky_relu: names, argument orders,
// semantics). Compositions of ember's primitives: they fuse with their neighbours and have
// gradients by composition, which equal libtorch's backward formulas.
//
// Formulas (Hendrycks & Gimpel, "Gaussian Error Linear Units", 2016, for GELU and its tanh form;
// Elfwing et al., "Sigmoid-weighted linear units", 2018, for SiLU):
//   gelu(x)       = x/2 (1 + erf(x / sqrt 2))                        approximate = "none"
//                 = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))     approximate = "tanh"
//   silu(x)       = x sigmoid(x)
//   softplus(x)   = log(1 + e^(beta x)) / beta, and x itself where beta x > threshold; computed as
//                   z + log(1 + e^-z) for z = beta x > 0, so that e^z cannot overflow, and in
//                   float64 for narrower inputs
//   leaky_relu(x) = x where x > 0, else negative_slope x (gradient negative_slope at 0, as
//                   libtorch)
// Dtypes: floating inputs only (DTypeError otherwise, as libtorch's kernels); the result has the
// input's dtype. Errors: ValueError for an unknown `approximate`.
#pragma once
#include <string>

#include "ember/tensor.h"

namespace ember {

Tensor gelu(const Tensor& self, const std::string& approximate = "none");
Tensor silu(const Tensor& self);
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);

}  // namespace ember

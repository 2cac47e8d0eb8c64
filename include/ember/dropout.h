// ember/dropout.h — dropout (libtorch's torch::dropout: name, argument order, semantics;
// Srivastava et al., "Dropout: a simple way to prevent neural networks from overfitting", JMLR
// 2014, with the "inverted" scaling of the kept elements so that inference is the identity).
//
// In training each element is zeroed with probability p and the others are scaled by 1 / (1 - p);
// the gradient is the same mask and scale. The mask comes from ember's counter-based generator
// (ember::rand, seeded by manual_seed or a ScopedGenerator): a run is reproducible from its seed,
// on every device and thread count, but its masks are not libtorch's. A jit replay draws a fresh
// mask on every call. Without training, or with p = 0, the input is returned as it is.
// Errors: ValueError for p outside [0, 1]; DTypeError for a non-floating input in training.
#pragma once
#include "ember/tensor.h"

namespace ember {

Tensor dropout(const Tensor& input, double p, bool train);

}  // namespace ember

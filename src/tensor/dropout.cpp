// Dropout as a comparison of uniform draws with p and a select (include/ember/dropout.h).
#include "ember/dropout.h"

#include <string>

namespace ember {

Tensor dropout(const Tensor& x, double p, bool train) {
  if (!(p >= 0 && p <= 1))
    throw ValueError("dropout: probability must be in [0, 1], got " + std::to_string(p));
  if (!train || p == 0) return x;
  if (!x.is_floating_point())
    throw DTypeError(std::string("dropout: expected a floating input, got ") +
                     dtype_name(x.dtype()));
  if (p == 1) return x * 0;  // every element dropped; the gradient is zero too
  // float32 draws (multiples of 2^-24) for every dtype: P(u >= p) = 1 - p to that resolution.
  Tensor keep = rand(x.shape(), kFloat32) >= p;
  return where(keep, x * (1 / (1 - p)), Scalar(0));
}

}  // namespace ember

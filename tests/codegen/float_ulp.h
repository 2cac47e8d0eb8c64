// Helpers of the float32 accuracy tests (test_tanh.cpp, test_erf.cpp): a result's distance from
// the exact (double) value in units in the last place, and a sweep over the floats.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ember::test {

inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// |got - exact| in ulp of the float nearest `exact` (subnormal results: the smallest ulp).
inline double ulp_distance(float got, double exact) {
  const float ef = static_cast<float>(exact);
  const double ulp = std::fabs(ef) < 1.17549435e-38f ? std::ldexp(1.0, -149)
                                                     : std::ldexp(1.0, std::ilogb(ef) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

/// Every `stride`-th float from +0 to the float with bits `top`, each also negated.
inline std::vector<float> float_sweep(uint32_t stride, uint32_t top) {
  std::vector<float> v;
  for (uint32_t u = 0; u <= top; u += stride) {
    v.push_back(from_bits(u));
    v.push_back(-from_bits(u));
  }
  return v;
}

}  // namespace ember::test

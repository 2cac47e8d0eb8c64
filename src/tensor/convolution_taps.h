// A convolution's kernel taps as views of its input, shared by the convolution's paths
// (convolution.cpp) and its depthwise tap sum (depthwise_convolution.cpp).
#pragma once
#include <functional>
#include <numeric>
#include <vector>

#include "ember/tensor.h"

namespace ember::detail {

/// The product of s's values (1 when empty).
inline int64_t product(const IntList& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

/// A convolution's geometry over the last n dims of its input.
struct Taps {
  IntList kernel, stride, dilation, lo, hi;  // lo, hi: the zero padding before and after
  Shape out;                                 // O_i
};

/// The input x [N, C, *S] as xs [N, C, R_1, s_1, R_2, s_2, ...]: each spatial dim split into rows
/// of its stride s_i, the rows zero-padded by (rows_lo_i, rows_hi_i) for the convolution's padding.
/// A view of x (a masked one where it pads) where every s_i divides S_i; otherwise x's ends are
/// padded to whole rows first, in one copy. Each tap is a shrink of this one view (tap()), so
/// autograd sums the taps' gradients in its layout in one kernel and reshapes the sum back once.
struct Split {
  Tensor xs;
  IntList rows_lo;
};
Split split_input(const Tensor& x, const Taps& g);

/// Tap j of the windows: [N, C, *O], element [n, c, o] = x[n, c, o * s + at - lo] (zero outside
/// x) with at = j * dilation per dim (a view of split_input's rows).
Tensor tap(const Split& x, const IntList& j, const Taps& g);

/// Every tap index of the kernel, row-major.
std::vector<IntList> tap_indices(const IntList& kernel);

/// Whether x is stored data viewed (a buffer or a realized copy under movements only): its taps
/// then read it in place, where a computed x is realized first.
bool stored(const Tensor& x);

/// split_input's rows xs [N, C, R_1, s_1, ...] copied phase by phase, [N, C, s_1, ..., R_1, ...],
/// and viewed back in xs's order (convolution.cpp says when it pays).
Tensor phase_major(const Tensor& xs);

/// Largest kernel that a depthwise convolution sums tap by tap (one term per tap in one kernel).
/// Only without gradients: the weight's would be one reduction per tap, where the stacked taps
/// (cols) give one.
constexpr int64_t kMaxDirectTaps = 64;

/// A depthwise convolution without gradients (Cg = 1, kernel up to kMaxDirectTaps taps):
/// x [N, C, *S] -> [N, G, OCg, *O] plus bias ([OC] or undefined), the sum over the taps of
/// tap * w[tap] (depthwise_convolution.cpp).
Tensor depthwise(const Tensor& x, const Tensor& w, const Tensor& bias, const Taps& g,
                 int64_t groups);

}  // namespace ember::detail

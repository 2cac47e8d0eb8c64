// The loop shapes the C renderer specialises, and the heuristic plans for: predicates over a
// kernel's axes and loads (short axes, concatenations, masked ends), shared by render_c.cpp and
// plan_heuristic.cpp.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "schedule/kernel.h"

namespace ember::codegen {

/// A sum over one short axis (at most 4 terms) whose operands are contiguous or constant along
/// the last output axis, with at least two output axes: e.g. the policy head's input gradient
/// (dz @ W, K = 2, times 1 - h^2). Without upcasts it renders as an elementwise kernel, the reduce
/// unrolled inside the vectorised loop over the last output axis: a product's register tile
/// would do K multiply-adds per accumulator and then round-trip the tile through memory.
bool short_reduce(const schedule::Kernel& k);
/// Whether an elementwise kernel's last axis is short enough (at most 4) to be unrolled inside
/// the loop around it, which then vectorises (render_c.cpp), with these upcasts.
bool short_last_axis(const schedule::Kernel& k, const std::vector<int64_t>& upcast);
/// Whether axis d (not the last) of an elementwise kernel concatenates (cat, stack, a
/// convolution's stacked taps): at most kMaxConcatAxis long, and its loads masked to at least two
/// pairwise disjoint slices of it (loads of one slice share its mask). Code that knows the index
/// along d as a constant drops every other piece (their masks fold to false): the heuristic unrolls
/// such an axis whole (plan_heuristic.cpp), and the renderer specialises axis 0 (the thread pool's,
/// which an unroll would leave one unit of work) by a switch over its values.
bool concat_axis(const schedule::Kernel& k, size_t d);
/// 64: a 7x7 convolution's 49 stacked taps (ResNet's stem) unroll too; not unrolled, its copy
/// loads and masks all 49 per element (24-31 ms against 1.1 ms, batch 1, one thread).
constexpr int64_t kMaxConcatAxis = 64;
/// An elementwise kernel's innermost loop (the vectorised one, upcast 1, no nests) whose loads'
/// masks cut its ends, as a padded copy's do: the range [lo, hi) of that axis where every such
/// mask holds, there rendered as a loop of its own without their tests (which keep GCC from
/// vectorising it: a depthwise 3x3 convolution of 144x56x56 padded by 1, its copy and tap sum,
/// 0.31-0.49 ms against 0.41-0.79 ms unsplit; bench_conv_paired, avx2, one thread). {0, 0} when
/// no mask cuts it or the middle is shorter than one AVX2 vector.
std::pair<int64_t, int64_t> unmasked_range(const schedule::Kernel& k,
                                           const std::vector<int64_t>& upcast);
/// An elementwise kernel's loads masked along the axes around its innermost loop (a padded copy's
/// rows, or its rows and columns where the channels are innermost): per axis d < rank - 1, the
/// range [lo, hi) of its index inside every such mask ({0, size} where none cuts it), so that the
/// renderer can test them once around the innermost loop and render it unmasked where they hold
/// (its loads' invariant masks keep GCC from vectorising it: MobileNetV3's padded channels-last
/// copy of 16x114x114, see render_c.cpp). Empty where that leaves a mask in the loop (one along
/// the innermost axis that unmasked_range does not split off, disjoint masks), with upcasts, nests
/// or a short last axis, or where no mask cuts an outer axis. Axis 0 is skipped where `fixed0`
/// (the renderer's switch over it makes its masks constants).
std::vector<std::pair<int64_t, int64_t>> outer_unmasked_ranges(const schedule::Kernel& k,
                                                               const std::vector<int64_t>& upcast,
                                                               bool fixed0);

/// Whether a constant stride (in elements) along a loop keeps GCC 12 from vectorising it: a power
/// of two of at least 8. GCC takes such an access for an interleaved group with a gap, finds no
/// permutation for a gap that wide ("not falling back to elementwise accesses"), and leaves the
/// whole loop scalar; other constant strides, and strides it cannot see, it loads element by
/// element into vectors. The transposed reads of a convolution's channels-last output (stride 64,
/// 128, ...) are such strides.
bool opaque_stride(int64_t stride);
/// The distinct strides along axis d of an elementwise kernel's loads and output views that
/// opaque_stride picks (none along a size-1 axis).
std::vector<int64_t> opaque_strides(const schedule::Kernel& k, size_t d);

}  // namespace ember::codegen

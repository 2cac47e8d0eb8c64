// The C renderer: one kernel, as its plan (kernel_plan.h) lays it out -> one C function
//   void NAME(void* const* bufs, int64_t start, int64_t end)
// which computes units of work [start, end) (KernelPlan::units; the thread pool splits that
// range). Buffers are passed in kernel slot order (slot 0 = output), then the scratch or the row
// count where the plan has one. The same loop renderer writes the GPU-style dialects' kernels
// (dialect.h) other than products: one work-item or one work-group per output element.
#pragma once
#include <sstream>
#include <string>
#include <vector>

#include "codegen/dialect.h"
#include "codegen/kernel_plan.h"
#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// Includes and helpers shared by every kernel of a translation unit, with the SIMD vector types
/// of `target` (the tiled and dot plans' lanes must match them).
std::string c_prelude(const Target& target);
/// The kernel's function. Throws ember::Error (an internal error) when the plan does not fit the
/// kernel (KernelPlan::illegal).
std::string render_c(const schedule::Kernel& k, const KernelPlan& plan, const std::string& fn_name);
/// The kernel in a dialect with work-items (dialect.h; not C), by the loop renderer: one work-item
/// per output element (the output axes flattened, the last fastest; one for a full reduction),
/// each running the kernel's plain loops over its reduce axes and nests (plain_loop_plan); or,
/// with `group` > 0 (a power of two) and a reduce, one work-group of `group` work-items per output
/// element (GpuKind::GroupReduce). The products' tiles are render_gpu.h's.
std::string render_work_item(const schedule::Kernel& k, const std::string& fn_name,
                             const Dialect& d, int64_t group = 0);
int64_t work_items(const schedule::Kernel& k);
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
/// convolution's stacked taps): at most kMaxConcatAxis long, and its value a sum of at least two
/// loads masked to pairwise disjoint slices of it. Code that knows the index along d as a
/// constant drops every other piece (their masks fold to false): the heuristic unrolls such an
/// axis whole (plan_heuristic.cpp), and the renderer specialises axis 0 (the thread pool's,
/// which an unroll would leave one unit of work) by a switch over its values.
bool concat_axis(const schedule::Kernel& k, size_t d);
/// 64: a 7x7 convolution's 49 stacked taps (ResNet's stem) unroll too; not unrolled, its copy
/// loads and masks all 49 per element (24-31 ms against 1.1 ms, batch 1, one thread).
constexpr int64_t kMaxConcatAxis = 64;

}  // namespace ember::codegen

// The C renderer: one kernel, as its plan (kernel_plan.h) lays it out -> one C function
//   void NAME(void* const* bufs, int64_t start, int64_t end)
// which computes units of work [start, end) (KernelPlan::units; the thread pool splits that
// range). Buffers are passed in kernel slot order (slot 0 = output), then the scratch or the row
// count where the plan has one.
#pragma once
#include <sstream>
#include <string>
#include <vector>

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
/// The generated function's signature line and its typed buffer pointers b0, b1, ... (slot
/// order; the outputs writable).
void render_signature(std::ostringstream& s, const std::string& fn, const schedule::Kernel& k);
/// A sum over one short axis (at most 4 terms) whose operands are contiguous or constant along
/// the last output axis, with at least two output axes: e.g. the policy head's input gradient
/// (dz @ W, K = 2, times 1 - h^2). Without upcasts it renders as an elementwise kernel, the reduce
/// unrolled inside the vectorised loop over the last output axis: a product's register tile
/// would do K multiply-adds per accumulator and then round-trip the tile through memory.
bool short_reduce(const schedule::Kernel& k);
/// Whether an elementwise kernel's last axis is short enough (at most 4) to be unrolled inside
/// the loop around it, which then vectorises (render_c.cpp), with these upcasts.
bool short_last_axis(const schedule::Kernel& k, const std::vector<int64_t>& upcast);

}  // namespace ember::codegen

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

}  // namespace ember::codegen

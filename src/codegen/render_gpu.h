// Kernels in the dialects with work-items (OpenCL, CUDA: dialect.h), as their GpuPlan
// (kernel_plan.h) lays them out: items and group reduces by the loop renderer (render_c.h,
// render_work_item), tiled products by render_gpu_product.cpp. Internal to codegen.
#pragma once
#include <string>

#include "codegen/dialect.h"
#include "codegen/kernel_plan.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// The kernel's function `fn` in dialect `d` (which has work-items), for a launch of plan.groups
/// work-groups of plan.local work-items. Throws ember::Error (an internal error) for a C dialect
/// or a plan that does not fit the kernel.
std::string render_gpu(const schedule::Kernel& k, const GpuPlan& plan, const std::string& fn,
                       const Dialect& d);

}  // namespace ember::codegen

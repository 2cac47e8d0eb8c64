// The dot-product kernel for small products (a batch of a few rows) whose column operand is
// contiguous along the reduce axis: nn::Linear's x @ W^T. The tiled reduce would stage W^T in a
// transposed panel at every launch, a pass over the whole weight for a few rows of work; this
// kernel reads both operands in place, as vectors along the reduce axis, for a register tile of
// rows x columns, then sums each accumulator's lanes. No packing, one unit of work per batch
// index. Laid out by a DotPlan (kernel_plan.h). Internal to codegen.
#pragma once
#include <string>

#include "codegen/kernel_plan.h"
#include "codegen/render_tile.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// The kernel for `plan` and the kernel's operands `p` (the plan's legality checked by the
/// caller: KernelPlan::illegal); its units of work are the row blocks of each batch index.
std::string render_dot(const schedule::Kernel& k, const DotPlan& plan, const TileOperands& p,
                       const std::string& fn);

}  // namespace ember::codegen

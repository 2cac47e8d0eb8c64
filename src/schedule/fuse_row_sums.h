// Row sums beside a product (docs/design.md principle 3): autograd gives every nn::Linear with a
// bias a weight gradient dZ^T X (a product whose reduce axis is the batch) and a bias gradient, dZ
// summed over the batch. Both read dZ along the same axis; as one kernel, dZ is read once.
#pragma once
#include <vector>

#include "schedule/schedule.h"

namespace ember::schedule {

/// Merges (in place, keeping the order valid) a kernel R that only sums an elementwise term of
/// one floating-point load (constants and ALU ops around it) over its reduce axis into a kernel P
/// that SUMs over one reduce axis (a product) and loads the same elements of the same buffer, along
/// the same reduce axis, as one of its operands: R's value becomes P's second output, a Reduce over
/// P's reduce axis whose store view is 0 along the output axes the operand does not vary on. Both
/// kernels come out simplified. The earlier of the two moves to the later one's place, only when
/// no kernel after it up to that place (the later one included) reads its output.
void fuse_row_sums(std::vector<ScheduleItem>& items);

}  // namespace ember::schedule

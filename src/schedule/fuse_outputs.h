// Multi-output fusion (docs/design.md principle 3): elementwise kernels over one loop space that
// share data become one kernel that stores several buffers. An optimizer's update of one parameter
// (clipped gradient, exp_avg, exp_avg_sq, the parameter) reads each input once and is one launch
// instead of four.
#pragma once
#include <vector>

#include "schedule/schedule.h"

namespace ember::schedule {

/// Merges the items (in schedule order) in place and keeps the order valid. An elementwise item B
/// joins an earlier elementwise group G over the same loop space when
///  - B reads G's outputs only at the index it stores them (their values are inlined, not loaded),
///    or B and G read one input at the same, non-broadcast index (it is loaded once), and
///  - no kernel since G read G's outputs: G moves to B's place in the order.
void fuse_outputs(std::vector<ScheduleItem>& items);

/// True when every load of `slot` in the kernel's values uses the view `v` (the loop index).
bool reads_only_at(const Kernel& k, int slot, const ir::View& v);

/// An input slot that holds the buffer of one of the kernel's outputs (an in-place update) is
/// dropped and its loads read the output slot: the kernel then sees that buffer through one
/// pointer, so the generated C's restrict-qualified pointers never alias and the compiler keeps
/// each load of an element before the store that overwrites it.
void alias_inputs_to_outputs(ScheduleItem& item);

}  // namespace ember::schedule

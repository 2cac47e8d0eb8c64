// The materialisation pass: which values of a graph get a buffer of their own, and the kernel that
// computes each (docs/design.md principle 3).
//
// The set starts with the roots, every CONTIGUOUS and every reduce with several users. Lowering a
// kernel then asks for more (lower.h, Materialise): a view that no strided view expresses, an
// expensive value under a broadcast, a reduce that cannot fuse; a reduce nested in two places is
// added too. A new member changes only the kernels whose lowering looked at it (their `touched`
// nodes): the pass lowers exactly those again, plus the new member's own kernel, always the
// earliest pending kernel in graph order first. This reaches the same set, in the same order, as
// lowering the whole schedule again after every addition, with each kernel lowered about once.
#pragma once
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "schedule/schedule.h"

namespace ember::schedule {

struct Materialised {
  std::unordered_set<const ir::Node*> set;  // values with a buffer (the roots included)
  std::unordered_map<const ir::Node*, BufferName> names;  // of each member that is not a BUFFER
  std::vector<KernelBuffer> fresh;                        // their buffers (schedule.h BufferName)
  std::vector<ScheduleItem> items;  // one kernel per member that is not a BUFFER, in graph order
  int initial = 0;                  // members before lowering asked for more
  int lowerings = 0;                // kernels lowered, counting each retry
};

/// `order`: the nodes below `roots` in topological order; `users`: their distinct consumers;
/// `name`: the names of the graph's buffers. `whole_schedule`: the reference for tests: every
/// addition lowers all kernels again, as the scheduler did before this pass.
Materialised materialise(const std::vector<const ir::Node*>& roots,
                         const std::vector<const ir::Node*>& order,
                         const std::unordered_map<const ir::Node*, int>& users,
                         const NameBuffer& name, bool whole_schedule = false);

/// Test hook (tests/schedule/materialise_check.cpp): while on, every materialise() also runs the
/// reference and throws Error when the set or a kernel differs.
void set_materialise_check(bool on);

}  // namespace ember::schedule

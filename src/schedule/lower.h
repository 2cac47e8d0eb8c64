// Lowering: one materialised value and the graph fused below it become one kernel (schedule.h
// lists the fusion rules). Lowering stops with `Materialise` when it meets a value that the rules
// say cannot fuse into this kernel; the materialisation pass (materialise.h) decides from these
// requests which values get a buffer.
#pragma once
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "schedule/schedule.h"

namespace ember::schedule {

/// Thrown by lower_kernel: `node` cannot fuse into the kernel being lowered and must be
/// materialised first.
struct Materialise {
  const ir::Node* node;
};

struct LoweredKernel {
  ScheduleItem item;
  std::vector<const ir::Node*> nested;  // the reduces lowered as nests, once per nest
  /// Every node whose membership in the materialised set the lowering looked at: materialising
  /// any other node leaves this kernel unchanged.
  std::unordered_set<const ir::Node*> touched;
};

/// Lowers the kernel that computes `root` (a member of `mat`); the other members of `mat` are
/// loaded from their buffers `names`, graph buffers from `name`'s. `users`: the distinct
/// consumers of every node below the roots.
LoweredKernel lower_kernel(const ir::Node* root, const std::unordered_set<const ir::Node*>& mat,
                           const std::unordered_map<const ir::Node*, int>& users,
                           const std::unordered_map<const ir::Node*, BufferName>& names,
                           const NameBuffer& name);

}  // namespace ember::schedule

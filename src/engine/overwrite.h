// Copy-on-write for in-place overwrites. A lazy value is a value: one built before an in-place
// update of a buffer it reads must still see the data it was built on, even when it is realized
// after the update. Before an operation overwrites buffers in place it calls
// preserve_for_readers, which gives every BUFFER node of those buffers that something outside the
// operation can still reach a private copy of the current data, and the writer then bumps the
// storage's version (new BUFFER nodes read the new data).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "engine/buffer_table.h"

namespace ember::engine {

/// `targets`: the storages about to be overwritten. `roots`: the graphs the operation itself
/// reads while writing (they may read the targets' current data) with, for each root, the
/// number of references to it that the operation holds (this entry, its other handles and the
/// tensors whose value it is). A node of those graphs is reachable from outside when it has more
/// references than the operation and the graph account for. Returns the number of copies made.
/// The copies are the engine's copy launches (copy_storage), which a jit capture records so that a
/// replay keeps the same copies; they count in runtime_stats().buffers_preserved.
int preserve_for_readers(const std::vector<StorageRef>& targets,
                         const std::vector<std::pair<ir::NodeRef, long>>& roots);

}  // namespace ember::engine

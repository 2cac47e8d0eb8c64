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

#include "ir/node.h"

namespace ember::ir {

/// `targets`: the storages about to be overwritten. `roots`: the graphs the operation itself
/// reads while writing (they may read the targets' current data) with, for each root, the
/// number of references to it that the operation holds (this entry, its other handles and the
/// tensors whose value it is). A node of those graphs is reachable from outside when it has more
/// references than the operation and the graph account for. Returns the number of copies made.
/// `copy(dst, src)` copies one storage's data into another (the engine's copy launch, which a
/// jit capture records so that a replay keeps the same copies).
using CopyFn =
    std::function<void(const std::shared_ptr<Storage>& dst, const std::shared_ptr<Storage>& src)>;
int preserve_for_readers(const std::vector<std::shared_ptr<Storage>>& targets,
                         const std::vector<std::pair<NodeRef, long>>& roots, const CopyFn& copy);

/// Throws Error when a BUFFER node reads a version of its storage that was overwritten (a
/// reader that preserve_for_readers missed: a bug, never a silent wrong value).
void check_current(const Node& buffer);

}  // namespace ember::ir

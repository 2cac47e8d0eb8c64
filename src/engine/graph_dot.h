// GRAPH=1 (docs/design.md principle 8): Graphviz files of one realize's op graph and kernel graph.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "schedule/schedule.h"

namespace ember::engine {

/// Writes <dir>/realize-<n>.ops.dot (every node below the roots; BUFFER and CONST are leaves) and
/// <dir>/realize-<n>.kernels.dot (kernels as boxes, buffers as ellipses, an edge per read and
/// write, dashed edges for the schedule's copies) and <dir>/realize-<n>.fused.dot (the op graph
/// with each kernel a cluster around the ops it fused), n counting realizes from 0. Writes nothing
/// after Context::kMaxGraphRealizes realizes. Files are written atomically; throws ember::Error
/// when the directory or a file cannot be written.
void write_realize_graphs(const std::vector<schedule::Root>& roots, const schedule::Schedule& sched,
                          const std::vector<std::shared_ptr<runtime::Program>>& programs,
                          const std::string& dir);

}  // namespace ember::engine

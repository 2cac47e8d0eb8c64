// The engine's realize: graph roots -> launch list (from the plan cache, or scheduled, with
// programs from the program cache or compiled) -> run (launch_list.h).
//
// The engine's other parts: buffer_table.h (the memory behind BUFFER nodes), launch_list.h (the
// one run loop, sync), launch_sink.h (queue, record, compile-only scopes), programs.h (program
// cache, CompileOnly), overwrite.h (copy-on-write of in-place targets), plan_cache.h.
#pragma once
#include <memory>
#include <vector>

#include "engine/buffer_table.h"
#include "engine/launch_list.h"
#include "engine/launch_sink.h"
#include "engine/overwrite.h"
#include "engine/plan_cache.h"
#include "engine/programs.h"

namespace ember::engine {

/// Realizes graph roots in one launch list and returns the buffer that holds each root's value. A
/// root with an in-place target leaves its value in the target, which gets a new version.
/// `holders`: the node of each distinct handle (the caller's tensors) on a root's value, so that
/// the copy-on-write of in-place targets (overwrite.h) does not count them as outside readers;
/// read only when a root has an in-place target (the caller may pass none otherwise).
/// Roots whose graphs read storages in different memories (host, a device: Tensor::to) are
/// realized apart, each on its memory's device; one root whose graph reads two throws ValueError
/// (launch_list.h, placement).
std::vector<StorageRef> realize(const std::vector<Root>& roots,
                                const std::vector<const ir::Node*>& holders);
/// The same, into `results` (one per root): a caller that keeps the vector between calls (an
/// eager call's realize) allocates none.
void realize(const std::vector<Root>& roots, const std::vector<const ir::Node*>& holders,
             std::vector<StorageRef>& results);

/// The device whose memory holds the buffers that root's value reads, and `target` (an in-place
/// target) when given (null: host memory, or none). Throws ValueError when they live in two
/// (launch_list.h, placement).
runtime::Device* placement_of(const ir::Node& root, const StorageRef* target = nullptr);

}  // namespace ember::engine

// Jit replays as device graphs (issue 41: cuda's CUDA graphs): run() hands a capture's launch list
// (LaunchList::graph_key) to its device as one sequence (runtime::Device::launch_graph) where
// nothing needs the launches one by one.
#pragma once
#include <cstdint>
#include <functional>

#include "engine/launch_list.h"
#include "runtime/storage.h"

namespace ember::engine {

/// A new LaunchList::graph_key: a number never given before in the process.
uint64_t new_graph_key();

/// Runs `list` (slot(s): the storage of slot s) as one sequence on a device, and marks what it
/// writes written there, where the list has a graph key, every buffer lives in the memory of one
/// device and every program is that device's (no copies around the launches; copy steps between
/// its buffers join the sequence), no DEBUG=2 / PROFILE timing or BEAM search asks for the
/// launches one by one, and the device runs sequences. False, with nothing run, otherwise.
bool launch_as_graph(const LaunchList& list, const std::function<runtime::Storage*(int32_t)>& slot);

}  // namespace ember::engine

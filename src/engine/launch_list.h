// The launch list: what one realize, or one jit replay, runs. The scheduler's kernels become
// programs on numbered buffer slots; the plan cache stores the list of a realize's graph, and a jit
// capture records the lists its function ran into one list of its own. run() is the one loop
// that launches kernels and keeps their statistics; what it does with a list (launch now, queue,
// nothing, record) is the calling thread's launch sink (launch_sink.h).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/buffer_table.h"
#include "runtime/device.h"

namespace ember::engine {

/// One launch: `program` on the buffers of `slots` (the program's slot order: outputs, then
/// inputs), or, without a program, a copy of the buffer of slots[1] into that of slots[0]: the
/// list's host<->device transfers (Tensor::to) are such copies, between storages that live in
/// different memories (runtime::copy_data).
struct LaunchStep {
  std::shared_ptr<runtime::Program> program;
  std::vector<int32_t> slots;
};

/// Slots [0, bound) are buffers the caller binds on each run (a graph's buffers, in-place targets,
/// a capture's inputs and kept intermediates); slot bound + i is a new buffer of fresh[i] on each
/// run (a realize's new values, a replay's outputs).
struct LaunchList {
  std::vector<LaunchStep> steps;
  int32_t bound = 0;
  std::vector<std::pair<ScalarType, int64_t>> fresh;
  /// The device whose memory holds the new buffers (a realize of tensors that live there); null:
  /// host memory.
  runtime::Device* place = nullptr;
  /// Where each new buffer lives, where they differ (a jit capture's list: each where its
  /// capture's buffer lived); empty: all at `place`.
  std::vector<runtime::Device*> fresh_place;
  /// (step, slot) of each new buffer that is not a result (a realize's intermediates), at the last
  /// step that names it, in step order: run() frees its data after that step, so that a graph's
  /// intermediates are not all alive at its end (a network's would be all its activations).
  std::vector<std::pair<int32_t, int32_t>> releases;
  /// A jit capture's list (a number of its own, never reused; 0 for others): a replay may run as
  /// one graph on its device (graph_launch.h), kept under this number.
  uint64_t graph_key = 0;

  int32_t slots() const { return bound + static_cast<int32_t>(fresh.size()); }
  /// The slot of new buffer `i`.
  int32_t fresh_slot(size_t i) const { return bound + static_cast<int32_t>(i); }
  /// Sets `releases`: every new buffer but those of `kept` (the results), after its last step.
  void release_after_last_use(const std::vector<int32_t>& kept);
};

/// Runs `list` with `bound[s]` as the buffer of bound slot s, after making its new buffers in
/// `fresh` (resized; its memory is reused by the caller's next run). Per the calling thread's
/// sink: launches now (the default; first every launch held back by any thread, so that values
/// are computed in order), queues (DeferLaunches), launches nothing (CompileOnly), or records and
/// launches now (a jit capture). Counts runtime_stats().kernels_launched; DEBUG=2 and PROFILE time
/// each launch.
void run(const LaunchList& list, std::span<const StorageRef* const> bound,
         std::vector<StorageRef>& fresh);

/// A copy of src's data into dst, run as a one-step list (a capture records it like any launch);
/// either may live on a device (host<->device, device<->device).
void copy_storage(const StorageRef& dst, const StorageRef& src);

/// The device whose memory holds `storages` (null: host memory). Throws ValueError when they live
/// in two memories: "Expected all tensors to be on the same device, but found at least two
/// devices, cpu and opencl:0!" (libtorch's message).
runtime::Device* placement(std::span<const StorageRef* const> storages);
/// True when `storages` live in one memory.
bool one_memory(std::span<const StorageRef* const> storages);
/// A device's name as Tensor::device() gives it: "cpu" for host memory, else "<name>:0".
std::string device_label(const runtime::Device* d);

/// Launches everything that DeferLaunches scopes (of any thread) hold back, after one compile of
/// the programs they wait for. Host code calls it before it touches buffer memory (the tensor
/// layer's data reads, host-side writes): the engine runs nothing behind its back.
void sync();

}  // namespace ember::engine

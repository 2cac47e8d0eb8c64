// The scheduler: turns the lazy graph below a set of roots into an ordered list of fused kernels
// (docs/design.md principle 3).
//
// Fusion rules:
//  - elementwise ops, movement ops and constants always fuse into their consumer;
//  - an elementwise producer fuses into a reduce's input;
//  - a reduce fuses into the elementwise consumer that follows it when the consumer reads each of
//    its outputs once (size-1 reshapes, or a permute and reshapes whose view is a one-to-one map
//    of the reduce's layout, e.g. a product [N, L, C] read as NCHW: the kernel then iterates the
//    reduce's outputs and stores the consumer's value through the inverse view), it has a single
//    user, and the kernel has no other reduce;
//  - in a kernel whose value is one element, a full reduction with a single user that cannot fuse
//    as above is a nest of the kernel (kernel.h): several norms summed into one are one kernel;
// A value is materialised (gets a buffer) when it is a root, a CONTIGUOUS, a reduce that cannot
// fuse as above, an expensive value under a broadcast, or the source of a reshape that no single
// strided view can express (the materialisation pass decides: schedule/materialise.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "schedule/kernel.h"

namespace ember::schedule {

/// A buffer of a schedule, by name. Positive: memory the caller names (the engine's storage ids):
/// what a graph BUFFER reads, or an in-place target. Negative: the new buffer fresh[-name - 1] of
/// the schedule. The scheduler compares names only: equal names are one buffer.
using BufferName = int64_t;

/// Names the memory a BUFFER node reads (the engine resolves the node through its buffer table;
/// two nodes that read one memory get one name). Throws when the node's data is gone.
using NameBuffer = std::function<BufferName(const ir::Node& buffer)>;

struct ScheduleItem {
  Kernel kernel;
  std::vector<BufferName> buffers;  // the kernel's slots: outputs, then inputs
  const ir::Node* node = nullptr;   // the (last) value computed (alive while the roots are)
};

struct Root {
  const ir::Node* node = nullptr;
  BufferName target = 0;  // > 0: write here (in-place assign); 0: a new buffer
};

struct Schedule {
  std::vector<ScheduleItem> items;
  /// Copies (from, to) to make after all kernels ran (assign targets that were read by other
  /// kernels).
  std::vector<std::pair<BufferName, BufferName>> copies;
  /// The buffer holding each root's value afterwards (index-aligned with the roots).
  std::vector<BufferName> results;
  /// The schedule's new buffers (BufferName -i - 1 is fresh[i]).
  std::vector<KernelBuffer> fresh;
  int materialised_extra = 0;  // values materialised beyond the roots (for DEBUG=1)
};

Schedule create_schedule(const std::vector<Root>& roots, const NameBuffer& name);

}  // namespace ember::schedule

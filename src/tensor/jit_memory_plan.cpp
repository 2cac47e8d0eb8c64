#include "tensor/jit_memory_plan.h"

#include <algorithm>

#include "runtime/storage.h"

namespace ember::detail::jit {

int64_t share_intermediates(const std::vector<CapturedLaunch>& launches,
                            std::vector<Binding>& bindings) {
  const size_t nb = bindings.size();
  std::vector<int64_t> first(nb, -1), last(nb, -1);
  std::vector<bool> first_written(nb, false), copied(nb, false);
  for (size_t li = 0; li < launches.size(); li++) {
    const CapturedLaunch& l = launches[li];
    const size_t outputs = l.program ? l.program->kernel.num_outputs() : 1;
    for (size_t pos = 0; pos < l.bindings.size(); pos++) {
      const int b = l.bindings[pos];
      if (first[b] < 0) {
        first[b] = static_cast<int64_t>(li);
        first_written[b] = pos < outputs;
      }
      last[b] = static_cast<int64_t>(li);
      // A copy moves its destination's whole size: keep both buffers their own size.
      if (!l.program) copied[b] = true;
    }
  }
  int64_t planned = 0;
  std::vector<int> shareable;
  for (size_t b = 0; b < nb; b++) {
    const Binding& bd = bindings[b];
    if (bd.role != Role::Fixed || bd.preexisting || !bd.written) continue;
    // Read before it is written (state carried from one replay to the next), or never used.
    if (first_written[b] && !copied[b] && first[b] >= 0)
      shareable.push_back(static_cast<int>(b));
    else
      planned += static_cast<int64_t>(bd.fixed->nbytes());
  }
  // Greedy by size (Pisarchyk and Lee, "Efficient Memory Management for Deep Neural Net
  // Inference", 2020, shared objects): the largest intermediates first, each into the smallest
  // slot of its memory that none of its users holds during its life, else a new slot of its size.
  // Slots never grow, so their sizes are those of their largest users (ordering by first use and
  // growing slots took 284 MB at ResNet-18 batch 8, where 195 MB are live at most).
  auto bytes = [&](int b) { return bindings[b].fixed->nbytes(); };
  std::stable_sort(shareable.begin(), shareable.end(),
                   [&](int a, int b) { return bytes(a) > bytes(b); });
  struct Slot {
    size_t bytes = 0;
    runtime::Device* memory = nullptr;
    std::vector<int> users;
  };
  auto overlaps = [&](int a, int b) { return first[a] <= last[b] && first[b] <= last[a]; };
  std::vector<Slot> slots;
  for (int b : shareable) {
    runtime::Device* memory = bindings[b].fixed->device();
    Slot* pick = nullptr;
    for (Slot& s : slots) {
      if (s.memory != memory || (pick && pick->bytes <= s.bytes)) continue;
      if (std::none_of(s.users.begin(), s.users.end(), [&](int u) { return overlaps(u, b); }))
        pick = &s;
    }
    if (!pick) {
      pick = &slots.emplace_back();
      pick->memory = memory;
      pick->bytes = bytes(b);
    }
    pick->users.push_back(b);
  }
  for (const Slot& s : slots) {
    // One storage per slot, in the dtype of its largest user (only its data pointer is used).
    int biggest = s.users[0];
    for (int b : s.users)
      if (bindings[b].fixed->nbytes() > bindings[biggest].fixed->nbytes()) biggest = b;
    const ScalarType dt = bindings[biggest].fixed->dtype();
    const auto es = static_cast<size_t>(element_size(dt));
    auto shared = std::make_shared<runtime::Storage>(
        dt, static_cast<int64_t>((s.bytes + es - 1) / es), s.memory);
    for (int b : s.users) bindings[b].fixed = shared;
    planned += static_cast<int64_t>(shared->nbytes());
  }
  return planned;
}

}  // namespace ember::detail::jit

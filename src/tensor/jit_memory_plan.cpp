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
  std::stable_sort(shareable.begin(), shareable.end(),
                   [&](int a, int b) { return first[a] < first[b]; });
  // Greedy interval colouring: each intermediate takes a free buffer in its own memory (its last
  // user launched before this one's first), the smallest that holds it, else the largest free
  // one, grown.
  struct Slot {
    size_t bytes = 0;
    int64_t busy_until = -1;  // the last launch of its current intermediate
    runtime::Device* memory = nullptr;
    std::vector<int> users;
  };
  std::vector<Slot> slots;
  for (int b : shareable) {
    const size_t need = bindings[b].fixed->nbytes();
    runtime::Device* memory = bindings[b].fixed->device();
    Slot *fit = nullptr, *grow = nullptr;
    for (Slot& s : slots) {
      if (s.busy_until >= first[b] || s.memory != memory) continue;  // live, or elsewhere
      if (s.bytes >= need) {
        if (!fit || s.bytes < fit->bytes) fit = &s;
      } else if (!grow || s.bytes > grow->bytes) {
        grow = &s;
      }
    }
    Slot* pick = fit ? fit : grow;
    if (!pick) {
      pick = &slots.emplace_back();
      pick->memory = memory;
    }
    pick->bytes = std::max(pick->bytes, need);
    pick->busy_until = last[b];
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

#include "engine/graph_launch.h"

#include <atomic>
#include <vector>

#include "ember/context.h"
#include "engine/stats.h"

namespace ember::engine {

uint64_t new_graph_key() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

namespace {

// The device whose memory holds every buffer of `list`, and whose are its programs; null where
// there is none.
runtime::Device* one_device(const LaunchList& list,
                            const std::function<runtime::Storage*(int32_t)>& slot) {
  runtime::Device* dev = slot(list.steps.front().slots.front())->device();
  if (!dev) return nullptr;  // host memory: copied around each launch
  for (const LaunchStep& s : list.steps) {
    if (s.program && s.program->memory != dev) return nullptr;
    for (int32_t b : s.slots)
      if (slot(b)->device() != dev) return nullptr;
  }
  return dev;
}

}  // namespace

bool launch_as_graph(const LaunchList& list,
                     const std::function<runtime::Storage*(int32_t)>& slot) {
  const Context& ctx = Context::get();
  if (!list.graph_key || list.steps.empty() || ctx.debug >= 2 || ctx.profile ||
      ctx.profile_kernels || ctx.beam > 0)
    return false;
  runtime::Device* dev = one_device(list, slot);
  if (!dev) return false;
  std::vector<runtime::SequenceStep> steps(list.steps.size());
  int64_t kernels = 0;
  for (size_t i = 0; i < steps.size(); i++) {
    const LaunchStep& s = list.steps[i];
    steps[i].program = s.program.get();
    for (int32_t b : s.slots) steps[i].args.push_back(slot(b)->device_buffer().handle);
    if (!s.program) steps[i].bytes = slot(s.slots[0])->nbytes();  // a copy (copy_data)
    kernels += s.program != nullptr;
  }
  if (!dev->launch_graph(list.graph_key, steps)) return false;
  for (const LaunchStep& s : list.steps) {
    const size_t outputs = s.program ? s.program->kernel.num_outputs() : 1;
    for (size_t i = 0; i < outputs; i++) slot(s.slots[i])->device_written();
  }
  stat_add(runtime_stats().kernels_launched, kernels);
  return true;
}

}  // namespace ember::engine

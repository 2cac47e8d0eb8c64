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

// The device that runs every step of `list` on buffers that live there; null where there is none.
runtime::Device* one_device(const LaunchList& list,
                            const std::function<runtime::Storage*(int32_t)>& slot) {
  runtime::Device* dev = list.steps.front().program ? list.steps.front().program->memory : nullptr;
  if (!dev) return nullptr;
  for (const LaunchStep& s : list.steps) {
    if (!s.program || s.program->memory != dev) return nullptr;  // a copy, or another device
    for (int32_t b : s.slots)
      if (slot(b)->device() != dev) return nullptr;  // host memory: copied around each launch
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
  std::vector<const runtime::Program*> programs;
  std::vector<std::vector<void*>> args;
  for (const LaunchStep& s : list.steps) {
    programs.push_back(s.program.get());
    args.emplace_back();
    for (int32_t b : s.slots) args.back().push_back(slot(b)->device_buffer().handle);
  }
  if (!dev->launch_graph(list.graph_key, programs, args)) return false;
  for (const LaunchStep& s : list.steps)
    for (size_t i = 0; i < s.program->kernel.num_outputs(); i++) slot(s.slots[i])->device_written();
  stat_add(runtime_stats().kernels_launched, static_cast<int64_t>(programs.size()));
  return true;
}

}  // namespace ember::engine

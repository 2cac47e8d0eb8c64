// The engine's realize: schedule -> programs (memory cache, batch compile) -> launch.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "ember/tensor.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace ember::engine {

/// One launched kernel: the program and its buffers (what a jit capture records). A launch
/// without a program is a copy of buffers[1] into buffers[0].
struct Launch {
  std::shared_ptr<runtime::Program> program;
  std::vector<std::shared_ptr<ir::Storage>> buffers;
};

/// Called for every launch while set (the jit's capture hook).
using LaunchHook = std::function<void(const Launch&)>;
void set_launch_hook(LaunchHook hook);
bool capturing();

/// Realizes the tensors in one schedule.
void realize_tensors(const std::vector<Tensor>& ts);

/// Runs one program on buffers (allocating them), with DEBUG=2 timing.
void run_launch(const Launch& l);
/// A copy launch: src's data into dst (recorded by a jit capture like any launch).
void copy_storage(const std::shared_ptr<ir::Storage>& dst, const std::shared_ptr<ir::Storage>& src);

}  // namespace ember::engine

// Which graph nodes each scheduled kernel computes, recorded for the op attribution of a profile
// (include/ember/op_attribution.h) and drawn by GRAPH=1 (graph_dot.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/node.h"
#include "runtime/device.h"
#include "schedule/schedule.h"

namespace ember::engine {

/// The schedule item that computes each node: an item's value and the nodes below it, down to
/// values that other items materialise, buffers and constants. A value that two kernels
/// recompute belongs to the first.
std::unordered_map<const ir::Node*, size_t> kernel_of(const schedule::Schedule& sched);

/// One kernel of a scheduled realize: its program (KernelEvent::program) and the nodes it
/// computes, held so that their addresses stay theirs.
struct LoggedKernel {
  uint64_t program = 0;
  std::vector<ir::NodeRef> nodes;
};
/// One scheduled realize: its kernels in launch order, and how many kernel launches the profile
/// had recorded when it was scheduled (its first launch's index in profiled_kernels()).
struct LoggedRealize {
  size_t first_event = 0;
  std::vector<LoggedKernel> kernels;
};

/// While alive, every realize this thread schedules (a plan-cache miss) is appended to
/// `realizes`. A realize whose plan was cached is not scheduled and not logged.
class ScheduleLog {
 public:
  ScheduleLog();
  ~ScheduleLog();
  ScheduleLog(const ScheduleLog&) = delete;
  ScheduleLog& operator=(const ScheduleLog&) = delete;

  std::vector<LoggedRealize> realizes;

  /// The log open on this thread, or null.
  static ScheduleLog* current();
  /// Logs a realize's schedule and its programs (schedule_plan calls it).
  void record(const schedule::Schedule& sched,
              const std::vector<std::shared_ptr<runtime::Program>>& programs);

 private:
  ScheduleLog* previous_;
};

}  // namespace ember::engine

#include "engine/schedule_log.h"

#include "engine/profiler.h"

namespace ember::engine {

namespace {
thread_local ScheduleLog* t_log = nullptr;
}  // namespace

std::unordered_map<const ir::Node*, size_t> kernel_of(const schedule::Schedule& sched) {
  std::unordered_map<const ir::Node*, size_t> owner, materialised;
  for (size_t i = 0; i < sched.items.size(); i++)
    if (sched.items[i].node) materialised.emplace(sched.items[i].node, i);
  for (size_t i = 0; i < sched.items.size(); i++) {
    std::vector<const ir::Node*> stack{sched.items[i].node};
    while (!stack.empty()) {
      const ir::Node* n = stack.back();
      stack.pop_back();
      if (!n || n->op == ir::Op::BUFFER || n->op == ir::Op::CONST || owner.count(n)) continue;
      if (auto m = materialised.find(n); m != materialised.end() && m->second != i) continue;
      owner.emplace(n, i);
      for (auto& s : n->src) stack.push_back(s.get());
    }
  }
  return owner;
}

ScheduleLog::ScheduleLog() : previous_(t_log) { t_log = this; }
ScheduleLog::~ScheduleLog() { t_log = previous_; }
ScheduleLog* ScheduleLog::current() { return t_log; }

void ScheduleLog::record(const schedule::Schedule& sched,
                         const std::vector<std::shared_ptr<runtime::Program>>& programs) {
  LoggedRealize r;
  r.first_event = profiled_kernel_count();
  r.kernels.resize(sched.items.size());
  for (size_t i = 0; i < sched.items.size() && i < programs.size(); i++)
    r.kernels[i].program = reinterpret_cast<uintptr_t>(programs[i].get());
  for (const auto& [node, item] : kernel_of(sched))
    r.kernels[item].nodes.push_back(ir::NodeRef::try_acquire(node));
  realizes.push_back(std::move(r));
}

}  // namespace ember::engine

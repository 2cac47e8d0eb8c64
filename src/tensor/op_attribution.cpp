#include "ember/op_attribution.h"

#include <algorithm>
#include <unordered_map>

#include "engine/profiler.h"
#include "engine/schedule_log.h"
#include "ir/node.h"

namespace ember {

struct OpAttribution::State {
  engine::ScheduleLog log;
  size_t first_event = engine::profiled_kernel_count();
  // A marked node and its op; the references keep the addresses the log compares with theirs.
  std::unordered_map<const ir::Node*, int> owner;
  std::vector<ir::NodeRef> held;
};

OpAttribution::OpAttribution() : state_(std::make_unique<State>()) {}
OpAttribution::~OpAttribution() = default;

void OpAttribution::mark(int op, const std::vector<Tensor>& outputs) {
  std::vector<const ir::NodeRef*> stack;
  for (const Tensor& t : outputs)
    if (t.defined()) stack.push_back(&t.node());
  while (!stack.empty()) {
    const ir::NodeRef& n = *stack.back();
    stack.pop_back();
    if (n->op == ir::Op::BUFFER || n->op == ir::Op::CONST) continue;
    if (!state_->owner.emplace(n.get(), op).second) continue;
    state_->held.push_back(n);
    for (const ir::NodeRef& s : n->src) stack.push_back(&s);
  }
}

std::vector<std::vector<int>> OpAttribution::launches() const {
  const std::vector<KernelEvent> events = profiled_kernels();
  const size_t first = std::min(state_->first_event, events.size());
  std::vector<std::vector<int>> out(events.size() - first);
  for (const engine::LoggedRealize& r : state_->log.realizes)
    for (size_t i = 0; i < r.kernels.size(); i++) {
      const size_t e = r.first_event + i;
      if (e < first || e >= events.size() || events[e].program != r.kernels[i].program) continue;
      std::vector<int>& ops = out[e - first];
      for (const ir::NodeRef& n : r.kernels[i].nodes)
        if (auto it = state_->owner.find(n.get()); it != state_->owner.end())
          ops.push_back(it->second);
      std::sort(ops.begin(), ops.end());
      ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    }
  return out;
}

}  // namespace ember

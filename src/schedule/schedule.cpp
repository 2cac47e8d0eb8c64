#include "schedule/schedule.h"

#include <unordered_set>

#include "ember/error.h"
#include "schedule/fuse_outputs.h"
#include "schedule/fuse_row_sums.h"
#include "schedule/materialise.h"

namespace ember::schedule {

using ir::Node;
using ir::Op;
using ir::View;

Schedule create_schedule(const std::vector<Root>& roots, const NameBuffer& name) {
  std::vector<const Node*> root_nodes;
  for (auto& r : roots) root_nodes.push_back(r.node);
  auto order = ir::toposort(root_nodes);
  std::unordered_map<const Node*, int> users;
  for (auto* n : order) {
    users.emplace(n, 0);
    std::unordered_set<const Node*> distinct;
    for (auto& s : n->src) distinct.insert(s.get());
    for (auto* s : distinct) users[s]++;
  }
  // The values that get a buffer, and the kernel of each (lowered once, retried locally).
  Materialised m = materialise(root_nodes, order, users, name);
  Schedule s;
  s.items = std::move(m.items);
  s.fresh = std::move(m.fresh);
  auto& storage = m.names;
  std::unordered_map<const Node*, BufferName> targets;
  // One value may be assigned to several tensors (a.copy_(v); b.copy_(v)): the first target
  // is handled below, the others get a copy of it after all kernels ran.
  std::vector<std::pair<const Node*, BufferName>> more_targets;
  for (auto& r : roots)
    if (r.target && r.node->op != Op::BUFFER) {
      auto [it, first] = targets.emplace(r.node, r.target);
      if (!first && it->second != r.target) more_targets.push_back({r.node, r.target});
    }
  fuse_outputs(s.items);
  fuse_row_sums(s.items);
  // An in-place root writes its target directly when no kernel after its own reads the
  // target's old contents (kernels run in order: those before it read them before it writes)
  // and its own kernel reads them only at the index it stores (a pure elementwise update).
  // Otherwise the new value stays in its own buffer (which its readers use) and is copied into
  // the target after all kernels ran.
  for (auto& [node, target] : targets) {
    const BufferName fresh = storage.at(node);
    size_t writer = 0;
    const ir::View* store_view = nullptr;
    for (size_t i = 0; i < s.items.size(); i++) {
      const Kernel& k = s.items[i].kernel;
      for (size_t o = 0; o < k.num_outputs(); o++)
        if (s.items[i].buffers[o] == fresh) {
          writer = i;
          store_view = o ? &k.more_outputs[o - 1].view : &k.out_view;
        }
    }
    bool safe = true;
    for (size_t i = writer; i < s.items.size(); i++) {
      auto& it = s.items[i];
      for (size_t b = it.kernel.num_outputs(); b < it.buffers.size(); b++) {
        if (it.buffers[b] != target) continue;
        if (i != writer || !it.kernel.reduce_axes.empty() ||
            !reads_only_at(it.kernel, static_cast<int>(b), *store_view))
          safe = false;
      }
    }
    if (safe) {
      for (auto& it : s.items)
        for (auto& b : it.buffers)
          if (b == fresh) b = target;
      storage[node] = target;
    } else {
      s.copies.push_back({fresh, target});
    }
  }
  for (auto& item : s.items) alias_inputs_to_outputs(item);
  for (auto& [node, target] : more_targets) s.copies.push_back({storage.at(node), target});
  for (auto& r : roots)
    s.results.push_back(r.node->op == Op::BUFFER ? name(*r.node)
                        : r.target               ? r.target
                                                 : storage.at(r.node));
  s.materialised_extra = static_cast<int>(m.set.size()) - m.initial;
  return s;
}

}  // namespace ember::schedule

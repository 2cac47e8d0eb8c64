#include "schedule/materialise.h"

#include <atomic>
#include <map>
#include <set>

#include "ember/error.h"
#include "schedule/lower.h"

namespace ember::schedule {

using ir::Node;
using ir::Op;

namespace {

std::atomic<bool> check_on{false};

Materialised run(const std::vector<const Node*>& roots, const std::vector<const Node*>& order,
                 const std::unordered_map<const Node*, int>& users, const NameBuffer& name,
                 bool whole_schedule) {
  Materialised m;
  m.set.insert(roots.begin(), roots.end());
  for (auto* n : order) {
    if (n->op == Op::CONTIGUOUS) m.set.insert(n);
    if (ir::is_reduce(n->op) && users.at(n) > 1) m.set.insert(n);
  }
  m.initial = static_cast<int>(m.set.size());
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < order.size(); i++) position[order[i]] = i;

  // The kernels lowered under the current set, by position in `order`, and those still to lower.
  std::map<size_t, LoweredKernel> done;
  std::set<size_t> pending;
  // A new member gets a buffer and a kernel to lower (a BUFFER root has both already).
  auto open = [&](const Node* n) {
    if (n->op == Op::BUFFER) return;
    m.names[n] = -static_cast<BufferName>(m.fresh.size()) - 1;
    m.fresh.push_back({n->dtype, n->numel()});
    pending.insert(position.at(n));
  };
  for (auto* n : order)
    if (m.set.count(n)) open(n);
  auto add = [&](const Node* n) {
    m.set.insert(n);
    open(n);
  };
  // `n` joined the set: the kernels whose lowering looked at it are lowered again.
  auto invalidate = [&](const Node* n) {
    for (auto it = done.begin(); it != done.end();) {
      if (whole_schedule || it->second.touched.count(n)) {
        pending.insert(it->first);
        it = done.erase(it);
      } else {
        ++it;
      }
    }
  };
  for (;;) {
    while (!pending.empty()) {
      size_t i = *pending.begin();
      try {
        m.lowerings++;
        done[i] = lower_kernel(order[i], m.set, users, m.names, name);
        pending.erase(pending.begin());
      } catch (const Materialise& r) {
        if (m.set.count(r.node)) throw Error("scheduler: cannot lower " + r.node->str());
        add(r.node);
        invalidate(r.node);
      }
    }
    // A reduce nested twice (in two kernels, or under two views in one) is computed once
    // instead: materialised.
    std::map<const Node*, int> nests;
    for (auto& [i, k] : done)
      for (auto* r : k.nested) nests[r]++;
    std::vector<const Node*> twice;
    for (auto& [r, count] : nests)
      if (count > 1 && !m.set.count(r)) twice.push_back(r);
    if (twice.empty()) break;
    for (auto* r : twice) add(r);
    for (auto* r : twice) invalidate(r);
  }
  for (auto& [i, k] : done) m.items.push_back(std::move(k.item));
  return m;
}

bool same_kernels(const Materialised& a, const Materialised& b) {
  if (a.set != b.set || a.items.size() != b.items.size()) return false;
  for (size_t i = 0; i < a.items.size(); i++)
    if (a.items[i].node != b.items[i].node || a.items[i].kernel.key() != b.items[i].kernel.key())
      return false;
  return true;
}

}  // namespace

void set_materialise_check(bool on) { check_on = on; }

Materialised materialise(const std::vector<const Node*>& roots,
                         const std::vector<const Node*>& order,
                         const std::unordered_map<const Node*, int>& users, const NameBuffer& name,
                         bool whole_schedule) {
  Materialised m = run(roots, order, users, name, whole_schedule);
  if (check_on && !whole_schedule) {
    Materialised ref = run(roots, order, users, name, /*whole_schedule=*/true);
    if (!same_kernels(m, ref))
      throw Error("scheduler: the materialisation pass (" + std::to_string(m.set.size()) +
                  " values, " + std::to_string(m.items.size()) +
                  " kernels) differs from lowering the whole schedule again (" +
                  std::to_string(ref.set.size()) + " values, " + std::to_string(ref.items.size()) +
                  " kernels)");
  }
  return m;
}

}  // namespace ember::schedule

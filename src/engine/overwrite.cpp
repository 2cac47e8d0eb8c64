#include "engine/overwrite.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "ember/context.h"
#include "ember/error.h"
#include "engine/launch_list.h"
#include "engine/stats.h"

namespace ember::engine {

using ir::Node;
using ir::NodeRef;

int preserve_for_readers(const std::vector<StorageRef>& targets,
                         const std::vector<std::pair<NodeRef, long>>& roots) {
  // The BUFFER nodes that read the targets' current data, each with its target's index.
  std::vector<NodeRef> held;  // locked here: one more reference each
  std::unordered_map<const Node*, size_t> readers;
  for (size_t t = 0; t < targets.size(); t++)
    for (auto& n : targets[t]->live_nodes())
      if (storage_of(*n) == targets[t] && ir::buffer_version(*n) == targets[t]->version()) {
        readers.emplace(n.get(), t);
        held.push_back(std::move(n));
      }
  if (readers.empty()) return 0;

  // References the operation accounts for: its handles on the roots, one per source edge inside
  // the graph (each edge is a NodeRef) and the locks above. Any other reference comes from
  // outside: a tensor, another lazy value, a saved autograd origin.
  std::unordered_map<const Node*, long> internal;
  std::unordered_map<const Node*, const NodeRef*> handle;  // any NodeRef, for use_count
  std::vector<const Node*> root_nodes;
  for (auto& [n, owned] : roots) {
    root_nodes.push_back(n.get());
    internal[n.get()] += owned;
    handle[n.get()] = &n;
  }
  for (auto& h : held) {
    internal[h.get()]++;
    handle[h.get()] = &h;
  }
  const auto order = ir::toposort(root_nodes);
  for (const Node* n : order)
    for (auto& s : n->src) {
      internal[s.get()]++;
      handle[s.get()] = &s;
    }

  // A node that depends on a reader and is reachable from outside keeps that target's data.
  std::vector<bool> keep(targets.size(), false);
  std::unordered_map<const Node*, std::vector<size_t>> deps;
  for (const Node* n : order) {
    std::vector<size_t>& d = deps[n];
    if (auto it = readers.find(n); it != readers.end()) d.push_back(it->second);
    for (auto& s : n->src)
      for (size_t t : deps[s.get()])
        if (std::find(d.begin(), d.end(), t) == d.end()) d.push_back(t);
    if (!d.empty() && handle.at(n)->use_count() > internal[n])
      for (size_t t : d) keep[t] = true;
  }
  // Readers outside the graph (an alias of the buffer, a lazy value built on it).
  for (auto& h : held)
    if (!deps.count(h.get()) && h.use_count() > internal[h.get()]) keep[readers.at(h.get())] = true;

  int copies = 0;
  for (size_t t = 0; t < targets.size(); t++) {
    if (!keep[t]) continue;
    const auto& from = targets[t];
    auto kept = std::make_shared<runtime::Storage>(from->dtype(), from->numel(), from->device());
    kept->set_version(from->version());
    copy_storage(kept, from);
    // The node keeps its identity, so every graph that reads it now reads the copy.
    for (auto& h : held)
      if (readers.at(h.get()) == t) redirect(*h, kept);
    copies++;
  }
  stat_add(runtime_stats().buffers_preserved, copies);
  return copies;
}

}  // namespace ember::engine

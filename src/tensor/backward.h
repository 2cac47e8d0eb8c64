// Gradient rules per primitive op and the reverse walk over the graph.
#pragma once
#include <unordered_map>
#include <unordered_set>

#include "ir/node.h"

namespace ember::detail {

/// d(root · seed)/d(target) for every target reachable from root (without crossing DETACH).
/// seed has root's shape and dtype.
std::unordered_map<const ir::Node*, ir::NodeRef> backward_graph(
    const ir::NodeRef& root, const ir::NodeRef& seed,
    const std::unordered_set<const ir::Node*>& targets);

}  // namespace ember::detail

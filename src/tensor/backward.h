// Gradient rules per primitive op and the reverse walk over the graph.
#pragma once
#include <unordered_map>
#include <unordered_set>

#include "ir/node.h"

namespace ember::runtime {
class Device;
}

namespace ember::detail {

/// d(root · seed)/d(target) for every target reachable from root (without crossing DETACH).
/// seed has root's shape and dtype.
std::unordered_map<const ir::Node*, ir::NodeRef> backward_graph(
    const ir::NodeRef& root, const ir::NodeRef& seed,
    const std::unordered_set<const ir::Node*>& targets);

/// n's value copied into the memory of `target` (null: host memory; tensor/device.cpp): a new
/// buffer, realized. Tensor::to, and the gradient's way back through it.
ir::NodeRef to_memory(const ir::NodeRef& n, runtime::Device* target);

}  // namespace ember::detail

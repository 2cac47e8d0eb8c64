// In-place writes outside a schedule (checkpoint loads, the optimizer's host-side writes of the
// learning rate) with the same value semantics as a realized in-place op.
#pragma once
#include <functional>
#include <vector>

#include "ember/tensor.h"

namespace ember::engine {

/// Overwrites realized tensors' buffers: lazy values that read the current data keep a copy
/// (ir/overwrite.h), `write` runs, and the tensors move to the new version of their buffers.
/// Throws ValueError when a tensor is not a realized buffer (a view or a pending update).
void overwrite_in_place(const std::vector<Tensor>& ts, const std::function<void()>& write);

}  // namespace ember::engine

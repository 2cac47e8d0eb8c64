// ember/pending_writes.h — in-place updates that wait for a realize. An in-place op on a realized
// tensor (copy_, add_, ...) writes into its buffer when that tensor is next realized; one that
// nothing reads (a running statistic that batch_norm updates in training) would wait, holding the
// graph it reads, until someone realizes it.
#pragma once
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// Realizes `ts` and every in-place update still pending on any tensor in one schedule: the
/// updates share the work they have in common with `ts` (batch_norm's batch statistics with the
/// backward pass that needs them), and a chain of updates cannot grow without bound. Optimizer
/// steps realize through it. Tensors of any shape and dtype; throws what realize() throws.
void realize_with_pending_writes(const std::vector<Tensor>& ts);

}  // namespace ember

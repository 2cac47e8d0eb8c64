// A function from tensors to tensors, the unit that ember::jit captures and replays (jit.h):
// the actor's inference and the PPO training step are written in this form (they never read tensor
// data inside; losses and metrics come back as tensors and are read after the call).
#pragma once

#include <functional>
#include <vector>

#include "ember/tensor.h"

namespace ember::rl {

using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// True when this build has ember::jit (include/ember/jit.h); recorded in run.json.
bool jit_available();

/// Returns fn wrapped in ember::jit when `use_jit`, else fn itself. A jitted function's input
/// shapes and dtypes must not change between calls (jit.h); its first call runs normally, the
/// second captures, later calls replay.
TensorFn maybe_jit(TensorFn fn, bool use_jit);

}  // namespace ember::rl

#include "ember/rl/tensor_fn.h"

#include <memory>

#include "ember/jit.h"

namespace ember::rl {

bool jit_available() { return true; }

TensorFn maybe_jit(TensorFn fn, bool use_jit) {
  if (!use_jit) return fn;
  auto j = std::make_shared<Jit>(std::move(fn));
  return [j](const std::vector<Tensor>& in) { return (*j)(in); };
}

}  // namespace ember::rl

// ember/autograd.h — reverse-mode automatic differentiation over the lazy graph.
//
// Gradient rules exist only for the primitive ops of src/ir/ops.def; composite ops (softmax,
// matmul, var, ...) are differentiated through their primitives. The backward graph is lazy graph
// too and fuses like the forward. Broadcasting is summed back; ties of max split the gradient
// evenly (as torch.amax / torch.max() do).
#pragma once
#include <vector>

#include "ember/tensor.h"

namespace ember::autograd {

/// Gradients of `outputs` w.r.t. `inputs` (as torch::autograd::grad): sum over outputs of
/// d(output · grad_output)/d(input). grad_outputs may be empty when every output is a one-element
/// tensor (then ones). An input the outputs do not depend on gets an undefined Tensor when
/// allow_unused, else ValueError. Results are lazy and do not require grad.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool allow_unused = false);

}  // namespace ember::autograd

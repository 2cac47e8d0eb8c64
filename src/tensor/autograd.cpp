// Autograd: requires_grad bookkeeping. The backward pass (gradient rules per primitive) lives in
// backward.cpp.
#include <atomic>

#include "tensor/tensor_impl.h"

namespace ember {

using ir::Op;

bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }

Tensor& Tensor::set_requires_grad(bool r) {
  if (r && !ember::is_floating_point(dtype()))
    throw DTypeError(std::string("only tensors of floating point dtype can require gradients, got ") +
                     dtype_name(dtype()));
  if (r && impl_->node->op != Op::BUFFER) {
    // A leaf that requires grad needs its own identity in the hash-consed graph (two equal lazy
    // expressions are one node): wrap it in a unique materialisation.
    static std::atomic<int64_t> next{1};
    ir::Arg a;
    a.ints = {-(next++)};
    impl_->node = ir::make_node(Op::CONTIGUOUS, dtype(), {impl_->node}, a);
  }
  impl_->requires_grad = r;
  return *this;
}

Tensor Tensor::grad() const { return impl_ ? impl_->grad : Tensor(); }
Tensor& Tensor::mutable_grad() { return impl_->grad; }
void Tensor::set_grad(const Tensor& g) { impl_->grad = g; }

}  // namespace ember

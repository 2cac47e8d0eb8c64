// Autograd bookkeeping: requires_grad, the registry of leaf tensors, backward() and
// autograd::grad(). The gradient rules are in backward.cpp.
#include <atomic>
#include <mutex>
#include <unordered_set>

#include "ember/autograd.h"
#include "tensor/backward.h"
#include "tensor/tensor_impl.h"

namespace ember {

using ir::Op;

namespace {

// Leaves: tensors on which set_requires_grad(true) was called. backward() finds those whose
// current node appears in the graph being differentiated.
struct LeafRegistry {
  std::mutex mu;
  std::vector<std::weak_ptr<TensorImpl>> leaves;
};
LeafRegistry& registry() {
  static LeafRegistry r;
  return r;
}

ir::NodeRef seed_for(const Tensor& out, const Tensor& grad_output, const char* who) {
  if (grad_output.defined()) {
    if (grad_output.sizes() != out.sizes())
      throw ShapeError(std::string(who) + ": gradient of shape " +
                       ir::shape_str(grad_output.sizes()) + " does not match the output's shape " +
                       ir::shape_str(out.sizes()));
    return detail::cast(grad_output.node(), out.dtype());
  }
  if (out.numel() != 1)
    throw ValueError(std::string(who) +
                     ": grad can be implicitly created only for scalar outputs (got shape " +
                     ir::shape_str(out.sizes()) + ")");
  return detail::const_node(1.0, out.dtype(), out.sizes());
}

}  // namespace

bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }

Tensor& Tensor::set_requires_grad(bool r) {
  if (r && !ember::is_floating_point(dtype()))
    throw DTypeError(
        std::string("only tensors of floating point dtype can require gradients, got ") +
        dtype_name(dtype()));
  if (r && impl_->node->op != Op::BUFFER) {
    // A leaf that requires grad needs its own identity in the hash-consed graph (two equal lazy
    // expressions are one node): wrap it in a unique materialisation.
    static std::atomic<int64_t> next{1};
    ir::Arg a;
    a.ints = {-(next++)};
    impl_->node = ir::make_node(Op::CONTIGUOUS, dtype(), {impl_->node}, a);
  }
  if (r && !impl_->requires_grad) {
    // Leaves are concrete buffers (as in PyTorch): optimizers, checkpoints and jit captures bind
    // them by buffer identity.
    ember::realize({*this});
    auto& reg = registry();
    std::lock_guard<std::mutex> l(reg.mu);
    std::erase_if(reg.leaves, [](auto& w) { return w.expired(); });
    reg.leaves.push_back(impl_);
  }
  impl_->requires_grad = r;
  return *this;
}

Tensor Tensor::grad() const {
  if (!impl_) return Tensor();
  if (auto* o = detail::access_observer()) o->grad_slot(*impl_, false);
  return impl_->grad;
}
Tensor& Tensor::mutable_grad() {
  if (auto* o = detail::access_observer()) {
    o->grad_slot(*impl_, false);
    o->grad_slot(*impl_, true);
  }
  return impl_->grad;
}
void Tensor::set_grad(const Tensor& g) {
  if (auto* o = detail::access_observer()) o->grad_slot(*impl_, true);
  impl_->grad = g;
}

void Tensor::backward(const Tensor& gradient) const {
  if (!requires_grad())
    throw Error("element 0 of tensors does not require grad and does not have a grad_fn");
  ir::NodeRef seed = seed_for(*this, gradient, "backward");
  std::vector<std::shared_ptr<TensorImpl>> leaves;
  {
    auto& reg = registry();
    std::lock_guard<std::mutex> l(reg.mu);
    for (auto& w : reg.leaves)
      if (auto p = w.lock(); p && p->requires_grad) leaves.push_back(p);
  }
  std::unordered_set<const ir::Node*> targets;
  for (auto& p : leaves) targets.insert(p->node.get());
  auto grads = detail::backward_graph(node(), seed, targets);
  std::vector<Tensor> to_realize;
  for (auto& p : leaves) {
    auto it = grads.find(p->node.get());
    if (it == grads.end()) continue;
    ir::NodeRef g = it->second;
    if (auto* o = detail::access_observer()) {
      o->grad_slot(*p, false);
      o->grad_slot(*p, true);
    }
    if (p->grad.defined()) g = ir::make_node(Op::ADD, g->dtype, {p->grad.node(), g});
    p->grad = detail::make_tensor_rg(g, false);
    to_realize.push_back(p->grad);
  }
  // Gradients are made concrete now (as in PyTorch): an in-place update of a parameter after
  // backward() must not change its gradient. A one-element output (a loss) is computed in the
  // same schedule, from the forward values the gradients materialise anyway: reading it after an
  // optimizer step (loss.item(), a returned loss.detach()) does not run the forward pass again.
  // It keeps its graph (engine::origin_of), so gradients through it stay available and right.
  if (node()->op != Op::BUFFER && numel() == 1) to_realize.push_back(*this);
  ember::realize(to_realize);
}

namespace autograd {

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool allow_unused) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    throw ValueError("autograd::grad: got " + std::to_string(grad_outputs.size()) +
                     " grad_outputs for " + std::to_string(outputs.size()) + " outputs");
  // An input realized after the outputs were built appears in their graphs as its origin.
  std::unordered_set<const ir::Node*> targets;
  for (auto& in : inputs) {
    targets.insert(in.node().get());
    if (in.node()->op == ir::Op::BUFFER)
      if (ir::NodeRef o = engine::origin_of(*in.node())) targets.insert(o.get());
  }
  std::unordered_map<const ir::Node*, ir::NodeRef> total;
  for (size_t i = 0; i < outputs.size(); i++) {
    ir::NodeRef seed =
        seed_for(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i], "autograd::grad");
    for (auto& [n, g] : detail::backward_graph(outputs[i].node(), seed, targets)) {
      auto [it, ins] = total.emplace(n, g);
      if (!ins) it->second = ir::make_node(Op::ADD, g->dtype, {it->second, g});
    }
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); i++) {
    const ir::NodeRef& node = inputs[i].node();
    auto it = total.find(node.get());
    // The walk passes the buffer's gradient on to its origin, so the origin's is the total.
    if (node->op == ir::Op::BUFFER)
      if (ir::NodeRef origin = engine::origin_of(*node))
        if (auto o = total.find(origin.get()); o != total.end()) it = o;
    if (it == total.end()) {
      if (!allow_unused)
        throw ValueError("autograd::grad: input " + std::to_string(i) +
                         " is not used in the graph of the outputs (pass allow_unused=true)");
      out.emplace_back();
    } else {
      out.push_back(detail::make_tensor_rg(it->second, false));
    }
  }
  return out;
}

}  // namespace autograd
}  // namespace ember

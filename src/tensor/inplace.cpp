// In-place ops. A realized tensor keeps its buffer: the new value is computed lazily and written
// into the same storage on realize, so parameters keep their identity (optimizer steps, checkpoint
// loads, jit captures that bound the buffer).
#include "ember/host_values.h"
#include "tensor/tensor_impl.h"

namespace ember {

using detail::node_of;
using ir::NodeRef;
using ir::Op;

namespace {

// A broadcast constant (zeros, full, ...: movement ops over a CONST) views no buffer: an in-place
// op may replace it.
bool is_constant(const NodeRef& n) {
  const ir::Node* x = n.get();
  while (ir::is_movement(x->op)) x = x->src[0].get();
  return x->op == Op::CONST;
}

void assign(Tensor& self, const Tensor& value, const char* name) {
  TensorImpl* impl = self.impl();
  if (!impl) throw ValueError(std::string(name) + ": undefined tensor");
  if (impl->requires_grad && detail::grad_mode_enabled())
    throw Error(std::string(name) +
                ": a leaf tensor that requires grad is being used in an in-place operation "
                "(wrap it in NoGradGuard)");
  NodeRef v = detail::cast(node_of(value), self.dtype());
  if (v->shape != self.sizes()) {
    Shape s = detail::broadcast_shapes(v->shape, self.sizes(), name);
    if (s != self.sizes())
      throw ShapeError(std::string(name) + ": value of shape " + ir::shape_str(v->shape) +
                       " does not broadcast to the tensor's shape " + ir::shape_str(self.sizes()));
    v = detail::broadcast_to(v, s);
  }
  if (auto* o = detail::access_observer()) o->assign(self);
  const NodeRef& cur = impl->node;
  if (!impl->assign_target && cur->op == Op::BUFFER) {
    impl->assign_target = engine::storage_of(*cur);
    detail::note_pending_write(self);
  } else if (!impl->assign_target && ir::is_movement(cur->op) && !is_constant(cur)) {
    throw Error(std::string(name) +
                ": in-place operations on views are not supported; "
                "call contiguous() or clone() first");
  }
  impl->node = v;
}

// PyTorch's canCast: the result of an in-place op may be written into a destination of the same
// or a higher category only (bool < integer < float).
void check_can_cast(const Tensor& self, ScalarType result, const char* name) {
  const ScalarType to = self.dtype();
  if ((is_floating_point(result) && !is_floating_point(to)) || (result != kBool && to == kBool))
    throw DTypeError(std::string(name) + ": result type " + dtype_name(result) +
                     " can't be cast to the desired output type " + dtype_name(to));
}

ScalarType div_type(ScalarType t) { return is_floating_point(t) ? t : kDefaultFloat; }

// An in-place arithmetic op: the destination must hold the `result` type (checked before the
// operands, as libtorch does), then takes the out-of-place op's value.
template <class F>
Tensor& update(Tensor& self, ScalarType result, const char* name, F out_of_place) {
  check_can_cast(self, result, name);
  assign(self, out_of_place(), name);
  return self;
}

}  // namespace

Tensor& Tensor::set_data(const Tensor& new_data) {
  if (!impl_ || !new_data.defined()) throw ValueError("set_data: undefined tensor");
  if (impl_->requires_grad && !new_data.is_floating_point())
    throw DTypeError(std::string("set_data: a tensor that requires grad cannot hold ") +
                     dtype_name(new_data.dtype()) + " data");
  Tensor d = new_data.is_realized() ? new_data : realized_clone(new_data);
  if (auto* o = detail::access_observer()) o->assign(*this);
  // A jit capture that read this tensor must not replay with its old buffer (as a rebound handle).
  if (impl_->jit_read) impl_->rebinds++;
  impl_->assign_target = nullptr;
  impl_->node = node_of(d);
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src) {
  assign(*this, src, "copy_");
  return *this;
}
Tensor& Tensor::zero_() {
  assign(*this, zeros({}, dtype()), "zero_");
  return *this;
}
Tensor& Tensor::fill_(const Scalar& v) {
  assign(*this, detail::make_tensor(detail::checked_scalar_node(v, dtype(), {}, "fill_")), "fill_");
  return *this;
}
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  return update(*this, result_type(*this, o), "add_", [&] { return add(o, alpha); });
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  return update(*this, result_type(*this, o), "add_", [&] { return add(o, alpha); });
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  return update(*this, result_type(*this, o), "sub_", [&] { return sub(o, alpha); });
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  return update(*this, result_type(*this, o), "sub_", [&] { return sub(o, alpha); });
}
Tensor& Tensor::mul_(const Tensor& o) {
  return update(*this, result_type(*this, o), "mul_", [&] { return mul(o); });
}
Tensor& Tensor::mul_(const Scalar& o) {
  return update(*this, result_type(*this, o), "mul_", [&] { return mul(o); });
}
Tensor& Tensor::div_(const Tensor& o) {
  return update(*this, div_type(result_type(*this, o)), "div_", [&] { return div(o); });
}
Tensor& Tensor::div_(const Scalar& o) {
  return update(*this, div_type(result_type(*this, o)), "div_", [&] { return div(o); });
}
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

}  // namespace ember

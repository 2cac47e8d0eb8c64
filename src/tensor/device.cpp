// Where tensors live (ember/device.h): Device names, Tensor::device(), Tensor::to(Device), and the
// gradient's way back through a to() (detail::to_memory, used by tensor/backward.cpp).
#include <memory>
#include <vector>

#include "ember/device.h"
#include "engine/realize.h"
#include "runtime/device.h"
#include "tensor/backward.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {

// The runtime device whose memory `d` names (null: host memory).
runtime::Device* memory_of(const Device& d) {
  return d.is_cpu() ? nullptr : &runtime::get_device(d.type());
}

// t's value in a storage of its own, realized (a view is made contiguous first).
Tensor realized_buffer(const Tensor& t) {
  t.realize();
  if (t.node()->op == ir::Op::BUFFER) return t;
  const ir::NodeRef& n = t.node();
  Tensor c = detail::make_tensor(ir::make_node(ir::Op::CONTIGUOUS, n->dtype, {n}), {&t});
  c.realize();
  return c;
}

}  // namespace

Device::Device(const std::string& spec) {
  const size_t colon = spec.find(':');
  type_ = spec.substr(0, colon);
  std::string index = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (type_ == "cpu") {
    if (!index.empty() && index != "0")
      throw ValueError("device '" + spec + "': cpu has no index but 0");
    return;
  }
  if (type_ == "interp")
    throw ValueError("device '" + spec +
                     "' computes on host memory: its tensors are on cpu (select it with "
                     "ember::DeviceGuard)");
  runtime::Device& d = runtime::get_device(type_);  // ValueError: unknown or not built
  if (!d.own_memory())
    throw ValueError("device '" + spec + "' has no memory of its own: its tensors are on cpu");
  if (!index.empty() && index != "0")
    throw ValueError("device '" + spec + "': " + type_ + " has one device, " + type_ + ":0");
  index_ = 0;
}

std::string Device::str() const { return is_cpu() ? "cpu" : type_ + ":" + std::to_string(index_); }

Device Tensor::device() const {
  return Device(engine::device_label(engine::placement_of(*detail::node_of(*this))));
}

Tensor Tensor::to(const Device& device) const {
  runtime::Device* target = memory_of(device);
  if (memory_of(this->device()) == target) return *this;
  const Tensor v = realized_buffer(*this);
  const ir::NodeRef& src = v.node();
  const bool rg = v.requires_grad() && detail::grad_mode_enabled();
  Tensor out = detail::make_tensor_rg(detail::to_memory(src, target), rg);
  // Its gradient goes back to v's buffer, through a to() back (backward.cpp, to_origin_memory).
  if (rg) engine::set_origin(*out.node(), src);
  return out;
}

namespace detail {

ir::NodeRef to_memory(const ir::NodeRef& n, runtime::Device* target) {
  const Tensor v = realized_buffer(make_tensor_rg(n, false));
  const engine::StorageRef& from = engine::storage_of(*v.node());
  auto to = std::make_shared<runtime::Storage>(from->dtype(), from->numel(), target);
  engine::copy_storage(to, from);
  return engine::make_buffer(std::move(to), v.node()->shape);
}

}  // namespace detail
}  // namespace ember

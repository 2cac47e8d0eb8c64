#include "ember/nn/module.h"

#include "ember/grad_mode.h"
#include "ember/host_values.h"

namespace ember::nn {

namespace {
void collect(const Module& m, const std::string& prefix, bool recurse, bool buffers,
             const NamedTensors& own, NamedTensors& out) {
  for (auto& [n, t] : own) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (auto& [name, child] : m.named_children()) {
    NamedTensors sub = buffers ? child->named_buffers(true) : child->named_parameters(true);
    for (auto& [n, t] : sub) out.emplace_back(prefix + name + "." + n, t);
  }
}
}  // namespace

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect(*this, "", recurse, false, params_, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect(*this, "", recurse, true, buffers_, out);
  return out;
}

Tensor& Module::register_parameter(std::string name, Tensor t, bool requires_grad) {
  for (auto& [n, p] : params_)
    if (n == name) throw ValueError("register_parameter: parameter '" + name + "' already exists");
  // Parameters own a contiguous buffer of their own (a constant one filled on the host).
  Tensor p = t.is_realized() ? t : realized_clone(t);
  if (requires_grad) p.set_requires_grad(true);
  params_.emplace_back(std::move(name), p);
  return params_.back().second;
}

Tensor& Module::register_buffer(std::string name, Tensor t) {
  Tensor b = t.is_realized() ? t : realized_clone(t);
  buffers_.emplace_back(std::move(name), b);
  return buffers_.back().second;
}

void Module::replace_module(const std::string& name, std::shared_ptr<Module> m) {
  for (auto& [n, c] : children_)
    if (n == name) {
      c = std::move(m);
      return;
    }
  throw ValueError("replace_module: no child module named '" + name + "'");
}

void Module::for_each_state(const std::function<void(Tensor&)>& f) {
  for (NamedTensors* own : {&params_, &buffers_})
    for (auto& [n, t] : *own) f(t);
  for (auto& [n, c] : children_) c->for_each_state(f);
}

namespace {
// t (every handle to it) and its gradient now hold convert(value), realized.
template <class Convert>
void convert_in_place(Tensor& t, Convert convert) {
  Tensor g = t.grad();
  t.set_data(convert(t));
  if (!g.defined()) return;
  Tensor ng = convert(g);
  t.set_grad(ng.is_realized() ? ng : realized_clone(ng));
}
}  // namespace

void Module::to(ScalarType dtype) {
  if (!is_floating_point(dtype))
    throw DTypeError(std::string("Module::to: expected a floating dtype, got ") +
                     dtype_name(dtype));
  NoGradGuard no_grad;
  for_each_state([&](Tensor& t) {
    if (is_floating_point(t.dtype()) && t.dtype() != dtype)
      convert_in_place(t, [&](const Tensor& x) { return x.to(dtype); });
  });
}

void Module::to(const Device& device) {
  NoGradGuard no_grad;
  for_each_state([&](Tensor& t) {
    if (t.device() != device) convert_in_place(t, [&](const Tensor& x) { return x.to(device); });
  });
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zero_grad() {
  for (auto& p : parameters()) p.set_grad(Tensor());
}

}  // namespace ember::nn

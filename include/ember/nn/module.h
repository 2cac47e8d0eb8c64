// ember/nn/module.h — the Module base class and ModuleHolder handle (libtorch's names).
//
// Parameters are realized leaf tensors that require grad; their buffers keep their identity for
// the module's lifetime (optimizer steps and checkpoint loads write into them in place), which is
// what lets jit replays bind them by buffer identity.
#pragma once
#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/device.h"
#include "ember/tensor.h"

namespace ember::nn {

using NamedTensors = ember::NamedTensors;

class Module {
 public:
  virtual ~Module() = default;

  /// Parameters in registration order; children's names are prefixed "child.".
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// Non-trainable state (e.g. running statistics), same naming.
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const {
    return children_;
  }

  /// Registers (and realizes) a parameter; returns the stored handle.
  Tensor& register_parameter(std::string name, Tensor t, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor t);
  template <typename M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m) {
    children_.emplace_back(std::move(name), m);
    return m;
  }
  template <typename H>
  H register_module(std::string name, H holder) requires requires {
    holder.ptr();
  }
  {
    register_module(std::move(name), holder.ptr());
    return holder;
  }
  /// Puts `m` in the place of the child named `name` (its name and position kept); ValueError
  /// when there is none (libtorch's replace_module).
  void replace_module(const std::string& name, std::shared_ptr<Module> m);

  /// Converts every floating-point parameter and buffer of the module tree (and any gradient
  /// they hold) to `dtype` in place (Tensor::set_data): names, requires_grad and every handle to
  /// them (the modules' members) are kept; integer state such as num_batches_tracked stays as
  /// it is, as PyTorch's Module.to(dtype) (libtorch's C++ to() converts it too). Build optimizers
  /// afterwards: their states follow their parameters' dtypes when made. DTypeError for a dtype
  /// that is not floating.
  void to(ScalarType dtype);
  /// Moves every parameter and buffer of the module tree (and any gradient they hold) to the
  /// memory of `device` in place (Tensor::set_data), as libtorch's Module::to(Device): names,
  /// requires_grad and every handle to them are kept; integer buffers move too. Build optimizers
  /// afterwards: they make their states where their parameters live. Inputs must then be on
  /// `device` as well: an op on two devices throws ValueError naming both. ValueError for a
  /// device that is unknown or not built (ember/device.h).
  void to(const Device& device);

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Drops every parameter's gradient (libtorch's set_to_none behaviour).
  void zero_grad();

 private:
  // Calls f on each own parameter and buffer, then on the children's.
  void for_each_state(const std::function<void(Tensor&)>& f);
  NamedTensors params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

/// A shared handle to a module implementation: `Linear l(8, 128); l->forward(x)`. As libtorch's,
/// a default-constructed handle holds a default-constructed module when the module has a default
/// constructor, and `nullptr` makes an empty handle.
template <typename Impl>
class ModuleHolder {
 public:
  ModuleHolder() {
    if constexpr (std::default_initializable<Impl>) impl_ = std::make_shared<Impl>();
  }
  ModuleHolder(std::nullptr_t) {}
  explicit ModuleHolder(std::shared_ptr<Impl> p) : impl_(std::move(p)) {}
  template <typename... Args>
  requires std::constructible_from<Impl, Args...>
  explicit ModuleHolder(Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<Args>(args)...)) {}
  Impl* operator->() const { return impl_.get(); }
  Impl& operator*() const { return *impl_; }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return !impl_; }
  template <typename... Args>
  auto operator()(Args&&... args) const {
    return impl_->forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

/// A module configured by an options struct, kept in the public `options` as in libtorch's
/// modules; constructed from the options or from the arguments of their constructor.
template <typename Options>
class OptionsModule : public Module {
 public:
  template <typename... Args>
  requires std::constructible_from<Options, Args...>
  explicit OptionsModule(Args&&... args) : options(std::forward<Args>(args)...) {}
  Options options;
};

/// Declares the handle `Name` of the module implementation `NameImpl` (libtorch's TORCH_MODULE).
#define EMBER_MODULE(Name)                                     \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
  }

}  // namespace ember::nn

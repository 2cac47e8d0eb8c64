// ember/nn/modules.h — Linear, Sequential and activation modules.
#pragma once
#include <functional>

#include "ember/nn/module.h"

namespace ember::nn {

/// y = x W^T + b. x: [..., in_features] float32 -> [..., out_features]. Default initialisation as
/// libtorch (kaiming_uniform_ with a = sqrt(5), i.e. W, b ~ U(-1/sqrt(in), 1/sqrt(in))).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) const;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features] (undefined without bias)
  int64_t in_features, out_features;
};
EMBER_MODULE(Linear);

class TanhImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const { return x.tanh(); }
};
EMBER_MODULE(Tanh);

class ReLUImpl : public Module {
 public:
  Tensor forward(const Tensor& x) const { return x.relu(); }
};
EMBER_MODULE(ReLU);

/// Applies its modules in order; children are named "0", "1", ... as in libtorch.
class SequentialImpl : public Module {
 public:
  SequentialImpl() = default;
  template <typename... Ms>
  explicit SequentialImpl(Ms&&... ms) {
    (push_back(std::forward<Ms>(ms)), ...);
  }
  template <typename H>
  void push_back(H holder) {
    auto p = holder.ptr();
    register_module(std::to_string(fns_.size()), p);
    fns_.push_back([p](const Tensor& x) { return p->forward(x); });
  }
  Tensor forward(const Tensor& x) const;
  size_t size() const { return fns_.size(); }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> fns_;
};
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  Sequential() : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>()) {}
  template <typename... Ms>
  explicit Sequential(Ms&&... ms)
      : ModuleHolder<SequentialImpl>(std::make_shared<SequentialImpl>(std::forward<Ms>(ms)...)) {}
};

}  // namespace ember::nn

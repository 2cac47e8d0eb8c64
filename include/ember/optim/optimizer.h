// ember/optim/optimizer.h — optimizers (torch::optim names) and gradient clipping.
//
// A step realizes every updated parameter and state tensor in ONE schedule and writes them in place
// (parameters keep their buffers). Hyper-parameters that change between steps (learning rate, the
// step count in Adam's bias corrections) live in small buffers, not in generated code, so changing
// them never recompiles and a jit replay of a step reads the current values.
#pragma once
#include <memory>
#include <vector>

#include "ember/tensor.h"

namespace ember::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  /// Applies one update from the parameters' current gradients (parameters without a gradient are
  /// skipped).
  void step();
  /// Drops the gradients (set to none).
  void zero_grad();
  double lr() const { return lr_value_; }
  /// Takes effect at the next step; no recompilation.
  void set_lr(double lr);
  const std::vector<Tensor>& params() const { return params_; }
  /// Named state tensors (for checkpoints): e.g. "0.exp_avg", "step".
  virtual NamedTensors state() const = 0;

 protected:
  /// Builds the lazy update of parameter i (and its state) from gradient g; returns the tensors to
  /// realize.
  virtual void update(size_t i, const Tensor& g, std::vector<Tensor>& out) = 0;
  virtual void begin_step(std::vector<Tensor>& out) {}
  /// After the step's schedule: drop the step's temporaries (a jitted step must keep none).
  virtual void end_step() {}
  std::vector<Tensor> params_;
  Tensor lr_;  // 0-d float32 buffer
  double lr_value_;
};

struct SGDOptions {
  explicit SGDOptions(double lr) : lr(lr) {}
  double lr;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

/// PyTorch's SGD: d = g + wd p; buf = d (first step) else momentum buf + (1 - dampening) d;
/// d = nesterov ? d + momentum buf : buf; p -= lr d.
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions o);
  NamedTensors state() const override;

 private:
  void begin_step(std::vector<Tensor>& out) override;
  void update(size_t i, const Tensor& g, std::vector<Tensor>& out) override;
  void end_step() override { first_now_ = Tensor(); }
  SGDOptions o_;
  std::vector<Tensor> buf_;
  Tensor first_;  // 0-d float32: 1 before the first step, then 0
  Tensor first_now_;
};

struct AdamOptions {
  explicit AdamOptions(double lr = 1e-3) : lr(lr) {}
  double lr;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  AdamOptions& betas(double b1, double b2) {
    beta1 = b1;
    beta2 = b2;
    return *this;
  }
};

/// Adam (Kingma & Ba 2015, Algorithm 1) in PyTorch's arithmetic: m = b1 m + (1-b1) g;
/// v = b2 v + (1-b2) g^2; p -= (lr / (1-b1^t)) m / (sqrt(v) / sqrt(1-b2^t) + eps).
/// Adam adds weight_decay * p to g (L2); AdamW decays p by lr * weight_decay first (Loshchilov &
/// Hutter 2019).
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions o, bool decoupled_weight_decay = false);
  NamedTensors state() const override;

 private:
  void begin_step(std::vector<Tensor>& out) override;
  void update(size_t i, const Tensor& g, std::vector<Tensor>& out) override;
  AdamOptions o_;
  bool decoupled_;
  std::vector<Tensor> m_, v_;
  Tensor step_;  // 0-d float32 step count
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions o) : Adam(std::move(params), o, true) {}
};

}  // namespace ember::optim

namespace ember::nn::utils {

/// Scales the gradients in place so that their global L2 norm is at most max_norm
/// (coef = min(1, max_norm / (norm + 1e-6)), as PyTorch). Returns the norm before clipping as a
/// realized 0-d float32 tensor (libtorch returns a double; a tensor keeps a jitted training step
/// capturable, and its value is not read on the host). The gradients are realized too (the norm
/// reads them); their scaling stays lazy, for the optimizer's step to fuse.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace ember::nn::utils

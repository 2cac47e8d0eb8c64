// ember/optim/optimizer.h — optimizers (torch::optim names) and gradient clipping.
//
// A step realizes every updated parameter and state tensor in ONE schedule and writes them in place
// (parameters keep their buffers); in-place updates still pending elsewhere (BatchNorm's running
// statistics) land in the same schedule (realize_with_pending_writes). Hyper-parameters that change
// between steps (learning rate, the step counts in Adam's bias corrections) live in small buffers,
// not in generated code, so changing them never recompiles and a jit replay of a step reads the
// current values.
//
// State is per parameter, as torch.optim keeps it: a parameter without a gradient at a step is
// skipped and its state does not advance; each parameter counts its own steps from its first
// update (Adam's bias corrections use that count; SGD's momentum buffer starts as that
// parameter's first gradient). The counts live in one float32 buffer "steps" of one element per
// parameter, in parameter order (exact up to 2^24 steps).
//
// States live where the parameters do when the optimizer is made (nn::Module::to(Device) first);
// the constructor throws ValueError, naming both, for parameters on two devices.
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
  /// Named state tensors (for checkpoints): e.g. "0.exp_avg", ..., "steps".
  virtual NamedTensors state() const = 0;
  /// Each parameter's step count (the "steps" state): how many updates it has had.
  const Tensor& steps() const { return steps_; }

  /// Checkpoints written before the counts were per parameter hold one global count, a 0-d
  /// float32 tensor of this name in place of "steps" (optim/serialize.h loads them).
  virtual const char* legacy_step_name() const = 0;
  /// Sets every parameter's count from that tensor's value (host write, no kernel).
  virtual void load_legacy_step(double value) = 0;

 protected:
  /// Builds the lazy update of parameter i (and its state) from gradient g; returns the tensors to
  /// realize.
  virtual void update(size_t i, const Tensor& g, std::vector<Tensor>& out) = 0;
  /// Called once per step after the counts' increment, before the updates.
  virtual void begin_step(std::vector<Tensor>& out) {}
  /// After the step's schedule: drop the step's temporaries (a jitted step must keep none).
  virtual void end_step() {}
  /// Parameter i's count after this step's increment (1 at its first update; a view of the
  /// pending new steps()).
  Tensor step_of(size_t i) const { return steps_.select(0, static_cast<int64_t>(i)); }
  /// Writes every parameter's count (host write into the buffer).
  void set_steps(double value);
  std::vector<Tensor> params_;
  Tensor lr_;     // 0-d float32 buffer
  Tensor steps_;  // [params] float32 buffer
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

/// PyTorch's SGD: d = g + wd p; buf = d (the parameter's first update) else
/// momentum buf + (1 - dampening) d; d = nesterov ? d + momentum buf : buf; p -= lr d.
/// State: "i.momentum_buffer" (with momentum) and "steps". Legacy checkpoints hold "first_step"
/// (1 before the first step, then 0).
class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions o);
  NamedTensors state() const override;
  const char* legacy_step_name() const override { return "first_step"; }
  void load_legacy_step(double value) override { set_steps(value > 0.5 ? 0.0 : 1.0); }

 private:
  void update(size_t i, const Tensor& g, std::vector<Tensor>& out) override;
  SGDOptions o_;
  std::vector<Tensor> buf_;
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
/// v = b2 v + (1-b2) g^2; p -= (lr / (1-b1^t)) m / (sqrt(v) / sqrt(1-b2^t) + eps), with t the
/// parameter's own step count. Adam adds weight_decay * p to g (L2); AdamW decays p by
/// lr * weight_decay first (Loshchilov & Hutter 2019). State: "i.exp_avg", "i.exp_avg_sq" and
/// "steps". Legacy checkpoints hold "step", the count every parameter had.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions o, bool decoupled_weight_decay = false);
  NamedTensors state() const override;
  const char* legacy_step_name() const override { return "step"; }
  void load_legacy_step(double value) override { set_steps(value); }

 private:
  void begin_step(std::vector<Tensor>& out) override;
  void update(size_t i, const Tensor& g, std::vector<Tensor>& out) override;
  void end_step() override { step_size_ = bc2_sqrt_ = Tensor(); }
  AdamOptions o_;
  bool decoupled_;
  std::vector<Tensor> m_, v_;
  Tensor step_size_, bc2_sqrt_;  // this step's lr / (1 - b1^t), sqrt(1 - b2^t) per parameter
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions o) : Adam(std::move(params), o, true) {}
};

}  // namespace ember::optim

namespace ember::nn::utils {

/// Scales the gradients in place so that their global L2 norm is at most max_norm
/// (coef = min(1, max_norm / (norm + 1e-6)), as PyTorch). Returns the norm before clipping as a
/// realized 0-d tensor: float64 when a gradient is float64, else float32 (libtorch returns a
/// double; a tensor keeps a jitted training step capturable, and its value is not read on the
/// host). The gradients are realized too (the norm reads them); their scaling stays lazy, for the
/// optimizer's step to fuse.
/// The norm neither overflows nor underflows where the true norm is finite in its dtype: squares
/// are summed in float64 (float32 gradients of 1e20 or 1e-30 square to 1e40 and 1e-60, in float64's
/// range), and float64 gradients are first divided by their largest magnitude and the norm
/// multiplied back (as LAPACK's dnrm2 scales: float64 gradients of 1e200 give 1.4e200, not inf).
/// NaN gradients give a NaN norm; an infinite one an infinite norm.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

}  // namespace ember::nn::utils

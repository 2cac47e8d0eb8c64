#include "ember/optim/optimizer.h"

#include <algorithm>
#include <cmath>

#include "ember/grad_mode.h"
#include "ember/host_values.h"
#include "ember/pending_writes.h"

namespace ember::optim {

namespace {
// States are filled on the host (realized_clone): no kernel to compile per parameter shape.
Tensor scalar_buffer(double v) { return realized_clone(full({}, v, kFloat32)); }
// Host-side write into a realized 0-d float32 buffer: no kernel, so nothing to compile.
void write_scalar(Tensor& t, double v) {
  t.realize();
  overwrite_in_place({t}, [&] { *static_cast<float*>(t.data_ptr()) = static_cast<float>(v); });
}
// Made on the host and moved to where p lives.
Tensor zeros_state(const Tensor& p) {
  return realized_clone(zeros(p.sizes(), p.dtype())).to(p.device());
}

// Where every parameter lives (cpu for none): the optimizer's shared states go there.
Device params_device(const std::vector<Tensor>& params) {
  if (params.empty()) return Device("cpu");
  const Device d = params[0].device();
  for (size_t i = 1; i < params.size(); i++)
    if (params[i].device() != d)
      throw ValueError("optimizer: parameters on two devices, " + d.str() + " (parameter 0) and " +
                       params[i].device().str() + " (parameter " + std::to_string(i) +
                       "): move the module with to(device) first");
  return d;
}

// 1 for the parameters that have a gradient, 0 for the others: a constant (no host data, so a
// jitted step can hold it); one broadcast 1 in the usual case where all of them have one.
Tensor increments(const std::vector<bool>& has_grad) {
  const auto n = static_cast<int64_t>(has_grad.size());
  if (std::find(has_grad.begin(), has_grad.end(), false) == has_grad.end())
    return ones({n}, kFloat32);
  std::vector<Tensor> parts;
  for (bool h : has_grad) parts.push_back(full({1}, h ? 1.0 : 0.0, kFloat32));
  return cat(parts);
}
}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr)
    : params_(std::move(params)),
      lr_(scalar_buffer(lr)),
      steps_(realized_clone(zeros({static_cast<int64_t>(params_.size())}, kFloat32))),
      lr_value_(lr) {
  if (lr < 0) throw ValueError("Invalid learning rate: " + std::to_string(lr));
  for (size_t i = 0; i < params_.size(); i++)
    if (!params_[i].defined() || !params_[i].requires_grad())
      throw ValueError("optimizer: parameter " + std::to_string(i) + " does not require grad");
  const Device where = params_device(params_);
  lr_ = lr_.to(where);
  steps_ = steps_.to(where);
}

void Optimizer::set_lr(double lr) {
  if (lr < 0) throw ValueError("Invalid learning rate: " + std::to_string(lr));
  lr_value_ = lr;
  write_scalar(lr_, lr);
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.set_grad(Tensor());
}

void Optimizer::set_steps(double value) {
  steps_.realize();
  overwrite_in_place({steps_}, [&] {
    auto* p = static_cast<float*>(steps_.data_ptr());
    std::fill(p, p + steps_.numel(), static_cast<float>(value));
  });
}

void Optimizer::step() {
  NoGradGuard guard;
  std::vector<Tensor> grads;
  std::vector<bool> has_grad;
  for (auto& p : params_) {
    grads.push_back(p.grad());
    has_grad.push_back(grads.back().defined());
  }
  if (params_.empty()) return;
  // Only the parameters with a gradient advance; update() reads the new counts.
  steps_.add_(increments(has_grad));
  std::vector<Tensor> out{steps_};
  begin_step(out);
  for (size_t i = 0; i < params_.size(); i++) {
    if (!has_grad[i]) continue;
    out.push_back(grads[i]);  // pending in-place changes (e.g. clipping) land in the same schedule
    update(i, grads[i], out);
  }
  // With the step, pending in-place updates (BatchNorm's running statistics, computed from the
  // forward pass this step's gradients come from) land in the same schedule.
  realize_with_pending_writes(out);
  end_step();
}

// ---- SGD
// ------------------------------------------------------------------------------------------
SGD::SGD(std::vector<Tensor> params, SGDOptions o) : Optimizer(std::move(params), o.lr), o_(o) {
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    throw ValueError("Nesterov momentum requires a momentum and zero dampening");
  if (o_.momentum != 0)
    for (auto& p : params_) buf_.push_back(zeros_state(p));
}

void SGD::update(size_t i, const Tensor& g, std::vector<Tensor>& out) {
  Tensor& p = params_[i];
  Tensor d = o_.weight_decay != 0 ? g + p * o_.weight_decay : g;
  if (o_.momentum != 0) {
    Tensor& b = buf_[i];
    // The parameter's first update (its count is now 1) starts the buffer at d.
    Tensor nb = where(step_of(i) < 1.5, d, b * o_.momentum + d * (1.0 - o_.dampening));
    b.copy_(nb);
    out.push_back(b);
    d = o_.nesterov ? d + b * o_.momentum : b;
  }
  p.copy_(p - lr_ * d);
  out.push_back(p);
}

std::vector<std::pair<std::string, Tensor>> SGD::state() const {
  std::vector<std::pair<std::string, Tensor>> s;
  for (size_t i = 0; i < buf_.size(); i++)
    s.emplace_back(std::to_string(i) + ".momentum_buffer", buf_[i]);
  s.emplace_back("steps", steps_);
  return s;
}

// ---- Adam / AdamW
// --------------------------------------------------------------------------------
Adam::Adam(std::vector<Tensor> params, AdamOptions o, bool decoupled)
    : Optimizer(std::move(params), o.lr), o_(o), decoupled_(decoupled) {
  if (o.eps < 0) throw ValueError("Invalid epsilon value: " + std::to_string(o.eps));
  if (o.beta1 < 0 || o.beta1 >= 1 || o.beta2 < 0 || o.beta2 >= 1)
    throw ValueError("Invalid beta parameters: " + std::to_string(o.beta1) + ", " +
                     std::to_string(o.beta2));
  for (auto& p : params_) {
    m_.push_back(zeros_state(p));
    v_.push_back(zeros_state(p));
  }
}

void Adam::begin_step(std::vector<Tensor>& out) {
  // Every parameter's step size lr / (1 - b1^t) and sqrt(1 - b2^t) at once, from its new count:
  // realized with the counts (one small kernel) and read by each parameter's update.
  step_size_ = lr_ / (Scalar(1.0) - full({}, o_.beta1, kFloat32).pow(steps_));
  bc2_sqrt_ = (Scalar(1.0) - full({}, o_.beta2, kFloat32).pow(steps_)).sqrt();
  out.push_back(step_size_);
  out.push_back(bc2_sqrt_);
}

void Adam::update(size_t i, const Tensor& g_in, std::vector<Tensor>& out) {
  Tensor& p = params_[i];
  Tensor g = g_in;
  Tensor base = p;
  if (o_.weight_decay != 0) {
    if (decoupled_)
      base = p * (Scalar(1.0) - lr_ * o_.weight_decay);
    else
      g = g + p * o_.weight_decay;
  }
  Tensor m = m_[i] * o_.beta1 + g * (1.0 - o_.beta1);
  Tensor v = v_[i] * o_.beta2 + g * g * (1.0 - o_.beta2);
  const auto at = static_cast<int64_t>(i);
  Tensor denom = v.sqrt() / bc2_sqrt_.select(0, at) + o_.eps;
  Tensor np = base - step_size_.select(0, at) * m / denom;
  m_[i].copy_(m);
  v_[i].copy_(v);
  p.copy_(np);
  out.push_back(m_[i]);
  out.push_back(v_[i]);
  out.push_back(p);
}

std::vector<std::pair<std::string, Tensor>> Adam::state() const {
  std::vector<std::pair<std::string, Tensor>> s;
  for (size_t i = 0; i < m_.size(); i++) {
    s.emplace_back(std::to_string(i) + ".exp_avg", m_[i]);
    s.emplace_back(std::to_string(i) + ".exp_avg_sq", v_[i]);
  }
  s.emplace_back("steps", steps_);
  return s;
}

}  // namespace ember::optim

namespace ember::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  NoGradGuard guard;
  std::vector<Tensor> grads;
  bool wide = false;  // a float64 gradient: its squares can overflow float64
  for (auto& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    wide |= g.dtype() == kFloat64;
  }
  if (grads.empty()) return zeros({});
  // Squares summed in float64: those of float32 values neither overflow nor underflow there.
  // float64 gradients are scaled by their largest magnitude first (as LAPACK's dnrm2): the
  // squares of g / scale are at most 1 (0 and non-finite scales divide by 1 instead).
  Tensor scale;
  if (wide) {
    scale = zeros({}, kFloat64);
    for (auto& g : grads)
      if (g.numel()) scale = scale.maximum(g.to(kFloat64).abs().amax({}));
    scale = where((scale > 0).logical_and(scale < INFINITY), scale, ones({}, kFloat64));
  }
  Tensor total;
  for (auto& g : grads) {
    Tensor x = wide ? g.to(kFloat64) / scale : g.to(kFloat64);
    Tensor sq = x.square().sum();
    total = total.defined() ? total + sq : sq;
  }
  Tensor norm = total.sqrt();
  if (wide) norm = norm * scale;
  norm = norm.to(wide ? kFloat64 : kFloat32);
  // The norm (and the gradients it reads, which the step needs anyway) computed here, once: the
  // factor below then reads the norm's buffer. Left lazy, the factor's graph would hold the
  // norm's expression, and a caller that realizes the norm first (to log it) and the clipped
  // gradients later would have the norm computed twice (a kernel that reads every gradient).
  grads.push_back(norm);
  realize(grads);
  grads.pop_back();
  Tensor coef = (Scalar(max_norm) / (norm + 1e-6)).clamp_max(1.0);
  for (auto& g : grads) g.mul_(coef);
  return norm;
}

}  // namespace ember::nn::utils

#include "ember/optim/optimizer.h"

#include <cmath>

#include "ember/grad_mode.h"
#include "ember/host_values.h"

namespace ember::optim {

namespace {
// States are filled on the host (realized_clone): no kernel to compile per parameter shape.
Tensor scalar_buffer(double v) { return realized_clone(full({}, v, kFloat32)); }
// Host-side write into a realized 0-d float32 buffer: no kernel, so nothing to compile.
void write_scalar(Tensor& t, double v) {
  t.realize();
  overwrite_in_place({t}, [&] { *static_cast<float*>(t.data_ptr()) = static_cast<float>(v); });
}
Tensor zeros_state(const Tensor& p) { return realized_clone(zeros(p.sizes(), p.dtype())); }
}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr)
    : params_(std::move(params)), lr_(scalar_buffer(lr)), lr_value_(lr) {
  if (lr < 0) throw ValueError("Invalid learning rate: " + std::to_string(lr));
  for (size_t i = 0; i < params_.size(); i++)
    if (!params_[i].defined() || !params_[i].requires_grad())
      throw ValueError("optimizer: parameter " + std::to_string(i) + " does not require grad");
}

void Optimizer::set_lr(double lr) {
  if (lr < 0) throw ValueError("Invalid learning rate: " + std::to_string(lr));
  lr_value_ = lr;
  write_scalar(lr_, lr);
}

void Optimizer::zero_grad() {
  for (auto& p : params_) p.set_grad(Tensor());
}

void Optimizer::step() {
  NoGradGuard guard;
  std::vector<Tensor> out;
  begin_step(out);
  for (size_t i = 0; i < params_.size(); i++) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue;
    out.push_back(g);  // pending in-place changes (e.g. clipping) land in the same schedule
    update(i, g, out);
  }
  realize(out);
  end_step();
}

// ---- SGD
// ------------------------------------------------------------------------------------------
SGD::SGD(std::vector<Tensor> params, SGDOptions o) : Optimizer(std::move(params), o.lr), o_(o) {
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    throw ValueError("Nesterov momentum requires a momentum and zero dampening");
  if (o_.momentum != 0)
    for (auto& p : params_) buf_.push_back(zeros_state(p));
  first_ = scalar_buffer(1.0);
}

void SGD::begin_step(std::vector<Tensor>& out) {
  // Every parameter's update reads the flag as it was before this step; it drops to 0 in the
  // same schedule.
  first_now_ = first_.detach();
  first_.copy_(zeros({}, kFloat32));
  out.push_back(first_);
}

void SGD::update(size_t i, const Tensor& g, std::vector<Tensor>& out) {
  Tensor& p = params_[i];
  Tensor d = o_.weight_decay != 0 ? g + p * o_.weight_decay : g;
  if (o_.momentum != 0) {
    Tensor& b = buf_[i];
    Tensor nb = where(first_now_ > 0.5, d, b * o_.momentum + d * (1.0 - o_.dampening));
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
  s.emplace_back("first_step", first_);
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
  step_ = scalar_buffer(0.0);
}

void Adam::begin_step(std::vector<Tensor>& out) {
  step_.add_(ones({}, kFloat32));
  out.push_back(step_);
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
  Tensor bc1 = Scalar(1.0) - full({}, o_.beta1, kFloat32).pow(step_);
  Tensor bc2 = Scalar(1.0) - full({}, o_.beta2, kFloat32).pow(step_);
  Tensor denom = v.sqrt() / bc2.sqrt() + o_.eps;
  Tensor np = base - (lr_ / bc1) * m / denom;
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
  s.emplace_back("step", step_);
  return s;
}

}  // namespace ember::optim

namespace ember::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  NoGradGuard guard;
  Tensor total;
  std::vector<Tensor> grads;
  for (auto& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    grads.push_back(g);
    Tensor sq = g.to(kFloat32).square().sum();
    total = total.defined() ? total + sq : sq;
  }
  if (!total.defined()) return zeros({});
  Tensor norm = total.sqrt();
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

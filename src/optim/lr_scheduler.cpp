// Learning-rate schedulers (include/ember/optim/lr_scheduler.h has the formulas).
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "ember/error.h"

namespace ember::optim {

LRScheduler::LRScheduler(Optimizer& optimizer)
    : optimizer_(optimizer), base_lr_(optimizer.lr()), last_lr_(optimizer.lr()) {}

void LRScheduler::start() {
  last_lr_ = lr_at(0);
  optimizer_.set_lr(last_lr_);
}

void LRScheduler::step() {
  last_lr_ = lr_at(++epoch_);
  optimizer_.set_lr(last_lr_);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size < 1)
    throw ValueError("StepLR: step_size must be at least 1, got " + std::to_string(step_size));
  start();
}

double StepLR::lr_at(int64_t e) const {
  return base_lr() * std::pow(gamma_, static_cast<double>(e / step_size_));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  if (T_max < 1)
    throw ValueError("CosineAnnealingLR: T_max must be at least 1, got " + std::to_string(T_max));
  start();
}

double CosineAnnealingLR::lr_at(int64_t e) const {
  const double phase = std::numbers::pi * static_cast<double>(e) / static_cast<double>(T_max_);
  return eta_min_ + (base_lr() - eta_min_) * (1 + std::cos(phase)) / 2;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1))
    throw ValueError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got " +
                     std::to_string(start_factor) + " and " + std::to_string(end_factor));
  if (total_iters < 1)
    throw ValueError("LinearLR: total_iters must be at least 1, got " +
                     std::to_string(total_iters));
  start();
}

double LinearLR::lr_at(int64_t e) const {
  const double done =
      static_cast<double>(std::min(e, total_iters_)) / static_cast<double>(total_iters_);
  return base_lr() * (start_factor_ + (end_factor_ - start_factor_) * done);
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda)
    : LRScheduler(optimizer), lr_lambda_(std::move(lr_lambda)) {
  if (!lr_lambda_) throw ValueError("LambdaLR: lr_lambda is empty");
  start();
}

double LambdaLR::lr_at(int64_t e) const { return base_lr() * lr_lambda_(e); }

}  // namespace ember::optim

// Learning-rate schedulers (include/ember/optim/lr_scheduler.h has the formulas). Each derived
// class checks its options and hands the base its closed form.
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "ember/error.h"

namespace ember::optim {
namespace {

using Schedule = LRScheduler::Schedule;

// ValueError naming the option unless v >= 1.
void require_at_least_one(int64_t v, const char* option) {
  if (v < 1)
    throw ValueError(std::string(option) + " must be at least 1, got " + std::to_string(v));
}

Schedule step_schedule(int64_t step_size, double gamma) {
  require_at_least_one(step_size, "StepLR: step_size");
  return [=](double base_lr, int64_t e) {
    return base_lr * std::pow(gamma, static_cast<double>(e / step_size));
  };
}

Schedule cosine_schedule(int64_t T_max, double eta_min) {
  require_at_least_one(T_max, "CosineAnnealingLR: T_max");
  return [=](double base_lr, int64_t e) {
    const double phase = std::numbers::pi * static_cast<double>(e) / static_cast<double>(T_max);
    return eta_min + (base_lr - eta_min) * (1 + std::cos(phase)) / 2;
  };
}

Schedule linear_schedule(double start_factor, double end_factor, int64_t total_iters) {
  if (!(start_factor > 0 && start_factor <= 1) || !(end_factor >= 0 && end_factor <= 1))
    throw ValueError("LinearLR: start_factor must be in (0, 1] and end_factor in [0, 1], got " +
                     std::to_string(start_factor) + " and " + std::to_string(end_factor));
  require_at_least_one(total_iters, "LinearLR: total_iters");
  return [=](double base_lr, int64_t e) {
    const double done =
        static_cast<double>(std::min(e, total_iters)) / static_cast<double>(total_iters);
    return base_lr * (start_factor + (end_factor - start_factor) * done);
  };
}

Schedule lambda_schedule(std::function<double(int64_t)> lr_lambda) {
  if (!lr_lambda) throw ValueError("LambdaLR: lr_lambda is empty");
  return [f = std::move(lr_lambda)](double base_lr, int64_t e) { return base_lr * f(e); };
}

}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer, Schedule schedule)
    : optimizer_(optimizer), schedule_(std::move(schedule)), base_lr_(optimizer.lr()) {
  set_lr();
}

void LRScheduler::step() {
  ++epoch_;
  set_lr();
}

void LRScheduler::set_lr() {
  last_lr_ = schedule_(base_lr_, epoch_);
  optimizer_.set_lr(last_lr_);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer, step_schedule(step_size, gamma)) {}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, cosine_schedule(T_max, eta_min)) {}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters)
    : LRScheduler(optimizer, linear_schedule(start_factor, end_factor, total_iters)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda)
    : LRScheduler(optimizer, lambda_schedule(std::move(lr_lambda))) {}

}  // namespace ember::optim

// ember/optim/lr_scheduler.h — learning-rate schedulers over an optimizer (torch.optim.lr_scheduler
// names and options; PyTorch's Python schedulers' closed forms). A scheduler reads the optimizer's
// learning rate at construction as base_lr, sets epoch 0's rate at once (as PyTorch's constructor
// step) and each step() advances one epoch and sets that epoch's rate (Optimizer::set_lr: no
// recompilation). With e the epoch (the number of step() calls):
//   StepLR             base_lr gamma^floor(e / step_size)
//   CosineAnnealingLR  eta_min + (base_lr - eta_min) (1 + cos(pi e / T_max)) / 2
//                      (Loshchilov & Hutter, "SGDR", 2017, equation 5, without restarts)
//   LinearLR           base_lr (start_factor + (end_factor - start_factor) min(e, total_iters) /
//                      total_iters)
//   LambdaLR           base_lr lr_lambda(e)
// libtorch 1.13's C++ StepLR decays one step later (at step_size + 1, 2 step_size + 1, ...): these
// follow PyTorch's Python schedulers. The optimizer must outlive the scheduler.
#pragma once
#include <cstdint>
#include <functional>

#include "ember/optim/optimizer.h"

namespace ember::optim {

/// A schedule in closed form: the learning rate of each epoch from base_lr.
class LRScheduler {
 public:
  /// The learning rate of epoch e for a base_lr.
  using Schedule = std::function<double(double base_lr, int64_t e)>;

  virtual ~LRScheduler() = default;
  /// Advances one epoch and sets its learning rate on the optimizer.
  void step();
  /// The number of step() calls so far.
  int64_t last_epoch() const { return epoch_; }
  /// The learning rate last set (PyTorch's get_last_lr, for the one parameter group).
  double get_last_lr() const { return last_lr_; }
  double base_lr() const { return base_lr_; }

 protected:
  /// Sets epoch 0's rate. The derived classes check their options while they make the schedule,
  /// so a rejected scheduler leaves the optimizer's rate alone.
  LRScheduler(Optimizer& optimizer, Schedule schedule);

 private:
  void set_lr();

  Optimizer& optimizer_;
  Schedule schedule_;
  double base_lr_, last_lr_ = 0;
  int64_t epoch_ = 0;
};

/// ValueError for step_size < 1.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
};

/// ValueError for T_max < 1.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);
};

/// ValueError for start_factor outside (0, 1], end_factor outside [0, 1] or total_iters < 1 (as
/// PyTorch).
class LinearLR : public LRScheduler {
 public:
  explicit LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
                    int64_t total_iters = 5);
};

/// ValueError for an empty lr_lambda.
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda);
};

}  // namespace ember::optim

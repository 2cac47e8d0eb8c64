// The PPO update (docs/training.md "The workload": 20 passes over the epoch's transitions in
// shuffled minibatches; "Update": clipped surrogate objective, value loss, grad-norm clipping,
// Adam).
//
// One training step on a minibatch is a TensorFn (tensor_fn.h) from
//   {obs [M, O], actions [M, A], old_log_probs [M], advantages [M], returns [M]} (float32)
// to the metrics {loss, policy_loss, value_loss, entropy, approx_kl, clip_fraction,
// actor_grad_norm, critic_grad_norm} (0-d float32, read with item() after the call). Inside:
// forward (actor means, critic values), ppo_loss (ppo_loss.h), gradients, grad-norm clipping
// (nn::utils::clip_grad_norm_: separately over the actor's parameters incl. log_std and over the
// critic's when separate_grad_clip, as docs/training.md's known-good configuration; else one global
// clip), one Adam step (Kingma & Ba 2015, PyTorch's arithmetic). It reads no tensor data, so it
// can be captured by ember::jit (options.jit).
//
// Gradients come from autograd::grad through the loss, the Gaussian head and both MLPs.
// The reported grad norms are the norms BEFORE clipping (the global norm in both fields when
// separate_grad_clip is false).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ember/compile_ahead.h"
#include "ember/optim/optimizer.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/ppo_loss.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/tensor_fn.h"

namespace ember::rl {

struct PpoUpdateOptions {
  PpoLossOptions loss;
  double lr = 1e-3;
  double adam_eps = 1e-5;
  double adam_beta1 = 0.9, adam_beta2 = 0.999;
  double max_grad_norm = 0.5;  // <= 0: no clipping (norms still reported)
  bool separate_grad_clip = true;
  int64_t passes = 20;        // passes over the epoch's transitions
  int64_t minibatch = 10000;  // must divide the epoch's transitions
  bool jit = true;            // capture the training step with ember::jit when available
};

/// Means over the update's optimizer steps, and its timing (seconds).
struct UpdateStats {
  int64_t optimizer_steps = 0;
  double loss = 0, policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0,
         actor_grad_norm = 0, critic_grad_norm = 0;
  double last_approx_kl = 0;
  double gather_seconds = 0;  // shuffling, host-side gathers, copies into tensors
  double step_seconds = 0;    // training steps (forward, loss, backward, clipping, Adam)
  double compile_ahead_wait_seconds = 0;  // waiting for compile_ahead() to finish
};

class PpoLearner {
 public:
  /// Builds Adam over the policy's actor and critic parameters. Throws ValueError for bad options.
  PpoLearner(ActorCritic policy, const PpoUpdateOptions& options);
  ~PpoLearner();  // waits for compile_ahead()'s thread
  PpoLearner(const PpoLearner&) = delete;
  PpoLearner& operator=(const PpoLearner&) = delete;

  /// Compiles the kernels of the first training step on a background thread while the caller
  /// does other work (the trainer: the first collection), so that the first update() finds them
  /// compiled: train_step runs once inside ember::compile_ahead (compile_ahead.h: scheduled and
  /// compiled, nothing launched) on a scratch policy with this learner's PolicyOptions (its
  /// initial values drawn from a ScopedGenerator, not the global generator), its own Adam, and
  /// zero minibatch inputs of update()'s shapes. It touches nothing of this learner, so results
  /// are unchanged. `before(scratch)`, when set, runs first in the same scope (the trainer: the
  /// forward that gives the collected transitions their old log-probs and values).
  /// update() waits for it first. With a kernel thread count of 1 no thread is started: the same
  /// work runs on the caller's thread when update() (or wait_compile_ahead) first needs it, so
  /// the kernels are batched alike (and share on-disk cache entries) whatever the thread count.
  /// A failure is not raised (the real step compiles and reports it); DEBUG=1 prints it. Does
  /// nothing while an earlier call's work is pending.
  void compile_ahead(const std::function<void(const ActorCritic&)>& before = {});
  /// What compile_ahead() compiled (after update() or wait_compile_ahead(); zeros before).
  const CompileAheadStats& compile_ahead_stats() const { return ahead_stats_; }
  /// Waits for compile_ahead() to finish (or runs it, with one thread); returns the seconds.
  double wait_compile_ahead();

  /// The (un-jitted) training step described above.
  std::vector<Tensor> train_step(const std::vector<Tensor>& inputs);
  /// The training step as used by update(): train_step, wrapped in ember::jit when options.jit
  /// (the study's controlled step, bench/study/ember_step.cpp, times exactly this).
  const TensorFn& step_fn() const { return step_fn_; }

  /// options.passes passes over buffer's T * N transitions in shuffled minibatches (a fresh
  /// permutation per pass from `shuffle_seed`). Throws ValueError when the minibatch size does
  /// not divide T * N. `on_step(done, total)`, if set, is called after each optimizer step.
  UpdateStats update(const RolloutBuffer& buffer, uint64_t shuffle_seed,
                     const std::function<void(int64_t, int64_t)>& on_step = {});

  optim::Adam& optimizer() { return *optimizer_; }
  const PpoUpdateOptions& options() const { return options_; }
  const ActorCritic& policy() const { return policy_; }

 private:
  ActorCritic policy_;
  PpoUpdateOptions options_;
  std::vector<Tensor> actor_params_, critic_params_;
  std::unique_ptr<optim::Adam> optimizer_;
  TensorFn step_fn_;                 // train_step, wrapped in ember::jit when options.jit
  std::function<void()> ahead_job_;  // compile_ahead's work, until it ran
  std::thread ahead_;                // running it (more than one kernel thread)
  CompileAheadStats ahead_stats_;
};

}  // namespace ember::rl

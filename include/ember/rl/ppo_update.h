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
//
// Data-parallel (options.data_parallel; ember/dist.h): every rank of the job steps on its own
// minibatch, and the step runs as one process would on the union of the ranks' minibatches:
//   1. advantages normalised with the moments of every rank's minibatch (advantage_moments.h);
//   2. gradient function (jitted): forward, loss, gradients; returns ONE flat float32 buffer
//      [P + 6]: every parameter's gradient flattened, in parameter order (actor's, log_std, then
//      critic's), then the metrics loss, policy_loss, value_loss, entropy, approx_kl,
//      clip_fraction of this rank's minibatch;
//   3. dist::all_reduce(buffer, Mean): one call per step; gradients and metrics become the means
//      over the ranks (each loss is a mean over M rows, so the mean of the ranks' gradients is the
//      gradient of the loss over all N * M rows);
//   4. apply function (jitted): gradients from the buffer, grad-norm clipping, Adam.
// Every rank applies the same averaged gradient to the same parameters with the same Adam state,
// so the replicas stay bit-identical (dist::check_replicas checks it).
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
  int64_t passes = 20;         // passes over the epoch's transitions
  int64_t minibatch = 10000;   // must divide the epoch's transitions
  bool jit = true;             // capture the training step with ember::jit when available
  bool data_parallel = false;  // average over the ranks of the dist job each step (above)
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
  // data_parallel (inside step_seconds): dist::all_reduce of the gradient buffer, and the
  // all_gather of the advantage moments.
  double allreduce_seconds = 0, advantage_moments_seconds = 0;
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

  /// The (un-jitted) training step described above, in one process.
  std::vector<Tensor> train_step(const std::vector<Tensor>& inputs);
  /// Data-parallel steps 2 and 4 above (un-jitted; they do not communicate): the flat buffer of
  /// gradients and metrics [P + 6] from the minibatch (advantages already normalised), and the
  /// clipping and Adam step from that buffer, returning {actor_grad_norm, critic_grad_norm}.
  std::vector<Tensor> gradient_step(const std::vector<Tensor>& inputs);
  std::vector<Tensor> apply_step(const std::vector<Tensor>& flat);
  /// The training step as used by update(): train_step, wrapped in ember::jit when options.jit
  /// (the study's controlled step, bench/study/ember_step.cpp, times exactly this); with
  /// data_parallel, steps 1-4 above (gradient_step and apply_step each wrapped in ember::jit),
  /// with the same inputs and outputs.
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
  void check_inputs(const std::vector<Tensor>& in) const;
  std::vector<Tensor> clip_and_step();  // clipping and Adam from the parameters' gradients
  std::vector<Tensor> data_parallel_step(const std::vector<Tensor>& inputs);

  ActorCritic policy_;
  PpoUpdateOptions options_;
  std::vector<Tensor> actor_params_, critic_params_, params_;  // params_: actor's, then critic's
  int64_t param_elements_ = 0;                                 // P: elements of params_
  std::unique_ptr<optim::Adam> optimizer_;
  TensorFn gradient_fn_, apply_fn_;  // data_parallel: gradient_step, apply_step (maybe jitted)
  double allreduce_seconds_ = 0, advantage_moments_seconds_ = 0;  // running totals
  TensorFn step_fn_;                 // train_step, wrapped in ember::jit when options.jit
  std::function<void()> ahead_job_;  // compile_ahead's work, until it ran
  std::thread ahead_;                // running it (more than one kernel thread)
  CompileAheadStats ahead_stats_;
};

}  // namespace ember::rl

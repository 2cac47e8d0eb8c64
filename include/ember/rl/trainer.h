// `ember train`: PPO on LunarLander under the study's protocol (docs/training.md), end to end.
//
// Epoch loop (epoch e = 0, 1, ...; the training envs are reset once and episodes continue across
// epochs):
//   1. collect T * N transitions (collector.h); transitions += T * N;
//   2. if e % eval_every == 0: evaluate the current policy (evaluation.h: eval_envs x
//      eval_episodes_per_env fresh episodes; at e = 0 before any update); if its mean >= target,
//      STOP (the clock stops here);
//   3. update: one batched forward pass for old log-probs and values (actor_inference.h), GAE
//      (gae.h), then passes x (T*N / minibatch) optimizer steps (ppo_update.h);
//   4. write the epoch's record; checkpoint every checkpoint_every epochs;
//   5. if transitions >= max_transitions: STOP (target not reached).
// The evaluation at epoch e therefore sees the policy after e updates and counts (e + 1) * T * N
// transitions, which is how the study's numbers read (520,000 = the evaluation of epoch 25).
// After the stop: save the policy (<out>/policy.safetensors), load it into a fresh model and
// evaluate that on final_eval_episodes_per_env x eval_envs fresh episodes (the "saved-policy
// evaluation"); write the summary. Without an out_dir nothing is written and the live policy is
// evaluated instead. The progress display (config.progress) reports epochs and evaluations as they
// happen; the run's closing summary is the caller's to print, from the TrainResult (ember train
// prints one).
//
// Seeds: everything derives from config.seed: the networks' init (manual_seed), the training envs
// and action noise, each evaluation's envs and noise, the minibatch shuffles.
//
// Records (records.h) when config.out_dir is set. epochs.jsonl fields, per epoch: epoch,
// transitions, elapsed_s (since process start), epoch_s, collect_s, collect_inference_s,
// collect_sampling_s, collect_env_s, collect_buffer_s, update_s (= compile_ahead_wait_s +
// update_policy_outputs_s + update_gae_s + update_gather_s + update_steps_s), eval_s, checkpoint_s,
// eval_mean / eval_std / eval_min / eval_max / eval_episodes (null without an evaluation), loss,
// policy_loss, value_loss, entropy, approx_kl, clip_fraction, explained_variance (of the pre-update
// values), actor_grad_norm, critic_grad_norm (null for a stopping epoch without an update),
// action_std, train_episodes, train_return_mean, truncations, reward_scale (sqrt of the running
// return variance); kernel compilation: compile_s (wall seconds in kernel compilation and
// disk-cache loads), kernels_compiled (kernels the C compiler built), kernels_from_disk_cache
// (kernels whose object the on-disk cache held), compiler_runs (processes), each for this epoch,
// and compile_total_s, kernels_compiled_total, kernels_from_disk_cache_total since process start.
// Compiled ahead (PpoLearner::compile_ahead: the first update's kernels, on a second thread
// during the first collection): compile_ahead_s (its share of compile_s), kernels_ahead (the
// kernels it made ready: compiled, or loaded from the disk cache) and compile_ahead_wait_s (how
// long the update then waited for it; with one kernel thread: all of it, run when the update
// starts).
//
// Checkpoints (checkpoint.h): <out>/checkpoints/epoch_NNNN.json names the policy and optimizer
// safetensors files next to it and holds the counters, the reward-scaling statistics and the
// learning curve so far; config.resume = that .json (or the run's directory: its newest
// checkpoint) continues training from it (the training envs start fresh episodes). The policy file
// is checked against config.policy before the networks are built.
//
// Data-parallel (a job of N > 1 ranks, ember/dist.h; `mpirun -np N ember train`): every rank
// builds the networks, then takes rank 0's parameters and Adam state (one broadcast); rank k's
// training envs, action noise and minibatch shuffles derive from seed + k, so each rank collects
// its own T * N_envs transitions and the epoch's batch grows with N (`transitions` counts every
// rank's); the learner runs PpoUpdateOptions::data_parallel (ppo_update.h: advantages normalised
// over every rank's minibatch, gradients averaged at every step). Rank 0 alone evaluates (its
// decision to stop is broadcast), writes records, checkpoints and the policy. Records add, per
// epoch: world_size; ranks = {collect_s, update_s, allreduce_s, update_steps_s}, each a list
// indexed by rank (one all_gather per epoch); update_allreduce_s (rank 0's seconds in the
// gradient all_reduce, over optimizer_steps calls) and update_advantage_moments_s (its all_gather
// of the advantage moments); run.json adds world_size and rank_pids. config.check_replicas:
// after each epoch's update, dist::check_replicas over the parameters and Adam's state (the
// record's replica_hashes: every rank's hash, "0x" and 16 hex digits).
//
// Interrupts (set_interrupt_flag): when the flag becomes nonzero (the signal number), a collection
// in progress is abandoned (that epoch is redone after a resume) and an evaluation or update in
// progress is finished; then the run stops as at --max-transitions, with stop_reason
// "interrupted": the policy, checkpoints/final.json, the summary and the plot are written; the
// saved-policy evaluation is skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/rl/evaluation.h"
#include "ember/rl/gaussian_policy.h"
#include "ember/rl/records.h"
#include "ember/rl/train_config.h"

namespace ember::rl {

struct TrainResult {
  bool reached_target = false;
  std::string stop_reason;  // "target" | "max_transitions" | "interrupted"
  int interrupted_by = 0;   // the signal number when an interrupt stopped the run
  int64_t epochs = 0;       // epochs done (the next epoch a resume runs)
  int64_t transitions_at_stop = 0;
  double seconds_to_stop = 0;  // from process start
  double last_eval_mean = 0;
  EvalResult saved_policy_eval;
  std::vector<CurvePoint> curve;
  // Every epoch's record as epochs.jsonl holds it (kept with or without an out_dir; rank 0's
  // only; a resumed run's from the resumed epoch on).
  std::vector<nlohmann::json> records;
  std::string out_dir, policy_path, checkpoint_path, plot_path, records_path;
};

/// Seeds derived from a run seed: splitmix64 of (seed, purpose, index).
uint64_t derive_seed(uint64_t seed, uint64_t purpose, uint64_t index = 0);

class Trainer {
 public:
  /// Checks the config and the kernel compiler (check()) and sets the kernel thread count.
  explicit Trainer(TrainConfig config);
  /// What a run needs before it writes anything: a valid config (ValueError) and, on the cpu
  /// device, a C compiler for its kernels (CompileError; ember::kernel_compiler()). A caller
  /// that makes the output directory itself calls it first, so that no half-made run is left.
  static void check(const TrainConfig& config);
  /// Runs the whole job. Throws on I/O errors (IOError) and bad checkpoints.
  TrainResult run();
  const TrainConfig& config() const { return config_; }
  /// A flag that a signal handler sets to the signal's number to stop the run cleanly (above).
  void set_interrupt_flag(const std::atomic<int>* flag) { interrupt_ = flag; }

 private:
  TrainConfig config_;
  const std::atomic<int>* interrupt_ = nullptr;
};

}  // namespace ember::rl

#include "ember/rl/trainer.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>

#include <unistd.h>

#include "ember/context.h"
#include "ember/dist.h"
#include "ember/profile.h"
#include "ember/rl/actor_inference.h"
#include "ember/rl/checkpoint.h"
#include "ember/rl/collector.h"
#include "ember/rl/ppo_update.h"
#include "ember/rl/progress.h"
#include "ember/rl/rank_exchange.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/vector_env.h"
#include "ember/serialize.h"
#include "ember/support/clock.h"
#include "ember/support/splitmix64.h"

namespace ember::rl {

// The summary's JSON of an evaluation's results (nlohmann's to_json, found by argument-dependent
// lookup; the from_json it also defines goes unused).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EvalResult, mean, std, min, max, episodes_per_env, env_steps,
                                   seconds, inference_seconds, env_seconds, returns, lengths)

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Seed purposes.
enum : uint64_t { kInit = 1, kTrainEnvs, kEval, kFinalEval, kShuffle, kResumeEnvs };

using support::now_seconds;

// A summary's evaluation: these fields and the number of episodes.
json eval_json(const EvalResult& r) {
  json j = r;
  j["episodes"] = r.returns.size();
  return j;
}

// Thrown from the collection callback to abandon an epoch after an interrupt.
struct Abandoned {};

// Writes the policy, the optimizer state and then (atomically, last) the manifest; returns the
// manifest's path.
std::string write_checkpoint(const std::string& dir, const std::string& stem,
                             const ActorCritic& policy, optim::Adam& opt,
                             const RewardScaler& scaler, int64_t next_epoch, int64_t transitions,
                             const std::vector<CurvePoint>& curve, const TrainConfig& config,
                             const std::vector<CheckpointManifest::ScalerStatistics>& ranks,
                             const json& record = nullptr) {
  fs::create_directories(dir);
  CheckpointManifest m;
  m.record = record;
  m.epoch = next_epoch;
  m.transitions = transitions;
  m.policy_file = stem + ".policy.safetensors";
  m.optimizer_file = stem + ".optimizer.safetensors";
  m.scaler_mean = scaler.mean();
  m.scaler_var = scaler.var();
  m.scaler_count = scaler.count();
  m.curve = curve;
  m.config = to_json(config);
  if (ranks.size() > 1) {
    m.world_size = int64_t(ranks.size());
    m.rank_scalers = ranks;
  }
  save_policy(policy, dir + "/" + m.policy_file, {{"epoch", std::to_string(next_epoch)}});
  ember::save(opt, dir + "/" + m.optimizer_file);
  return write_checkpoint_manifest(dir, stem, m);
}

}  // namespace

uint64_t derive_seed(uint64_t seed, uint64_t purpose, uint64_t index) {
  uint64_t z = seed ^ (purpose * support::kSplitMix64Gamma) ^ (index * 0xD1B54A32D192ED03ULL);
  for (int i = 0; i < 2; ++i)  // splitmix64, two steps
    z = support::splitmix64_mix(z += support::kSplitMix64Gamma);
  return z;
}

static const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

void Trainer::check(const TrainConfig& config) {
  config.validate();
  if (Context::get().device == "cpu") kernel_compiler();
}

Trainer::Trainer(TrainConfig config) : config_(std::move(config)) {
  check(config_);
  config_.update.jit = config_.jit;
  if (config_.threads > 0) set_num_threads(config_.threads);
}

namespace {

// One training run, phase by phase: setup (resume checks, networks, envs, records), then per
// epoch collect -> evaluate -> update -> checkpoint and record, then the closing save, the
// saved-policy evaluation and the summary. The order of the setup steps is the order of the
// random streams they draw from: keep it.
class TrainingRun {
 public:
  TrainingRun(const TrainConfig& c, const std::atomic<int>* interrupt)
      : c_(c),
        interrupt_(interrupt),
        rank_(dist::rank()),
        world_(dist::world_size()),
        progress_(rank_ == 0 ? c.progress : "none", c.max_transitions) {}

  TrainResult run() {
    setup();
    int64_t epoch = resume_ ? resume_->epoch : 0;
    bool abandoned = false;
    for (;; ++epoch) {
      const double e0 = now_seconds();
      const RuntimeStats stats0 = runtime_stats_snapshot();  // compile_ahead's thread may add
      json r = {{"epoch", epoch}};
      CollectStats cs;
      if (!collect(epoch, r, cs)) {
        abandoned = true;
        break;
      }
      const std::optional<EvalResult> ev = evaluate_epoch(epoch, r);
      const bool stop_target = rank0_decides(ev && ev->mean >= c_.target);
      if (stop_target) {
        result_.seconds_to_stop = seconds_since_process_start();
        result_.reached_target = true;
        result_.stop_reason = "target";
      }
      const double update_s = update(epoch, r, !stop_target);
      record_ranks(r, cs.seconds, update_s);
      if (c_.check_replicas && !stop_target) check_replicas(epoch, r);
      record_compilation(r, stats0);
      // An interrupt that arrived during the evaluation or the update stops here, after the
      // whole epoch.
      const bool stop_max = !stop_target && transitions_ >= c_.max_transitions;
      const bool stop_signal = !stop_target && !stop_max && interrupted();
      const bool checkpoint = rec_ && !stop_target && !stop_max && !stop_signal &&
                              c_.checkpoint_every > 0 && (epoch + 1) % c_.checkpoint_every == 0;
      record_epoch(epoch, r, e0, checkpoint, cs.seconds, update_s);
      if (stop_target || stop_max || stop_signal) {
        if (stop_max) {
          result_.seconds_to_stop = seconds_since_process_start();
          result_.stop_reason = "max_transitions";
        }
        break;
      }
    }
    finish(epoch, abandoned);
    return result_;
  }

 private:
  bool interrupted() const {
    return interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed) != 0;
  }

  // Rank 0's value of a decision that every rank must take alike (one broadcast).
  bool rank0_decides(bool value) const {
    if (world_ == 1) return value;
    std::byte b{static_cast<unsigned char>(value)};
    dist::broadcast(std::span<std::byte>(&b, 1), 0);
    return b != std::byte{0};
  }

  // What must be equal on every rank: the parameters and Adam's state.
  std::vector<Tensor> replica_tensors() const {
    std::vector<Tensor> ts = learner_->optimizer().params();
    for (const auto& [name, t] : learner_->optimizer().state()) ts.push_back(t);
    return ts;
  }

  // Stops the job (DistributedError on every rank) when the replicas differ; records the hashes.
  void check_replicas(int64_t epoch, json& r) const {
    json a = json::array();
    for (uint64_t h : dist::check_replicas(replica_tensors(),
                                           "the parameters and Adam state "
                                           "after epoch " +
                                               std::to_string(epoch)))
      a.push_back(hash_hex(h));
    r["replica_hashes"] = a;
  }

  // Every rank's timings (for the records) and reward-scaling statistics (for checkpoints).
  void record_ranks(json& r, double collect_s, double update_s) {
    const RewardScaler& sc = collector_->reward_scaler();
    ranks_ = exchange_rank_epochs(
        {collect_s, update_s, last_allreduce_s_, last_steps_s_, {sc.mean(), sc.var(), sc.count()}});
    r["world_size"] = world_;
    r["ranks"] = rank_times_json(ranks_);
  }
  std::vector<CheckpointManifest::ScalerStatistics> rank_scalers() const {
    return world_ > 1 ? rl::rank_scalers(ranks_)
                      : std::vector<CheckpointManifest::ScalerStatistics>{};
  }

  // A resume reads the manifest and checks the policy file against the configuration before the
  // networks are built (a wrong shape fails here, allocating nothing of the network's size).
  void read_resume() {
    if (c_.resume.empty()) return;
    resume_ = read_checkpoint_manifest(find_checkpoint(c_.resume));
    if (resume_->world_size != world_)
      throw ValueError("checkpoint '" + resume_->path + "' was written by a job of " +
                       std::to_string(resume_->world_size) + " rank(s); resume it with as many (" +
                       (resume_->world_size > 1
                            ? "mpirun -np " + std::to_string(resume_->world_size)
                            : std::string("without mpirun")) +
                       "), not " + std::to_string(world_));
    if (resume_->transitions != resume_->epoch * world_ * c_.transitions_per_epoch())
      throw IOError("checkpoint '" + resume_->path + "': " + std::to_string(resume_->transitions) +
                    " transitions after " + std::to_string(resume_->epoch) +
                    " epochs do not match " + std::to_string(world_ * c_.transitions_per_epoch()) +
                    " transitions per epoch (" + std::to_string(world_) + " rank(s))");
    if (resume_->transitions >= c_.max_transitions)
      throw ValueError(
          "checkpoint '" + resume_->path + "' is at " + std::to_string(resume_->transitions) +
          " transitions, already >= --max-transitions " + std::to_string(c_.max_transitions) +
          "; give a larger --max-transitions to continue the run");
    check_policy_tensors(load_file(resume_->policy_file).tensors, c_.policy, resume_->policy_file);
  }

  void setup() {
    read_resume();
    manual_seed(derive_seed(c_.seed, kInit));
    policy_ = ActorCritic(c_.policy);
    PpoUpdateOptions uo = c_.update;
    uo.data_parallel = world_ > 1;
    learner_ = std::make_unique<PpoLearner>(policy_, uo);

    env_options_.max_episode_steps = c_.max_episode_steps;
    venv_ = make_lunar_lander_vector(c_.envs, env_options_, c_.env_threads);
    if (venv_->observation_dim() != c_.policy.obs_dim || venv_->action_dim() != c_.policy.act_dim)
      throw ValueError("policy dims do not match the env's");

    if (resume_) {
      ember::load(*policy_, resume_->policy_file);
      ember::load(learner_->optimizer(), resume_->optimizer_file);
    }
    // Every rank starts from rank 0's parameters and Adam state.
    dist::broadcast(replica_tensors(), 0);
    // The training envs' seed depends on the resumed epoch; rank k's envs use seed + k.
    const uint64_t seed = c_.seed + uint64_t(rank_);
    const uint64_t env_seed = !resume_ ? derive_seed(seed, kTrainEnvs)
                                       : derive_seed(seed, kResumeEnvs, uint64_t(resume_->epoch));
    collector_ = std::make_unique<Collector>(*venv_, env_seed, c_.gamma, c_.reward_scaling);
    if (resume_) {  // this rank's statistics
      const CheckpointManifest::ScalerStatistics s =
          world_ > 1 ? resume_->rank_scalers[size_t(rank_)]
                     : CheckpointManifest::ScalerStatistics{
                           resume_->scaler_mean, resume_->scaler_var, resume_->scaler_count};
      collector_->reward_scaler().set_statistics(s.mean, s.var, s.count);
    }
    open_records();
    curve_ = resume_ ? resume_->curve : std::vector<CurvePoint>{};
    buffer_ = make_buffer();
    actor_ = make_means_fn(policy_, c_.jit);
    eval_opts_.envs = c_.eval_envs;
    eval_opts_.episodes_per_env = c_.eval_episodes_per_env;
    eval_opts_.env = env_options_;
    eval_opts_.threads = c_.env_threads;  // the evaluation envs step like the training ones
    // The evaluation's actor runs on eval_envs observations; share the jitted one when the batch
    // sizes agree.
    eval_actor_ = c_.eval_envs == c_.envs ? actor_ : make_means_fn(policy_, c_.jit);
    transitions_ = resume_ ? resume_->transitions : 0;
    // The first update's kernels, and those of the forward over the collected transitions that
    // precedes it, compile on another core during the first collection.
    const int64_t rows = buffer_->inference_rows(), obs_dim = c_.policy.obs_dim;
    learner_->compile_ahead([rows, obs_dim](const ActorCritic& p) {
      const std::vector<float> zeros(static_cast<size_t>(rows * obs_dim), 0.f);
      realize_policy_outputs(p, from_blob(zeros.data(), {rows, obs_dim}, kFloat32));
    });
  }

  void open_records() {
    // Each rank's process id (a job's ranks may share a host).
    const uint64_t pid = uint64_t(getpid());
    const std::vector<uint64_t> pids = dist::all_gather(std::span<const uint64_t>(&pid, 1));
    if (!c_.out_dir.empty() && rank_ == 0) {
      json extra = {{"jit", {{"requested", c_.jit}, {"available", jit_available()}}},
                    {"resumed_from", !resume_ ? json(nullptr) : json(resume_->path)}};
      extra["world_size"] = world_;
      extra["rank_pids"] = pids;
      extra["provenance_threads"] = {{"kernel", get_num_threads()}, {"env", venv_->threads()}};
      RunResume rr;
      if (resume_) rr = {resume_->epoch, resume_->run_dir, resume_->path, resume_->record};
      rec_ = std::make_unique<RunRecorder>(c_.out_dir, to_json(c_), extra, resume_ ? &rr : nullptr);
      if (resume_) rec_->set_curve(resume_->curve);
      result_.out_dir = c_.out_dir;
      result_.records_path = rec_->path("epochs.jsonl");
      result_.plot_path = rec_->path("learning_curve.svg");
      progress_.message("ember train: records in " + c_.out_dir);
    }
    if (rec_ && rec_->dropped_records() > 0)
      progress_.message("ember train: dropped " + std::to_string(rec_->dropped_records()) +
                        " epoch record(s) after the checkpoint's epoch " +
                        std::to_string(resume_->epoch));
  }

  // Allocation failures name what was being allocated (not a bare std::bad_alloc).
  std::unique_ptr<RolloutBuffer> make_buffer() const {
    try {
      return std::make_unique<RolloutBuffer>(
          c_.steps_per_env, c_.envs, c_.policy.obs_dim, c_.policy.act_dim,
          c_.envs * (c_.steps_per_env / c_.max_episode_steps + 2));
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    throw Error("ember train: out of memory allocating the rollout buffer for " +
                std::to_string(c_.transitions_per_epoch()) + " transitions per epoch (" +
                std::to_string(c_.envs) + " envs x " + std::to_string(c_.steps_per_env) +
                " steps); lower --envs or --steps-per-env");
  }

  // 1. Collection. An interrupt abandons it (returns false): the epoch is redone after a resume,
  // so the reward-scaling statistics go back to where the epoch started.
  bool collect(int64_t epoch, json& r, CollectStats& cs) {
    log_std_ = policy_->log_std_values();
    const RewardScaler scaler_at_start = collector_->reward_scaler();
    try {
      ProfilePhase phase("collect");  // PROFILE=1 trace
      cs = collector_->collect(actor_, log_std_, *buffer_, [&](int64_t t) {
        if (interrupted()) throw Abandoned{};
        progress_.phase(epoch, transitions_, "collect", t + 1, c_.steps_per_env);
      });
    } catch (const Abandoned&) {
      collector_->reward_scaler().set_statistics(scaler_at_start.mean(), scaler_at_start.var(),
                                                 scaler_at_start.count());
      return false;
    }
    transitions_ += world_ * c_.transitions_per_epoch();  // every rank's
    r["transitions"] = transitions_;
    r["collect_s"] = cs.seconds;
    r["collect_inference_s"] = cs.inference_seconds;
    r["collect_sampling_s"] = cs.sampling_seconds;
    r["collect_env_s"] = cs.env_seconds;
    r["collect_buffer_s"] = cs.buffer_seconds;
    r["train_episodes"] = cs.episode_returns.size();
    double tr = 0;
    for (double x : cs.episode_returns) tr += x;
    r["train_return_mean"] =
        cs.episode_returns.empty() ? json(nullptr) : json(tr / double(cs.episode_returns.size()));
    r["truncations"] = buffer_->truncations();
    r["reward_scale"] = std::sqrt(collector_->reward_scaler().var() + 1e-8);
    r["action_std"] = {std::exp(log_std_[0]), std::exp(log_std_.size() > 1 ? log_std_[1] : 0.f)};
    return true;
  }

  // 2. Scheduled evaluation.
  std::optional<EvalResult> evaluate_epoch(int64_t epoch, json& r) {
    std::optional<EvalResult> ev;
    if (epoch % c_.eval_every == 0 && rank_ == 0) {  // rank 0 evaluates for the job
      progress_.phase(epoch, transitions_, "evaluate", 0, 0);
      ProfilePhase phase("evaluate");
      eval_opts_.seed = derive_seed(c_.seed, kEval, uint64_t(epoch));
      ev = evaluate(eval_actor_, log_std_, eval_opts_);
      curve_.push_back({epoch, transitions_, ev->mean, ev->std});
      progress_.evaluation(epoch, transitions_, ev->mean, ev->std, ev->seconds);
      if (rec_) rec_->eval_point(curve_.back(), c_.target);
    }
    r["eval_s"] = ev ? ev->seconds : 0.0;
    r["eval_mean"] = ev ? json(ev->mean) : json(nullptr);
    r["eval_std"] = ev ? json(ev->std) : json(nullptr);
    r["eval_min"] = ev ? json(ev->min) : json(nullptr);
    r["eval_max"] = ev ? json(ev->max) : json(nullptr);
    r["eval_episodes"] = ev ? json(ev->returns.size()) : json(nullptr);
    return ev;
  }

  // 3. Update (not after the stopping evaluation: `run` false). Returns its seconds.
  double update(int64_t epoch, json& r, bool run) {
    double update_s = 0;
    if (run) {
      progress_.phase(epoch, transitions_, "update", 0, 0);
      ProfilePhase phase("update");
      const double u0 = now_seconds();
      learner_->wait_compile_ahead();  // the first epoch's, if any
      const double uw = now_seconds();
      compute_policy_outputs(policy_, *buffer_);
      const double u1 = now_seconds();
      buffer_->compute_advantages(c_.gamma, c_.gae_lambda);
      const double u2 = now_seconds();
      const UpdateStats us = learner_->update(
          *buffer_, derive_seed(c_.seed + uint64_t(rank_), kShuffle, uint64_t(epoch)),
          [&](int64_t d, int64_t t) { progress_.phase(epoch, transitions_, "update", d, t); });
      update_s = now_seconds() - u0;
      r["compile_ahead_wait_s"] = uw - u0 + us.compile_ahead_wait_seconds;
      r["update_policy_outputs_s"] = u1 - uw;
      r["update_gae_s"] = u2 - u1;
      r["update_gather_s"] = us.gather_seconds;
      r["update_steps_s"] = us.step_seconds;
      r["update_allreduce_s"] = us.allreduce_seconds;
      r["update_advantage_moments_s"] = us.advantage_moments_seconds;
      last_allreduce_s_ = us.allreduce_seconds;
      last_steps_s_ = us.step_seconds;
      r["optimizer_steps"] = us.optimizer_steps;
      r["loss"] = us.loss;
      r["policy_loss"] = us.policy_loss;
      r["value_loss"] = us.value_loss;
      r["entropy"] = us.entropy;
      r["approx_kl"] = us.approx_kl;
      r["clip_fraction"] = us.clip_fraction;
      r["actor_grad_norm"] = us.actor_grad_norm;
      r["critic_grad_norm"] = us.critic_grad_norm;
      const double expl = explained_variance(buffer_->values(), buffer_->returns());
      r["explained_variance"] = std::isfinite(expl) ? json(expl) : json(nullptr);
    } else {
      r["compile_ahead_wait_s"] = 0.0;
      last_allreduce_s_ = last_steps_s_ = 0;
      for (const char* k :
           {"loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
            "actor_grad_norm", "critic_grad_norm", "explained_variance"})
        r[k] = nullptr;
    }
    r["update_s"] = update_s;
    return update_s;
  }

  // Kernel compilation in this epoch and since process start (the first epoch's totals include
  // building the networks).
  static void record_compilation(json& r, const RuntimeStats& stats0) {
    const RuntimeStats st = runtime_stats_snapshot();
    r["compile_s"] = st.compile_seconds - stats0.compile_seconds;
    r["kernels_compiled"] = st.kernels_from_compiler - stats0.kernels_from_compiler;
    r["kernels_from_disk_cache"] = st.kernels_from_disk_cache - stats0.kernels_from_disk_cache;
    r["compiler_runs"] = st.compiler_runs - stats0.compiler_runs;
    // Compiled ahead (PpoLearner::compile_ahead: the first update's kernels, on another thread
    // beside the first collection): its share of compile_s, and the kernels it made ready
    // (compiled, or loaded from the disk cache); compile_ahead_wait_s is what the update waited.
    r["compile_ahead_s"] = st.compile_ahead_seconds - stats0.compile_ahead_seconds;
    r["kernels_ahead"] = st.kernels_compiled_ahead - stats0.kernels_compiled_ahead;
    r["compile_total_s"] = st.compile_seconds;
    r["kernels_compiled_total"] = st.kernels_from_compiler;
    r["kernels_from_disk_cache_total"] = st.kernels_from_disk_cache;
  }

  // 4. Checkpoint (when due) and record.
  void record_epoch(int64_t epoch, json& r, double e0, bool checkpoint, double collect_s,
                    double update_s) {
    double ck = 0;
    if (checkpoint) {
      const double k0 = now_seconds();
      char stem[32];
      std::snprintf(stem, sizeof stem, "epoch_%04lld", static_cast<long long>(epoch + 1));
      // The manifest carries this epoch's record (without the checkpoint's own timing): a kill
      // between the checkpoint and the record's append loses no line, the resume restores it.
      json closing = r;
      closing["checkpoint_s"] = nullptr;
      closing["epoch_s"] = now_seconds() - e0;
      closing["elapsed_s"] = seconds_since_process_start();
      write_checkpoint(rec_->path("checkpoints"), stem, policy_, learner_->optimizer(),
                       collector_->reward_scaler(), epoch + 1, transitions_, curve_, c_,
                       rank_scalers(), closing);
      ck = now_seconds() - k0;
    }
    r["checkpoint_s"] = ck;
    r["epoch_s"] = now_seconds() - e0;
    r["elapsed_s"] = seconds_since_process_start();
    if (rec_) rec_->epoch(r);
    if (rank_ == 0) result_.records.push_back(r);
    progress_.epoch_done(epoch, transitions_, collect_s, update_s, r["eval_s"].get<double>(),
                         r["epoch_s"].get<double>());
  }

  // After the clock: save, reload into a fresh model, evaluate on fresh episodes, summarise.
  void finish(int64_t epoch, bool abandoned) {
    // The next epoch to run: the abandoned one, or the one after the last.
    const int64_t next_epoch = abandoned ? epoch : epoch + 1;
    if (result_.stop_reason.empty()) {
      result_.stop_reason = "interrupted";
      result_.interrupted_by = interrupt_->load();
      result_.seconds_to_stop = seconds_since_process_start();
    }
    result_.epochs = next_epoch;
    result_.transitions_at_stop = transitions_;
    result_.curve = curve_;
    result_.last_eval_mean = curve_.empty() ? 0.0 : curve_.back().mean;

    // No closing lines here: the caller prints the one summary of the run from the TrainResult
    // (ember train does).
    if (rec_) {
      result_.policy_path = rec_->path("policy.safetensors");
      save_policy(
          policy_, result_.policy_path,
          {{"transitions", std::to_string(transitions_)}, {"seed", std::to_string(c_.seed)}});
      result_.checkpoint_path = write_checkpoint(
          rec_->path("checkpoints"), "final", policy_, learner_->optimizer(),
          collector_->reward_scaler(), next_epoch, transitions_, curve_, c_, rank_scalers());
    }
    // The saved-policy evaluation is skipped after an interrupt (the user asked to stop).
    // In a data-parallel job rank 0 evaluates for the job (the other ranks hold the same
    // policy).
    const bool signalled = result_.interrupted_by || interrupted();
    const bool final_eval = !signalled && rank_ == 0;
    if (final_eval) {
      progress_.phase(epoch, transitions_, "saved-policy evaluation", 0, 0);
      const ActorCritic fresh = rec_ ? load_policy(result_.policy_path) : policy_;
      EvalOptions final_opts = eval_opts_;
      final_opts.episodes_per_env = c_.final_eval_episodes_per_env;
      final_opts.seed = derive_seed(c_.seed, kFinalEval);
      result_.saved_policy_eval =
          evaluate(make_means_fn(fresh, c_.jit), fresh->log_std_values(), final_opts);
    } else if (signalled && !result_.interrupted_by) {
      result_.interrupted_by = interrupt_->load();
    }
    if (rec_) write_summary(epoch, final_eval);
    progress_.finish();
  }

  void write_summary(int64_t epoch, bool final_eval) {
    const CurvePoint saved_point = CurvePoint{epoch, transitions_, result_.saved_policy_eval.mean,
                                              result_.saved_policy_eval.std};
    const json summary = {
        {"reached_target", result_.reached_target},
        {"stop_reason", result_.stop_reason},
        {"target", c_.target},
        {"epochs", result_.epochs},
        {"transitions_at_stop", result_.transitions_at_stop},
        {"seconds_to_stop", result_.seconds_to_stop},
        {"seconds_to_stop_measured_from", "process start"},
        {"last_eval_mean", result_.last_eval_mean},
        {"interrupted_by",
         result_.interrupted_by ? json(signal_name(result_.interrupted_by)) : json(nullptr)},
        {"saved_policy_eval", final_eval ? eval_json(result_.saved_policy_eval) : json(nullptr)},
        {"policy", result_.policy_path},
        {"checkpoint", result_.checkpoint_path},
        {"curve", curve_},
        {"seconds_total", seconds_since_process_start()}};
    rec_->finish(summary, final_eval ? &saved_point : nullptr, c_.target);
  }

  const TrainConfig& c_;
  const std::atomic<int>* interrupt_;
  int rank_, world_;  // this process in the dist job (ember/dist.h)
  Progress progress_;
  TrainResult result_;
  std::optional<CheckpointManifest> resume_;
  ActorCritic policy_;
  std::unique_ptr<PpoLearner> learner_;
  LunarLanderOptions env_options_;
  std::unique_ptr<VectorEnv> venv_;
  std::unique_ptr<Collector> collector_;
  std::unique_ptr<RunRecorder> rec_;
  std::vector<CurvePoint> curve_;
  std::unique_ptr<RolloutBuffer> buffer_;
  MeansFn actor_, eval_actor_;
  EvalOptions eval_opts_;
  std::vector<float> log_std_;  // the policy's log-std at the start of this epoch's collection
  int64_t transitions_ = 0;     // every rank's
  double last_allreduce_s_ = 0, last_steps_s_ = 0;  // this epoch's update
  std::vector<RankEpoch> ranks_;                    // record_ranks: this epoch's
};

}  // namespace

TrainResult Trainer::run() { return TrainingRun(config_, interrupt_).run(); }

}  // namespace ember::rl

#include "ember/rl/trainer.h"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "ember/context.h"
#include "ember/rl/actor_inference.h"
#include "ember/rl/checkpoint.h"
#include "ember/rl/collector.h"
#include "ember/rl/ppo_update.h"
#include "ember/rl/progress.h"
#include "ember/rl/rollout_buffer.h"
#include "ember/rl/vector_env.h"
#include "ember/serialize.h"
#include "ember/support/clock.h"
#include "ember/support/splitmix64.h"

namespace ember::rl {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Seed purposes.
enum : uint64_t { kInit = 1, kTrainEnvs, kEval, kFinalEval, kShuffle, kResumeEnvs };

using support::now_seconds;

json curve_to_json(const std::vector<CurvePoint>& curve) {
  json a = json::array();
  for (const auto& p : curve)
    a.push_back(
        {{"epoch", p.epoch}, {"transitions", p.transitions}, {"mean", p.mean}, {"std", p.std}});
  return a;
}

json eval_json(const EvalResult& r) {
  return {{"mean", r.mean},
          {"std", r.std},
          {"min", r.min},
          {"max", r.max},
          {"episodes", r.returns.size()},
          {"episodes_per_env", r.episodes_per_env},
          {"env_steps", r.env_steps},
          {"seconds", r.seconds},
          {"inference_seconds", r.inference_seconds},
          {"env_seconds", r.env_seconds},
          {"returns", r.returns},
          {"lengths", r.lengths}};
}

// Thrown from the collection callback to abandon an epoch after an interrupt.
struct Abandoned {};

// Writes the policy, the optimizer state and then (atomically, last) the
// manifest; returns the manifest's path.
std::string write_checkpoint(const std::string& dir, const std::string& stem,
                             const ActorCritic& policy, optim::Adam& opt,
                             const RewardScaler& scaler, int64_t next_epoch, int64_t transitions,
                             const std::vector<CurvePoint>& curve, const TrainConfig& config,
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

Trainer::Trainer(TrainConfig config) : config_(std::move(config)) {
  config_.validate();
  config_.update.jit = config_.jit;
  if (config_.threads > 0) set_num_threads(config_.threads);
}

TrainResult Trainer::run() {
  const TrainConfig& c = config_;
  TrainResult result;
  Progress progress(c.progress, c.max_transitions);

  auto interrupted = [&] {
    return interrupt_ != nullptr && interrupt_->load(std::memory_order_relaxed) != 0;
  };

  // A resume reads the manifest and checks the policy file against the
  // configuration before the networks are built (a wrong shape fails here,
  // allocating nothing of the network's size).
  std::optional<CheckpointManifest> resume;
  if (!c.resume.empty()) {
    resume = read_checkpoint_manifest(find_checkpoint(c.resume));
    if (resume->transitions != resume->epoch * c.transitions_per_epoch())
      throw IOError("checkpoint '" + resume->path + "': " + std::to_string(resume->transitions) +
                    " transitions after " + std::to_string(resume->epoch) +
                    " epochs do not match " + std::to_string(c.transitions_per_epoch()) +
                    " transitions per epoch");
    if (resume->transitions >= c.max_transitions)
      throw ValueError(
          "checkpoint '" + resume->path + "' is at " + std::to_string(resume->transitions) +
          " transitions, already >= --max-transitions " + std::to_string(c.max_transitions) +
          "; give a larger --max-transitions to continue the run");
    check_policy_tensors(load_file(resume->policy_file).tensors, c.policy, resume->policy_file);
  }

  manual_seed(derive_seed(c.seed, kInit));
  ActorCritic policy(c.policy);
  PpoLearner learner(policy, c.update);

  LunarLanderOptions env_options;
  env_options.max_episode_steps = c.max_episode_steps;
  auto venv = make_lunar_lander_vector(c.envs, env_options, c.env_threads);
  if (venv->observation_dim() != c.policy.obs_dim || venv->action_dim() != c.policy.act_dim)
    throw ValueError("policy dims do not match the env's");

  if (resume) {
    ember::load(*policy, resume->policy_file);
    ember::load(learner.optimizer(), resume->optimizer_file);
  }
  // The training envs' seed depends on the resumed epoch.
  const uint64_t env_seed = !resume ? derive_seed(c.seed, kTrainEnvs)
                                    : derive_seed(c.seed, kResumeEnvs, uint64_t(resume->epoch));
  Collector collector(*venv, env_seed, c.gamma, c.reward_scaling);
  if (resume)
    collector.reward_scaler().set_statistics(resume->scaler_mean, resume->scaler_var,
                                             resume->scaler_count);

  std::unique_ptr<RunRecorder> rec;
  if (!c.out_dir.empty()) {
    json extra = {{"jit", {{"requested", c.jit}, {"available", jit_available()}}},
                  {"resumed_from", !resume ? json(nullptr) : json(resume->path)}};
    extra["provenance_threads"] = {{"kernel", get_num_threads()}, {"env", venv->threads()}};
    RunResume rr;
    if (resume) rr = {resume->epoch, resume->run_dir, resume->path, resume->record};
    rec = std::make_unique<RunRecorder>(c.out_dir, to_json(c), extra, resume ? &rr : nullptr);
    if (resume) rec->set_curve(resume->curve);
    result.out_dir = c.out_dir;
    result.records_path = rec->path("epochs.jsonl");
    result.plot_path = rec->path("learning_curve.svg");
    progress.message("ember train: records in " + c.out_dir);
  }
  if (rec && rec->dropped_records() > 0)
    progress.message("ember train: dropped " + std::to_string(rec->dropped_records()) +
                     " epoch record(s) after the checkpoint's epoch " +
                     std::to_string(resume->epoch));
  std::vector<CurvePoint> curve = resume ? resume->curve : std::vector<CurvePoint>{};

  // Allocation failures name what was being allocated (not a bare
  // std::bad_alloc).
  const auto make_buffer = [&] {
    try {
      return std::make_unique<RolloutBuffer>(c.steps_per_env, c.envs, c.policy.obs_dim,
                                             c.policy.act_dim,
                                             c.envs * (c.steps_per_env / c.max_episode_steps + 2));
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    throw Error("ember train: out of memory allocating the rollout buffer for " +
                std::to_string(c.transitions_per_epoch()) + " transitions per epoch (" +
                std::to_string(c.envs) + " envs x " + std::to_string(c.steps_per_env) +
                " steps); lower --envs or --steps-per-env");
  };
  const std::unique_ptr<RolloutBuffer> buffer_storage = make_buffer();
  RolloutBuffer& buffer = *buffer_storage;
  const MeansFn actor = make_means_fn(policy, c.jit);
  EvalOptions eval_opts;
  eval_opts.envs = c.eval_envs;
  eval_opts.episodes_per_env = c.eval_episodes_per_env;
  eval_opts.env = env_options;
  // The evaluation's actor runs on eval_envs observations; share the jitted one
  // when the batch sizes agree.
  const MeansFn eval_actor = c.eval_envs == c.envs ? actor : make_means_fn(policy, c.jit);

  int64_t epoch = resume ? resume->epoch : 0, transitions = resume ? resume->transitions : 0;
  const int64_t per_epoch = c.transitions_per_epoch();
  std::string checkpoint_path;
  bool abandoned = false;
  for (;; ++epoch) {
    const double e0 = now_seconds();
    json r = {{"epoch", epoch}};
    // 1. Collection. An interrupt abandons it: the epoch is redone after a
    // resume, so the reward-scaling statistics go back to where the epoch
    // started.
    const std::vector<float> log_std = policy->log_std_values();
    const RewardScaler scaler_at_start = collector.reward_scaler();
    CollectStats cs;
    try {
      cs = collector.collect(actor, log_std, buffer, [&](int64_t t) {
        if (interrupted()) throw Abandoned{};
        progress.phase(epoch, transitions, "collect", t + 1, c.steps_per_env);
      });
    } catch (const Abandoned&) {
      collector.reward_scaler().set_statistics(scaler_at_start.mean(), scaler_at_start.var(),
                                               scaler_at_start.count());
      abandoned = true;
      break;
    }
    transitions += per_epoch;
    r["transitions"] = transitions;
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
    r["truncations"] = buffer.truncations();
    r["reward_scale"] = std::sqrt(collector.reward_scaler().var() + 1e-8);
    r["action_std"] = {std::exp(log_std[0]), std::exp(log_std.size() > 1 ? log_std[1] : 0.f)};

    // 2. Scheduled evaluation.
    std::optional<EvalResult> ev;
    if (epoch % c.eval_every == 0) {
      progress.phase(epoch, transitions, "evaluate", 0, 0);
      eval_opts.seed = derive_seed(c.seed, kEval, uint64_t(epoch));
      ev = evaluate(eval_actor, log_std, eval_opts);
      curve.push_back({epoch, transitions, ev->mean, ev->std});
      progress.evaluation(epoch, transitions, ev->mean, ev->std, ev->seconds);
      if (rec) rec->eval_point(curve.back(), c.target);
    }
    r["eval_s"] = ev ? ev->seconds : 0.0;
    r["eval_mean"] = ev ? json(ev->mean) : json(nullptr);
    r["eval_std"] = ev ? json(ev->std) : json(nullptr);
    r["eval_min"] = ev ? json(ev->min) : json(nullptr);
    r["eval_max"] = ev ? json(ev->max) : json(nullptr);
    r["eval_episodes"] = ev ? json(ev->returns.size()) : json(nullptr);
    const bool stop_target = ev && ev->mean >= c.target;
    if (stop_target) {
      result.seconds_to_stop = seconds_since_process_start();
      result.reached_target = true;
      result.stop_reason = "target";
    }

    // 3. Update (not after the stopping evaluation).
    double update_s = 0;
    if (!stop_target) {
      progress.phase(epoch, transitions, "update", 0, 0);
      double u0 = now_seconds();
      compute_policy_outputs(policy, buffer);
      const double u1 = now_seconds();
      buffer.compute_advantages(c.gamma, c.gae_lambda);
      const double u2 = now_seconds();
      const UpdateStats us = learner.update(
          buffer, derive_seed(c.seed, kShuffle, uint64_t(epoch)),
          [&](int64_t d, int64_t t) { progress.phase(epoch, transitions, "update", d, t); });
      update_s = now_seconds() - u0;
      r["update_policy_outputs_s"] = u1 - u0;
      r["update_gae_s"] = u2 - u1;
      r["update_gather_s"] = us.gather_seconds;
      r["update_steps_s"] = us.step_seconds;
      r["optimizer_steps"] = us.optimizer_steps;
      r["loss"] = us.loss;
      r["policy_loss"] = us.policy_loss;
      r["value_loss"] = us.value_loss;
      r["entropy"] = us.entropy;
      r["approx_kl"] = us.approx_kl;
      r["clip_fraction"] = us.clip_fraction;
      r["actor_grad_norm"] = us.actor_grad_norm;
      r["critic_grad_norm"] = us.critic_grad_norm;
      const double expl = explained_variance(buffer.values(), buffer.returns());
      r["explained_variance"] = std::isfinite(expl) ? json(expl) : json(nullptr);
    } else {
      for (const char* k :
           {"loss", "policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction",
            "actor_grad_norm", "critic_grad_norm", "explained_variance"})
        r[k] = nullptr;
    }
    r["update_s"] = update_s;

    // 4. Checkpoint and record. An interrupt that arrived during the evaluation
    // or the update stops here, after the whole epoch.
    const bool stop_max = !stop_target && transitions >= c.max_transitions;
    const bool stop_signal = !stop_target && !stop_max && interrupted();
    double ck = 0;
    if (rec && !stop_target && !stop_max && !stop_signal && c.checkpoint_every > 0 &&
        (epoch + 1) % c.checkpoint_every == 0) {
      const double k0 = now_seconds();
      char stem[32];
      std::snprintf(stem, sizeof stem, "epoch_%04lld", static_cast<long long>(epoch + 1));
      // The manifest carries this epoch's record (without the checkpoint's own
      // timing): a kill between the checkpoint and the record's append loses no
      // line, the resume restores it.
      json closing = r;
      closing["checkpoint_s"] = nullptr;
      closing["epoch_s"] = now_seconds() - e0;
      closing["elapsed_s"] = seconds_since_process_start();
      checkpoint_path =
          write_checkpoint(rec->path("checkpoints"), stem, policy, learner.optimizer(),
                           collector.reward_scaler(), epoch + 1, transitions, curve, c, closing);
      ck = now_seconds() - k0;
    }
    r["checkpoint_s"] = ck;
    r["epoch_s"] = now_seconds() - e0;
    r["elapsed_s"] = seconds_since_process_start();
    if (rec) rec->epoch(r);
    progress.epoch_done(epoch, transitions, cs.seconds, update_s, r["eval_s"].get<double>(),
                        r["epoch_s"].get<double>());
    if (stop_target || stop_max || stop_signal) {
      if (stop_max) {
        result.seconds_to_stop = seconds_since_process_start();
        result.stop_reason = "max_transitions";
      }
      break;
    }
  }
  // The next epoch to run: the abandoned one, or the one after the last.
  const int64_t next_epoch = abandoned ? epoch : epoch + 1;
  if (result.stop_reason.empty()) {
    result.stop_reason = "interrupted";
    result.interrupted_by = interrupt_->load();
    result.seconds_to_stop = seconds_since_process_start();
  }
  result.epochs = next_epoch;
  result.transitions_at_stop = transitions;
  result.curve = curve;
  result.last_eval_mean = curve.empty() ? 0.0 : curve.back().mean;

  // After the clock: save, reload into a fresh model, evaluate on fresh
  // episodes.
  char text[200];
  const std::string why =
      result.reached_target ? "target reached"
      : result.interrupted_by
          ? std::string("interrupted by ") + signal_name(result.interrupted_by) +
                (abandoned ? " (epoch " + std::to_string(epoch) + " abandoned)" : std::string())
          : "stopped (max transitions)";
  std::snprintf(text, sizeof text, "%s at %lld transitions, %.2f s from process start", why.c_str(),
                static_cast<long long>(transitions), result.seconds_to_stop);
  progress.message(text);
  if (rec) {
    result.policy_path = rec->path("policy.safetensors");
    save_policy(policy, result.policy_path,
                {{"transitions", std::to_string(transitions)}, {"seed", std::to_string(c.seed)}});
    result.checkpoint_path =
        write_checkpoint(rec->path("checkpoints"), "final", policy, learner.optimizer(),
                         collector.reward_scaler(), next_epoch, transitions, curve, c);
  }
  // The saved-policy evaluation is skipped after an interrupt (the user asked
  // to stop).
  const bool final_eval = !result.interrupted_by && !interrupted();
  if (final_eval) {
    progress.phase(epoch, transitions, "saved-policy evaluation", 0, 0);
    const ActorCritic fresh = rec ? load_policy(result.policy_path) : policy;
    EvalOptions final_opts = eval_opts;
    final_opts.episodes_per_env = c.final_eval_episodes_per_env;
    final_opts.seed = derive_seed(c.seed, kFinalEval);
    result.saved_policy_eval =
        evaluate(make_means_fn(fresh, c.jit), fresh->log_std_values(), final_opts);
    std::snprintf(text, sizeof text, "saved-policy evaluation: mean %.2f over %zu episodes",
                  result.saved_policy_eval.mean, result.saved_policy_eval.returns.size());
    progress.message(text);
  } else if (!result.interrupted_by) {
    result.interrupted_by = interrupt_->load();
  }
  const CurvePoint saved_point =
      CurvePoint{epoch, transitions, result.saved_policy_eval.mean, result.saved_policy_eval.std};
  if (rec) {
    const json summary = {
        {"reached_target", result.reached_target},
        {"stop_reason", result.stop_reason},
        {"target", c.target},
        {"epochs", result.epochs},
        {"transitions_at_stop", result.transitions_at_stop},
        {"seconds_to_stop", result.seconds_to_stop},
        {"seconds_to_stop_measured_from", "process start"},
        {"last_eval_mean", result.last_eval_mean},
        {"interrupted_by",
         result.interrupted_by ? json(signal_name(result.interrupted_by)) : json(nullptr)},
        {"saved_policy_eval", final_eval ? eval_json(result.saved_policy_eval) : json(nullptr)},
        {"policy", result.policy_path},
        {"checkpoint", result.checkpoint_path},
        {"curve", curve_to_json(curve)},
        {"seconds_total", seconds_since_process_start()}};
    rec->finish(summary, final_eval ? &saved_point : nullptr, c.target);
  }
  progress.finish();
  return result;
}

}  // namespace ember::rl

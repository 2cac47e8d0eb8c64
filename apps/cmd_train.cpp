// `ember train`: PPO on LunarLander under the study's protocol (docs/training.md;
// src/ppo/trainer.cpp). With no options it runs the full default job: 4 envs, 20,000 transitions
// per epoch, 20 passes in minibatches of 10,000, evaluation every 5th epoch on 100 episodes, stop
// at an evaluation mean of 200 or 1,000,000 transitions, then the saved-policy evaluation; records
// go to runs/<timestamp>.
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "commands.h"
#include "ember/context.h"
#include "ember/dist.h"
#include "ember/error.h"
#include "ember/profile.h"
#include "ember/rl/checkpoint.h"
#include "ember/rl/trainer.h"
#include "ember/support/clock.h"
#include "ember/support/settings.h"
#include "option_rules.h"

namespace ember::app {
namespace {

// A new directory runs/<timestamp>[-N], created with mkdir (which fails when the directory
// exists), so two runs started in the same second never share one.
std::string unique_run_dir() {
  const std::string base = support::wall_time("runs/%Y%m%d-%H%M%S", false);
  std::error_code ec;
  if (!std::filesystem::create_directories("runs", ec) && ec)
    throw IOError("cannot create output directory 'runs' in the working directory: " +
                  ec.message());
  for (int i = 1; i < 10000; ++i) {
    const std::string d = i == 1 ? base : base + "-" + std::to_string(i);
    if (mkdir(d.c_str(), 0755) == 0) return d;
    if (errno != EEXIST)
      throw IOError("cannot create output directory '" + d + "': " + std::strerror(errno));
  }
  throw IOError("cannot find a free output directory next to '" + base + "'");
}

// The first SIGINT or SIGTERM asks the trainer to stop cleanly; a second one exits at once.
std::atomic<int> g_interrupt{0};

extern "C" void on_interrupt(int sig) {
  int none = 0;
  if (g_interrupt.compare_exchange_strong(none, sig)) {
    static const char m[] =
        "\nember train: stopping after the current step and saving; send the signal again to "
        "exit at once\n";
    [[maybe_unused]] ssize_t n = write(2, m, sizeof m - 1);
    return;
  }
  static const char m[] = "\nember train: second signal, exiting now\n";
  [[maybe_unused]] ssize_t n = write(2, m, sizeof m - 1);
  _exit(128 + sig);
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// In a data-parallel job (mpirun -np N), a rank cannot stop cleanly on its own: the others would
// wait for it in a collective. mpirun itself ends the job (SIGTERM to every rank) when a rank dies,
// exits early or mpirun is interrupted, so a signal ends the rank at once, saying so; the last
// checkpoint resumes the run.
char g_dist_stop[2][400];  // the messages for SIGINT and SIGTERM, written before any signal

extern "C" void on_dist_signal(int sig) {
  const char* m = g_dist_stop[sig == SIGINT ? 0 : 1];
  [[maybe_unused]] ssize_t n = write(2, m, std::strlen(m));
  _exit(128 + sig);
}

void install_dist_signal_handlers() {
  for (int i = 0; i < 2; ++i)
    std::snprintf(g_dist_stop[i], sizeof g_dist_stop[i],
                  "\nember train: rank %d of %d: stopped by %s: mpirun ends the whole job when a "
                  "rank fails, dies or is interrupted (mpirun's message names it); resume from "
                  "the last checkpoint with the same number of ranks\n",
                  dist::rank(), dist::world_size(), i == 0 ? "SIGINT" : "SIGTERM");
  struct sigaction sa {};
  sa.sa_handler = on_dist_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Rank 0's string on every rank.
std::string broadcast_string(std::string s) {
  uint64_t n = s.size();
  dist::broadcast(std::as_writable_bytes(std::span<uint64_t>(&n, 1)), 0);
  s.resize(n);
  dist::broadcast(std::as_writable_bytes(std::span<char>(s.data(), s.size())), 0);
  return s;
}

// `s` as one shell word, for the printed resume command.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789-_=./,+:@") == std::string::npos)
    return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

struct TrainArgs {
  rl::TrainConfig config;
  bool no_jit = false, no_reward_scaling = false, no_adv_norm = false, global_clip = false;
  bool tune = false;
  bool profile = false;
};

// --profile (or PROFILE=1): the trace, the kernel table and every realize's graphs go to
// <run>/profile/ (trace.json, trace.kernels.json, graphs/), where `ember viz` reads them. An
// explicit EMBER_PROFILE_FILE keeps the trace where it says.
// A directory that holds another run (which the records refuse, unless resumed) gets no
// profile files before that refusal.
void start_profile(const std::string& out_dir, bool resuming) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(out_dir, ec))
    if (!resuming && e.path().filename() != ".lock" && e.path().filename() != "profile") return;
  Context& ctx = Context::get();
  ctx.profile = true;
  if (support::settings().profile_file.empty()) ctx.profile_path = out_dir + "/profile/trace.json";
  ctx.graph = true;
  ctx.graph_dir = out_dir + "/profile/graphs";
}

void write_profile() {
  const std::string& path = Context::get().profile_path;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  write_trace(path);
  write_kernel_table(kernel_table_path(path));
}

void run_train(TrainArgs& a, const CLI::App& cmd) {
  dist::init();  // started by mpirun -np N: one rank of N, else a job of one
  const bool parallel = dist::world_size() > 1;
  rl::TrainConfig c = a.config;
  c.jit = !a.no_jit;
  c.reward_scaling = !a.no_reward_scaling;
  c.update.loss.normalize_advantages = !a.no_adv_norm;
  c.update.separate_grad_clip = !a.global_clip;
  if (!c.resume.empty()) {
    // The run's whole configuration comes from the checkpoint; typed options may only change
    // what does not change the training (rl::resume_config).
    std::set<std::string> given;
    for (const CLI::Option* o : cmd.get_options())
      if (o->count() > 0 && !o->get_lnames().empty() && o->get_lnames()[0] != "tune" &&
          o->get_lnames()[0] != "profile")
        given.insert("--" + o->get_lnames()[0]);  // --tune, --profile: not the training
    const std::string manifest = rl::find_checkpoint(c.resume);
    const rl::CheckpointManifest m = rl::read_checkpoint_manifest(manifest);
    const bool own_out = given.count("--out") > 0;
    c = rl::resume_config(m.config, c, given);
    c.resume = manifest;
    if (!own_out) c.out_dir = m.run_dir;  // continue in the run's own directory
  }
  rl::Trainer::check(c);  // before a directory is made: a bad run leaves none
  if (c.out_dir.empty()) c.out_dir = dist::rank() == 0 ? unique_run_dir() : std::string();
  if (parallel) c.out_dir = broadcast_string(c.out_dir);  // rank 0's, which writes the records
  if (a.tune && Context::get().beam < 2) Context::get().beam = 2;
  const bool profile = (a.profile || Context::get().profile) && dist::rank() == 0;
  if (profile) start_profile(c.out_dir, !c.resume.empty());
  rl::Trainer trainer(c);
  if (parallel) {
    install_dist_signal_handlers();
  } else {
    install_interrupt_handlers();
    trainer.set_interrupt_flag(&g_interrupt);
  }
  const rl::TrainResult r = trainer.run();
  dist::finalize();
  if (dist::rank() != 0) return;  // rank 0 reports for the job
  if (profile) write_profile();
  if (r.interrupted_by) {
    std::printf("\nInterrupted by %s after %lld epochs (%lld transitions). Saved:\n",
                r.interrupted_by == SIGINT ? "SIGINT" : "SIGTERM", static_cast<long long>(r.epochs),
                static_cast<long long>(r.transitions_at_stop));
    std::printf("policy:     %s\n", r.policy_path.c_str());
    std::printf("checkpoint: %s\n", r.checkpoint_path.c_str());
    std::printf("summary:    %s/summary.json\n", r.out_dir.c_str());
    std::printf("plot:       %s\n", r.plot_path.c_str());
    std::printf("Resume with:\n  ember train --resume %s\n", shell_word(r.checkpoint_path).c_str());
    std::fflush(stdout);
    throw ExitStatus{128 + r.interrupted_by};
  }
  const rl::EvalResult& s = r.saved_policy_eval;
  std::printf("\n%s after %lld transitions (%lld epoch%s), %.2f s from process start\n",
              r.reached_target ? "Reached the target" : "Stopped at --max-transitions",
              static_cast<long long>(r.transitions_at_stop), static_cast<long long>(r.epochs),
              r.epochs == 1 ? "" : "s", r.seconds_to_stop);
  std::printf(
      "last scheduled evaluation: %.2f; saved-policy evaluation: %.2f +- %.2f over %zu "
      "episodes\n",
      r.last_eval_mean, s.mean, s.std, s.returns.size());
  std::printf("records:    %s/run.json, %s/summary.json, %s\n", r.out_dir.c_str(),
              r.out_dir.c_str(), r.records_path.c_str());
  std::printf("policy:     %s\n", r.policy_path.c_str());
  std::printf("checkpoint: %s (resume with --resume)\n", r.checkpoint_path.c_str());
  std::printf("plot:       %s\n", r.plot_path.c_str());
  if (profile)
    std::printf(
        "profile:    %s, %s, %s (ember viz shows them)\n", Context::get().profile_path.c_str(),
        kernel_table_path(Context::get().profile_path).c_str(), Context::get().graph_dir.c_str());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  rl::TrainConfig& c = a->config;
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a PPO agent on LunarLander (continuous) to an evaluation mean of --target");
  cmd->footer(
      "Protocol (README.md, \"Training protocol\"): 20,000 transitions per epoch from 4 envs, then "
      "20 passes in minibatches of 10,000; an evaluation on 100 fresh episodes every 5th epoch "
      "(epoch 0 included); stops at a scheduled evaluation mean >= --target or at "
      "--max-transitions, then saves the policy, reloads it and evaluates it on fresh episodes. "
      "Records: run.json (provenance, configuration), epochs.jsonl (one line per epoch), "
      "summary.json, learning_curve.svg, policy.safetensors and checkpoints/ under --out.\n"
      "Data-parallel: mpirun -np N ember train ... runs N ranks, each with its own --envs envs "
      "seeded --seed + rank; gradients are averaged over the ranks at every minibatch step "
      "(minibatches of N x --minibatch rows), transitions count every rank's, and rank 0 "
      "evaluates and writes the records.\n");
  cmd->option_defaults()->always_capture_default();
  // --help lists the options in these groups (each group() applies to the options added after it).
  cmd->option_defaults()->group("Run");
  cmd->add_option("--seed", c.seed, "Seed of everything (init, envs, action noise, evaluations)");
  cmd->add_option("--threads", c.threads,
                  "Threads of the pool that runs kernels and env steps (ember::set_num_threads); "
                  "0 = EMBER_THREADS or all cores")
      ->check(rule::in_range(0, 1024));
  cmd->add_option("--env-threads", c.env_threads,
                  "At most this many of them step the training envs")
      ->check(rule::in_range(1, 1024));
  cmd->add_option("--out", c.out_dir,
                  "Output directory for records, checkpoints and the plot (default "
                  "runs/<timestamp>)");
  cmd->add_option("--resume", c.resume,
                  "Continue from a checkpoint manifest (<run>/checkpoints/epoch_NNNN.json or "
                  "final.json) or a run directory (its newest checkpoint), with the run's own "
                  "configuration, in its own directory unless --out is given")
      ->check(rule::existing_path());
  cmd->add_option("--max-transitions", c.max_transitions,
                  "Stop after this many training transitions if the target was not reached")
      ->check(rule::positive());
  cmd->add_option("--target", c.target, "Stop when a scheduled evaluation mean reaches this");
  cmd->add_option("--checkpoint-every", c.checkpoint_every,
                  "Write a checkpoint every N epochs (0: only the final one)")
      ->check(rule::non_negative());
  cmd->add_option("--progress", c.progress,
                  "Progress display: auto (a live line on a terminal, plain lines otherwise), "
                  "tty, plain or none")
      ->check(rule::one_of({"auto", "tty", "plain", "none"}));
  cmd->add_flag("--no-jit", a->no_jit,
                "Do not capture the actor's inference and the training step with ember::jit");
  cmd->add_flag("--check-replicas", c.check_replicas,
                "Under mpirun -np N: compare a hash of every rank's parameters and Adam state "
                "after each epoch, and stop with an error at the first difference");
  cmd->add_flag("--tune", a->tune,
                "Search each kernel's plan at its first launch, as BEAM=2 does, and keep the "
                "results in the tune cache for later runs (ember tune --list)");
  cmd->add_flag("--profile", a->profile,
                "Record every kernel launch (as PROFILE=1 does) and every realize's graphs (as "
                "GRAPH=1 does) into <out>/profile/: trace.json (Chrome/Perfetto), "
                "trace.kernels.json (the kernel table with plans and sources) and graphs/; "
                "`ember viz` shows them");
  cmd->option_defaults()->group("Workload");
  cmd->add_option("--envs", c.envs, "Training environments (one vector env)")
      ->check(rule::in_range(1, 4096));
  cmd->add_option("--steps-per-env", c.steps_per_env,
                  "Vector steps per epoch (transitions per epoch = envs x steps-per-env)")
      ->check(rule::positive());
  cmd->add_option("--max-episode-steps", c.max_episode_steps,
                  "LunarLander time limit (a truncation)")
      ->check(rule::positive());
  cmd->add_option("--eval-every", c.eval_every, "Evaluate every N epochs, epoch 0 included")
      ->check(rule::positive());
  cmd->add_option("--eval-envs", c.eval_envs, "Separate evaluation envs")
      ->check(rule::in_range(1, 4096));
  cmd->add_option("--eval-episodes-per-env", c.eval_episodes_per_env,
                  "Complete episodes each evaluation env plays")
      ->check(rule::positive());
  cmd->add_option("--final-eval-episodes-per-env", c.final_eval_episodes_per_env,
                  "Complete episodes per env of the saved-policy evaluation")
      ->check(rule::positive());
  cmd->option_defaults()->group("Networks");
  cmd->add_option("--hidden", c.policy.hidden, "Width of the hidden layers (actor and critic)")
      ->check(rule::positive());
  cmd->add_option("--layers", c.policy.layers, "Hidden layers (actor and critic)")
      ->check(rule::positive());
  cmd->add_option("--log-std-init", c.policy.log_std_init, "Initial log-std of the actor")
      ->check(rule::finite());
  cmd->add_option("--hidden-gain", c.policy.hidden_gain, "Orthogonal init gain, hidden layers")
      ->check(rule::finite());
  cmd->add_option("--actor-output-gain", c.policy.actor_output_gain,
                  "Orthogonal init gain, actor output layer")
      ->check(rule::finite());
  cmd->add_option("--critic-output-gain", c.policy.critic_output_gain,
                  "Orthogonal init gain, critic output layer")
      ->check(rule::finite());
  cmd->option_defaults()->group("Algorithm");
  cmd->add_option("--lr", c.update.lr, "Adam learning rate")->check(rule::positive());
  cmd->add_option("--adam-eps", c.update.adam_eps, "Adam epsilon")->check(rule::non_negative());
  cmd->add_option("--adam-beta1", c.update.adam_beta1, "Adam beta1")
      ->check(rule::in_range(0, 1, "[)"));
  cmd->add_option("--adam-beta2", c.update.adam_beta2, "Adam beta2")
      ->check(rule::in_range(0, 1, "[)"));
  cmd->add_option("--gamma", c.gamma, "Discount factor")->check(rule::in_range(0, 1));
  cmd->add_option("--gae-lambda", c.gae_lambda, "GAE lambda")->check(rule::in_range(0, 1));
  cmd->add_option("--clip", c.update.loss.clip, "PPO clip epsilon (PPO paper eq. 7)")
      ->check(rule::positive());
  cmd->add_option("--value-coef", c.update.loss.value_coef, "Value loss coefficient (eq. 9 c1)")
      ->check(rule::finite());
  cmd->add_option("--entropy-coef", c.update.loss.entropy_coef,
                  "Entropy bonus coefficient (eq. 9 c2)")
      ->check(rule::finite());
  cmd->add_option("--max-grad-norm", c.update.max_grad_norm, "Gradient-norm clip (<= 0: none)");
  cmd->add_flag("--global-grad-clip", a->global_clip,
                "Clip one global gradient norm over actor and critic (default: separately)");
  cmd->add_option("--passes", c.update.passes, "Passes over each epoch's transitions")
      ->check(rule::positive());
  cmd->add_option("--minibatch", c.update.minibatch,
                  "Minibatch size (must divide the transitions per epoch)")
      ->check(rule::positive());
  cmd->add_flag("--no-reward-scaling", a->no_reward_scaling,
                "Hand raw rewards to the learner (default: divide by the running std of the "
                "discounted return)");
  cmd->add_flag("--no-adv-norm", a->no_adv_norm, "Do not normalise advantages per minibatch");
  cmd->callback([a, cmd] { run_train(*a, *cmd); });
}

}  // namespace ember::app

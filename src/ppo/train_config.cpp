#include "ember/rl/train_config.h"

#include <cmath>

#include "ember/error.h"

namespace ember::rl {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ValueError("train config: " + what);
}

}  // namespace

void TrainConfig::validate() const {
  require(envs >= 1, "envs must be >= 1");
  require(steps_per_env >= 1, "steps-per-env must be >= 1");
  require(max_episode_steps >= 1, "max-episode-steps must be >= 1");
  require(eval_every >= 1, "eval-every must be >= 1");
  require(eval_envs >= 1 && eval_episodes_per_env >= 1, "eval envs and episodes must be >= 1");
  require(final_eval_episodes_per_env >= 1, "final-eval-episodes-per-env must be >= 1");
  require(max_transitions >= 1, "max-transitions must be >= 1");
  require(threads >= 0 && env_threads >= 1, "threads must be >= 0 and env-threads >= 1");
  require(gamma >= 0 && gamma <= 1 && gae_lambda >= 0 && gae_lambda <= 1,
          "gamma and lambda must lie in [0, 1]");
  require(update.passes >= 1, "passes must be >= 1");
  require(update.minibatch >= 1 && update.minibatch <= transitions_per_epoch(),
          "minibatch (" + std::to_string(update.minibatch) +
              ") must lie in [1, transitions per epoch = envs x steps-per-env = " +
              std::to_string(transitions_per_epoch()) + "]");
  require(transitions_per_epoch() % update.minibatch == 0,
          "minibatch (" + std::to_string(update.minibatch) +
              ") must divide the transitions per epoch (" +
              std::to_string(transitions_per_epoch()) + ")");
  // The std of one advantage is undefined (Bessel's correction divides by M - 1 = 0): every
  // normalised advantage would be NaN.
  require(update.minibatch >= 2 || !update.loss.normalize_advantages,
          "a minibatch of 1 cannot normalise advantages (their std over one value is undefined); "
          "use --minibatch >= 2 or --no-adv-norm");
  auto finite = [](double v) { return std::isfinite(v); };
  require(finite(update.lr) && update.lr > 0 && finite(update.adam_eps) && update.adam_eps >= 0,
          "lr must be finite and > 0, adam-eps finite and >= 0");
  // Adam divides by 1 - beta^t: beta = 1 divides by zero.
  require(update.adam_beta1 >= 0 && update.adam_beta1 < 1 && update.adam_beta2 >= 0 &&
              update.adam_beta2 < 1,
          "adam-beta1 and adam-beta2 must lie in [0, 1)");
  require(finite(update.loss.clip) && update.loss.clip > 0, "clip must be finite and > 0");
  require(finite(update.loss.value_coef) && finite(update.loss.entropy_coef) &&
              !std::isnan(update.max_grad_norm),
          "value-coef and entropy-coef must be finite and max-grad-norm a number");
  require(finite(policy.log_std_init) && finite(policy.hidden_gain) &&
              finite(policy.actor_output_gain) && finite(policy.critic_output_gain),
          "log-std-init and the init gains must be finite");
  require(!std::isnan(target), "target must be a number");
  require(policy.hidden >= 1 && policy.layers >= 1, "hidden and layers must be >= 1");
  require(checkpoint_every >= 0, "checkpoint-every must be >= 0");
  require(progress == "auto" || progress == "tty" || progress == "plain" || progress == "none",
          "progress must be auto, tty, plain or none (got '" + progress + "')");
}

nlohmann::json to_json(const TrainConfig& c) {
  const PolicyOptions& p = c.policy;
  const PpoUpdateOptions& u = c.update;
  return {
      {"seed", c.seed},
      {"threads", c.threads},
      {"env_threads", c.env_threads},
      {"out_dir", c.out_dir},
      {"resume", c.resume},
      {"max_transitions", c.max_transitions},
      {"target", c.target},
      {"checkpoint_every", c.checkpoint_every},
      {"progress", c.progress},
      {"jit", c.jit},
      {"envs", c.envs},
      {"steps_per_env", c.steps_per_env},
      {"transitions_per_epoch", c.transitions_per_epoch()},
      {"max_episode_steps", c.max_episode_steps},
      {"eval_every", c.eval_every},
      {"eval_envs", c.eval_envs},
      {"eval_episodes_per_env", c.eval_episodes_per_env},
      {"final_eval_episodes_per_env", c.final_eval_episodes_per_env},
      {"gamma", c.gamma},
      {"gae_lambda", c.gae_lambda},
      {"reward_scaling", c.reward_scaling},
      {"policy",
       {{"obs_dim", p.obs_dim},
        {"act_dim", p.act_dim},
        {"hidden", p.hidden},
        {"layers", p.layers},
        {"activation", "tanh"},
        {"log_std_init", p.log_std_init},
        {"hidden_gain", p.hidden_gain},
        {"actor_output_gain", p.actor_output_gain},
        {"critic_output_gain", p.critic_output_gain},
        {"init", "orthogonal weights, zero biases"}}},
      {"update",
       {{"optimizer", "adam"},
        {"lr", u.lr},
        {"adam_eps", u.adam_eps},
        {"adam_beta1", u.adam_beta1},
        {"adam_beta2", u.adam_beta2},
        {"clip", u.loss.clip},
        {"value_coef", u.loss.value_coef},
        {"entropy_coef", u.loss.entropy_coef},
        {"normalize_advantages", u.loss.normalize_advantages},
        {"max_grad_norm", u.max_grad_norm},
        {"separate_grad_clip", u.separate_grad_clip},
        {"passes", u.passes},
        {"minibatch", u.minibatch}}},
  };
}

TrainConfig train_config_from_json(const nlohmann::json& j) {
  TrainConfig c;
  try {
    c.seed = j.value("seed", c.seed);
    c.threads = j.value("threads", c.threads);
    c.env_threads = j.value("env_threads", c.env_threads);
    c.out_dir = j.value("out_dir", c.out_dir);
    c.resume = j.value("resume", c.resume);
    c.max_transitions = j.value("max_transitions", c.max_transitions);
    c.target = j.value("target", c.target);
    c.checkpoint_every = j.value("checkpoint_every", c.checkpoint_every);
    c.progress = j.value("progress", c.progress);
    c.jit = j.value("jit", c.jit);
    c.envs = j.value("envs", c.envs);
    c.steps_per_env = j.value("steps_per_env", c.steps_per_env);
    c.max_episode_steps = j.value("max_episode_steps", c.max_episode_steps);
    c.eval_every = j.value("eval_every", c.eval_every);
    c.eval_envs = j.value("eval_envs", c.eval_envs);
    c.eval_episodes_per_env = j.value("eval_episodes_per_env", c.eval_episodes_per_env);
    c.final_eval_episodes_per_env =
        j.value("final_eval_episodes_per_env", c.final_eval_episodes_per_env);
    c.gamma = j.value("gamma", c.gamma);
    c.gae_lambda = j.value("gae_lambda", c.gae_lambda);
    c.reward_scaling = j.value("reward_scaling", c.reward_scaling);
    if (j.contains("policy")) {
      const auto& p = j.at("policy");
      c.policy.obs_dim = p.value("obs_dim", c.policy.obs_dim);
      c.policy.act_dim = p.value("act_dim", c.policy.act_dim);
      c.policy.hidden = p.value("hidden", c.policy.hidden);
      c.policy.layers = p.value("layers", c.policy.layers);
      c.policy.log_std_init = p.value("log_std_init", c.policy.log_std_init);
      c.policy.hidden_gain = p.value("hidden_gain", c.policy.hidden_gain);
      c.policy.actor_output_gain = p.value("actor_output_gain", c.policy.actor_output_gain);
      c.policy.critic_output_gain = p.value("critic_output_gain", c.policy.critic_output_gain);
    }
    if (j.contains("update")) {
      const auto& u = j.at("update");
      c.update.lr = u.value("lr", c.update.lr);
      c.update.adam_eps = u.value("adam_eps", c.update.adam_eps);
      c.update.adam_beta1 = u.value("adam_beta1", c.update.adam_beta1);
      c.update.adam_beta2 = u.value("adam_beta2", c.update.adam_beta2);
      c.update.loss.clip = u.value("clip", c.update.loss.clip);
      c.update.loss.value_coef = u.value("value_coef", c.update.loss.value_coef);
      c.update.loss.entropy_coef = u.value("entropy_coef", c.update.loss.entropy_coef);
      c.update.loss.normalize_advantages =
          u.value("normalize_advantages", c.update.loss.normalize_advantages);
      c.update.max_grad_norm = u.value("max_grad_norm", c.update.max_grad_norm);
      c.update.separate_grad_clip = u.value("separate_grad_clip", c.update.separate_grad_clip);
      c.update.passes = u.value("passes", c.update.passes);
      c.update.minibatch = u.value("minibatch", c.update.minibatch);
    }
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("train config: malformed JSON: ") + e.what());
  }
  c.update.jit = c.jit;
  return c;
}

}  // namespace ember::rl

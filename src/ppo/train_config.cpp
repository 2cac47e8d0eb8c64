#include "ember/rl/train_config.h"

#include <cmath>

#include "ember/error.h"

namespace ember::rl {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ValueError("train config: " + what);
}

// Calls v(section, key, member) for every stored field of `c` (a TrainConfig, const or not):
// section "" for the top level of run.json's config, "policy" or "update" for the nested objects.
// The one list that to_json writes and train_config_from_json reads.
template <class Config, class Visit>
void visit_fields(Config& c, Visit&& v) {
  v("", "seed", c.seed);
  v("", "threads", c.threads);
  v("", "env_threads", c.env_threads);
  v("", "out_dir", c.out_dir);
  v("", "resume", c.resume);
  v("", "max_transitions", c.max_transitions);
  v("", "target", c.target);
  v("", "checkpoint_every", c.checkpoint_every);
  v("", "progress", c.progress);
  v("", "jit", c.jit);
  v("", "check_replicas", c.check_replicas);
  v("", "envs", c.envs);
  v("", "steps_per_env", c.steps_per_env);
  v("", "max_episode_steps", c.max_episode_steps);
  v("", "eval_every", c.eval_every);
  v("", "eval_envs", c.eval_envs);
  v("", "eval_episodes_per_env", c.eval_episodes_per_env);
  v("", "final_eval_episodes_per_env", c.final_eval_episodes_per_env);
  v("", "gamma", c.gamma);
  v("", "gae_lambda", c.gae_lambda);
  v("", "reward_scaling", c.reward_scaling);
  visit_policy_options(c.policy, [&](const char* key, auto& value) { v("policy", key, value); });
  v("update", "lr", c.update.lr);
  v("update", "adam_eps", c.update.adam_eps);
  v("update", "adam_beta1", c.update.adam_beta1);
  v("update", "adam_beta2", c.update.adam_beta2);
  v("update", "clip", c.update.loss.clip);
  v("update", "value_coef", c.update.loss.value_coef);
  v("update", "entropy_coef", c.update.loss.entropy_coef);
  v("update", "normalize_advantages", c.update.loss.normalize_advantages);
  v("update", "max_grad_norm", c.update.max_grad_norm);
  v("update", "separate_grad_clip", c.update.separate_grad_clip);
  v("update", "passes", c.update.passes);
  v("update", "minibatch", c.update.minibatch);
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
  // Written for the reader of run.json, not read back: derived and fixed facts.
  nlohmann::json j = {
      {"transitions_per_epoch", c.transitions_per_epoch()},
      {"policy", {{"activation", "tanh"}, {"init", "orthogonal weights, zero biases"}}},
      {"update", {{"optimizer", "adam"}}},
  };
  visit_fields(c, [&](const char* section, const char* key, const auto& value) {
    (*section ? j[section] : j)[key] = value;
  });
  return j;
}

TrainConfig train_config_from_json(const nlohmann::json& j) {
  TrainConfig c;
  try {
    visit_fields(c, [&](const char* section, const char* key, auto& value) {
      if (!*section)
        value = j.value(key, value);
      else if (j.contains(section))
        value = j.at(section).value(key, value);
    });
  } catch (const nlohmann::json::exception& e) {
    throw ValueError(std::string("train config: malformed JSON: ") + e.what());
  }
  c.update.jit = c.jit;
  return c;
}

}  // namespace ember::rl
